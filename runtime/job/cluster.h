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

#include "runtime/base/tutti_internal.h"

/* Starts the job view once: backends, MPI, device table. Thread safe. */
void tt_cluster_init(void);

/* Starts MPI and the transport only (the host layer's first agreement may come before any
 * OpenCL call); whether the job has several ranks. Thread safe, idempotent. */
bool tt_cluster_start_job(void);

int tt_cluster_rank(void);
int tt_cluster_size(void);
const char *tt_cluster_hostname(void);

cl_uint tt_cluster_ndevices(void);
cl_device_id tt_cluster_device(cl_uint i);

/* A virtual device's answer to a device query, from its owner's description: CL_SUCCESS, or
 * CL_INVALID_VALUE when the owner could not answer it. */
/* Opens this rank's backends if it has not yet (ranks other than a node's first take their
 * devices' descriptions from it) and sets an actual device's native handles. Every use of
 * d->bp or d->native must come after it; clCreateContext calls it. CL_DEVICE_NOT_AVAILABLE
 * when the backends opened here do not show the device the node's first rank described. */
cl_int tt_cluster_device_load(cl_device_id d);

/* The node's backends as CL_PLATFORM_TUTTI_BACKENDS tells them ("pocl: NAME (LIBRARY), N
 * devices" per line); returns the length. */
size_t tt_cluster_backends_text(char *buf, size_t cap);

cl_int tt_cluster_device_info(cl_device_id d, cl_device_info param, size_t size, void *value,
                              size_t *size_ret);

/* A device query answered alike on every rank: by the backend in a job of one rank (d
 * loaded), from the owner's description otherwise. */
cl_int tt_cluster_device_query(cl_device_id d, cl_device_info param, size_t size, void *value,
                               size_t *size_ret);

/* Whether queries must be answered from the exchanged descriptions (a job of several ranks:
 * every rank then answers the same, actual devices included). */
bool tt_cluster_distributed(void);

/* Collective, every rank at the same program step: `owner` computed an answer (*err and
 * *len bytes in buf, at most cap); afterwards every rank holds it. */
int tt_cluster_share_answer(int owner, cl_int *err, void *buf, size_t *len, size_t cap);

/* Collective: the lowest rank whose `have` is true shares its answer, as above; returns -1
 * (and shares nothing) when no rank has one. */
int tt_cluster_share_first(bool have, cl_int *err, void *buf, size_t *len, size_t cap);

/* Collective: every rank's len bytes, as tt_transport_allgatherv gives them (malloc'd, for
 * the caller to free), once every rank is found at the same place in the program (`site`
 * names the exchange: runtime/job/check.h). */
int tt_cluster_allgatherv(const char *site, const void *mine, size_t len, void **all,
                          size_t **lens);

/* Collective: the minimum of v over all ranks (errors are negative: every rank then returns
 * the same, most negative, code). */
cl_int tt_cluster_agree(cl_int v);

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
