/* Events over native events, user events and their mirrors, callbacks. */
#include "config.h"

#include "runtime/event.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"
#include "runtime/check.h"
#include "runtime/cluster.h"
#include "runtime/log.h"
#include "runtime/plan.h"
#include "runtime/stats.h"
#include "runtime/transport.h"

struct tt_callback {
  void (CL_CALLBACK *fn)(cl_event, cl_int, void *);
  void *data;
  cl_int type;
  cl_event event;
  struct tt_callback *next;
};

static void destroy_event(struct tt_object *o)
{
  cl_event e = (cl_event)o;
  if (e->native)
    TT_NATIVE_DISPATCH(e->native)->clReleaseEvent(e->native);
  if (e->user_mirrors) {
    for (cl_uint i = 0; i < e->context->ndomains; i++)
      if (e->user_mirrors[i]) {
        /* A mirror still pending would block its waiters forever: end it. */
        const cl_icd_dispatch *d = TT_NATIVE_DISPATCH(e->user_mirrors[i]);
        if (e->user_status > 0)
          d->clSetUserEventStatus(e->user_mirrors[i], CL_INVALID_EVENT);
        d->clReleaseEvent(e->user_mirrors[i]);
      }
    free(e->user_mirrors);
  }
  while (e->callbacks) {
    struct tt_callback *c = e->callbacks;
    e->callbacks = c->next;
    free(c);
  }
  free(e->notified);
  pthread_cond_destroy(&e->cond);
  if (e->queue)
    TT_RELEASE(e->queue);
  TT_RELEASE(e->context);
  free(e);
}

static cl_event alloc_event(cl_context ctx, cl_command_queue q, cl_command_type type)
{
  cl_event e = calloc(1, sizeof *e);
  if (!e)
    return NULL;
  tt_object_init(&e->obj, TT_EVENT, destroy_event);
  e->context = ctx;
  TT_RETAIN(ctx);
  e->queue = q;
  if (q)
    TT_RETAIN(q);
  e->type = type;
  e->owner = tt_cluster_rank();
  pthread_cond_init(&e->cond, NULL);
  return e;
}

/* Events of commands draw an id on every rank, in program order. */
static void name_event(cl_event e)
{
  e->gid = tt_cluster_next_id();
}

cl_event tt_event_new(cl_context ctx, cl_command_queue q, cl_command_type type, cl_uint dom,
                      cl_event native)
{
  cl_event e = alloc_event(ctx, q, type);
  if (!e) {
    TT_NATIVE_DISPATCH(native)->clReleaseEvent(native);
    return NULL;
  }
  e->domain = dom;
  e->native = native;
  name_event(e);
  return e;
}

/* An event Tutti sets itself, with room for its mirrors in every domain. */
static cl_event alloc_managed(cl_context ctx, cl_command_queue q, cl_command_type type,
                              cl_int status)
{
  cl_event e = alloc_event(ctx, q, type);
  if (!e)
    return NULL;
  e->user_status = status;
  e->user_mirrors = calloc(ctx->ndomains ? ctx->ndomains : 1, sizeof *e->user_mirrors);
  if (!e->user_mirrors) {
    TT_RELEASE(e);
    return NULL;
  }
  return e;
}

cl_event tt_event_new_managed(cl_context ctx, cl_command_queue q, cl_command_type type, int owner)
{
  cl_event e = alloc_managed(ctx, q, type, CL_QUEUED);
  if (!e)
    return NULL;
  e->owner = owner;
  name_event(e);
  return e;
}

cl_event tt_event_new_user(cl_context ctx)
{
  return alloc_managed(ctx, NULL, CL_COMMAND_USER, CL_SUBMITTED);
}

cl_int tt_event_native_in(cl_event e, cl_uint dom, cl_event *out)
{
  if (e->native) {
    if (e->domain == dom) {
      TT_NATIVE_DISPATCH(e->native)->clRetainEvent(e->native);
      *out = e->native;
      return CL_SUCCESS;
    }
    return tt_plan_bridge(e->context, dom, e->native, out);
  }
  /* A user event: one native user event per domain, set when the user sets ours. */
  cl_int err = CL_SUCCESS;
  pthread_mutex_lock(&e->obj.lock);
  cl_event m = e->user_mirrors[dom];
  if (!m) {
    struct tt_domain *dm = &e->context->domains[dom];
    m = dm->bp->d->clCreateUserEvent(dm->native, &err);
    if (m && e->user_status <= 0)
      dm->bp->d->clSetUserEventStatus(m, e->user_status);
    e->user_mirrors[dom] = m;
  }
  if (m)
    TT_NATIVE_DISPATCH(m)->clRetainEvent(m);
  pthread_mutex_unlock(&e->obj.lock);
  if (!m)
    return err ? err : CL_OUT_OF_RESOURCES;
  *out = m;
  return CL_SUCCESS;
}

cl_int tt_event_status(cl_event e)
{
  if (!e->native) {
    pthread_mutex_lock(&e->obj.lock);
    cl_int s = e->user_status;
    pthread_mutex_unlock(&e->obj.lock);
    return s;
  }
  cl_int s = CL_QUEUED;
  cl_int err = TT_NATIVE_DISPATCH(e->native)->clGetEventInfo(
      e->native, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL);
  return err == CL_SUCCESS ? s : err;
}

cl_int tt_event_wait(cl_event e)
{
  tt_check_sync();
  uint64_t t0 = tt_stats_now_ns();
  cl_int s;
  if (!e->native) {
    pthread_mutex_lock(&e->obj.lock);
    while (e->user_status > 0)
      pthread_cond_wait(&e->cond, &e->obj.lock);
    s = e->user_status;
    pthread_mutex_unlock(&e->obj.lock);
  } else {
    TT_NATIVE_DISPATCH(e->native)->clWaitForEvents(1, &e->native);
    s = tt_event_status(e);
  }
  atomic_fetch_add_explicit(&tt_stats.wait_ns, tt_stats_now_ns() - t0, memory_order_relaxed);
  return s;
}

static void run_callback(struct tt_callback *c, cl_int status)
{
  c->fn(c->event, status, c->data);
  TT_RELEASE(c->event);
  free(c);
}

cl_int tt_event_set_user_status(cl_event e, cl_int status)
{
  pthread_mutex_lock(&e->obj.lock);
  /* CL_INVALID_OPERATION if the execution status for event has already been changed by a
   * previous call to clSetUserEventStatus. */
  if (e->user_status <= 0) {
    pthread_mutex_unlock(&e->obj.lock);
    TT_LOG(TT_LOG_ERR, "clSetUserEventStatus: CL_INVALID_OPERATION (status already set)");
    return CL_INVALID_OPERATION;
  }
  pthread_mutex_unlock(&e->obj.lock);
  tt_event_complete(e, status);
  return CL_SUCCESS;
}

void tt_event_complete(cl_event e, cl_int status)
{
  pthread_mutex_lock(&e->obj.lock);
  if (e->user_status <= 0) {
    pthread_mutex_unlock(&e->obj.lock);
    return;
  }
  e->user_status = status;
  for (cl_uint i = 0; i < e->context->ndomains; i++)
    if (e->user_mirrors[i])
      TT_NATIVE_DISPATCH(e->user_mirrors[i])->clSetUserEventStatus(e->user_mirrors[i], status);
  struct tt_callback *list = e->callbacks;
  e->callbacks = NULL;
  pthread_cond_broadcast(&e->cond);
  pthread_mutex_unlock(&e->obj.lock);
  /* Callbacks run outside the lock: they may call back into OpenCL. Every registered type
   * has been passed now (CL_COMPLETE or an error ends the event). */
  while (list) {
    struct tt_callback *c = list;
    list = c->next;
    run_callback(c, status);
  }
}

/* Completion messages (SnuCL-D 3.2, 3.5): the owner of a command sends its final status to
 * the ranks that wait on it; each of them posted a receive for it in the same program step. */
struct note {
  cl_event event; /* receiving side: retained until the message arrives */
  int peer;       /* sending side: where the status goes */
  cl_int status;
};

static void CL_CALLBACK note_sent(void *arg, int ok)
{
  free(arg);
}

static void CL_CALLBACK send_note(cl_event e, cl_int status, void *arg)
{
  struct note *n = arg;
  n->status = status < 0 ? status : CL_COMPLETE;
  tt_transport_isend(TT_CH_EVENT, &n->status, sizeof n->status, n->peer, e->gid, note_sent, n);
  tt_transport_promise(-1);
}

static void note_arrived(void *arg, int ok)
{
  struct note *n = arg;
  if (!ok) {
    TT_WARN("the completion of event #%llu from rank %d did not arrive",
            (unsigned long long)n->event->gid, n->event->owner);
    n->status = CL_OUT_OF_RESOURCES;
  }
  tt_event_complete(n->event, n->status);
  TT_RELEASE(n->event);
  free(n);
}

void tt_event_share_with(cl_event e, int rank)
{
  int me = tt_cluster_rank();
  /* User events are replicated: every rank's host sets its own. */
  if (e->type == CL_COMMAND_USER && !e->queue)
    return;
  if (rank == e->owner || (me != e->owner && me != rank))
    return;
  pthread_mutex_lock(&e->obj.lock);
  bool todo = false;
  if (me == e->owner) {
    if (!e->notified)
      e->notified = calloc((size_t)tt_cluster_size() / 8 + 1, 1);
    if (e->notified && !(e->notified[rank / 8] & (1u << (rank % 8)))) {
      e->notified[rank / 8] |= (unsigned char)(1u << (rank % 8));
      todo = true;
    }
  } else if (!e->receiving) {
    e->receiving = todo = true;
  }
  pthread_mutex_unlock(&e->obj.lock);
  if (!todo)
    return;
  struct note *n = calloc(1, sizeof *n);
  if (!n)
    return;
  if (me == e->owner) {
    n->peer = rank;
    tt_transport_promise(1);
    if (tt_event_add_callback(e, CL_COMPLETE, send_note, n) != CL_SUCCESS) {
      tt_transport_promise(-1);
      free(n);
    }
  } else {
    TT_RETAIN(e);
    n->event = e;
    tt_transport_irecv(TT_CH_EVENT, &n->status, sizeof n->status, e->owner, e->gid, note_arrived, n);
  }
}

void tt_event_share_with_all(cl_event e)
{
  if (!tt_cluster_distributed())
    return;
  int me = tt_cluster_rank();
  if (me == e->owner) {
    for (int r = 0; r < tt_cluster_size(); r++)
      tt_event_share_with(e, r);
  } else {
    tt_event_share_with(e, me);
  }
}

static void CL_CALLBACK native_callback(cl_event native, cl_int status, void *data)
{
  tt_reaper_enter();
  run_callback(data, status);
  tt_reaper_leave();
}

cl_int tt_event_add_callback(cl_event e, cl_int type,
                             void (CL_CALLBACK *fn)(cl_event, cl_int, void *), void *data)
{
  struct tt_callback *c = calloc(1, sizeof *c);
  if (!c)
    return CL_OUT_OF_HOST_MEMORY;
  *c = (struct tt_callback){fn, data, type, e, NULL};
  TT_RETAIN(e);
  if (e->native) {
    cl_int err = TT_NATIVE_DISPATCH(e->native)->clSetEventCallback(e->native, type,
                                                                   native_callback, c);
    if (err != CL_SUCCESS) {
      TT_RELEASE(e);
      free(c);
    }
    return err;
  }
  pthread_mutex_lock(&e->obj.lock);
  /* Status values fall as a command advances: the callback is due once status <= type. */
  cl_int status = e->user_status;
  bool due = status <= type;
  if (!due) {
    c->next = e->callbacks;
    e->callbacks = c;
  }
  pthread_mutex_unlock(&e->obj.lock);
  if (due)
    run_callback(c, status);
  return CL_SUCCESS;
}
