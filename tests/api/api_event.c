/* Events: user events, callbacks, waits, status and profiling. */
#include <pthread.h>
#include <stdint.h>

#include "tests/api/check.h"

struct seen {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int calls;
  cl_int last_status;
  cl_event last_event;
};

static void CL_CALLBACK on_event(cl_event e, cl_int status, void *data)
{
  struct seen *s = data;
  pthread_mutex_lock(&s->lock);
  s->calls++;
  s->last_status = status;
  s->last_event = e;
  pthread_cond_broadcast(&s->cond);
  pthread_mutex_unlock(&s->lock);
}

static void wait_calls(struct seen *s, int n)
{
  pthread_mutex_lock(&s->lock);
  while (s->calls < n)
    pthread_cond_wait(&s->cond, &s->lock);
  pthread_mutex_unlock(&s->lock);
}

void test_event(struct fixture *f)
{
  cl_int err;
  cl_event u = clCreateUserEvent((cl_context)GARBAGE, &err);
  CHECK(u == NULL && err == CL_INVALID_CONTEXT);
  u = clCreateUserEvent(f->ctx, &err);
  OK(err);
  cl_int status;
  cl_command_type ct;
  cl_command_queue q;
  OK(clGetEventInfo(u, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
  CHECK(status == CL_SUBMITTED);
  OK(clGetEventInfo(u, CL_EVENT_COMMAND_TYPE, sizeof ct, &ct, NULL));
  CHECK(ct == CL_COMMAND_USER);
  OK(clGetEventInfo(u, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL));
  CHECK(q == NULL);
  cl_ulong t;
  CHECK_ERR(CL_PROFILING_INFO_NOT_AVAILABLE, clGetEventProfilingInfo(u, CL_PROFILING_COMMAND_START, sizeof t, &t, NULL));

  /* A user event gates commands on every device; nothing runs before it is set. */
  int v = 7, out[8] = {0};
  cl_mem m = clCreateBuffer(f->ctx, 0, sizeof out, NULL, &err);
  struct seen s = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 1, NULL};
  cl_event w[8];
  for (cl_uint d = 0; d < f->ndevs; d++)
    OK(clEnqueueWriteBuffer(f->q[d], m, CL_FALSE, d * sizeof(int), sizeof v, &v, 1, &u, &w[d]));
  for (cl_uint d = 0; d < f->ndevs; d++)
    OK(clFlush(f->q[d]));
  OK(clSetEventCallback(w[0], CL_COMPLETE, on_event, &s));
  OK(clGetEventInfo(w[0], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
  CHECK(status > CL_COMPLETE);
  CHECK(s.calls == 0);
  OK(clSetEventCallback(u, CL_COMPLETE, on_event, &s));
  CHECK_ERR(CL_INVALID_VALUE, clSetUserEventStatus(u, 5));
  OK(clSetUserEventStatus(u, CL_COMPLETE));
  CHECK_ERR(CL_INVALID_OPERATION, clSetUserEventStatus(u, CL_COMPLETE));
  OK(clWaitForEvents(f->ndevs, w));
  wait_calls(&s, 2);
  CHECK(s.last_status == CL_COMPLETE);
  OK(clEnqueueReadBuffer(f->q[0], m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  CHECK(out[0] == 7 && out[f->ndevs - 1] == 7);

  /* Profiling times of a finished command are ordered. */
  cl_ulong t0 = 0, t1 = 0, t2 = 0, t3 = 0;
  OK(clGetEventProfilingInfo(w[0], CL_PROFILING_COMMAND_QUEUED, sizeof t0, &t0, NULL));
  OK(clGetEventProfilingInfo(w[0], CL_PROFILING_COMMAND_SUBMIT, sizeof t1, &t1, NULL));
  OK(clGetEventProfilingInfo(w[0], CL_PROFILING_COMMAND_START, sizeof t2, &t2, NULL));
  OK(clGetEventProfilingInfo(w[0], CL_PROFILING_COMMAND_END, sizeof t3, &t3, NULL));
  CHECK(t0 <= t1 && t1 <= t2 && t2 <= t3 && t3 > 0);
  CHECK_ERR(CL_INVALID_VALUE, clGetEventProfilingInfo(w[0], 0x7777, sizeof t, &t, NULL));
  OK(clGetEventInfo(w[0], CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL));
  CHECK(q == f->q[0]);
  cl_context c;
  OK(clGetEventInfo(w[0], CL_EVENT_CONTEXT, sizeof c, &c, NULL));
  CHECK(c == f->ctx);
  cl_uint refs;
  OK(clRetainEvent(w[0]));
  OK(clGetEventInfo(w[0], CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
  CHECK(refs == 2);
  OK(clReleaseEvent(w[0]));
  for (cl_uint d = 0; d < f->ndevs; d++)
    OK(clReleaseEvent(w[d]));
  OK(clReleaseEvent(u));

  /* A user event that fails fails its dependants: a blocking wait reports it. */
  u = clCreateUserEvent(f->ctx, &err);
  cl_event dep;
  OK(clEnqueueMarkerWithWaitList(f->q[0], 1, &u, &dep));
  OK(clSetUserEventStatus(u, -42));
  CHECK_ERR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, clWaitForEvents(1, &u));
  CHECK_ERR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, clWaitForEvents(1, &dep));
  OK(clGetEventInfo(dep, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
  /* Terminated with the error of its wait list, whatever the backend made of it. */
  CHECK(status == -42);
  /* A callback registered after the end runs at once with the final status. */
  s.calls = 0;
  OK(clSetEventCallback(u, CL_COMPLETE, on_event, &s));
  CHECK(s.calls == 1 && s.last_status == -42 && s.last_event == u);
  OK(clReleaseEvent(dep));
  OK(clReleaseEvent(u));
  OK(clFinish(f->q[0]));

  /* Argument errors. */
  CHECK_ERR(CL_INVALID_VALUE, clWaitForEvents(0, NULL));
  cl_event bad = (cl_event)f->ctx;
  CHECK_ERR(CL_INVALID_EVENT, clWaitForEvents(1, &bad));
  CHECK_ERR(CL_INVALID_EVENT, clRetainEvent((cl_event)GARBAGE));
  CHECK_ERR(CL_INVALID_EVENT, clReleaseEvent((cl_event)GARBAGE));
  u = clCreateUserEvent(f->ctx, &err);
  CHECK_ERR(CL_INVALID_VALUE, clSetEventCallback(u, CL_COMPLETE, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clSetEventCallback(u, CL_QUEUED, on_event, &s));
  CHECK_ERR(CL_INVALID_VALUE, clGetEventInfo(u, 0x7777, sizeof status, &status, NULL));
  cl_context other = clCreateContext(NULL, 1, f->devs, NULL, NULL, &err);
  cl_event u2 = clCreateUserEvent(other, &err);
  cl_event two[2] = {u, u2};
  CHECK_ERR(CL_INVALID_CONTEXT, clWaitForEvents(2, two));
  OK(clSetUserEventStatus(u, CL_COMPLETE));
  OK(clSetUserEventStatus(u2, CL_COMPLETE));
  OK(clReleaseEvent(u2));
  OK(clReleaseContext(other));
  cl_event marker;
  OK(clEnqueueMarker(f->q[0], &marker));
  CHECK_ERR(CL_INVALID_EVENT, clSetUserEventStatus(marker, CL_COMPLETE));
  OK(clWaitForEvents(1, &marker));
  OK(clReleaseEvent(marker));
  OK(clReleaseEvent(u));
  OK(clReleaseMemObject(m));
}
