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

  struct app a;
  app_open(&a);
  cl_uint ndev = a.ndev;
  cl_command_queue *qs = a.qs;
  cl_int err;
  enum { N = 1 << 16 };
  static int data[N], back[N];
  cl_mem buf = clCreateBuffer(a.ctx, CL_MEM_READ_WRITE, sizeof data, NULL, &err);
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
