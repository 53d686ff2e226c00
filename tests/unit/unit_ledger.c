/* Unit test of the native event ledger (runtime/base/ledger.c, built here with TT_LEDGER): a fake
 * vendor whose events count their references; every misuse the ledger exists for stops a
 * child process with its message, correct use passes through to the vendor. No MPI. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/base/backend.h"
#include "tests/unit/unit.h"

/* The fake vendor: handles start with its table; an event counts what the vendor saw. */
static cl_icd_dispatch vendor;
struct _cl_context {
  const cl_icd_dispatch *d;
};
struct _cl_command_queue {
  const cl_icd_dispatch *d;
};
struct _cl_event {
  const cl_icd_dispatch *d;
  int refs;
  cl_int status;
};
static struct _cl_context context = {&vendor};
static struct _cl_command_queue queue = {&vendor};

static cl_event new_event(void)
{
  cl_event e = calloc(1, sizeof *e);
  e->d = &vendor;
  e->refs = 1;
  e->status = CL_QUEUED;
  return e;
}

static cl_event CL_API_CALL v_user(cl_context c, cl_int *err)
{
  *err = CL_SUCCESS;
  return new_event();
}

static cl_int CL_API_CALL v_retain(cl_event e)
{
  e->refs++;
  return CL_SUCCESS;
}

static cl_int CL_API_CALL v_release(cl_event e)
{
  e->refs--; /* never freed: the test reads the count afterwards */
  return CL_SUCCESS;
}

static cl_int CL_API_CALL v_status(cl_event e, cl_int s)
{
  e->status = s;
  return CL_SUCCESS;
}

static cl_uint waited;
static cl_int CL_API_CALL v_marker(cl_command_queue q, cl_uint n, const cl_event *list,
                                   cl_event *ev)
{
  waited = n;
  if (ev)
    *ev = new_event();
  return CL_SUCCESS;
}

/* Runs f in a child: whether it ended by abort() with the ledger's message naming `call`. */
static int stopped(void (*f)(const cl_icd_dispatch *), const char *call)
{
  int fds[2];
  if (pipe(fds))
    return 0;
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    f(tt_ledger_table(&vendor));
    _exit(0);
  }
  close(fds[1]);
  char out[4096] = "";
  size_t n = 0;
  ssize_t r;
  while (n + 1 < sizeof out && (r = read(fds[0], out + n, sizeof out - 1 - n)) > 0)
    n += (size_t)r;
  out[n] = 0;
  close(fds[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  bool ok = WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && strstr(out, "event ledger") &&
            strstr(out, call);
  if (!ok)
    fprintf(stderr, "expected the ledger to stop at %s; the child said:\n%s", call, out);
  return ok;
}

static void release_twice(const cl_icd_dispatch *d)
{
  cl_int err;
  cl_event e = d->clCreateUserEvent(&context, &err);
  d->clReleaseEvent(e);
  d->clReleaseEvent(e);
}

static void wait_on_released(const cl_icd_dispatch *d)
{
  cl_int err;
  cl_event e = d->clCreateUserEvent(&context, &err);
  d->clReleaseEvent(e);
  d->clEnqueueMarkerWithWaitList(&queue, 1, &e, NULL);
}

static void set_released(const cl_icd_dispatch *d)
{
  cl_event e = NULL;
  d->clEnqueueMarkerWithWaitList(&queue, 0, NULL, &e);
  d->clRetainEvent(e);
  d->clReleaseEvent(e);
  d->clReleaseEvent(e);
  d->clSetUserEventStatus(e, CL_COMPLETE);
}

int main(void)
{
  vendor.clCreateUserEvent = v_user;
  vendor.clRetainEvent = v_retain;
  vendor.clReleaseEvent = v_release;
  vendor.clSetUserEventStatus = v_status;
  vendor.clEnqueueMarkerWithWaitList = v_marker;

  const cl_icd_dispatch *d = tt_ledger_table(&vendor);
  CHECK(d != &vendor);
  CHECK(tt_ledger_table(&vendor) == d);
  CHECK(tt_ledger_table(d) == d);
  /* Handles carry the vendor's own table; the macro hands out the ledger's. */
  CHECK(TT_NATIVE_DISPATCH(&queue) == d);
  /* Slots the vendor left empty stay empty. */
  CHECK(d->clWaitForEvents == NULL);

  /* Correct use reaches the vendor. */
  cl_int err = -1;
  cl_event u = d->clCreateUserEvent(&context, &err);
  CHECK(err == CL_SUCCESS && u && u->refs == 1);
  cl_event m = NULL;
  CHECK(d->clEnqueueMarkerWithWaitList(&queue, 1, &u, &m) == CL_SUCCESS && m && waited == 1);
  CHECK(d->clRetainEvent(u) == CL_SUCCESS && u->refs == 2);
  CHECK(d->clSetUserEventStatus(u, CL_COMPLETE) == CL_SUCCESS && u->status == CL_COMPLETE);
  CHECK(d->clReleaseEvent(u) == CL_SUCCESS && d->clReleaseEvent(u) == CL_SUCCESS && u->refs == 0);
  CHECK(d->clReleaseEvent(m) == CL_SUCCESS && m->refs == 0);

  /* Misuse stops the process, naming the call. */
  CHECK(stopped(release_twice, "clReleaseEvent"));
  CHECK(stopped(wait_on_released, "clEnqueueMarkerWithWaitList"));
  CHECK(stopped(set_released, "clSetUserEventStatus"));

  printf("unit_ledger: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
