/* A program that uses MPI itself: it calls MPI_Init before its first OpenCL call ("before")
 * or after it ("after"), talks MPI, runs OpenCL across the ranks, and finalizes MPI.
 * Under tutti-run both work (tests/cluster/cluster-mpi.test). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
  int before = argc > 1 && !strcmp(argv[1], "before");
  cl_platform_id p;
  if (before)
    MPI_Init(&argc, &argv);
  if (clGetPlatformIDs(1, &p, NULL) != CL_SUCCESS)
    return 1;
  if (!before)
    MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  cl_device_id d[16];
  cl_uint n;
  cl_int err;
  clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 16, d, &n);
  cl_context ctx = clCreateContext(NULL, n, d, NULL, NULL, &err);
  cl_command_queue q0 = clCreateCommandQueue(ctx, d[0], 0, &err);
  cl_command_queue ql = clCreateCommandQueue(ctx, d[n - 1], 0, &err);
  int v[256], back[256];
  for (int i = 0; i < 256; i++)
    v[i] = i * 3;
  cl_mem m = clCreateBuffer(ctx, 0, sizeof v, NULL, &err);
  clEnqueueWriteBuffer(q0, m, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL);
  /* Written on device 0, read on the last device (another rank's when there are several). */
  err = clEnqueueReadBuffer(ql, m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL);
  int good = err == CL_SUCCESS && !memcmp(v, back, sizeof v), all = 0;
  MPI_Allreduce(&good, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  clReleaseMemObject(m);
  clReleaseCommandQueue(q0);
  clReleaseCommandQueue(ql);
  clReleaseContext(ctx);
  if (rank == 0)
    printf("mpi_app (%s): %d of %d ranks right over %u devices: %s\n", argv[1] ? argv[1] : "after",
           all, size, n, all == size ? "PASSED" : "FAILED");
  MPI_Finalize();
  return all == size ? 0 : 1;
}
