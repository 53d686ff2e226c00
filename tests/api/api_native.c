/* Native kernels (clEnqueueNativeKernel): a host function run on the owner of the queue's
 * device with its buffers' memory, the results read on every device; the error codes. */
#include "tests/api/check.h"

/* The arguments as the program passes them: two buffers (their handles replaced by their
 * memory's addresses before the call) and a count. */
struct args {
  int n;
  int *in;
  int *out;
};

static void CL_CALLBACK twice_plus_one(void *p)
{
  struct args *a = p;
  for (int i = 0; i < a->n; i++)
    a->out[i] = 2 * a->in[i] + 1;
}

static void CL_CALLBACK nothing(void *p)
{
  (void)p;
}

void test_native(struct fixture *f)
{
  enum { N = 1000 };
  static int host[N], back[N];
  for (int i = 0; i < N; i++)
    host[i] = i * 3 - 500;
  cl_int err;
  cl_mem in = clCreateBuffer(f->ctx, CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  OK(err);
  cl_mem out = clCreateBuffer(f->ctx, 0, sizeof host, NULL, &err);
  OK(err);
  struct args a = {N, NULL, NULL};
  cl_mem mems[2] = {in, out};
  memcpy(&a.in, &in, sizeof in);
  memcpy(&a.out, &out, sizeof out);
  const void *locs[2] = {&a.in, &a.out};
  for (cl_uint d = 0; d < f->ndevs; d++) {
    cl_command_queue q = f->q[d];
    cl_device_exec_capabilities caps = 0;
    OK(clGetDeviceInfo(f->devs[d], CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL));
    CHECK(caps & CL_EXEC_KERNEL);
    if (!(caps & CL_EXEC_NATIVE_KERNEL)) {
      CHECK_ERR(CL_INVALID_OPERATION, clEnqueueNativeKernel(q, nothing, NULL, 0, 0, NULL, NULL, 0, NULL, NULL));
      continue;
    }
    cl_event ev;
    OK(clEnqueueNativeKernel(q, twice_plus_one, &a, sizeof a, 2, mems, locs, 0, NULL, &ev));
    cl_command_type type = 0;
    OK(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
    CHECK(type == CL_COMMAND_NATIVE_KERNEL);
    /* Read on the next device after the function's event. */
    memset(back, 0, sizeof back);
    OK(clEnqueueReadBuffer(f->q[(d + 1) % f->ndevs], out, CL_TRUE, 0, sizeof back, back, 1, &ev, NULL));
    int bad = 0;
    for (int i = 0; i < N; i++)
      bad += back[i] != 2 * host[i] + 1;
    CHECK(bad == 0);
    OK(clReleaseEvent(ev));
    /* Its errors. */
    CHECK_ERR(CL_INVALID_VALUE, clEnqueueNativeKernel(q, NULL, &a, sizeof a, 2, mems, locs, 0, NULL, NULL));
    CHECK_ERR(CL_INVALID_VALUE, clEnqueueNativeKernel(q, nothing, NULL, sizeof a, 0, NULL, NULL, 0, NULL, NULL));
    CHECK_ERR(CL_INVALID_VALUE, clEnqueueNativeKernel(q, nothing, &a, 0, 0, NULL, NULL, 0, NULL, NULL));
    CHECK_ERR(CL_INVALID_VALUE, clEnqueueNativeKernel(q, nothing, &a, sizeof a, 2, NULL, locs, 0, NULL, NULL));
    CHECK_ERR(CL_INVALID_VALUE, clEnqueueNativeKernel(q, nothing, &a, sizeof a, 0, mems, NULL, 0, NULL, NULL));
    const void *outside[2] = {&a.in, (const char *)&a + sizeof a};
    CHECK_ERR(CL_INVALID_VALUE, clEnqueueNativeKernel(q, nothing, &a, sizeof a, 2, mems, outside, 0, NULL, NULL));
    cl_mem garbage[2] = {in, (cl_mem)f->ctx};
    CHECK_ERR(CL_INVALID_MEM_OBJECT, clEnqueueNativeKernel(q, nothing, &a, sizeof a, 2, garbage, locs, 0, NULL, NULL));
    CHECK_ERR(CL_INVALID_COMMAND_QUEUE, clEnqueueNativeKernel(NULL, nothing, NULL, 0, 0, NULL, NULL, 0, NULL, NULL));
    OK(clEnqueueNativeKernel(q, nothing, NULL, 0, 0, NULL, NULL, 0, NULL, NULL));
    OK(clFinish(q));
  }
  OK(clReleaseMemObject(in));
  OK(clReleaseMemObject(out));
}
