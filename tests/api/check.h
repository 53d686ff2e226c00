/* A small harness for the API tests: checks that count failures and say where. The tests
 * reach Tutti through the real ICD loader (tests/env.sh points it at the build tree). */
#ifndef TUTTI_TEST_CHECK_H
#define TUTTI_TEST_CHECK_H

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/tutti.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int failures;

#define CHECK(cond)                                                                               \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      fprintf(stderr, "# %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                 \
      failures++;                                                                                 \
    }                                                                                             \
  } while (0)

/* A call must return exactly `expected`. */
#define CHECK_ERR(expected, call)                                                                 \
  do {                                                                                            \
    cl_int e_ = (call);                                                                           \
    if (e_ != (expected)) {                                                                       \
      fprintf(stderr, "# %s:%d: %s returned %d, expected %s (%d)\n", __FILE__, __LINE__, #call,  \
              e_, #expected, (expected));                                                         \
      failures++;                                                                                 \
    }                                                                                             \
  } while (0)

#define OK(call) CHECK_ERR(CL_SUCCESS, call)

/* Must succeed, or the rest of the test makes no sense. */
#define MUST(call)                                                                                \
  do {                                                                                            \
    cl_int e_ = (call);                                                                           \
    if (e_ != CL_SUCCESS) {                                                                       \
      fprintf(stderr, "# %s:%d: %s returned %d: cannot go on\n", __FILE__, __LINE__, #call, e_); \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

/* What every group gets: the Tutti platform, its devices, a context over all of them and a
 * queue per device. */
struct fixture {
  cl_platform_id platform;
  cl_uint ndevs;
  cl_device_id devs[8];
  cl_context ctx;
  cl_command_queue q[8];
};

void fixture_open(struct fixture *f);
void fixture_close(struct fixture *f);
cl_program build_source(struct fixture *f, const char *src);

/* A handle that is no live OpenCL object but carries Tutti's dispatch pointer, so that the
 * ICD loader (which dereferences handles) hands it to Tutti: Tutti must refuse it. */
void *fake_handle(struct fixture *f);
#define GARBAGE fake_handle(f)

void test_platform(struct fixture *f);
void test_device(struct fixture *f);
void test_context(struct fixture *f);
void test_queue(struct fixture *f);
void test_mem(struct fixture *f);
void test_program(struct fixture *f);
void test_kernel(struct fixture *f);
void test_enqueue(struct fixture *f);
void test_consistency(struct fixture *f);
void test_event(struct fixture *f);
void test_image(struct fixture *f);
void test_native(struct fixture *f);
void test_subdevices(struct fixture *f);

#endif
