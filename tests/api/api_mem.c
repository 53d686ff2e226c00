/* Buffers and sub-buffers (images and samplers: tests/api/api_image.c). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "tests/api/check.h"
#include "tests/launcher.h"

static int destroyed;
static pthread_mutex_t destroyed_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t destroyed_cond = PTHREAD_COND_INITIALIZER;
static void CL_CALLBACK on_destroy(cl_mem m, void *data)
{
  pthread_mutex_lock(&destroyed_lock);
  destroyed = destroyed * 10 + *(int *)data;
  pthread_cond_broadcast(&destroyed_cond);
  pthread_mutex_unlock(&destroyed_lock);
}

/* destroyed once the callbacks ran. Over PoCL in one rank Tutti runs them inside the last
 * release; a backend may free its buffers later (NVIDIA's destructor callbacks come from a
 * thread of its own after the release returned), and in a job of several ranks the bytes a
 * blocking read just sent on to other ranks may still be leaving (their sends hold the
 * buffer: rank 1 of 2 once ran them after the release returned). The specification allows
 * both: the object is deleted once the commands using it are done. So there this waits, 60 s
 * at most. */
static int destroyed_after_release(void)
{
  const char *backend = getenv("TT_TEST_BACKEND");
  const char *ranks = launcher_size();
  pthread_mutex_lock(&destroyed_lock);
  if ((backend && strcmp(backend, "pocl") != 0) || (ranks && atoi(ranks) > 1)) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    while (destroyed < 10 && pthread_cond_timedwait(&destroyed_cond, &destroyed_lock, &until) == 0)
      ;
  }
  int d = destroyed;
  pthread_mutex_unlock(&destroyed_lock);
  return d;
}

void test_mem(struct fixture *f)
{
  cl_int err;
  cl_mem m;
  char host[256];
  m = clCreateBuffer((cl_context)GARBAGE, 0, 64, NULL, &err);
  CHECK(m == NULL && err == CL_INVALID_CONTEXT);
  m = clCreateBuffer(f->ctx, 0, 0, NULL, &err);
  CHECK(m == NULL && err == CL_INVALID_BUFFER_SIZE);
  m = clCreateBuffer(f->ctx, 0, (size_t)1 << 62, NULL, &err);
  CHECK(m == NULL && err == CL_INVALID_BUFFER_SIZE);
  m = clCreateBuffer(f->ctx, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 64, NULL, &err);
  CHECK(m == NULL && err == CL_INVALID_VALUE);
  m = clCreateBuffer(f->ctx, CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR, 64, host, &err);
  CHECK(m == NULL && err == CL_INVALID_VALUE);
  m = clCreateBuffer(f->ctx, CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS, 64, NULL, &err);
  CHECK(m == NULL && err == CL_INVALID_VALUE);
  m = clCreateBuffer(f->ctx, (cl_mem_flags)1 << 40, 64, NULL, &err);
  CHECK(m == NULL && err == CL_INVALID_VALUE);
  m = clCreateBuffer(f->ctx, CL_MEM_COPY_HOST_PTR, 64, NULL, &err);
  CHECK(m == NULL && err == CL_INVALID_HOST_PTR);
  m = clCreateBuffer(f->ctx, 0, 64, host, &err);
  CHECK(m == NULL && err == CL_INVALID_HOST_PTR);

  /* Info of a buffer made from host memory. */
  for (int i = 0; i < 256; i++)
    host[i] = (char)i;
  m = clCreateBuffer(f->ctx, CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE, 256, host, &err);
  OK(err);
  cl_mem_object_type t;
  cl_mem_flags fl;
  size_t size, off;
  void *hp;
  cl_uint u;
  cl_context c;
  cl_mem assoc;
  OK(clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof t, &t, NULL));
  CHECK(t == CL_MEM_OBJECT_BUFFER);
  OK(clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof fl, &fl, NULL));
  CHECK(fl == (CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE));
  OK(clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL));
  CHECK(size == 256);
  OK(clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof hp, &hp, NULL));
  CHECK(hp == host);
  OK(clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof u, &u, NULL));
  CHECK(u == 0);
  OK(clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof c, &c, NULL));
  CHECK(c == f->ctx);
  OK(clGetMemObjectInfo(m, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc, NULL));
  CHECK(assoc == NULL);
  CHECK_ERR(CL_INVALID_VALUE, clGetMemObjectInfo(m, 0x7777, sizeof u, &u, NULL));
  CHECK_ERR(CL_INVALID_MEM_OBJECT, clGetMemObjectInfo((cl_mem)GARBAGE, CL_MEM_SIZE, sizeof size, &size, NULL));

  /* A mapped USE_HOST_PTR buffer shows its data; the map count follows maps. */
  void *p = clEnqueueMapBuffer(f->q[0], m, CL_TRUE, CL_MAP_READ, 16, 32, 0, NULL, NULL, &err);
  OK(err);
  CHECK(p && ((unsigned char *)p)[0] == 16 && ((unsigned char *)p)[31] == 47);
  OK(clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof u, &u, NULL));
  CHECK(u == 1);
  OK(clEnqueueUnmapMemObject(f->q[0], m, p, 0, NULL, NULL));
  OK(clFinish(f->q[0]));

  /* Sub-buffers: errors, then one that sees its parent's bytes. */
  /* An origin every device of the context accepts. */
  size_t align = 0;
  for (cl_uint i = 0; i < f->ndevs; i++) {
    cl_uint bits = 0;
    OK(clGetDeviceInfo(f->devs[i], CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL));
    if (bits / 8 > align)
      align = bits / 8;
  }
  cl_buffer_region r = {align > 128 ? 0 : align, 64};
  cl_mem s = clCreateSubBuffer(m, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  OK(err);
  cl_mem ss = clCreateSubBuffer(s, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  CHECK(ss == NULL && err == CL_INVALID_MEM_OBJECT);
  cl_buffer_region past = {128, 256};
  ss = clCreateSubBuffer(m, 0, CL_BUFFER_CREATE_TYPE_REGION, &past, &err);
  CHECK(ss == NULL && err == CL_INVALID_VALUE);
  cl_buffer_region empty = {0, 0};
  ss = clCreateSubBuffer(m, 0, CL_BUFFER_CREATE_TYPE_REGION, &empty, &err);
  CHECK(ss == NULL && err == CL_INVALID_BUFFER_SIZE);
  cl_buffer_region odd = {1, 16};
  ss = clCreateSubBuffer(m, 0, CL_BUFFER_CREATE_TYPE_REGION, &odd, &err);
  CHECK(ss == NULL && err == CL_MISALIGNED_SUB_BUFFER_OFFSET);
  ss = clCreateSubBuffer(m, 0, 0x7777, &r, &err);
  CHECK(ss == NULL && err == CL_INVALID_VALUE);
  ss = clCreateSubBuffer(m, CL_MEM_USE_HOST_PTR, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  CHECK(ss == NULL && err == CL_INVALID_VALUE);
  cl_mem ro = clCreateBuffer(f->ctx, CL_MEM_READ_ONLY, 256, NULL, &err);
  ss = clCreateSubBuffer(ro, CL_MEM_WRITE_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  CHECK(ss == NULL && err == CL_INVALID_VALUE);
  ss = clCreateSubBuffer(ro, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  OK(err);
  OK(clGetMemObjectInfo(ss, CL_MEM_FLAGS, sizeof fl, &fl, NULL));
  CHECK(fl & CL_MEM_READ_ONLY);
  OK(clReleaseMemObject(ss));
  OK(clReleaseMemObject(ro));
  OK(clGetMemObjectInfo(s, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc, NULL));
  CHECK(assoc == m);
  OK(clGetMemObjectInfo(s, CL_MEM_OFFSET, sizeof off, &off, NULL));
  CHECK(off == r.origin);
  OK(clGetMemObjectInfo(s, CL_MEM_HOST_PTR, sizeof hp, &hp, NULL));
  CHECK(hp == host + r.origin);
  unsigned char got[64];
  OK(clEnqueueReadBuffer(f->q[f->ndevs - 1], s, CL_TRUE, 0, 64, got, 0, NULL, NULL));
  CHECK(got[0] == (unsigned char)r.origin && got[63] == (unsigned char)(r.origin + 63));

  /* A sub-buffer keeps its parent alive; destructor callbacks run last-registered first, once
   * the object is really gone. */
  int one = 1, two = 2;
  destroyed = 0;
  OK(clSetMemObjectDestructorCallback(m, on_destroy, &one));
  OK(clSetMemObjectDestructorCallback(m, on_destroy, &two));
  CHECK_ERR(CL_INVALID_VALUE, clSetMemObjectDestructorCallback(m, NULL, NULL));
  OK(clReleaseMemObject(m));
  CHECK(destroyed == 0);
  OK(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof u, &u, NULL));
  CHECK(u == 1);
  OK(clReleaseMemObject(s));
  CHECK(destroyed_after_release() == 21);
  CHECK_ERR(CL_INVALID_MEM_OBJECT, clReleaseMemObject((cl_mem)GARBAGE));
  CHECK_ERR(CL_INVALID_MEM_OBJECT, clRetainMemObject((cl_mem)f->ctx));
}
