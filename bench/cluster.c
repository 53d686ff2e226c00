/* Cluster benchmark, run by tutti-run on N ranks (bench/run-cluster.sh):
 *   - transfer: a 64 MiB buffer written on rank 0's device, moved to rank 1's device
 *     (clEnqueueMigrateMemObjects, then clFinish), against raw MPI_Send/MPI_Recv of 64 MiB
 *     between the same ranks (with a 4-byte answer, as clFinish gets one);
 *   - tiny kernels: a stream of one-work-item kernels on rank 0's device; on the other ranks
 *     they are virtual commands, planned and dropped. Time per command on each rank.
 * Usage: cluster [MiB] [rounds] [kernels] */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/tutti.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define CHECK(x)                                                                                  \
  do {                                                                                            \
    cl_int e_ = (x);                                                                              \
    if (e_ != CL_SUCCESS) {                                                                       \
      fprintf(stderr, "cluster bench: %s failed: %d (line %d)\n", #x, e_, __LINE__);             \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                               \
    }                                                                                             \
  } while (0)

int main(int argc, char **argv)
{
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 64;
  int rounds = argc > 2 ? atoi(argv[2]) : 7;
  int kernels = argc > 3 ? atoi(argv[3]) : 20000;
  if (rounds < 1 || rounds > 99)
    rounds = 7;
  size_t bytes = mib << 20;
  cl_platform_id p;
  CHECK(clGetPlatformIDs(1, &p, NULL));
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  cl_device_id d[64];
  cl_uint n;
  CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 64, d, &n));
  /* The first device of rank 0 and the first of rank 1. */
  cl_uint d0 = 0, d1 = 0;
  for (cl_uint i = 0; i < n; i++) {
    cl_int r;
    CHECK(clGetDeviceInfo(d[i], CL_DEVICE_TUTTI_RANK, sizeof r, &r, NULL));
    if (r == 1 && d1 == 0)
      d1 = i;
  }
  cl_int err;
  cl_context ctx = clCreateContext(NULL, n, d, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue q0 = clCreateCommandQueue(ctx, d[d0], 0, &err);
  CHECK(err);
  cl_command_queue q1 = clCreateCommandQueue(ctx, d[d1], 0, &err);
  CHECK(err);

  double tt[99], tm[99];
  if (size >= 2) {
    cl_mem m = clCreateBuffer(ctx, 0, bytes, NULL, &err);
    CHECK(err);
    char *raw = malloc(bytes);
    memset(raw, 1, bytes);
    int ack = 0;
    for (int r = 0; r < rounds; r++) {
      /* Tutti: newest bytes on rank 0's device, then moved to rank 1's. */
      int v = r;
      CHECK(clEnqueueFillBuffer(q0, m, &v, sizeof v, 0, bytes, 0, NULL, NULL));
      CHECK(clFinish(q0));
      MPI_Barrier(MPI_COMM_WORLD);
      double t = now();
      CHECK(clEnqueueMigrateMemObjects(q1, 1, &m, 0, 0, NULL, NULL));
      CHECK(clFinish(q1));
      tt[r] = now() - t;
      /* Raw MPI between the same ranks. */
      MPI_Barrier(MPI_COMM_WORLD);
      t = now();
      if (rank == 0) {
        MPI_Send(raw, (int)bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
        MPI_Recv(&ack, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(raw, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&ack, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
      }
      tm[r] = now() - t;
    }
    qsort(tt, rounds, sizeof *tt, cmp);
    qsort(tm, rounds, sizeof *tm, cmp);
    if (rank == 0)
      printf("transfer %zu MiB rank 0 -> rank 1: tutti %.3f ms (%.2f GB/s), raw MPI %.3f ms "
             "(%.2f GB/s), tutti/raw bandwidth %.3f\n", mib, tt[rounds / 2] * 1e3,
             bytes / tt[rounds / 2] / 1e9, tm[rounds / 2] * 1e3, bytes / tm[rounds / 2] / 1e9,
             tm[rounds / 2] / tt[rounds / 2]);
    free(raw);
    CHECK(clReleaseMemObject(m));
  }

  /* Tiny kernels on rank 0's device: actual there, virtual (planned, dropped) elsewhere. */
  const char *src = "__kernel void tiny(__global int *x) { x[0] += 1; }";
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  CHECK(clBuildProgram(prog, 0, NULL, NULL, NULL, NULL));
  cl_kernel k = clCreateKernel(prog, "tiny", &err);
  cl_mem small = clCreateBuffer(ctx, 0, 64, NULL, &err);
  int zero = 0;
  CHECK(clEnqueueFillBuffer(q0, small, &zero, sizeof zero, 0, 64, 0, NULL, NULL));
  CHECK(clSetKernelArg(k, 0, sizeof small, &small));
  size_t one = 1;
  for (int r = 0; r < rounds; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = now();
    for (int i = 0; i < kernels; i++)
      CHECK(clEnqueueNDRangeKernel(q0, k, 1, NULL, &one, NULL, 0, NULL, NULL));
    double enq = now() - t;
    CHECK(clFinish(q0));
    tt[r] = enq / kernels;
    tm[r] = (now() - t) / kernels;
  }
  qsort(tt, rounds, sizeof *tt, cmp);
  qsort(tm, rounds, sizeof *tm, cmp);
  double mine[2] = {tt[rounds / 2], tm[rounds / 2]}, all[2 * 64];
  MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int result = 0;
  CHECK(clEnqueueReadBuffer(q0, small, CL_TRUE, 0, sizeof result, &result, 0, NULL, NULL));
  if (rank == 0) {
    printf("tiny kernels on rank 0's device, %d ranks: rank 0 (actual) %.3f us/command to "
           "enqueue, %.3f us with completion (%.0f commands/s)\n", size, all[0] * 1e6,
           all[1] * 1e6, 1 / all[1]);
    for (int r = 1; r < size && r < 64; r++)
      printf("  rank %d (virtual, dropped): %.3f us/command to enqueue\n", r, all[2 * r] * 1e6);
    if (result != rounds * kernels)
      printf("  WRONG: the counter reads %d, not %d\n", result, rounds * kernels);
  }
  clReleaseMemObject(small);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q0);
  clReleaseCommandQueue(q1);
  clReleaseContext(ctx);
  return 0;
}
