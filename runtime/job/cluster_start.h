/* Starting the job (runtime/job/cluster_start.c), the top of runtime/job/: MPI, the
 * transport, the divergence check, turns, traces and statistics, then the device table
 * (runtime/job/cluster.h); at exit the same in reverse. */
#ifndef TUTTI_CLUSTER_START_H
#define TUTTI_CLUSTER_START_H

#include "runtime/job/cluster.h"

/* Starts the job view once: backends, MPI, device table. Thread safe. */
void tt_cluster_init(void);

/* Starts MPI and the transport only (the host layer's first agreement may come before any
 * OpenCL call); whether the job has several ranks. Thread safe, idempotent. */
bool tt_cluster_start_job(void);

/* Opens this rank's backends if it has not yet (ranks other than a node's first take their
 * devices' descriptions from it) and sets an actual device's native handles. Every use of
 * d->bp or d->native must come after it; clCreateContext calls it. CL_DEVICE_NOT_AVAILABLE
 * when the backends opened here do not show the device the node's first rank described. */
cl_int tt_cluster_device_load(cl_device_id d);

/* The node's backends as CL_PLATFORM_TUTTI_BACKENDS tells them ("pocl: NAME (LIBRARY), N
 * devices" per line); returns the length. */
size_t tt_cluster_backends_text(char *buf, size_t cap);

/* A device's description as the job exchanges them (its header, and with answers its answers
 * to every device query, asked of its native device), appended to *buf; and a device filled
 * from one (owner rank r; actual: r is this one). */
void tt_cluster_describe(struct _cl_device_id *d, bool answers, unsigned char **buf,
                         size_t *len, size_t *cap);
void tt_cluster_from_description(struct _cl_device_id *d, const unsigned char *desc, int r,
                                 bool actual);

#endif
