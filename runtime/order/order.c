/* The planner's ordering (runtime/order/order.h): native queues, a command's dependencies and the
 * gates that shield them, user wait lists, bridges between domains, and each buffer's record
 * of accesses in order of first byte, by which a command waits only for the earlier commands
 * touching bytes it touches (a read after a read waits for nothing). */
#include "config.h"

#include "runtime/order/order.h"
#include "runtime/order/bridge.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/order/event.h"
#include "runtime/base/log.h"
#include "runtime/job/stats.h"
#include "runtime/job/trace.h"
#include "runtime/job/transport.h"

static pthread_mutex_t plan_mutex = PTHREAD_MUTEX_INITIALIZER;

uint64_t tt_plan_epoch;

void tt_order_command(uint64_t seq, const char *name, cl_device_id device, bool part)
{
  tt_plan_epoch++;
  tt_plan_cur = (struct tt_plan_current){seq, name, device, part};
}

/* Whether this thread holds the plan lock (tt_plan_held). */
static __thread bool plan_held;

void tt_plan_lock(void)
{
  pthread_mutex_lock(&plan_mutex);
  plan_held = true;
}

void tt_plan_unlock(void)
{
  plan_held = false;
  pthread_mutex_unlock(&plan_mutex);
}

bool tt_plan_held(void)
{
  return plan_held;
}


/* Accesses kept per buffer before completed ones are pruned. */
#define ACCESS_PRUNE_AT 64

struct tt_access {
  size_t off, len; /* in the root buffer */
  bool writes;
  cl_uint dom;
  struct tt_nqueue *nq; /* referenced */
  cl_event ev;          /* native, retained; NULL until some other queue needs to wait */
  bool may_fail;        /* waited for through an absorbing bridge (runtime/order/order.h) */
  bool flushed;         /* its queue was flushed since it was recorded */
  uint_fast64_t seq;    /* nq->issued once its command is counted there (access_drained) */
};

/* The command being planned (under the plan lock): named in messages about its transfers. */
struct tt_plan_current tt_plan_cur = {0, "a command", NULL, false};

/* Traces: a command Tutti issued to move bytes, on the device of its queue (the internal
 * queue's, or the command's own when it runs on the command's queue). */
void tt_order_trace_internal(struct tt_domain *dm, bool own_queue, const char *what, cl_event ev,
                            uint64_t cmd)
{
  if (!tt_trace_on || !ev)
    return;
  cl_device_id cur = tt_plan_cur.device;
  cl_device_id dev = own_queue && cur && cur->actual ? cur : dm->first_device;
  if (dev)
    tt_trace_command(dev, what, TT_TRACE_INTERNAL, cmd, ev, dm->bp->d);
}

void tt_order_trace(struct tt_domain *dm, const char *what, cl_event ev)
{
  tt_order_trace_internal(dm, false, what, ev, tt_plan_cur.cmd);
}

struct tt_nqueue *tt_nqueue_new(const cl_icd_dispatch *d, cl_command_queue native)
{
  struct tt_nqueue *q = malloc(sizeof *q);
  if (!q)
    return NULL;
  q->native = native;
  q->d = d;
  q->may_fail = false;
  atomic_init(&q->refs, 1);
  atomic_init(&q->issued, 0);
  atomic_init(&q->drained, 0);
  atomic_init(&q->gates, 0);
  atomic_init(&q->lazy, NULL);
  return q;
}

/* Host waits for the gates of a queue (tt_nqueue_wait_gates). */
static pthread_mutex_t gates_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gates_open = PTHREAD_COND_INITIALIZER;

void tt_nqueue_gate(struct tt_nqueue *q, int delta)
{
  if (atomic_fetch_add(&q->gates, delta) + delta > 0)
    return;
  pthread_mutex_lock(&gates_lock);
  pthread_cond_broadcast(&gates_open);
  pthread_mutex_unlock(&gates_lock);
}

void tt_nqueue_wait_gates(struct tt_nqueue *q)
{
  if (atomic_load(&q->gates) <= 0)
    return;
  tt_transport_host_waits(1);
  if (tt_transport_cores_to_spare()) {
    uint64_t until = tt_stats_now_ns() + TT_HOST_SPIN_NS;
    while (atomic_load(&q->gates) > 0 && tt_stats_now_ns() < until)
      sched_yield();
  }
  pthread_mutex_lock(&gates_lock);
  while (atomic_load(&q->gates) > 0)
    pthread_cond_wait(&gates_open, &gates_lock);
  pthread_mutex_unlock(&gates_lock);
  tt_transport_host_waits(-1);
}

cl_int tt_nqueue_after_lazy(struct tt_deps *d, struct tt_nqueue *q)
{
  cl_event lazy = atomic_load(&q->lazy);
  if (!lazy)
    return CL_SUCCESS;
  if (tt_native_status(lazy) <= CL_COMPLETE) {
    TT_NATIVE_DISPATCH(lazy)->clReleaseEvent(lazy);
    atomic_store(&q->lazy, NULL);
    return CL_SUCCESS;
  }
  TT_NATIVE_DISPATCH(lazy)->clRetainEvent(lazy);
  return tt_deps_take(d, lazy);
}

void tt_nqueue_set_lazy(struct tt_nqueue *q, cl_event ev)
{
  if (ev && tt_native_status(ev) > CL_COMPLETE)
    TT_NATIVE_DISPATCH(ev)->clRetainEvent(ev);
  else
    ev = NULL;
  cl_event old = atomic_exchange(&q->lazy, ev);
  if (old)
    TT_NATIVE_DISPATCH(old)->clReleaseEvent(old);
}

void tt_nqueue_wait_lazy(struct tt_nqueue *q)
{
  if (!atomic_load(&q->lazy))
    return;
  tt_plan_lock();
  cl_event lazy = atomic_load(&q->lazy);
  if (lazy)
    TT_NATIVE_DISPATCH(lazy)->clRetainEvent(lazy);
  tt_plan_unlock();
  if (!lazy)
    return;
  if (tt_native_status(lazy) > CL_COMPLETE)
    TT_NATIVE_DISPATCH(lazy)->clWaitForEvents(1, &lazy);
  TT_NATIVE_DISPATCH(lazy)->clReleaseEvent(lazy);
}

void tt_nqueue_ref(struct tt_nqueue *q)
{
  atomic_fetch_add_explicit(&q->refs, 1, memory_order_relaxed);
}

static void nqueue_destroy(void *arg)
{
  struct tt_nqueue *q = arg;
  /* Releasing a queue flushes it; its commands keep what they use. */
  q->d->clFlush(q->native);
  q->d->clReleaseCommandQueue(q->native);
  cl_event lazy = atomic_load(&q->lazy);
  if (lazy)
    TT_NATIVE_DISPATCH(lazy)->clReleaseEvent(lazy);
  free(q);
}

void tt_nqueue_unref(struct tt_nqueue *q)
{
  if (atomic_fetch_sub(&q->refs, 1) != 1)
    return;
  tt_reaper_run(nqueue_destroy, q);
}

static void drop_access(struct tt_access *a)
{
  if (a->ev)
    TT_NATIVE_DISPATCH(a->ev)->clReleaseEvent(a->ev);
  tt_nqueue_unref(a->nq);
}

/* Whether a clFinish of the access's queue that began after its command was issued ended
 * without an error: the command is complete, and a host wait or an order that absorbs
 * failures needs no event of it (whose marker costs NVIDIA calls: doc/testing.md, "Figures
 * behind the code"). Queues the program never finishes (Tutti's internal ones) never are. */
static bool access_drained(const struct tt_access *a)
{
  return a->seq <= atomic_load_explicit(&a->nq->drained, memory_order_acquire);
}

/* Gives an access an event: a marker after it on its in-order queue. */
static cl_int access_event(struct tt_access *a)
{
  if (a->ev)
    return CL_SUCCESS;
  atomic_fetch_add_explicit(&tt_stats.access_markers, 1, memory_order_relaxed);
  return a->nq->d->clEnqueueMarkerWithWaitList(a->nq->native, 0, NULL, &a->ev);
}

void tt_deps_init(struct tt_deps *d)
{
  d->ev = d->inline_ev;
  d->n = 0;
  d->cap = sizeof d->inline_ev / sizeof d->inline_ev[0];
  d->gate = NULL;
}

struct tt_gate {
  cl_event user;      /* native user event of the command's domain */
  atomic_int pending; /* dependencies still running, plus one until the command is issued */
  atomic_int status;  /* CL_COMPLETE, or the first error of a dependency */
  cl_event command;   /* the gated command's native event, held until the gate is set: PoCL
                       * frees a command its queue failed while the gate still lists it, and
                       * setting the gate then reaches freed memory */
  struct tt_fail *fail;    /* the gate's status, for the command's event */
  struct tt_fail **watch;  /* gated dependencies' cells: their errors are this gate's too */
  cl_uint nwatch;
};

void tt_fail_put(struct tt_fail *f)
{
  if (f && atomic_fetch_sub(&f->refs, 1) == 1)
    free(f);
}

/* A dependency of g ended with status: g keeps the first error. */
static void gate_note(struct tt_gate *g, cl_int status)
{
  int expected = CL_COMPLETE;
  if (status < 0)
    atomic_compare_exchange_strong(&g->status, &expected, status);
}

static void gate_step(struct tt_gate *g)
{
  if (atomic_fetch_sub(&g->pending, 1) != 1)
    return;
  /* Every dependency ended: one the backend ran although its own wait list failed ended
   * CL_COMPLETE there, but failed here. */
  for (cl_uint i = 0; i < g->nwatch; i++) {
    gate_note(g, atomic_load(&g->watch[i]->status));
    tt_fail_put(g->watch[i]);
  }
  free(g->watch);
  cl_int status = atomic_load(&g->status);
  atomic_store(&g->fail->status, status);
  tt_fail_put(g->fail);
  const cl_icd_dispatch *d = TT_NATIVE_DISPATCH(g->user);
  d->clSetUserEventStatus(g->user, status);
  d->clReleaseEvent(g->user);
  if (g->command)
    TT_NATIVE_DISPATCH(g->command)->clReleaseEvent(g->command);
  free(g);
}

struct tt_fail *tt_deps_fail(struct tt_deps *d)
{
  if (!d->gate)
    return NULL;
  atomic_fetch_add(&d->gate->fail->refs, 1);
  return d->gate->fail;
}

/* A gated dependency's failure becomes g's (before g's command is issued). */
static cl_int gate_watch(struct tt_gate *g, struct tt_fail *f)
{
  struct tt_fail **w = realloc(g->watch, (g->nwatch + 1) * sizeof *w);
  if (!w)
    return CL_OUT_OF_HOST_MEMORY;
  atomic_fetch_add(&f->refs, 1);
  w[g->nwatch++] = f;
  g->watch = w;
  return CL_SUCCESS;
}

void tt_deps_hold(struct tt_deps *d, cl_event command)
{
  if (!d->gate || !command || d->gate->command)
    return;
  TT_NATIVE_DISPATCH(command)->clRetainEvent(command);
  d->gate->command = command;
}

static void CL_CALLBACK gate_dependency_done(cl_event ev, cl_int status, void *arg)
{
  struct tt_gate *g = arg;
  /* NVIDIA calls the callbacks of a user event set to an error with CL_COMPLETE: the event
   * itself tells. */
  cl_int s = CL_COMPLETE;
  if (status >= 0 && ev &&
      TT_NATIVE_DISPATCH(ev)->clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s,
                                             NULL) == CL_SUCCESS && s < 0)
    status = s;
  gate_note(g, status);
  gate_step(g);
}

/* Puts one dependency behind the gate (taking over its reference). */
static void gate_take(struct tt_gate *g, cl_event native)
{
  atomic_fetch_add(&g->pending, 1);
  cl_int err = tt_native_callback(native, CL_COMPLETE, gate_dependency_done, g);
  TT_NATIVE_DISPATCH(native)->clReleaseEvent(native);
  if (err != CL_SUCCESS)
    gate_dependency_done(NULL, err, g);
}

/* From now on d's dependencies go through a gate of domain dom (runtime/order/order.h). */
static cl_int deps_gate(struct tt_deps *d, cl_context ctx, cl_uint dom)
{
  if (d->gate)
    return CL_SUCCESS;
  struct tt_gate *g = calloc(1, sizeof *g);
  struct tt_fail *f = calloc(1, sizeof *f);
  if (!g || !f) {
    free(g);
    free(f);
    return CL_OUT_OF_HOST_MEMORY;
  }
  cl_int err = CL_SUCCESS;
  g->user = ctx->domains[dom].bp->d->clCreateUserEvent(ctx->domains[dom].native, &err);
  if (!g->user) {
    free(g);
    free(f);
    return err ? err : CL_OUT_OF_RESOURCES;
  }
  atomic_init(&f->status, CL_COMPLETE);
  atomic_init(&f->refs, 1);
  g->fail = f;
  atomic_init(&g->pending, 1);
  atomic_init(&g->status, CL_COMPLETE);
  for (cl_uint i = 0; i < d->n; i++)
    gate_take(g, d->ev[i]);
  d->n = 0;
  /* The list holds the gate (a reference of its own); the gate keeps its user event until
   * it sets it. */
  TT_NATIVE_DISPATCH(g->user)->clRetainEvent(g->user);
  d->ev[d->n++] = g->user;
  d->gate = g;
  return CL_SUCCESS;
}

cl_int tt_deps_take(struct tt_deps *d, cl_event native)
{
  if (d->gate) {
    gate_take(d->gate, native);
    return CL_SUCCESS;
  }
  for (cl_uint i = 0; i < d->n; i++)
    if (d->ev[i] == native) {
      TT_NATIVE_DISPATCH(native)->clReleaseEvent(native);
      return CL_SUCCESS;
    }
  if (d->n == d->cap) {
    cl_uint cap = d->cap * 2;
    cl_event *ev = malloc(cap * sizeof *ev);
    if (!ev) {
      TT_NATIVE_DISPATCH(native)->clReleaseEvent(native);
      return CL_OUT_OF_HOST_MEMORY;
    }
    memcpy(ev, d->ev, d->n * sizeof *ev);
    if (d->ev != d->inline_ev)
      free(d->ev);
    d->ev = ev;
    d->cap = cap;
  }
  d->ev[d->n++] = native;
  return CL_SUCCESS;
}

void tt_deps_release(struct tt_deps *d)
{
  if (d->gate)
    gate_step(d->gate); /* the command is issued (or failed to be): the gate may open */
  for (cl_uint i = 0; i < d->n; i++)
    TT_NATIVE_DISPATCH(d->ev[i])->clReleaseEvent(d->ev[i]);
  if (d->ev != d->inline_ev)
    free(d->ev);
  tt_deps_init(d);
}

cl_int tt_order_check_wait_list(cl_context ctx, cl_uint n, const cl_event *list)
{
  /* CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and num_events_in_wait_list > 0,
   * or event_wait_list is not NULL and num_events_in_wait_list is 0, or if event objects in
   * event_wait_list are not valid events. */
  TT_RETURN_IF((list == NULL) != (n == 0), CL_INVALID_EVENT_WAIT_LIST);
  for (cl_uint i = 0; i < n; i++)
    TT_RETURN_IF(!tt_object_valid(list[i], TT_EVENT), CL_INVALID_EVENT_WAIT_LIST);
  /* CL_INVALID_CONTEXT if the context associated with command_queue and events in
   * event_wait_list are not the same. */
  for (cl_uint i = 0; i < n; i++)
    TT_RETURN_IF(list[i]->context != ctx, CL_INVALID_CONTEXT);
  return CL_SUCCESS;
}

cl_int tt_order_wait_list(struct tt_deps *d, cl_context ctx, cl_uint dom, cl_uint n,
                         const cl_event *list)
{
  cl_int err = tt_order_check_wait_list(ctx, n, list);
  if (err != CL_SUCCESS)
    return err;
  for (cl_uint i = 0; i < n; i++) {
    tt_event_share_with(list[i], ctx->domains[dom].rank);
    /* User events and events of other ranks' commands are set by Tutti, possibly to an
     * error; so may those of commands that may fail themselves. */
    if (!list[i]->native || list[i]->may_fail)
      d->may_fail = true;
  }
  if (d->may_fail && ctx->domains[dom].actual) {
    cl_int err = deps_gate(d, ctx, dom);
    if (err != CL_SUCCESS)
      return err;
  }
  for (cl_uint i = 0; i < n && ctx->domains[dom].actual; i++) {
    cl_event native;
    cl_int err = list[i]->fail && d->gate ? gate_watch(d->gate, list[i]->fail) : CL_SUCCESS;
    if (err == CL_SUCCESS)
      err = tt_event_native_in(list[i], dom, &native);
    if (err == CL_SUCCESS)
      err = tt_deps_take(d, native);
    if (err != CL_SUCCESS)
      return err;
  }
  return CL_SUCCESS;
}

cl_int tt_order_queue_make(struct tt_domain *dm, struct tt_nqueue **slot)
{
  if (!*slot) {
    cl_int err = CL_SUCCESS;
    cl_command_queue q = dm->bp->d->clCreateCommandQueue(
        dm->native, dm->first_device->native, tt_trace_on ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    if (q && !(*slot = tt_nqueue_new(dm->bp->d, q))) {
      dm->bp->d->clReleaseCommandQueue(q);
      err = CL_OUT_OF_HOST_MEMORY;
    }
    if (!*slot)
      return err ? err : CL_OUT_OF_RESOURCES;
  }
  return CL_SUCCESS;
}

cl_int tt_order_internal_queue(cl_context ctx, cl_uint dom, struct tt_nqueue **out)
{
  struct tt_domain *dm = &ctx->domains[dom];
  cl_int err = tt_order_queue_make(dm, &dm->internal);
  if (err != CL_SUCCESS) {
    TT_LOG(TT_LOG_ERR, "cannot make the internal queue of %s: %s", dm->bp->short_name,
           tt_error_name(err));
    return err;
  }
  *out = dm->internal;
  return CL_SUCCESS;
}

bool tt_order_may_fail(const struct tt_deps *d, struct tt_nqueue *nq)
{
  if (d->may_fail && nq)
    nq->may_fail = true;
  return d->may_fail || (nq && nq->may_fail);
}

static cl_int depend_on(struct tt_deps *d, cl_context ctx, cl_uint dom, struct tt_nqueue *nq,
                        struct tt_access *a)
{
  /* Commands of one in-order native queue are already ordered (an access is recorded under
   * the queue whose commands finish no earlier than it). */
  if (a->nq == nq)
    return CL_SUCCESS;
  /* Complete: only a dependency that would pass on its failure needs it still. */
  if ((dom == TT_HOST_WAITS || a->dom != dom || a->may_fail) && access_drained(a))
    return CL_SUCCESS;
  cl_int err = access_event(a);
  if (err != CL_SUCCESS)
    return err;
  /* The user did not ask for this dependency, so nothing says that queue was flushed. Once
   * is enough for this access, and on backends whose callbacks Tutti polls (NVIDIA's: its
   * flush takes a lock its other threads contend for) once it is. Elsewhere every dependency
   * flushes, as it always did, which also starts what was enqueued there since (PoCL's
   * commands then start as they did before the once-per-access rule). */
  if (!a->flushed || !tt_backend_polled(TT_VENDOR_DISPATCH(a->nq->native))) {
    a->nq->d->clFlush(a->nq->native);
    a->flushed = true;
  }
  cl_event ev;
  if (dom == TT_HOST_WAITS || (a->dom == dom && !a->may_fail)) {
    TT_NATIVE_DISPATCH(a->ev)->clRetainEvent(a->ev);
    ev = a->ev;
  } else {
    /* Ordering only: a failure of the earlier command is not this one's. */
    err = tt_order_bridge(ctx, dom, a->ev, true, &ev);
    if (err != CL_SUCCESS)
      return err;
  }
  return tt_deps_take(d, ev);
}

/* A buffer's accesses are kept in order of their first byte; none is longer than
 * root->access_longest. The first access starting at or after off. */
static size_t access_at(cl_mem root, size_t off)
{
  size_t lo = 0, hi = root->naccesses;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (root->accesses[mid].off < off)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Adds the events of earlier accesses of domain `of` (every domain's: TT_HOST_WAITS) that
 * conflict with [off, off+len): only those starting less than the longest access's length
 * before it need a look. Another domain's access touched that domain's own copy of the
 * bytes, unless every domain works on the program's host memory: bytes reach `of` only by a
 * transfer, recorded there and ordered after it, so nothing there need wait for it (a bridge
 * costs a native user event and a callback). */
static cl_int order_after(struct tt_deps *d, cl_context ctx, cl_uint dom, struct tt_nqueue *nq,
                          cl_mem root, size_t off, size_t len, bool writes, cl_uint of)
{
  bool shared = root->flags & CL_MEM_USE_HOST_PTR;
  size_t from = off > root->access_longest ? off - root->access_longest : 0;
  for (size_t i = access_at(root, from); i < root->naccesses && root->accesses[i].off < off + len;
       i++) {
    struct tt_access *a = &root->accesses[i];
    if (off < a->off + a->len && (a->writes || writes) &&
        (of == TT_HOST_WAITS || a->dom == of || shared)) {
      cl_int err = depend_on(d, ctx, dom, nq, a);
      if (err != CL_SUCCESS)
        return err;
    }
  }
  return CL_SUCCESS;
}

cl_int tt_order_after(struct tt_deps *d, cl_context ctx, cl_uint dom, struct tt_nqueue *nq,
                           cl_mem root, size_t off, size_t len, bool writes)
{
  return order_after(d, ctx, dom, nq, root, off, len, writes, dom);
}

cl_int tt_order_after_host(struct tt_deps *d, cl_context ctx, cl_uint of, cl_mem root,
                           size_t off, size_t len, bool writes)
{
  return order_after(d, ctx, TT_HOST_WAITS, NULL, root, off, len, writes, of);
}


/* Drops the accesses whose commands are complete. Those without an event get one first
 * (one marker per queue covers all of that queue's). */
static void prune(cl_mem root)
{
  struct {
    struct tt_nqueue *nq;
    cl_event marker;
  } made[8];
  size_t nmade = 0;
  for (size_t i = 0; i < root->naccesses; i++) {
    struct tt_access *a = &root->accesses[i];
    if (access_drained(a))
      continue; /* complete: dropped below without an event */
    /* A marker made in this pass follows every command of its queue so far. */
    for (size_t j = 0; j < nmade && !a->ev; j++)
      if (made[j].nq == a->nq) {
        a->ev = made[j].marker;
        TT_NATIVE_DISPATCH(a->ev)->clRetainEvent(a->ev);
      }
    if (a->ev)
      continue;
    if (access_event(a) != CL_SUCCESS)
      return;
    if (nmade < sizeof made / sizeof made[0])
      made[nmade++] = (typeof(made[0])){a->nq, a->ev};
  }
  size_t w = 0;
  root->access_longest = 0;
  for (size_t i = 0; i < root->naccesses; i++) {
    struct tt_access *a = &root->accesses[i];
    cl_int st = CL_COMPLETE;
    if (a->ev && !access_drained(a)) /* none: drained in the pass above */
      TT_NATIVE_DISPATCH(a->ev)->clGetEventInfo(a->ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                                sizeof st, &st, NULL);
    if (st == CL_COMPLETE) {
      drop_access(a);
      continue;
    }
    root->access_longest = a->len > root->access_longest ? a->len : root->access_longest;
    root->accesses[w++] = *a;
  }
  root->naccesses = w;
}

/* Keeps an access for conflict ordering (without touching the latest holders). */
void tt_order_access_record(cl_mem root, size_t off, size_t len, bool writes, cl_uint dom,
                           struct tt_nqueue *nq, cl_event ev, bool may_fail)
{
  if (writes) {
    /* A write supersedes the accesses it covers (they start inside it) that it waited for:
     * its own domain's (order_after), every domain's where they all work on the program's
     * memory. Another domain's stay: they touched that domain's copy, and a transfer
     * into it must still wait for them (and a read there for its last write). */
    bool shared = root->flags & CL_MEM_USE_HOST_PTR;
    size_t first = access_at(root, off), w = first, i = first;
    for (; i < root->naccesses && root->accesses[i].off < off + len; i++) {
      struct tt_access *a = &root->accesses[i];
      if (a->off + a->len <= off + len && (a->dom == dom || shared)) {
        drop_access(a);
        continue;
      }
      root->accesses[w++] = *a;
    }
    if (i > w) /* (accesses is NULL while there are none: UndefinedBehaviorSanitizer) */
      memmove(root->accesses + w, root->accesses + i,
              (root->naccesses - i) * sizeof *root->accesses);
    root->naccesses -= i - w;
  }
  /* Pruning asks the backend about every access: when most are still running (a split
   * launch's parts), the next pruning waits until there are twice as many. */
  if (root->naccesses >= ACCESS_PRUNE_AT && root->naccesses >= root->access_prune_at) {
    prune(root);
    root->access_prune_at = 2 * root->naccesses;
  }
  struct tt_access *acc = root->accesses;
  if (root->naccesses % ACCESS_PRUNE_AT == 0) {
    acc = realloc(root->accesses, (root->naccesses + ACCESS_PRUNE_AT) * sizeof *acc);
    if (!acc) {
      /* Without a record later commands cannot be ordered after this one: wait instead. */
      nq->d->clFinish(nq->native);
      return;
    }
    root->accesses = acc;
  }
  if (ev)
    TT_NATIVE_DISPATCH(ev)->clRetainEvent(ev);
  tt_nqueue_ref(nq);
  /* After the accesses starting at or before it: the order of first bytes holds. */
  size_t at = access_at(root, off);
  while (at < root->naccesses && acc[at].off == off)
    at++;
  memmove(acc + at + 1, acc + at, (root->naccesses - at) * sizeof *acc);
  root->naccesses++;
  root->access_longest = len > root->access_longest ? len : root->access_longest;
  /* A command of a queue that saw a failing command may fail with it. */
  /* Its command is counted in nq->issued once issued (tt_cmd_end, after its records). */
  uint_fast64_t seq = atomic_load_explicit(&nq->issued, memory_order_acquire) + 1;
  acc[at] = (struct tt_access){off, len, writes, dom, nq, ev, may_fail || nq->may_fail, false, seq};
}

void tt_order_record(cl_mem root, size_t off, size_t len, cl_uint dom,
                          struct tt_nqueue *nq, cl_event ev)
{
  tt_order_access_record(root, off, len, true, dom, nq, ev, false);
}

void tt_order_accesses_free(cl_mem root)
{
  for (size_t i = 0; i < root->naccesses; i++)
    drop_access(&root->accesses[i]);
  free(root->accesses);
  root->accesses = NULL;
  root->naccesses = 0;
  root->access_longest = 0;
  root->access_prune_at = 0;
}
