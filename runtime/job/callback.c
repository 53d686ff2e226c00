/* Callbacks on native events for Tutti's own use (runtime/job/callback.h), with the sweep
 * that runs those a backend never calls. */
#include "config.h"

#include "runtime/job/callback.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <time.h>

#include "runtime/base/backend.h"
#include "runtime/base/env.h"
#include "runtime/base/log.h"
#include "runtime/base/object.h"
#include "runtime/job/cluster.h"
#include "runtime/job/stats.h"
#include "runtime/job/transport.h"

#define POLL_NAP_MAX_NS 32000L

/* A command failed somewhere: sweeps begin. */
static atomic_bool failures_seen;

/* Native callbacks still due (tt_native_callback), and whether a failure was seen. */
struct native_cb {
  void (CL_CALLBACK *fn)(cl_event, cl_int, void *);
  void *data;
  cl_event native;    /* retained while due */
  atomic_int fired;   /* by the backend or by the sweep, whichever came first */
  atomic_int refs;    /* the backend's call to come, the list's (then whoever runs it), and
                       * the poller's while it watches (tt_backend_polled) */
  cl_int swept;       /* the failed status the sweep found */
  cl_int type;        /* the status it waits for */
  struct native_cb *prev, *next;
  struct native_cb *polled_next; /* the poller's list (its own references: see poll_add) */
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

/* Runs c's callback with status, once c->fired was taken here: off the due list, and the
 * list's references (to c and its event) let go. */
static void fire(struct native_cb *c, cl_int status)
{
  pthread_mutex_lock(&due_lock);
  due_unlink(c);
  pthread_mutex_unlock(&due_lock);
  if (status < 0)
    tt_native_note_failure();
  tt_reaper_enter();
  c->fn(c->native, status, c->data);
  TT_NATIVE_DISPATCH(c->native)->clReleaseEvent(c->native);
  tt_reaper_leave();
  native_cb_put(c);
}

static void CL_CALLBACK native_fired(cl_event native, cl_int status, void *data)
{
  (void)native; /* c->native */
  struct native_cb *c = data;
  if (!atomic_exchange(&c->fired, 1))
    fire(c, status);
  native_cb_put(c); /* the backend's reference (the sweep or the poller may have run it) */
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

/* Set on Tutti's own threads that run callbacks (the sweeper, the poller). */
static _Thread_local bool own_thread;

bool tt_native_callback_on_own_thread(void)
{
  return own_thread;
}

static void *sweeper_main(void *unused)
{
  (void)unused;
  own_thread = true;
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
  if (!tt_thread_start("tutti-sweeper", sweeper_main, NULL))
    TT_WARN("cannot start the thread that completes failed commands");
}

/* --- Polling: callbacks of backends that call them late (tt_backend_polled) -------------
 * Every such callback is also on the poller's list, which holds a reference to it and to
 * its event: the poller asks each event's status and runs the callback itself once the
 * status is reached, unless the backend ran it first (c->fired decides, as for the sweep). */

/* Callbacks handed to the poller: a stack pushed without a lock (the host thread adds one
 * for each dependency it plans while the poller runs its passes), which the poller empties
 * into a list of its own. It sleeps on poll_cond only when it watches nothing. */
static _Atomic(struct native_cb *) incoming;
static atomic_bool poller_sleeping;
static pthread_mutex_t poll_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t poll_cond = PTHREAD_COND_INITIALIZER;
static atomic_bool poller_started;

/* The poller's pass over c: whether c stays on its list. */
static bool poll_one(struct native_cb *c)
{
  cl_int st = CL_QUEUED;
  /* A status the backend cannot tell is left to its own call of the callback. */
  if (!atomic_load(&c->fired) &&
      TT_NATIVE_DISPATCH(c->native)->clGetEventInfo(c->native, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                                    sizeof st, &st, NULL) == CL_SUCCESS) {
    if (st > c->type)
      return true;
    if (!atomic_exchange(&c->fired, 1)) {
      atomic_fetch_add_explicit(&tt_stats.poll_fired, 1, memory_order_relaxed);
      fire(c, st < 0 ? st : c->type);
    }
  }
  TT_NATIVE_DISPATCH(c->native)->clReleaseEvent(c->native); /* the poller's */
  native_cb_put(c);
  return false;
}

static void *poller_main(void *unused)
{
  (void)unused;
  own_thread = true;
  /* Naps of microseconds: the kernel's default slack (50 us) would stretch each. */
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  long nap_ns = 0;
  struct native_cb *mine = NULL, **end = &mine; /* watched, oldest first */
  for (;;) {
    struct native_cb *fresh = atomic_exchange(&incoming, NULL);
    if (!fresh && !mine) {
      pthread_mutex_lock(&poll_lock);
      atomic_store(&poller_sleeping, true);
      while (!(fresh = atomic_exchange(&incoming, NULL)))
        pthread_cond_wait(&poll_cond, &poll_lock);
      atomic_store(&poller_sleeping, false);
      pthread_mutex_unlock(&poll_lock);
      nap_ns = 0;
    }
    /* The stack holds the newest first: appended in the order they came. */
    struct native_cb *ordered = NULL;
    while (fresh) {
      struct native_cb *next = fresh->polled_next;
      fresh->polled_next = ordered;
      ordered = fresh;
      fresh = next;
    }
    *end = ordered;
    bool fired = false;
    struct native_cb *keep = NULL, **tail = &keep;
    for (struct native_cb *c = mine, *next; c; c = next) {
      next = c->polled_next;
      if (poll_one(c)) {
        *tail = c;
        tail = &c->polled_next;
      } else {
        fired = true;
      }
    }
    *tail = NULL;
    mine = keep;
    end = keep ? tail : &mine;
    /* Back to asking at once after something completed; else naps growing to 32 us. */
    nap_ns = fired ? 0 : nap_ns ? (nap_ns * 2 > POLL_NAP_MAX_NS ? POLL_NAP_MAX_NS : nap_ns * 2)
                                : 1000;
    if (nap_ns && mine)
      nanosleep(&(struct timespec){0, nap_ns}, NULL);
  }
  return NULL;
}

/* Puts c on the poller's list with the poller's references (taken by the caller). Returns
 * false, references untouched, when the poller cannot start. */
static bool poll_add(struct native_cb *c)
{
  if (!atomic_load(&poller_started)) {
    pthread_mutex_lock(&poll_lock);
    if (!atomic_load(&poller_started))
      atomic_store(&poller_started, tt_thread_start("tutti-poller", poller_main, NULL));
    pthread_mutex_unlock(&poll_lock);
    if (!atomic_load(&poller_started))
      return false;
  }
  atomic_fetch_add_explicit(&tt_stats.polled, 1, memory_order_relaxed);
  struct native_cb *head = atomic_load(&incoming);
  do
    c->polled_next = head;
  while (!atomic_compare_exchange_weak(&incoming, &head, c));
  /* The poller set poller_sleeping before its last look at incoming: either it saw c, or
   * this sees it asleep and wakes it (under the lock, so not before it waits). */
  if (atomic_load(&poller_sleeping)) {
    pthread_mutex_lock(&poll_lock);
    pthread_cond_signal(&poll_cond);
    pthread_mutex_unlock(&poll_lock);
  }
  return true;
}

/* The poller's references on c, when it could not take c. */
static void poll_refused(struct native_cb *c)
{
  TT_WARN("cannot start the thread that polls events: callbacks come from the backend");
  TT_NATIVE_DISPATCH(c->native)->clReleaseEvent(c->native);
  native_cb_put(c);
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
  c->type = type;
  bool polled = tt_backend_polled(TT_VENDOR_DISPATCH(native));
  bool only = tt_env()->event_poll == 2; /* the poller alone runs it */
  /* The list's, and the backend's call to come or (only) the poller's, and the poller's. */
  atomic_init(&c->refs, polled && !only ? 3 : 2);
  d->clRetainEvent(native);
  if (polled)
    d->clRetainEvent(native); /* the poller's */
  pthread_mutex_lock(&due_lock);
  c->next = due;
  if (due)
    due->prev = c;
  due = c;
  pthread_mutex_unlock(&due_lock);
  if (only) {
    if (poll_add(c))
      return CL_SUCCESS;
    /* The backend's call takes the poller's place. */
    d->clReleaseEvent(native);
    polled = false;
  }
  cl_int err = d->clSetEventCallback(native, type, native_fired, c);
  if (err != CL_SUCCESS) {
    if (atomic_exchange(&c->fired, 1)) {
      native_cb_put(c); /* a sweep took it meanwhile: it runs it */
      if (polled && !poll_add(c))
        poll_refused(c);
      return CL_SUCCESS;
    }
    pthread_mutex_lock(&due_lock);
    due_unlink(c);
    pthread_mutex_unlock(&due_lock);
    d->clReleaseEvent(native);
    if (polled)
      d->clReleaseEvent(native);
    free(c);
    return err;
  }
  if (polled && !poll_add(c))
    poll_refused(c);
  return CL_SUCCESS;
}

cl_int tt_native_free_after(cl_event native, void (CL_CALLBACK *fn)(cl_event, cl_int, void *),
                            void *data)
{
  return TT_NATIVE_DISPATCH(native)->clSetEventCallback(native, CL_COMPLETE, fn, data);
}
