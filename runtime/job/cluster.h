/* The job as every part of Tutti asks about it: this rank, the ranks, the global device
 * table, message ids drawn alike. Start-up (runtime/job/cluster_start.h) fills it in; answers
 * shared between ranks are runtime/job/cluster_share.h's.
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

#include "runtime/base/tutti_internal.h"

int tt_cluster_rank(void);
int tt_cluster_size(void);
const char *tt_cluster_hostname(void);

/* The device table (filled in by tt_cluster_init, runtime/job/cluster_start.h). */
cl_uint tt_cluster_ndevices(void);
cl_device_id tt_cluster_device(cl_uint i);
/* A sub-device made alike on every rank goes after the table (and after the sub-devices
 * before it): its index, or UINT32_MAX without memory. */
cl_uint tt_cluster_device_add(cl_device_id d);

/* A virtual device's answer to a device query, from its owner's description: CL_SUCCESS, or
 * CL_INVALID_VALUE when the owner could not answer it. */
cl_int tt_cluster_device_info(cl_device_id d, cl_device_info param, size_t size, void *value,
                              size_t *size_ret);

/* A device query answered alike on every rank: by the backend in a job of one rank (d
 * loaded), from the owner's description otherwise. */
cl_int tt_cluster_device_query(cl_device_id d, cl_device_info param, size_t size, void *value,
                               size_t *size_ret);

/* Whether queries must be answered from the exchanged descriptions (a job of several ranks:
 * every rank then answers the same, actual devices included). */
bool tt_cluster_distributed(void);

/* The first of n message ids for transfers from rank src to rank dst (one of them is this
 * rank): both ends count their transfers alike, in program order; other ranks never need
 * to, so they may skip planning what does not involve them (queueing optimization). */
uint64_t tt_cluster_pair_ids(int src, int dst, uint64_t n);

/* Ids that every rank draws alike, in program order: events and reads to host memory. */
uint64_t tt_cluster_next_id(void);
/* The first of n consecutive such ids. */
uint64_t tt_cluster_next_ids(uint64_t n);

extern struct _cl_platform_id tt_platform;

#endif
