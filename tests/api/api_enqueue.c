/* Enqueued commands: results and error codes; consistency across devices and queues. */
#include <stdint.h>

#include "tests/api/check.h"

void test_enqueue(struct fixture *f)
{
  cl_int err;
  cl_command_queue q = f->q[0];
  enum { N = 1024 };
  int host[N], back[N];
  for (int i = 0; i < N; i++)
    host[i] = i;
  cl_mem a = clCreateBuffer(f->ctx, 0, sizeof host, NULL, &err);
  cl_mem b = clCreateBuffer(f->ctx, 0, sizeof host, NULL, &err);
  OK(err);

  /* Read and write: errors, then the bytes. */
  CHECK_ERR(CL_INVALID_COMMAND_QUEUE, clEnqueueWriteBuffer((cl_command_queue)GARBAGE, a, CL_TRUE, 0, 4, host, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_MEM_OBJECT, clEnqueueWriteBuffer(q, (cl_mem)GARBAGE, CL_TRUE, 0, 4, host, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueWriteBuffer(q, a, CL_TRUE, sizeof host - 4, 8, host, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueWriteBuffer(q, a, CL_TRUE, 0, 4, NULL, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueReadBuffer(q, a, CL_TRUE, 0, 0, back, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_EVENT_WAIT_LIST, clEnqueueReadBuffer(q, a, CL_TRUE, 0, 4, back, 1, NULL, NULL));
  cl_event ev0 = NULL;
  CHECK_ERR(CL_INVALID_EVENT_WAIT_LIST, clEnqueueReadBuffer(q, a, CL_TRUE, 0, 4, back, 0, &ev0, NULL));
  cl_event notev = (cl_event)f->ctx;
  CHECK_ERR(CL_INVALID_EVENT_WAIT_LIST, clEnqueueReadBuffer(q, a, CL_TRUE, 0, 4, back, 1, &notev, NULL));
  cl_context other = clCreateContext(NULL, 1, f->devs, NULL, NULL, &err);
  cl_mem foreign = clCreateBuffer(other, 0, 64, NULL, &err);
  CHECK_ERR(CL_INVALID_CONTEXT, clEnqueueWriteBuffer(q, foreign, CL_TRUE, 0, 4, host, 0, NULL, NULL));
  cl_event other_ev = clCreateUserEvent(other, &err);
  CHECK_ERR(CL_INVALID_CONTEXT, clEnqueueWriteBuffer(q, a, CL_TRUE, 0, 4, host, 1, &other_ev, NULL));
  OK(clSetUserEventStatus(other_ev, CL_COMPLETE));
  OK(clReleaseEvent(other_ev));
  OK(clReleaseMemObject(foreign));
  OK(clReleaseContext(other));
  cl_mem hwo = clCreateBuffer(f->ctx, CL_MEM_HOST_WRITE_ONLY, 64, NULL, &err);
  CHECK_ERR(CL_INVALID_OPERATION, clEnqueueReadBuffer(q, hwo, CL_TRUE, 0, 4, back, 0, NULL, NULL));
  OK(clReleaseMemObject(hwo));

  cl_event wev;
  OK(clEnqueueWriteBuffer(q, a, CL_FALSE, 0, sizeof host, host, 0, NULL, &wev));
  OK(clEnqueueReadBuffer(q, a, CL_TRUE, 0, sizeof back, back, 1, &wev, NULL));
  CHECK(!memcmp(host, back, sizeof host));
  cl_command_type ct;
  OK(clGetEventInfo(wev, CL_EVENT_COMMAND_TYPE, sizeof ct, &ct, NULL));
  CHECK(ct == CL_COMMAND_WRITE_BUFFER);
  OK(clReleaseEvent(wev));

  /* Copy, with overlap detection on one buffer and on sub-buffers of one buffer. */
  OK(clEnqueueCopyBuffer(q, a, b, 16, 0, 64, 0, NULL, NULL));
  OK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, 64, back, 0, NULL, NULL));
  CHECK(back[0] == 4 && back[15] == 19);
  CHECK_ERR(CL_MEM_COPY_OVERLAP, clEnqueueCopyBuffer(q, a, a, 0, 32, 64, 0, NULL, NULL));
  OK(clEnqueueCopyBuffer(q, a, a, 0, 64, 64, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueCopyBuffer(q, a, b, 0, sizeof host - 4, 8, 0, NULL, NULL));

  /* Start again from known contents. */
  OK(clEnqueueWriteBuffer(q, a, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
  OK(clEnqueueWriteBuffer(q, b, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));

  /* Fill. */
  int pattern = 0x01020304;
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueFillBuffer(q, b, &pattern, 3, 0, 64, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueFillBuffer(q, b, &pattern, 4, 2, 64, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueFillBuffer(q, b, NULL, 4, 0, 64, 0, NULL, NULL));
  OK(clEnqueueFillBuffer(q, b, &pattern, sizeof pattern, 8, 64, 0, NULL, NULL));
  OK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, 128, back, 0, NULL, NULL));
  CHECK(back[1] == 1 && back[2] == pattern && back[17] == pattern && back[18] == 18);

  /* Rectangles: a 4x3 block out of a 16-int-wide matrix. */
  size_t bo[3] = {2 * sizeof(int), 1, 0}, ho[3] = {0, 0, 0}, region[3] = {4 * sizeof(int), 3, 1};
  int rect[12] = {0};
  OK(clEnqueueReadBufferRect(q, a, CL_TRUE, bo, ho, region, 16 * sizeof(int), 0, 0, 0, rect, 0, NULL, NULL));
  CHECK(rect[0] == 18 && rect[3] == 21 && rect[4] == 34 && rect[11] == 53);
  size_t zero_region[3] = {0, 1, 1};
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueReadBufferRect(q, a, CL_TRUE, bo, ho, zero_region, 0, 0, 0, 0, rect, 0, NULL, NULL));
  size_t far[3] = {0, 1000, 0};
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueReadBufferRect(q, a, CL_TRUE, far, ho, region, 16 * sizeof(int), 0, 0, 0, rect, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueReadBufferRect(q, a, CL_TRUE, bo, ho, region, 2, 0, 0, 0, rect, 0, NULL, NULL));
  int minus[12];
  for (int i = 0; i < 12; i++)
    minus[i] = -1 - i;
  OK(clEnqueueWriteBufferRect(q, b, CL_TRUE, bo, ho, region, 16 * sizeof(int), 0, 0, 0, minus, 0, NULL, NULL));
  OK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, 64 * sizeof(int), back, 0, NULL, NULL));
  CHECK(back[18] == -1 && back[21] == -4 && back[22] == 22 && back[34] == -5);
  size_t so[3] = {0, 0, 0}, dst_o[3] = {8 * sizeof(int), 0, 0}, r2[3] = {4 * sizeof(int), 2, 1};
  OK(clEnqueueCopyBufferRect(q, a, b, so, dst_o, r2, 16 * sizeof(int), 0, 16 * sizeof(int), 0, 0, NULL, NULL));
  OK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, 64 * sizeof(int), back, 0, NULL, NULL));
  CHECK(back[8] == 0 && back[11] == 3 && back[24] == 16 && back[12] == pattern && back[28] == 28);
  size_t o2[3] = {2 * sizeof(int), 0, 0};
  CHECK_ERR(CL_MEM_COPY_OVERLAP, clEnqueueCopyBufferRect(q, a, a, so, o2, r2, 16 * sizeof(int), 0, 16 * sizeof(int), 0, 0, NULL, NULL));

  /* Map and unmap: a write through the map is seen by the device. */
  int *p = clEnqueueMapBuffer(q, a, CL_TRUE, CL_MAP_WRITE, 0, 16 * sizeof(int), 0, NULL, NULL, &err);
  OK(err);
  CHECK(p && p[5] == 5);
  p[5] = 555;
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueUnmapMemObject(q, a, host, 0, NULL, NULL));
  cl_event uev;
  OK(clEnqueueUnmapMemObject(q, a, p, 0, NULL, &uev));
  OK(clEnqueueReadBuffer(q, a, CL_TRUE, 5 * sizeof(int), sizeof(int), back, 1, &uev, NULL));
  CHECK(back[0] == 555);
  OK(clReleaseEvent(uev));
  p = clEnqueueMapBuffer(q, a, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION, 0, 16, 0, NULL, NULL, &err);
  CHECK(p == NULL && err == CL_INVALID_VALUE);
  p = clEnqueueMapBuffer(q, a, CL_TRUE, CL_MAP_READ, 0, sizeof host + 4, 0, NULL, NULL, &err);
  CHECK(p == NULL && err == CL_INVALID_VALUE);

  /* Migrate. */
  cl_mem both[2] = {a, b};
  OK(clEnqueueMigrateMemObjects(q, 2, both, 0, 0, NULL, NULL));
  OK(clEnqueueMigrateMemObjects(q, 1, both, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueMigrateMemObjects(q, 0, both, 0, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueMigrateMemObjects(q, 1, both, 0x80, 0, NULL, NULL));

  /* Kernels: NDRange argument errors. */
  cl_program prog = build_source(f, "__kernel void inc(__global int *x) { x[get_global_id(0)] += 1; }");
  cl_kernel k = clCreateKernel(prog, "inc", &err);
  OK(clSetKernelArg(k, 0, sizeof a, &a));
  size_t gws[3] = {N, 1, 1}, zero[3] = {0, 1, 1};
  CHECK_ERR(CL_INVALID_WORK_DIMENSION, clEnqueueNDRangeKernel(q, k, 0, NULL, gws, NULL, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_WORK_DIMENSION, clEnqueueNDRangeKernel(q, k, 4, NULL, gws, NULL, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_GLOBAL_WORK_SIZE, clEnqueueNDRangeKernel(q, k, 1, NULL, NULL, NULL, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_GLOBAL_WORK_SIZE, clEnqueueNDRangeKernel(q, k, 1, NULL, zero, NULL, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_KERNEL, clEnqueueNDRangeKernel(q, (cl_kernel)GARBAGE, 1, NULL, gws, NULL, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueNativeKernel(q, NULL, NULL, 0, 0, NULL, NULL, 0, NULL, NULL));
  OK(clEnqueueNDRangeKernel(q, k, 1, NULL, gws, NULL, 0, NULL, NULL));
  OK(clEnqueueNDRangeKernel(q, k, 1, NULL, gws, NULL, 0, NULL, NULL));
  OK(clEnqueueReadBuffer(q, a, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
  CHECK(back[0] == 2 && back[5] == 557 && back[1000] == 1002);

  /* Markers and barriers. */
  cl_event m1, m2;
  OK(clEnqueueMarkerWithWaitList(q, 0, NULL, &m1));
  OK(clEnqueueBarrierWithWaitList(q, 1, &m1, &m2));
  OK(clEnqueueMarker(q, &ev0));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueMarker(q, NULL));
  OK(clEnqueueBarrier(q));
  OK(clEnqueueWaitForEvents(q, 1, &m1));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueWaitForEvents(q, 0, NULL));
  OK(clWaitForEvents(1, &m2));
  OK(clGetEventInfo(m2, CL_EVENT_COMMAND_TYPE, sizeof ct, &ct, NULL));
  CHECK(ct == CL_COMMAND_BARRIER);
  OK(clReleaseEvent(m1));
  OK(clReleaseEvent(m2));
  OK(clReleaseEvent(ev0));

  /* A buffer is no image. */
  CHECK_ERR(CL_INVALID_MEM_OBJECT, clEnqueueReadImage(q, a, CL_TRUE, so, region, 0, 0, back, 0, NULL, NULL));

  OK(clFinish(q));
  OK(clReleaseKernel(k));
  OK(clReleaseProgram(prog));
  OK(clReleaseMemObject(a));
  OK(clReleaseMemObject(b));
}

/* One buffer moved around every device with event chains between queues: each device adds
 * its index + 1 to every element, and the next device must see that. */
void test_consistency(struct fixture *f)
{
  cl_int err;
  enum { N = 4096 };
  static int host[N], back[N];
  for (int i = 0; i < N; i++)
    host[i] = i;
  cl_program prog = build_source(f, "__kernel void add(__global int *x, int k) { x[get_global_id(0)] += k; }\n"
                                    "__kernel void copy(__global const int *s, __global int *d) { d[get_global_id(0)] = s[get_global_id(0)]; }\n");
  cl_kernel k = clCreateKernel(prog, "add", &err);
  cl_kernel kc = clCreateKernel(prog, "copy", &err);
  cl_mem m = clCreateBuffer(f->ctx, CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  OK(err);
  size_t gws = N;
  int expect_add = 0;
  cl_event prev = NULL;
  for (int round = 0; round < 3; round++)
    for (cl_uint d = 0; d < f->ndevs; d++) {
      int add = (int)d + 1;
      expect_add += add;
      OK(clSetKernelArg(k, 0, sizeof m, &m));
      OK(clSetKernelArg(k, 1, sizeof add, &add));
      cl_event ev;
      OK(clEnqueueNDRangeKernel(f->q[d], k, 1, NULL, &gws, NULL, prev ? 1 : 0, prev ? &prev : NULL, &ev));
      if (prev)
        OK(clReleaseEvent(prev));
      prev = ev;
    }
  /* Read on the last device after waiting on the chain's end. */
  OK(clEnqueueReadBuffer(f->q[f->ndevs - 1], m, CL_TRUE, 0, sizeof back, back, 1, &prev, NULL));
  OK(clReleaseEvent(prev));
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += back[i] != i + expect_add;
  CHECK(bad == 0);

  /* Without events: conflicting commands on different queues still run in enqueue order. */
  int add = 1000;
  OK(clSetKernelArg(k, 1, sizeof add, &add));
  for (cl_uint d = 0; d < f->ndevs; d++)
    OK(clEnqueueNDRangeKernel(f->q[d], k, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clEnqueueReadBuffer(f->q[0], m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
  CHECK(back[7] == 7 + expect_add + 1000 * (int)f->ndevs);

  /* A kernel on the last device writes half a buffer through a sub-buffer; a map on the
   * first device then sees both halves right. */
  cl_buffer_region half = {N / 2 * sizeof(int), N / 2 * sizeof(int)};
  cl_mem sub = clCreateSubBuffer(m, 0, CL_BUFFER_CREATE_TYPE_REGION, &half, &err);
  OK(err);
  add = 1;
  OK(clSetKernelArg(k, 0, sizeof sub, &sub));
  OK(clSetKernelArg(k, 1, sizeof add, &add));
  size_t hg = N / 2;
  OK(clEnqueueNDRangeKernel(f->q[f->ndevs - 1], k, 1, NULL, &hg, NULL, 0, NULL, NULL));
  int *p = clEnqueueMapBuffer(f->q[0], m, CL_TRUE, CL_MAP_READ, 0, sizeof host, 0, NULL, NULL, &err);
  OK(err);
  int base = expect_add + 1000 * (int)f->ndevs;
  CHECK(p && p[0] == base && p[N / 2 - 1] == N / 2 - 1 + base && p[N / 2] == N / 2 + base + 1 &&
        p[N - 1] == N - 1 + base + 1);
  OK(clEnqueueUnmapMemObject(f->q[0], m, p, 0, NULL, NULL));

  /* Copies between devices: a kernel on device 0 reads what device 1 copied. */
  cl_mem m2 = clCreateBuffer(f->ctx, 0, sizeof host, NULL, &err);
  OK(clEnqueueCopyBuffer(f->q[f->ndevs - 1], m, m2, 0, 0, sizeof host, 0, NULL, NULL));
  OK(clSetKernelArg(kc, 0, sizeof m2, &m2));
  OK(clSetKernelArg(kc, 1, sizeof m, &m));
  OK(clEnqueueWriteBuffer(f->q[0], m2, CL_TRUE, 0, sizeof(int), &add, 0, NULL, NULL));
  OK(clEnqueueNDRangeKernel(f->q[0], kc, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clEnqueueReadBuffer(f->q[f->ndevs - 1], m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
  CHECK(back[0] == 1 && back[1] == 1 + base && back[N - 1] == N - 1 + base + 1);

  /* A queue released right after its last command: a later command on another queue still
   * waits for that command. */
  cl_command_queue tmp = clCreateCommandQueue(f->ctx, f->devs[f->ndevs - 1], 0, &err);
  OK(err);
  add = 5;
  OK(clSetKernelArg(k, 0, sizeof m, &m));
  OK(clSetKernelArg(k, 1, sizeof add, &add));
  OK(clEnqueueNDRangeKernel(tmp, k, 1, NULL, &gws, NULL, 0, NULL, NULL));
  OK(clReleaseCommandQueue(tmp));
  OK(clEnqueueReadBuffer(f->q[0], m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
  CHECK(back[0] == 6 && back[N - 1] == N - 1 + base + 6);

  OK(clReleaseMemObject(m2));
  OK(clReleaseMemObject(sub));
  OK(clReleaseMemObject(m));
  OK(clReleaseKernel(k));
  OK(clReleaseKernel(kc));
  OK(clReleaseProgram(prog));
}
