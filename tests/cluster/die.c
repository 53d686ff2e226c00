/* A rank that dies or leaves early: the others must stop with a message naming it, never
 * hang (tests/cluster/cluster-failure.test). Usage: die kill|exit|exit-copy|exit-build  (rank 1 is the
 * one that goes; with exit-copy rank 0 then copies the buffer to its own device, so it waits for
 * buffer bytes from rank 1, not for a read; with exit-build it builds a program, an exchange
 * of every rank). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/tutti.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
  const char *how = argc > 1 ? argv[1] : "kill";
  cl_platform_id p;
  cl_device_id d[16];
  cl_uint n = 0;
  cl_int rank = 0, err;
  clGetPlatformIDs(1, &p, NULL);
  clGetPlatformInfo(p, CL_PLATFORM_TUTTI_RANK, sizeof rank, &rank, NULL);
  clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 16, d, &n);
  cl_context ctx = clCreateContext(NULL, n, d, NULL, NULL, &err);
  cl_command_queue q = clCreateCommandQueue(ctx, d[n - 1], 0, &err);
  static int buf[1 << 16];
  cl_mem m = clCreateBuffer(ctx, 0, sizeof buf, NULL, &err);
  int v = 1;
  clEnqueueFillBuffer(q, m, &v, sizeof v, 0, sizeof buf, 0, NULL, NULL);
  if (rank == 1) {
    fprintf(stderr, "die: rank 1 goes away (%s)\n", how);
    if (!strcmp(how, "kill"))
      raise(SIGKILL);
    exit(0);
  }
  if (!strcmp(how, "exit-build")) {
    const char *src = "kernel void k(global int *a) { a[0] = 1; }";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    err = clBuildProgram(prog, 0, NULL, NULL, NULL, NULL);
    printf("die: rank %d built the program (%d): the job should have stopped\n", rank, err);
    return 0;
  }
  if (!strcmp(how, "exit-copy")) {
    cl_command_queue q0 = clCreateCommandQueue(ctx, d[0], 0, &err);
    cl_mem m0 = clCreateBuffer(ctx, 0, sizeof buf, NULL, &err);
    clEnqueueCopyBuffer(q0, m, m0, 0, 0, sizeof buf, 0, NULL, NULL);
    q = q0;
    m = m0;
  }
  /* The last device is rank 1's: these bytes can only come from it. */
  clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof buf, buf, 0, NULL, NULL);
  printf("die: rank %d read %d: the job should have stopped\n", rank, buf[0]);
  return 0;
}
