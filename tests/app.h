/* For the test programs that run as plain OpenCL applications under tutti-run
 * (tests/host/host_app.c, tests/api/diverge.c): a call that must succeed, or the program stops and
 * names it; every device of the platform opened at once. */
#ifndef TUTTI_TEST_APP_H
#define TUTTI_TEST_APP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* program_invocation_short_name */
#endif
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/tutti.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                               \
  do {                                                                                            \
    cl_int err_ = (call);                                                                         \
    if (err_ != CL_SUCCESS) {                                                                     \
      fprintf(stderr, "%s: %s failed: %d\n", program_invocation_short_name, #call, err_);        \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

/* Every device of the first platform, a context of them all and a queue on each. */
struct app {
  cl_uint ndev;
  cl_device_id *devs;
  cl_context ctx;
  cl_command_queue *qs;
};

static inline void app_open(struct app *a)
{
  cl_platform_id platform;
  cl_int err;
  CHECK(clGetPlatformIDs(1, &platform, NULL));
  CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, &a->ndev));
  a->devs = calloc(a->ndev, sizeof *a->devs);
  a->qs = calloc(a->ndev, sizeof *a->qs);
  CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, a->ndev, a->devs, NULL));
  a->ctx = clCreateContext(NULL, a->ndev, a->devs, NULL, NULL, &err);
  CHECK(err);
  for (cl_uint d = 0; d < a->ndev; d++) {
    a->qs[d] = clCreateCommandQueue(a->ctx, a->devs[d], 0, &err);
    CHECK(err);
  }
}

/* n queues more, `per` on each device in turn (queue j on device j / per). */
static inline cl_command_queue *app_queues(const struct app *a, cl_uint n, cl_uint per)
{
  cl_int err;
  cl_command_queue *qs = calloc(n ? n : 1, sizeof *qs);
  for (cl_uint j = 0; j < n; j++) {
    qs[j] = clCreateCommandQueue(a->ctx, a->devs[j / per], 0, &err);
    CHECK(err);
  }
  return qs;
}

/* Tutti's split launch (cl_tutti_split) on the first platform, or NULL where it has none. */
static inline clEnqueueSplitNDRangeKernelTUTTI_fn app_split_fn(void)
{
  cl_platform_id plat;
  CHECK(clGetPlatformIDs(1, &plat, NULL));
  return (clEnqueueSplitNDRangeKernelTUTTI_fn)clGetExtensionFunctionAddressForPlatform(
      plat, "clEnqueueSplitNDRangeKernelTUTTI");
}

static inline void app_close(struct app *a)
{
  for (cl_uint d = 0; d < a->ndev; d++)
    clReleaseCommandQueue(a->qs[d]);
  clReleaseContext(a->ctx);
  free(a->qs);
  free(a->devs);
}

#endif
