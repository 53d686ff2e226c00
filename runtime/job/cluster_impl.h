/* Within runtime/job/ only: the job's state that start-up (runtime/job/cluster_start.c)
 * fills in and runtime/job/cluster.c answers from, and the devices' descriptions. */
#ifndef TUTTI_CLUSTER_IMPL_H
#define TUTTI_CLUSTER_IMPL_H

#include "runtime/job/cluster.h"
#include "runtime/job/wire.h" /* how devices are described to other ranks */

struct tt_job_state {
  struct _cl_device_id *table; /* every rank's devices, by rank then local index */
  cl_uint ntable;
  char hostname[64];
  int rank, size;
};
extern struct tt_job_state tt_job;

#endif
