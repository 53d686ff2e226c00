/* For the test programs that run as plain OpenCL applications under tutti-run
 * (tests/host_app.c, tests/diverge.c): a call that must succeed, or the program stops and
 * names it. */
#ifndef TUTTI_TEST_APP_H
#define TUTTI_TEST_APP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* program_invocation_short_name */
#endif
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
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

#endif
