/* Callbacks on native events for Tutti's own use (runtime/job/callback.h), with the sweep
 * that runs those a backend never calls. */
#include "config.h"

#include "runtime/job/callback.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "runtime/base/backend.h"
#include "runtime/base/log.h"
#include "runtime/base/object.h"
#include "runtime/job/cluster.h"
#include "runtime/job/transport.h"

/* A command failed somewhere: sweeps begin. */
static atomic_bool failures_seen;

/* Native callbacks still due (tt_native_callback), and whether a failure was seen. */
struct native_cb {
  void (CL_CALLBACK *fn)(cl_event, cl_int, void *);
  void *data;
  cl_event native;    /* retained while due */
  atomic_int fired;   /* by the backend or by the sweep, whichever came first */
  atomic_int refs;    /* the backend's call to come, and the list's (then the sweep's) */
  cl_int swept;       /* the failed status the sweep found */
  struct native_cb *prev, *next;
};

static void native_cb_put(struct native_cb *c)
{
  if (atomic_fetch_sub(&c->refs, 1) == 1)
    free(c);
}

static pthread_mutex_t due_lock = PTHREAD_MUTEX_INITIALIZER;
static struct native_cb *due;
static atomic_bool sweeping; /* the sweep is hooked into the progress thread */

static void due_unlink(struct native_cb *c)
{
  if (c->prev)
    c->prev->next = c->next;
  else
    due = c->next;
  if (c->next)
    c->next->prev = c->prev;
  c->prev = c->next = NULL;
}

static void CL_CALLBACK native_fired(cl_event native, cl_int status, void *data)
{
  struct native_cb *c = data;
  if (atomic_exchange(&c->fired, 1)) {
    native_cb_put(c); /* the sweep took it: it runs it and lets go of it */
    return;
  }
  pthread_mutex_lock(&due_lock);
  due_unlink(c);
  pthread_mutex_unlock(&due_lock);
  if (status < 0)
    tt_native_note_failure();
  tt_reaper_enter();
  c->fn(native, status, c->data);
  TT_NATIVE_DISPATCH(native)->clReleaseEvent(native);
  tt_reaper_leave();
  native_cb_put(c);
  native_cb_put(c);
}

/* Progress thread: after a failure, runs the due callbacks of failed commands. */
static void sweep(void)
{
  if (!atomic_load(&failures_seen))
    return;
  struct native_cb *ready = NULL;
  pthread_mutex_lock(&due_lock);
  for (struct native_cb *c = due, *next; c; c = next) {
    next = c->next;
    cl_int st = tt_native_status(c->native);
    if (st >= 0 || atomic_exchange(&c->fired, 1))
      continue;
    c->swept = st;
    due_unlink(c);
    c->next = ready;
    ready = c;
  }
  pthread_mutex_unlock(&due_lock);
  tt_reaper_enter();
  while (ready) {
    struct native_cb *c = ready;
    ready = c->next;
    TT_LOG(TT_LOG_SCHED, "a failed command's callback was not called by its backend: run now");
    c->fn(c->native, c->swept, c->data);
    TT_NATIVE_DISPATCH(c->native)->clReleaseEvent(c->native);
    native_cb_put(c); /* the backend's reference stays: it may still call native_fired */
  }
  tt_reaper_leave();
}

static void *sweeper_main(void *unused)
{
  for (;;) {
    nanosleep(&(struct timespec){0, 1000000}, NULL);
    sweep();
  }
  return NULL;
}

void tt_native_note_failure(void)
{
  if (atomic_exchange(&failures_seen, true) || tt_cluster_distributed() ||
      atomic_exchange(&sweeping, true))
    return;
  if (!tt_thread_start("tutti-sweeper", sweeper_main))
    TT_WARN("cannot start the thread that completes failed commands");
}

cl_int tt_native_callback(cl_event native, cl_int type,
                          void (CL_CALLBACK *fn)(cl_event, cl_int, void *), void *data)
{
  if (tt_cluster_distributed() && !atomic_exchange(&sweeping, true))
    tt_transport_on_poll(sweep);
  struct native_cb *c = calloc(1, sizeof *c);
  if (!c)
    return CL_OUT_OF_HOST_MEMORY;
  const cl_icd_dispatch *d = TT_NATIVE_DISPATCH(native);
  *c = (struct native_cb){.fn = fn, .data = data, .native = native};
  atomic_init(&c->refs, 2);
  d->clRetainEvent(native);
  pthread_mutex_lock(&due_lock);
  c->next = due;
  if (due)
    due->prev = c;
  due = c;
  pthread_mutex_unlock(&due_lock);
  cl_int err = d->clSetEventCallback(native, type, native_fired, c);
  if (err != CL_SUCCESS) {
    if (atomic_exchange(&c->fired, 1)) {
      native_cb_put(c); /* a sweep took it meanwhile: it runs it */
      return CL_SUCCESS;
    }
    pthread_mutex_lock(&due_lock);
    due_unlink(c);
    pthread_mutex_unlock(&due_lock);
    d->clReleaseEvent(native);
    free(c);
  }
  return err;
}

