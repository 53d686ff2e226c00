/* A host program that diverges on purpose: the rank named by DIVERGE_RANK (default: the
 * last one), read from the launcher's environment, enqueues one write more than the others
 * in its second round. Tutti must stop the job, naming that rank and the call. */
#include "tests/app.h"

int main(void)
{
  const char *r = getenv("OMPI_COMM_WORLD_RANK"), *s = getenv("OMPI_COMM_WORLD_SIZE");
  int rank = r ? atoi(r) : 0, size = s ? atoi(s) : 1;
  const char *who = getenv("DIVERGE_RANK");
  int odd = who ? atoi(who) : size - 1;

  cl_platform_id platform;
  cl_uint ndev = 0;
  CHECK(clGetPlatformIDs(1, &platform, NULL));
  CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, &ndev));
  cl_device_id *devs = calloc(ndev, sizeof *devs);
  cl_command_queue *qs = calloc(ndev, sizeof *qs);
  CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, ndev, devs, NULL));
  cl_int err;
  cl_context ctx = clCreateContext(NULL, ndev, devs, NULL, NULL, &err);
  CHECK(err);
  for (cl_uint d = 0; d < ndev; d++) {
    qs[d] = clCreateCommandQueue(ctx, devs[d], 0, &err);
    CHECK(err);
  }
  enum { N = 1 << 16 };
  static int data[N], back[N];
  cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof data, NULL, &err);
  CHECK(err);
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < N; i++)
      data[i] = i + round;
    cl_command_queue last = qs[ndev - 1];
    CHECK(clEnqueueWriteBuffer(last, buf, CL_FALSE, 0, sizeof data, data, 0, NULL, NULL));
    if (round == 1 && rank == odd) /* the divergence */
      CHECK(clEnqueueWriteBuffer(qs[0], buf, CL_FALSE, 0, sizeof data / 2, data, 0, NULL, NULL));
    for (cl_uint d = 0; d < ndev; d++)
      CHECK(clFinish(qs[d]));
    CHECK(clEnqueueReadBuffer(qs[0], buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
  }
  printf("diverge: finished without being stopped\n");
  return 0;
}
