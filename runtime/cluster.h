/* The job: MPI start-up, ranks, and the global device table.
 *
 * The first OpenCL call starts the job view. Inside a rank of an MPI job (mpirun or
 * tutti-run set OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK) it starts MPI, unless the
 * program already did, shares the node's devices among the node's ranks (local rank i of k
 * takes every k-th device; with fewer devices than ranks they share), and exchanges device
 * descriptions, so that every rank holds the same table, ordered by rank then local index:
 * actual devices (its own) and virtual devices (everyone else's). Anywhere else the job is
 * one rank and MPI is never touched. */
#ifndef TUTTI_CLUSTER_H
#define TUTTI_CLUSTER_H

#include "runtime/tutti_internal.h"

/* Starts the job view once: backends, MPI, device table. Thread safe. */
void tt_cluster_init(void);

int tt_cluster_rank(void);
int tt_cluster_size(void);
const char *tt_cluster_hostname(void);

cl_uint tt_cluster_ndevices(void);
cl_device_id tt_cluster_device(cl_uint i);

/* A virtual device's answer to a device query, from its owner's description: CL_SUCCESS, or
 * CL_INVALID_VALUE when the owner could not answer it. */
cl_int tt_cluster_device_info(cl_device_id d, cl_device_info param, size_t size, void *value,
                              size_t *size_ret);

/* Whether queries must be answered from the exchanged descriptions (a job of several ranks:
 * every rank then answers the same, actual devices included). */
bool tt_cluster_distributed(void);

/* Ids that every rank draws alike, in program order: transfers and events. */
uint64_t tt_cluster_next_id(void);

extern struct _cl_platform_id tt_platform;

#endif
