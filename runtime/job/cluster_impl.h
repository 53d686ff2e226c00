/* Within runtime/job/ only: the job's state that start-up (runtime/job/cluster_start.c)
 * fills in and runtime/job/cluster.c answers from, and the devices' descriptions. */
#ifndef TUTTI_CLUSTER_IMPL_H
#define TUTTI_CLUSTER_IMPL_H

#include "runtime/job/cluster.h"

struct tt_job_state {
  struct _cl_device_id *table; /* every rank's devices, by rank then local index */
  cl_uint ntable;
  char hostname[64];
  int rank, size;
};
extern struct tt_job_state tt_job;

/* Description format: for each answered query, {u32 param, u32 size, bytes}; a device is
 * {u32 total, header, queries}. */
struct desc_header {
  cl_uint bp_index;
  cl_uint native_index; /* the device's place among its backend platform's devices */
  cl_device_type type;
  cl_uint on_cores; /* its kernels run on the host's cores (a CPU device, natively) */
  cl_int cuda; /* its CUDA device, or -1 (runtime/base/cuda.h) */
  cl_uint cuda_peers;
  char gpu_copies[160];
  char host[64];
  char backend[32];
  char backend_platform[128];
};

#endif
