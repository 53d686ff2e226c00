/* The job: ranks and the global device table.
 *
 * Every rank holds the same table, ordered by rank then local index: actual devices (this
 * rank's) and virtual devices (other ranks'). This issue runs one rank; the table, the
 * owner of each device and the queries about it already have their cluster shape. */
#ifndef TUTTI_CLUSTER_H
#define TUTTI_CLUSTER_H

#include "runtime/tutti_internal.h"

/* Starts the job view once: backends, device table. Thread safe. */
void tt_cluster_init(void);

int tt_cluster_rank(void);
int tt_cluster_size(void);
const char *tt_cluster_hostname(void);

cl_uint tt_cluster_ndevices(void);
cl_device_id tt_cluster_device(cl_uint i);

/* Whether d is one of the table's devices (a cheap check: the table is one array). */
int tt_cluster_is_device(const void *d);

extern struct _cl_platform_id tt_platform;

#endif
