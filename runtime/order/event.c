/* Events over native events, user events and their mirrors, callbacks. */
#include "config.h"

#include "runtime/order/event.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/base/backend.h"
#include "runtime/job/check.h"
#include "runtime/job/cluster.h"
#include "runtime/job/cluster_share.h"
#include "runtime/base/log.h"
#include "runtime/order/bridge.h"
#include "runtime/job/stats.h"
#include "runtime/job/transport.h"
#include "runtime/job/turns.h"
#include "runtime/job/wire.h"
#include "runtime/job/callback.h"

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
  for (cl_uint i = 0; i < e->nspan; i++)
    TT_RELEASE(e->span[i]);
  free(e->span);
  tt_fail_put(e->fail);
  if (e->native)
    TT_NATIVE_DISPATCH(e->native)->clReleaseEvent(e->native);
  if (e->prof)
    TT_NATIVE_DISPATCH(e->prof)->clReleaseEvent(e->prof);
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
  for (size_t i = 0; i < e->gates.n; i++)
    TT_RELEASE(e->gates.ev[i]);
  free(e->gates.ev);
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
    return tt_order_bridge(e->context, dom, e->native, false, out);
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

/* A native command's status as the program sees it: its gate's error if its gate failed,
 * whatever the backend made of that (NVIDIA runs the command; PoCL may call it complete,
 * then failed with an error of its own): the same on every rank, since the owner's status
 * batches read it here too. */
static cl_int gated_status(cl_event e, cl_int s)
{
  cl_int f = e->fail ? atomic_load(&e->fail->status) : CL_COMPLETE;
  return f < 0 ? f : s;
}

cl_int tt_event_status(cl_event e)
{
  if (!e->native) {
    pthread_mutex_lock(&e->obj.lock);
    cl_int s = e->user_status;
    pthread_mutex_unlock(&e->obj.lock);
    return s;
  }
  return gated_status(e, tt_native_status(e->native));
}

cl_int tt_event_agreed_status(cl_event e)
{
  if (!tt_cluster_distributed() || !e->queue)
    return tt_event_status(e);
  pthread_mutex_lock(&e->obj.lock);
  bool settled = e->settled;
  cl_int s = e->settled_status;
  pthread_mutex_unlock(&e->obj.lock);
  if (settled)
    return s;
  /* Whatever the answer, the final statuses of e and of the commands before it will reach
   * every rank (the answer may send the program on to a wait that needs them). */
  tt_event_batch_waited(tt_event_share_in_order(e), NULL, CL_COMPLETE);
  s = e->owner == tt_cluster_rank() ? tt_event_status(e) : CL_QUEUED;
  size_t len = 0;
  if (tt_cluster_share_answer(e->owner, &s, NULL, &len, 0) != 0)
    return CL_OUT_OF_RESOURCES;
  if (s > CL_COMPLETE)
    return s;
  tt_event_wait(e);
  pthread_mutex_lock(&e->obj.lock);
  e->settled = true;
  e->settled_status = s;
  pthread_mutex_unlock(&e->obj.lock);
  return s;
}

cl_int tt_event_wait(cl_event e)
{
  tt_turn_give(); /* another host thread may be what ends the wait */
  tt_check_sync();
  uint64_t t0 = tt_stats_now_ns();
  cl_int s;
  if (!e->native) {
    /* A managed event: completed by a message (another rank's command, a read's bytes). */
    bool messages = tt_cluster_distributed() && e->type != CL_COMMAND_USER;
    if (messages)
      tt_transport_host_waits(1);
    if (messages && tt_transport_cores_to_spare()) {
      /* The message mostly comes within tens of microseconds: polling for it spares the
       * wake-up of a sleeping thread, a good part of a small read reaching every rank
       * (doc/testing.md, "Figures behind the code"). */
      uint64_t until = t0 + TT_HOST_SPIN_NS;
      while (__atomic_load_n(&e->user_status, __ATOMIC_ACQUIRE) > 0 && tt_stats_now_ns() < until)
        sched_yield();
    }
    pthread_mutex_lock(&e->obj.lock);
    while (e->user_status > 0)
      pthread_cond_wait(&e->cond, &e->obj.lock);
    s = e->user_status;
    pthread_mutex_unlock(&e->obj.lock);
    if (messages)
      tt_transport_host_waits(-1);
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
  if (status < 0)
    tt_native_note_failure();
  pthread_mutex_lock(&e->obj.lock);
  if (e->user_status <= 0) {
    pthread_mutex_unlock(&e->obj.lock);
    return;
  }
  if (e->holds > 0) {
    /* Another rank's command, its status here before this host set its user events. */
    e->held = true;
    e->held_status = status;
    pthread_mutex_unlock(&e->obj.lock);
    return;
  }
  __atomic_store_n(&e->user_status, status, __ATOMIC_RELEASE);
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

cl_int tt_event_command_status(cl_event e)
{
  cl_event native = e->native ? e->native : e->prof;
  return native ? gated_status(e, tt_native_status(native)) : tt_event_status(e);
}

uint64_t tt_event_native_ns(cl_event e)
{
  cl_event native = e->native ? e->native : e->prof;
  cl_ulong t[2] = {0, 0};
  if (!native ||
      TT_NATIVE_DISPATCH(native)->clGetEventProfilingInfo(native, CL_PROFILING_COMMAND_START,
                                                          sizeof t[0], &t[0], NULL) != CL_SUCCESS ||
      TT_NATIVE_DISPATCH(native)->clGetEventProfilingInfo(native, CL_PROFILING_COMMAND_END,
                                                          sizeof t[1], &t[1], NULL) != CL_SUCCESS)
    return 0;
  return t[1] > t[0] ? t[1] - t[0] : 0;
}

/* The final status of a command whose completion callback says `status`: some backends
 * call CL_COMPLETE callbacks with CL_COMPLETE for commands that failed (PoCL, when the
 * command's wait list failed), so the event itself is asked too. */
static cl_int final_status(cl_event e, cl_int status)
{
  if (status < 0)
    return status;
  cl_int s = tt_event_command_status(e);
  return s < 0 ? s : CL_COMPLETE;
}

static void CL_CALLBACK send_note(cl_event e, cl_int status, void *arg)
{
  struct note *n = arg;
  n->status = final_status(e, status);
  if (tt_transport_isend(TT_CH_EVENT, &n->status, sizeof n->status, n->peer, e->gid, note_sent,
                         n) != 0) {
    TT_WARN("sending the completion of event #%llu to rank %d failed",
            (unsigned long long)e->gid, n->peer);
    note_sent(n, 0);
  }
  tt_transport_promise(-1);
}

static void note_arrived(void *arg, int ok)
{
  struct note *n = arg;
  cl_event e = n->event;
  if (ok)
    tt_transport_check(e->owner, TT_CH_EVENT,
                       tt_wire_statuses_check(&n->status, tt_transport_received(), 1));
  if (!ok) {
    TT_WARN("the completion of event #%llu from rank %d did not arrive",
            (unsigned long long)e->gid, e->owner);
    n->status = CL_OUT_OF_RESOURCES;
  }
  if (e->broadcast) {
    /* The owner's status may come before the bytes it sent (another channel, or along a
     * chain through other ranks): it waits for them (tt_event_bytes_here). */
    pthread_mutex_lock(&e->obj.lock);
    bool wait = !e->bytes_here;
    if (wait) {
      e->owner_said = true;
      e->owner_status = n->status;
    } else if (n->status >= 0 && e->bytes_status < 0) {
      n->status = e->bytes_status; /* the bytes did not all come */
    }
    pthread_mutex_unlock(&e->obj.lock);
    if (wait) {
      TT_RELEASE(e);
      free(n);
      return;
    }
  }
  tt_event_complete(e, n->status);
  TT_RELEASE(n->event);
  free(n);
}

void tt_event_bytes_here(cl_event e, cl_int status)
{
  pthread_mutex_lock(&e->obj.lock);
  e->bytes_here = true;
  e->bytes_status = status;
  /* The owner's status is on its way (asked for before the bytes could come): it completes
   * the event (note_arrived), so that every rank ends with the owner's word. */
  bool later = e->receiving && !e->owner_said;
  if (e->owner_said && e->owner_status < 0 && status >= 0)
    status = e->owner_status;
  pthread_mutex_unlock(&e->obj.lock);
  if (!later)
    tt_event_complete(e, status);
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
    if (tt_transport_irecv(TT_CH_EVENT, &n->status, sizeof n->status, e->owner, e->gid,
                           note_arrived, n) != 0)
      note_arrived(n, 0);
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
  run_callback(data, gated_status(((struct tt_callback *)data)->event, status));
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
    cl_int err = tt_native_callback(e->native, type, native_callback, c);
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

/* Queues: status batches and reads under way (runtime/order/event.h). */

/* A list longer than this goes out as a batch without waiting for clFinish, so that a
 * program that never finishes its queues keeps a bounded number of events. */
enum { BATCH_MAX = 256 };

static int events_push(struct tt_events *l, cl_event e)
{
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 16;
    cl_event *ev = realloc(l->ev, cap * sizeof *ev);
    if (!ev)
      return -1;
    l->ev = ev;
    l->cap = cap;
  }
  TT_RETAIN(e);
  l->ev[l->n++] = e;
  return 0;
}

void tt_event_track(cl_event e)
{
  cl_command_queue q = e->queue;
  if (!q || !tt_cluster_distributed())
    return;
  pthread_mutex_lock(&q->obj.lock);
  int rc = events_push(&q->tracked, e);
  bool full = q->tracked.n >= BATCH_MAX;
  pthread_mutex_unlock(&q->obj.lock);
  if (rc != 0)
    TT_WARN("out of memory tracking event #%llu: its status may stay behind on ranks that "
            "do not run it", (unsigned long long)e->gid);
  if (full)
    tt_event_batch_waited(tt_event_batch(q), NULL, CL_COMPLETE);
}

struct batch {
  cl_event *ev;
  size_t n;
  /* The message: each event's time on its device (tt_event_native_ns), then its status. */
  uint64_t *msg;
  cl_int *status;
  atomic_int pending; /* owner: sends under way, plus the callback and a waiting host thread */
  atomic_bool sent;   /* owner: the statuses went out (from whichever saw the end first) */
};

static size_t batch_bytes(size_t n)
{
  return n * (sizeof(uint64_t) + sizeof(cl_int));
}

static void batch_free(struct batch *b)
{
  for (size_t i = 0; i < b->n; i++)
    TT_RELEASE(b->ev[i]);
  free(b->ev);
  free(b->msg);
  free(b);
}

static void batch_sent(void *arg, int ok)
{
  struct batch *b = arg;
  if (atomic_fetch_sub(&b->pending, 1) == 1)
    batch_free(b);
}

/* Owner: the last event of the batch completed, so did every earlier one of the queue; the
 * statuses go out once, from the backend's callback or from a host thread whose own wait on
 * that event ended first (tt_event_batch_waited): a backend may call back tens of
 * microseconds later. Either drops its hold on b. */
static void batch_fire(struct batch *b, cl_int status)
{
  if (!atomic_exchange(&b->sent, true)) {
    for (size_t i = 0; i < b->n; i++) {
      b->status[i] = final_status(b->ev[i], i + 1 == b->n ? status : CL_COMPLETE);
      b->msg[i] = tt_event_native_ns(b->ev[i]);
    }
    int me = tt_cluster_rank(), n = tt_cluster_size();
    atomic_fetch_add(&b->pending, n - 1); /* one per send */
    for (int r = 0; r < n; r++)
      if (r != me &&
          tt_transport_isend(TT_CH_BATCH, b->msg, batch_bytes(b->n), r,
                             b->ev[b->n - 1]->gid, batch_sent, b) != 0) {
        TT_WARN("sending the statuses of %zu events to rank %d failed", b->n, r);
        batch_sent(b, 0);
      }
    tt_transport_promise(-1);
  }
  batch_sent(b, 1);
}

static void CL_CALLBACK batch_ready(cl_event last, cl_int status, void *arg)
{
  (void)last;
  batch_fire(arg, status);
}

/* Elsewhere: the owner's statuses arrived. Reads whose bytes come here complete when they
 * arrive, not by the batch. */
static void batch_arrived(void *arg, int ok)
{
  struct batch *b = arg;
  if (ok)
    tt_transport_check(b->ev[b->n - 1]->owner, TT_CH_BATCH,
                       tt_wire_batch_check(b->msg, tt_transport_received(), b->n));
  for (size_t i = 0; i < b->n; i++) {
    b->ev[i]->ns = ok ? b->msg[i] : 0;
    if (!b->ev[i]->broadcast)
      tt_event_complete(b->ev[i], ok ? b->status[i] : CL_OUT_OF_RESOURCES);
  }
  batch_free(b);
}

static void describe_batch(void *arg, char *buf, size_t cap)
{
  const struct batch *b = arg;
  snprintf(buf, cap, "the statuses of %zu events up to #%llu", b->n,
           (unsigned long long)b->ev[b->n - 1]->gid);
}

/* The batch of the events of list l (taken over), in their queue's order. */
static struct tt_batch *batch_of(struct tt_events l)
{
  if (!l.n) {
    free(l.ev);
    return NULL;
  }
  struct batch *b = calloc(1, sizeof *b);
  uint64_t *msg = calloc(1, batch_bytes(l.n));
  if (!b || !msg) {
    TT_WARN("out of memory for the statuses of %zu events", l.n);
    free(b);
    free(msg);
    for (size_t i = 0; i < l.n; i++)
      TT_RELEASE(l.ev[i]);
    free(l.ev);
    return NULL;
  }
  static bool described;
  if (!described) {
    described = true;
    tt_transport_describe_with(TT_CH_BATCH, describe_batch);
  }
  b->ev = l.ev;
  b->n = l.n;
  b->msg = msg;
  b->status = (cl_int *)(msg + l.n);
  cl_event last = l.ev[l.n - 1];
  if (last->owner == tt_cluster_rank()) {
    tt_transport_promise(1);
    /* Held by the callback and by the caller (tt_event_batch_waited). */
    atomic_init(&b->pending, 2);
    if (tt_event_add_callback(last, CL_COMPLETE, batch_ready, b) != CL_SUCCESS)
      batch_ready(last, tt_event_wait(last), b);
    return (struct tt_batch *)b;
  }
  if (tt_transport_irecv(TT_CH_BATCH, b->msg, batch_bytes(b->n), last->owner,
                         last->gid, batch_arrived, b) != 0) {
    TT_WARN("receiving the statuses of %zu events from rank %d failed", b->n, last->owner);
    batch_arrived(b, 0);
  }
  return NULL;
}

struct tt_batch *tt_event_batch(cl_command_queue q)
{
  pthread_mutex_lock(&q->obj.lock);
  struct tt_events l = q->tracked;
  q->tracked = (struct tt_events){NULL, 0, 0};
  pthread_mutex_unlock(&q->obj.lock);
  return batch_of(l);
}

struct tt_batch *tt_event_share_in_order(cl_event e)
{
  cl_command_queue q = e->queue;
  if (!tt_cluster_distributed())
    return NULL;
  struct tt_events l = {NULL, 0, 0};
  if (q && !(q->props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)) {
    pthread_mutex_lock(&q->obj.lock);
    struct tt_events *t = &q->tracked;
    size_t n = t->n;
    while (n && t->ev[n - 1] != e)
      n--;
    /* e and the events before it go; the rest stays tracked, in a list of its own. */
    cl_event *rest = n && n < t->n ? malloc((t->n - n) * sizeof *rest) : NULL;
    if (n && (n == t->n || rest)) {
      l = *t;
      l.n = n;
      if (rest)
        memcpy(rest, t->ev + n, (t->n - n) * sizeof *rest);
      *t = (struct tt_events){rest, rest ? t->n - n : 0, rest ? t->n - n : 0};
    }
    pthread_mutex_unlock(&q->obj.lock);
  }
  if (!l.n) {
    /* Not tracked any more (its batch is on its way), or out of memory: its own status. */
    tt_event_share_with_all(e);
    return NULL;
  }
  return batch_of(l);
}

void tt_event_batch_waited(struct tt_batch *handle, cl_event waited, cl_int status)
{
  struct batch *b = (struct batch *)handle;
  if (!b)
    return;
  if (waited == b->ev[b->n - 1] && status <= CL_COMPLETE)
    batch_fire(b, status);
  else
    batch_sent(b, 1);
}

void tt_event_broadcast_pending(cl_event e)
{
  cl_command_queue q = e->queue;
  pthread_mutex_lock(&q->obj.lock);
  /* Reads already done leave the list (this rank's own decision: no other rank counts it). */
  size_t keep = 0;
  for (size_t i = 0; i < q->broadcasts.n; i++) {
    cl_event s = q->broadcasts.ev[i];
    if (tt_event_status(s) > CL_COMPLETE)
      q->broadcasts.ev[keep++] = s;
    else
      TT_RELEASE(s);
  }
  q->broadcasts.n = keep;
  if (events_push(&q->broadcasts, e) != 0)
    TT_WARN("out of memory: clFinish may not wait for the bytes of read #%llu",
            (unsigned long long)e->seq);
  pthread_mutex_unlock(&q->obj.lock);
}

void tt_event_wait_broadcasts(cl_command_queue q, uint64_t seq)
{
  for (;;) {
    cl_event e = NULL;
    pthread_mutex_lock(&q->obj.lock);
    for (size_t i = 0; i < q->broadcasts.n && !e; i++)
      if (q->broadcasts.ev[i]->seq <= seq) {
        e = q->broadcasts.ev[i];
        q->broadcasts.ev[i] = q->broadcasts.ev[--q->broadcasts.n];
      }
    pthread_mutex_unlock(&q->obj.lock);
    if (!e)
      return;
    tt_event_wait(e);
    TT_RELEASE(e);
  }
}

static void CL_CALLBACK let_go(cl_event e, cl_int status, void *arg)
{
}

void tt_event_release_queue(cl_command_queue q)
{
  tt_event_batch_waited(tt_event_batch(q), NULL, CL_COMPLETE);
  pthread_mutex_lock(&q->obj.lock);
  struct tt_events l = q->broadcasts;
  q->broadcasts = (struct tt_events){NULL, 0, 0};
  pthread_mutex_unlock(&q->obj.lock);
  /* A callback holds each read until it is done, then lets it (and its queue) go. */
  for (size_t i = 0; i < l.n; i++) {
    tt_event_add_callback(l.ev[i], CL_COMPLETE, let_go, NULL);
    TT_RELEASE(l.ev[i]);
  }
  free(l.ev);
}

void tt_event_forget_queue(cl_command_queue q)
{
  for (size_t i = 0; i < q->gates.n; i++)
    TT_RELEASE(q->gates.ev[i]);
  free(q->gates.ev);
  for (size_t i = 0; i < q->broadcasts.n; i++)
    TT_RELEASE(q->broadcasts.ev[i]);
  for (size_t i = 0; i < q->tracked.n; i++)
    TT_RELEASE(q->tracked.ev[i]);
  free(q->broadcasts.ev);
  free(q->tracked.ev);
}

/* --- Other ranks' commands behind this rank's user events ------------------------------ */

static bool user_unset(cl_event u)
{
  if (u->type != CL_COMMAND_USER || u->queue || u->native)
    return false;
  pthread_mutex_lock(&u->obj.lock);
  bool unset = u->user_status > 0;
  pthread_mutex_unlock(&u->obj.lock);
  return unset;
}

/* Adds the user events of ev[0..n) not set here yet to g, once each. */
static void gates_add(struct tt_events *g, const cl_event *ev, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    bool have = false;
    for (size_t k = 0; k < g->n && !have; k++)
      have = g->ev[k] == ev[i];
    if (!have && user_unset(ev[i]))
      events_push(g, ev[i]);
  }
}

/* A copy of e's list (retained), taken under its lock. */
static struct tt_events gates_of(struct tt_object *o, const struct tt_events *l)
{
  struct tt_events c = {NULL, 0, 0};
  pthread_mutex_lock(&o->lock);
  for (size_t i = 0; i < l->n; i++)
    events_push(&c, l->ev[i]);
  pthread_mutex_unlock(&o->lock);
  return c;
}

static void gates_free(struct tt_events *l)
{
  for (size_t i = 0; i < l->n; i++)
    TT_RELEASE(l->ev[i]);
  free(l->ev);
  *l = (struct tt_events){NULL, 0, 0};
}

static void CL_CALLBACK hold_released(cl_event u, cl_int status, void *arg)
{
  (void)u;
  (void)status; /* an error set here shows through the owner's status */
  cl_event e = arg;
  pthread_mutex_lock(&e->obj.lock);
  bool go = --e->holds == 0 && e->held;
  cl_int s = e->held_status;
  pthread_mutex_unlock(&e->obj.lock);
  if (go)
    tt_event_complete(e, s);
  TT_RELEASE(e);
}

void tt_event_gate(cl_command_queue q, cl_uint nwait, const cl_event *wait, cl_event e)
{
  if (!tt_cluster_distributed() || !q)
    return;
  bool in_order = !(q->props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  if (!in_order && !nwait)
    return;
  struct tt_events g = {NULL, 0, 0};
  for (cl_uint i = 0; wait && i < nwait; i++) {
    gates_add(&g, &wait[i], 1);
    struct tt_events through = gates_of(&wait[i]->obj, &wait[i]->gates);
    gates_add(&g, through.ev, through.n);
    gates_free(&through);
  }
  if (in_order) {
    pthread_mutex_lock(&q->obj.lock);
    bool none_before = q->gates.n == 0;
    pthread_mutex_unlock(&q->obj.lock);
    if (none_before && !g.n)
      return; /* nothing gates it, nor the queue's later commands (most commands) */
    struct tt_events before = gates_of(&q->obj, &q->gates);
    gates_add(&g, before.ev, before.n);
    struct tt_events now = {NULL, 0, 0};
    for (size_t i = 0; i < g.n; i++)
      events_push(&now, g.ev[i]);
    pthread_mutex_lock(&q->obj.lock);
    struct tt_events old = q->gates;
    q->gates = now;
    pthread_mutex_unlock(&q->obj.lock);
    gates_free(&old);
    gates_free(&before);
  }
  if (!e || e->owner == tt_cluster_rank() || !g.n) {
    gates_free(&g);
    return;
  }
  pthread_mutex_lock(&e->obj.lock);
  e->holds = (int)g.n;
  e->gates = g;
  pthread_mutex_unlock(&e->obj.lock);
  for (size_t i = 0; i < g.n; i++) {
    TT_RETAIN(e);
    if (tt_event_add_callback(g.ev[i], CL_COMPLETE, hold_released, e) != CL_SUCCESS)
      hold_released(g.ev[i], CL_OUT_OF_HOST_MEMORY, e);
  }
}
