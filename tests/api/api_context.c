/* Contexts and command queues. */
#include <stdint.h>

#include "tests/api/check.h"

static int notified;
static void CL_CALLBACK notify(const char *e, const void *p, size_t cb, void *data)
{
  notified++;
}

void test_context(struct fixture *f)
{
  cl_int err = CL_SUCCESS;
  cl_context c;
  /* CL_INVALID_VALUE: no devices, zero devices, user_data without pfn_notify. */
  c = clCreateContext(NULL, 1, NULL, NULL, NULL, &err);
  CHECK(c == NULL && err == CL_INVALID_VALUE);
  c = clCreateContext(NULL, 0, f->devs, NULL, NULL, &err);
  CHECK(c == NULL && err == CL_INVALID_VALUE);
  int data;
  c = clCreateContext(NULL, 1, f->devs, NULL, &data, &err);
  CHECK(c == NULL && err == CL_INVALID_VALUE);
  /* CL_INVALID_DEVICE for a handle that is no device. */
  cl_device_id bad[2] = {f->devs[0], (cl_device_id)f->ctx};
  c = clCreateContext(NULL, 2, bad, NULL, NULL, &err);
  CHECK(c == NULL && err == CL_INVALID_DEVICE);
  /* CL_INVALID_PROPERTY for an unknown property, CL_INVALID_PLATFORM for a foreign one. */
  cl_context_properties unknown[] = {0x7777, 1, 0};
  c = clCreateContext(unknown, 1, f->devs, NULL, NULL, &err);
  CHECK(c == NULL && err == CL_INVALID_PROPERTY);
  cl_context_properties twice[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)f->platform,
                                   CL_CONTEXT_PLATFORM, (cl_context_properties)f->platform, 0};
  c = clCreateContext(twice, 1, f->devs, NULL, NULL, &err);
  CHECK(c == NULL && err == CL_INVALID_PROPERTY);
  cl_context_properties foreign[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)f->devs[0], 0};
  c = clCreateContext(foreign, 1, f->devs, NULL, NULL, &err);
  CHECK(c == NULL && err == CL_INVALID_PLATFORM);

  /* A good one, with properties and a callback; its queries. */
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)f->platform, 0};
  c = clCreateContext(props, f->ndevs, f->devs, notify, &data, &err);
  OK(err);
  cl_uint u = 0;
  OK(clGetContextInfo(c, CL_CONTEXT_NUM_DEVICES, sizeof u, &u, NULL));
  CHECK(u == f->ndevs);
  cl_device_id d[8];
  size_t size = 0;
  OK(clGetContextInfo(c, CL_CONTEXT_DEVICES, sizeof d, d, &size));
  CHECK(size == f->ndevs * sizeof(cl_device_id) && d[0] == f->devs[0]);
  cl_context_properties got[8];
  OK(clGetContextInfo(c, CL_CONTEXT_PROPERTIES, sizeof got, got, &size));
  CHECK(size == sizeof props && got[0] == CL_CONTEXT_PLATFORM &&
        got[1] == (cl_context_properties)f->platform && got[2] == 0);
  OK(clRetainContext(c));
  OK(clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof u, &u, NULL));
  CHECK(u == 2);
  OK(clReleaseContext(c));
  CHECK_ERR(CL_INVALID_VALUE, clGetContextInfo(c, 0x7777, sizeof u, &u, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clGetContextInfo(c, CL_CONTEXT_DEVICES, 1, d, NULL));
  OK(clReleaseContext(c));
  /* Without properties, CL_CONTEXT_PROPERTIES has size 0. */
  OK(clGetContextInfo(f->ctx, CL_CONTEXT_PROPERTIES, 0, NULL, &size));
  CHECK(size == 0);

  /* From type. */
  c = clCreateContextFromType(NULL, CL_DEVICE_TYPE_ALL, NULL, NULL, &err);
  OK(err);
  OK(clGetContextInfo(c, CL_CONTEXT_NUM_DEVICES, sizeof u, &u, NULL));
  CHECK(u == f->ndevs);
  OK(clReleaseContext(c));
  c = clCreateContextFromType(NULL, CL_DEVICE_TYPE_DEFAULT, NULL, NULL, &err);
  OK(err);
  OK(clGetContextInfo(c, CL_CONTEXT_NUM_DEVICES, sizeof u, &u, NULL));
  CHECK(u == 1);
  OK(clReleaseContext(c));
  c = clCreateContextFromType(NULL, CL_DEVICE_TYPE_ACCELERATOR, NULL, NULL, &err);
  CHECK(c == NULL && err == CL_DEVICE_NOT_FOUND);
  c = clCreateContextFromType(NULL, (cl_device_type)1 << 40, NULL, NULL, &err);
  CHECK(c == NULL && err == CL_INVALID_DEVICE_TYPE);

  CHECK_ERR(CL_INVALID_CONTEXT, clRetainContext((cl_context)GARBAGE));
  CHECK_ERR(CL_INVALID_CONTEXT, clReleaseContext((cl_context)f->devs[0]));
  CHECK_ERR(CL_INVALID_CONTEXT, clGetContextInfo((cl_context)GARBAGE, CL_CONTEXT_NUM_DEVICES,
                                                 sizeof u, &u, NULL));
}

void test_queue(struct fixture *f)
{
  cl_int err;
  cl_command_queue q;
  q = clCreateCommandQueue((cl_context)GARBAGE, f->devs[0], 0, &err);
  CHECK(q == NULL && err == CL_INVALID_CONTEXT);
  q = clCreateCommandQueue(f->ctx, (cl_device_id)f->ctx, 0, &err);
  CHECK(q == NULL && err == CL_INVALID_DEVICE);
  q = clCreateCommandQueue(f->ctx, f->devs[0], (cl_command_queue_properties)1 << 20, &err);
  CHECK(q == NULL && err == CL_INVALID_VALUE);
  /* A device outside the context. */
  if (f->ndevs > 1) {
    cl_context one = clCreateContext(NULL, 1, &f->devs[1], NULL, NULL, &err);
    OK(err);
    q = clCreateCommandQueue(one, f->devs[0], 0, &err);
    CHECK(q == NULL && err == CL_INVALID_DEVICE);
    OK(clReleaseContext(one));
  }
  q = clCreateCommandQueue(f->ctx, f->devs[0], CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
  OK(err);
  cl_command_queue_properties p = 0;
  OK(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof p, &p, NULL));
  CHECK(p == CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  cl_context c;
  cl_device_id d;
  cl_uint refs;
  OK(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof c, &c, NULL));
  CHECK(c == f->ctx);
  OK(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, NULL));
  CHECK(d == f->devs[0]);
  OK(clRetainCommandQueue(q));
  OK(clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, NULL));
  CHECK(refs == 2);
  OK(clReleaseCommandQueue(q));
  CHECK_ERR(CL_INVALID_VALUE, clGetCommandQueueInfo(q, 0x7777, sizeof p, &p, NULL));
  OK(clFlush(q));
  OK(clFinish(q));
  OK(clReleaseCommandQueue(q));
  /* A queue keeps its context alive. */
  c = clCreateContext(NULL, 1, f->devs, NULL, NULL, &err);
  q = clCreateCommandQueue(c, f->devs[0], 0, &err);
  OK(clReleaseContext(c));
  OK(clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
  CHECK(refs == 1);
  OK(clReleaseCommandQueue(q));
  CHECK_ERR(CL_INVALID_COMMAND_QUEUE, clFlush((cl_command_queue)GARBAGE));
  CHECK_ERR(CL_INVALID_COMMAND_QUEUE, clFinish((cl_command_queue)f->ctx));
  CHECK_ERR(CL_INVALID_COMMAND_QUEUE, clRetainCommandQueue((cl_command_queue)GARBAGE));
  CHECK_ERR(CL_INVALID_COMMAND_QUEUE, clReleaseCommandQueue((cl_command_queue)GARBAGE));
}
