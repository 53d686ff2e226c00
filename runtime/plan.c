/* Enqueue-time decisions: dependencies, transfers between memory domains, access records. */
#include "config.h"

#include "runtime/plan.h"
#include "runtime/cuda.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"
#include "runtime/event.h"
#include "runtime/log.h"
#include "runtime/rangemap.h"
#include "runtime/trace.h"
#include "runtime/transport.h"
#include "runtime/cluster.h"
#include "runtime/env.h"
#include "runtime/stats.h"
#include "runtime/window.h"

/* Accesses kept per buffer before completed ones are pruned. */
#define ACCESS_PRUNE_AT 64

struct tt_access {
  size_t off, len; /* in the root buffer */
  bool writes;
  cl_uint dom;
  struct tt_nqueue *nq; /* referenced */
  cl_event ev;          /* native, retained; NULL until some other queue needs to wait */
  bool may_fail;        /* waited for through an absorbing bridge (runtime/plan.h) */
};

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
  return q;
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

/* Gives an access an event: a marker after it on its in-order queue. */
static cl_int access_event(struct tt_access *a)
{
  if (a->ev)
    return CL_SUCCESS;
  return a->nq->d->clEnqueueMarkerWithWaitList(a->nq->native, 0, NULL, &a->ev);
}

static pthread_mutex_t plan_mutex = PTHREAD_MUTEX_INITIALIZER;

struct fetch {
  struct tt_deps *deps;
  cl_context ctx;
  cl_uint dom;
  bool actual;          /* the command executes on this rank */
  struct tt_nqueue *nq; /* its native queue (actual commands) */
  cl_mem root;
  cl_int err;
  int forced_src;       /* attached buffers: the domain to fetch from, whatever it holds */
};

/* The command being planned (under the plan lock): named in messages about its transfers. */
static uint64_t cur_cmd;
static const char *cur_name = "a command";
static cl_device_id cur_device;
static bool cur_part;

uint64_t tt_plan_epoch;

void tt_plan_command(uint64_t seq, const char *name, cl_device_id device, bool part)
{
  tt_plan_epoch++;
  cur_cmd = seq;
  cur_name = name;
  cur_device = device;
  cur_part = part;
}

/* Traces: a command Tutti issued to move bytes, on the device of its queue (the internal
 * queue's, or the command's own when it runs on the command's queue). */
static void trace_internal(struct tt_domain *dm, bool own_queue, const char *what, cl_event ev,
                           uint64_t cmd)
{
  if (!tt_trace_on || !ev)
    return;
  cl_device_id dev = own_queue && cur_device && cur_device->actual ? cur_device : dm->first_device;
  if (dev)
    tt_trace_command(dev, what, TT_TRACE_INTERNAL, cmd, ev, dm->bp->d);
}

void tt_plan_trace(struct tt_domain *dm, const char *what, cl_event ev)
{
  trace_internal(dm, false, what, ev, cur_cmd);
}

/* What a piece of a transfer between ranks carries, for messages: both ranks, the buffer,
 * its bytes and the command that needed them. */
struct xfer {
  int src, dst;
  uint64_t mem;
  size_t off, len;
  uint64_t cmd;
  char cmd_name[48]; /* a copy: the kernel that named the command may be gone by then */
  uint64_t id;
};

static struct xfer xfer_of(const struct fetch *f, int src, int dst, size_t off, size_t len,
                           uint64_t id)
{
  struct xfer x = {src, dst, f->root->obj.id, off, len, cur_cmd, "", id};
  snprintf(x.cmd_name, sizeof x.cmd_name, "%s", cur_name);
  return x;
}

/* "buffer #12 bytes 0+4194304 from rank 0 to rank 1 (message 3) for command #7 (vec_add)" */
static const char *xfer_str(const struct xfer *x, char *buf, size_t cap)
{
  snprintf(buf, cap, "buffer #%llu bytes %zu+%zu from rank %d to rank %d (message %llu) for "
           "command #%llu (%s)", (unsigned long long)x->mem, x->off, x->len, x->src, x->dst,
           (unsigned long long)x->id, (unsigned long long)x->cmd, x->cmd_name);
  return buf;
}

/* The transport's operations of buffer bytes carry a piece or a staged piece, both starting
 * with their xfer. */
static void describe_xfer(void *arg, char *buf, size_t cap)
{
  xfer_str(arg, buf, cap);
}

void tt_plan_lock(void)
{
  pthread_mutex_lock(&plan_mutex);
}

void tt_plan_unlock(void)
{
  pthread_mutex_unlock(&plan_mutex);
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
};

static void gate_step(struct tt_gate *g)
{
  if (atomic_fetch_sub(&g->pending, 1) != 1)
    return;
  const cl_icd_dispatch *d = TT_NATIVE_DISPATCH(g->user);
  d->clSetUserEventStatus(g->user, atomic_load(&g->status));
  d->clReleaseEvent(g->user);
  if (g->command)
    TT_NATIVE_DISPATCH(g->command)->clReleaseEvent(g->command);
  free(g);
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
  int expected = CL_COMPLETE;
  if (status < 0)
    atomic_compare_exchange_strong(&g->status, &expected, status);
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

/* From now on d's dependencies go through a gate of domain dom (runtime/plan.h). */
static cl_int deps_gate(struct tt_deps *d, cl_context ctx, cl_uint dom)
{
  if (d->gate)
    return CL_SUCCESS;
  struct tt_gate *g = calloc(1, sizeof *g);
  if (!g)
    return CL_OUT_OF_HOST_MEMORY;
  cl_int err = CL_SUCCESS;
  g->user = ctx->domains[dom].bp->d->clCreateUserEvent(ctx->domains[dom].native, &err);
  if (!g->user) {
    free(g);
    return err ? err : CL_OUT_OF_RESOURCES;
  }
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

cl_int tt_plan_check_wait_list(cl_context ctx, cl_uint n, const cl_event *list)
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

cl_int tt_plan_wait_list(struct tt_deps *d, cl_context ctx, cl_uint dom, cl_uint n,
                         const cl_event *list)
{
  cl_int err = tt_plan_check_wait_list(ctx, n, list);
  if (err != CL_SUCCESS)
    return err;
  for (cl_uint i = 0; i < n; i++) {
    tt_event_share_with(list[i], ctx->domains[dom].rank);
    /* User events and events of other ranks' commands are set by Tutti, possibly to an
     * error; so may those of commands that may fail themselves. */
    if (!list[i]->native || list[i]->may_fail)
      d->may_fail = true;
  }
  if (d->may_fail && ctx->domains[dom].local) {
    cl_int err = deps_gate(d, ctx, dom);
    if (err != CL_SUCCESS)
      return err;
  }
  for (cl_uint i = 0; i < n && ctx->domains[dom].local; i++) {
    cl_event native;
    cl_int err = tt_event_native_in(list[i], dom, &native);
    if (err == CL_SUCCESS)
      err = tt_deps_take(d, native);
    if (err != CL_SUCCESS)
      return err;
  }
  return CL_SUCCESS;
}

static cl_int make_queue(struct tt_domain *dm, struct tt_nqueue **slot)
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

cl_int tt_plan_internal_queue(cl_context ctx, cl_uint dom, struct tt_nqueue **out)
{
  struct tt_domain *dm = &ctx->domains[dom];
  cl_int err = make_queue(dm, &dm->internal);
  if (err != CL_SUCCESS) {
    TT_LOG(TT_LOG_ERR, "cannot make the internal queue of %s: %s", dm->bp->short_name,
           tt_error_name(err));
    return err;
  }
  *out = dm->internal;
  return CL_SUCCESS;
}

static void CL_CALLBACK bridge_fire(cl_event src, cl_int status, void *data)
{
  cl_event mirror = data;
  const cl_icd_dispatch *d = TT_NATIVE_DISPATCH(mirror);
  d->clSetUserEventStatus(mirror, status < 0 ? status : CL_COMPLETE);
  d->clReleaseEvent(mirror);
}

static void CL_CALLBACK bridge_absorb(cl_event src, cl_int status, void *data)
{
  bridge_fire(src, CL_COMPLETE, data);
}

bool tt_plan_may_fail(const struct tt_deps *d, struct tt_nqueue *nq)
{
  if (d->may_fail && nq)
    nq->may_fail = true;
  return d->may_fail || (nq && nq->may_fail);
}

cl_int tt_plan_bridge(cl_context ctx, cl_uint dom, cl_event src, bool absorb, cl_event *out)
{
  struct tt_backend_platform *bp = ctx->domains[dom].bp;
  cl_int err = CL_SUCCESS;
  cl_event mirror = bp->d->clCreateUserEvent(ctx->domains[dom].native, &err);
  if (!mirror)
    return err ? err : CL_OUT_OF_RESOURCES;
  bp->d->clRetainEvent(mirror); /* one reference for the callback */
  err = tt_native_callback(src, CL_COMPLETE, absorb ? bridge_absorb : bridge_fire, mirror);
  if (err != CL_SUCCESS) {
    bp->d->clReleaseEvent(mirror);
    bp->d->clReleaseEvent(mirror);
    return err;
  }
  *out = mirror;
  return CL_SUCCESS;
}

static cl_int depend_on(struct tt_deps *d, cl_context ctx, cl_uint dom, struct tt_nqueue *nq,
                        struct tt_access *a)
{
  /* Commands of one in-order native queue are already ordered (an access is recorded under
   * the queue whose commands finish no earlier than it). */
  if (a->nq == nq)
    return CL_SUCCESS;
  cl_int err = access_event(a);
  if (err != CL_SUCCESS)
    return err;
  /* The user did not ask for this dependency, so nothing says that queue was flushed. */
  a->nq->d->clFlush(a->nq->native);
  cl_event ev;
  if (a->dom == dom && !a->may_fail) {
    TT_NATIVE_DISPATCH(a->ev)->clRetainEvent(a->ev);
    ev = a->ev;
  } else {
    /* Ordering only: a failure of the earlier command is not this one's. */
    err = tt_plan_bridge(ctx, dom, a->ev, true, &ev);
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

/* Adds the events of earlier accesses that conflict with [off, off+len): only those starting
 * less than the longest access's length before it need a look. */
static cl_int order_after(struct tt_deps *d, cl_context ctx, cl_uint dom, struct tt_nqueue *nq,
                          cl_mem root, size_t off, size_t len, bool writes)
{
  size_t from = off > root->access_longest ? off - root->access_longest : 0;
  for (size_t i = access_at(root, from); i < root->naccesses && root->accesses[i].off < off + len;
       i++) {
    struct tt_access *a = &root->accesses[i];
    if (off < a->off + a->len && (a->writes || writes)) {
      cl_int err = depend_on(d, ctx, dom, nq, a);
      if (err != CL_SUCCESS)
        return err;
    }
  }
  return CL_SUCCESS;
}

cl_int tt_plan_order_after(struct tt_deps *d, cl_context ctx, cl_uint dom, struct tt_nqueue *nq,
                           cl_mem root, size_t off, size_t len, bool writes)
{
  return order_after(d, ctx, dom, nq, root, off, len, writes);
}

/* Sets a user event of Tutti's (complete, or failed) and drops Tutti's reference. */
static void user_event_end(cl_event ev, bool ok)
{
  const cl_icd_dispatch *d = TT_NATIVE_DISPATCH(ev);
  d->clSetUserEventStatus(ev, ok ? CL_COMPLETE : CL_OUT_OF_RESOURCES);
  d->clReleaseEvent(ev);
}

static void CL_CALLBACK free_staging(cl_event ev, cl_int status, void *p)
{
  free(p);
}


static void record_access(cl_mem root, size_t off, size_t len, bool writes, cl_uint dom,
                          struct tt_nqueue *nq, cl_event ev, bool may_fail);

/* The native buffer holding the root's bytes [off, off+len) in local domain dom (its window,
 * runtime/window.h); *at (unless NULL): their offset in it, *host (unless NULL): their
 * address when it lives in Tutti's memory. NULL with f->err set when no window could be
 * made. */
static cl_mem placed(struct fetch *f, cl_uint dom, size_t off, size_t len, size_t *at,
                     unsigned char **host)
{
  struct tt_place p;
  f->err = tt_window_place(f->root, dom, off, len, &p);
  if (f->err != CL_SUCCESS)
    return NULL;
  if (at)
    *at = p.off;
  if (host)
    *host = p.host;
  return p.native;
}

/* The holder a domain fetches from: one on the same rank if any (a copy through host memory
 * of that rank), else the lowest. Every rank decides alike: it depends on the destination
 * only, never on who decides. */
static cl_uint choose_source(cl_context ctx, tt_holders holders, cl_uint dom)
{
  for (unsigned i = tt_holders_next(holders, 0); i != UINT_MAX; i = tt_holders_next(holders, i + 1))
    if (ctx->domains[i].rank == ctx->domains[dom].rank)
      return i;
  return tt_holders_next(holders, 0);
}

/* Both domains on this rank: read into host staging on the holder's internal queue, then
 * write into this domain's copy on the command's queue. */
static int copy_local(struct fetch *f, cl_uint src, size_t off, size_t len)
{
  struct tt_domain *sd = &f->ctx->domains[src];
  struct tt_domain *dd = &f->ctx->domains[f->dom];
  void *staging = malloc(len);
  struct tt_nqueue *sq = NULL;
  struct tt_deps sdeps;
  tt_deps_init(&sdeps);
  cl_event read_ev = NULL, bridge = NULL, write_ev = NULL;
  size_t sat = 0, dat = 0;
  cl_mem sn = NULL, dn = NULL;
  f->err = staging ? tt_plan_internal_queue(f->ctx, src, &sq) : CL_OUT_OF_HOST_MEMORY;
  if (f->err == CL_SUCCESS && (sn = placed(f, src, off, len, &sat, NULL)))
    dn = placed(f, f->dom, off, len, &dat, NULL);
  if (f->err == CL_SUCCESS)
    f->err = order_after(&sdeps, f->ctx, src, sq, f->root, off, len, false);
  if (f->err == CL_SUCCESS)
    f->err = sd->bp->d->clEnqueueReadBuffer(sq->native, sn, CL_FALSE, sat, len,
                                            staging, sdeps.n, sdeps.n ? sdeps.ev : NULL, &read_ev);
  tt_deps_release(&sdeps);
  if (f->err == CL_SUCCESS) {
    sd->bp->d->clFlush(sq->native);
    f->err = tt_plan_bridge(f->ctx, f->dom, read_ev, true, &bridge);
  }
  if (f->err == CL_SUCCESS)
    f->err = dd->bp->d->clEnqueueWriteBuffer(f->nq->native, dn, CL_FALSE, dat, len, staging, 1,
                                             &bridge, &write_ev);
  if (bridge)
    dd->bp->d->clReleaseEvent(bridge);
  if (f->err != CL_SUCCESS) {
    if (read_ev) {
      /* The read may still run into staging: free it only after the read. */
      if (tt_native_callback(read_ev, CL_COMPLETE, free_staging,
                                                          staging) != CL_SUCCESS)
        TT_NATIVE_DISPATCH(read_ev)->clWaitForEvents(1, &read_ev), free(staging);
      sd->bp->d->clReleaseEvent(read_ev);
    } else {
      free(staging);
    }
    TT_LOG(TT_LOG_ERR, "transfer of buffer #%llu bytes %zu+%zu from %s (domain %u) to %s "
           "(domain %u) failed: %s", (unsigned long long)f->root->obj.id, off, len,
           sd->bp->short_name, src, dd->bp->short_name, f->dom, tt_error_name(f->err));
    return 1;
  }
  TT_LOG(TT_LOG_PLAN, "buffer #%llu bytes %zu+%zu: %s (domain %u) -> %s (domain %u) through "
         "the host", (unsigned long long)f->root->obj.id, off, len, sd->bp->short_name, src,
         dd->bp->short_name, f->dom);
  if (tt_native_callback(write_ev, CL_COMPLETE, free_staging, staging) != CL_SUCCESS) {
    dd->bp->d->clWaitForEvents(1, &write_ev);
    free(staging);
  }
  trace_internal(sd, false, "copy through host: read", read_ev, cur_cmd);
  trace_internal(dd, true, "copy through host: write", write_ev, cur_cmd);
  /* The read must stay ordered before later writers of these bytes in the source. */
  record_access(f->root, off, len, false, src, sq, read_ev, false);
  record_access(f->root, off, len, true, f->dom, f->nq, write_ev, false);
  sd->bp->d->clReleaseEvent(read_ev);
  f->err = tt_deps_take(f->deps, write_ev);
  return f->err != CL_SUCCESS;
}

/* Transfers between ranks travel in pieces (TUTTI_PIECE bytes, 4 MiB by default), so that
 * the source, the network and the destination overlap. A transfer of several pieces between
 * buffers in host memory (PoCL) maps each piece: MPI then reads and writes the buffer itself.
 * A transfer of one piece goes through a host copy instead (a read into it, then one
 * message; on the other side a receive posted at once, then a write), which takes no map,
 * unmap or callback round trips. Buffers in device memory go through pinned staging. */
#define PIECE_BYTES (tt_env()->piece)

struct piece {
  struct xfer what;    /* first: the transport describes operations by it */
  struct tt_nqueue *q; /* the queue its unmap goes to (referenced) */
  cl_mem buffer;       /* native buffer (retained) */
  void *ptr;           /* mapped piece */
  size_t len;
  int peer;
  uint64_t id;
  cl_event done;       /* native user event: the piece is through and unmapped */
  cl_device_id device; /* of the queues it is mapped and unmapped on (traces) */
};

static void piece_free(struct piece *p)
{
  if (p->buffer)
    p->q->d->clReleaseMemObject(p->buffer);
  if (p->done)
    p->q->d->clReleaseEvent(p->done);
  tt_nqueue_unref(p->q);
  free(p);
}

static void CL_CALLBACK piece_unmapped(cl_event ev, cl_int status, void *arg)
{
  struct piece *p = arg;
  p->q->d->clSetUserEventStatus(p->done, status < 0 ? status : CL_COMPLETE);
  tt_reaper_enter();
  piece_free(p);
  tt_reaper_leave();
}

/* The bytes went out or came in: unmap the piece; its user event completes with the unmap. */
static void piece_through(void *arg, int ok)
{
  struct piece *p = arg;
  /* Once its callback is set the piece may be gone: keep what is needed after that. */
  struct tt_nqueue *q = p->q;
  struct xfer what = p->what;
  char s[256];
  tt_nqueue_ref(q);
  if (!ok)
    TT_WARN("moving %s failed (MPI error)", xfer_str(&what, s, sizeof s));
  cl_event ev = NULL;
  cl_int err = q->d->clEnqueueUnmapMemObject(q->native, p->buffer, p->ptr, 0, NULL, &ev);
  if (err == CL_SUCCESS && tt_trace_on && p->device)
    tt_trace_command(p->device, "piece: unmap", TT_TRACE_INTERNAL, what.cmd, ev, q->d);
  if (err == CL_SUCCESS)
    err = tt_native_callback(ev, CL_COMPLETE, piece_unmapped, p);
  if (err != CL_SUCCESS) {
    TT_WARN("unmapping %s failed (%s)", xfer_str(&what, s, sizeof s), tt_error_name(err));
    q->d->clSetUserEventStatus(p->done, CL_OUT_OF_RESOURCES);
    piece_free(p);
  }
  if (ev)
    q->d->clReleaseEvent(ev);
  q->d->clFlush(q->native);
  tt_nqueue_unref(q);
}

static void CL_CALLBACK piece_mapped_for_send(cl_event ev, cl_int status, void *arg)
{
  struct piece *p = arg;
  char s[256];
  if (status < 0)
    TT_WARN("mapping %s failed (%s): sending it anyway", xfer_str(&p->what, s, sizeof s),
            tt_error_name(status));
  if (tt_transport_isend(TT_CH_DATA, p->ptr, p->len, p->peer, p->id, piece_through, p) != 0)
    TT_WARN("sending %s failed", xfer_str(&p->what, s, sizeof s));
  tt_transport_promise(-1);
}

static void CL_CALLBACK piece_mapped_for_recv(cl_event ev, cl_int status, void *arg)
{
  struct piece *p = arg;
  char s[256];
  if (status < 0)
    TT_WARN("mapping %s failed (%s)", xfer_str(&p->what, s, sizeof s), tt_error_name(status));
  if (tt_transport_irecv(TT_CH_DATA, p->ptr, p->len, p->peer, p->id, piece_through, p) != 0)
    TT_WARN("receiving %s failed", xfer_str(&p->what, s, sizeof s));
}

/* Maps one piece on domain dom's internal queue after the accesses it conflicts with, and
 * records the piece's transfer as an access whose event is the piece's user event. Returns
 * the piece (with its map event in *map_ev), or NULL with f->err set. */
static struct piece *map_piece(struct fetch *f, cl_uint dom, size_t off, size_t n, bool writes,
                               int peer, uint64_t id, cl_event *map_ev)
{
  struct tt_domain *dm = &f->ctx->domains[dom];
  struct tt_nqueue *q;
  f->err = tt_plan_internal_queue(f->ctx, dom, &q);
  if (f->err == CL_SUCCESS)
    f->err = make_queue(dm, &dm->unmaps);
  if (f->err != CL_SUCCESS)
    return NULL;
  struct piece *p = calloc(1, sizeof *p);
  if (!p) {
    f->err = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  /* Maps wait (in plan order) for earlier accesses, which may be earlier pieces whose unmaps
   * come later: the unmaps go to a queue of their own, so no map ever waits behind them. */
  tt_nqueue_ref(dm->unmaps);
  p->q = dm->unmaps;
  p->len = n;
  p->peer = peer;
  p->id = id;
  int me = dm->rank;
  p->what = writes ? xfer_of(f, peer, me, off, n, id) : xfer_of(f, me, peer, off, n, id);
  p->done = dm->bp->d->clCreateUserEvent(dm->native, &f->err);
  if (!p->done) {
    piece_free(p);
    return NULL;
  }
  struct tt_deps deps;
  tt_deps_init(&deps);
  size_t at = 0;
  p->buffer = placed(f, dom, off, n, &at, NULL);
  if (f->err == CL_SUCCESS)
    f->err = order_after(&deps, f->ctx, dom, q, f->root, off, n, writes);
  if (f->err == CL_SUCCESS)
    p->ptr = dm->bp->d->clEnqueueMapBuffer(
        q->native, p->buffer, CL_FALSE, writes ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_READ,
        at, n, deps.n, deps.n ? deps.ev : NULL, map_ev, &f->err);
  tt_deps_release(&deps);
  if (f->err != CL_SUCCESS) {
    p->buffer = NULL;
    dm->bp->d->clSetUserEventStatus(p->done, CL_OUT_OF_RESOURCES);
    piece_free(p);
    return NULL;
  }
  p->device = dm->first_device;
  trace_internal(dm, false, writes ? "piece: map for receiving" : "piece: map for sending",
                 *map_ev, cur_cmd);
  dm->bp->d->clRetainMemObject(p->buffer);
  /* The piece is through when its user event says so, not when the map (a command of the
   * internal queue) is: recorded under the unmaps' queue, so that no command of the internal
   * queue takes it as already ordered. */
  record_access(f->root, off, n, writes, dom, dm->unmaps, p->done, false);
  return p;
}

/* Backends that keep buffers in device memory (GPUs) move pieces through pinned host
 * memory of their own (a buffer allocated with CL_MEM_ALLOC_HOST_PTR and mapped once): their
 * reads and writes are then DMA at the link's speed, where a map of a device buffer is a slow
 * pageable copy. A piece that finds no free slot takes the map path. Up to 16 slots of a
 * piece each, 64 MiB at most (2 slots at least). */
#define STAGING_MAX_SLOTS 16
#define STAGING_BYTES ((size_t)64 << 20)

static int staging_slots(void)
{
  size_t n = STAGING_BYTES / PIECE_BYTES;
  return n < 2 ? 2 : n > STAGING_MAX_SLOTS ? STAGING_MAX_SLOTS : (int)n;
}

struct tt_staging {
  cl_mem buffer;
  unsigned char *host;
  struct tt_nqueue *q;
  pthread_mutex_t lock;
  uint32_t free_slots; /* bit i: slot i is free */
};

struct staged {
  struct xfer what; /* first: the transport describes operations by it */
  struct tt_staging *st;
  int slot;           /* of st, or -1: the piece has host memory of its own (own) */
  unsigned char *own;
  size_t len;
  int peer;
  uint64_t id;
  cl_event mirror;      /* receiving side: set when the bytes are in */
  struct tt_nqueue *wq; /* receiving side: the queue of the write (referenced) */
};

static bool device_memory(cl_context ctx, cl_uint dom)
{
  struct tt_domain *dm = &ctx->domains[dom];
  if (tt_env()->staging >= 0 && dm->host_unified < 0)
    dm->host_unified = !tt_env()->staging;
  if (dm->host_unified < 0) {
    cl_bool unified = CL_TRUE;
    dm->bp->d->clGetDeviceInfo(dm->first_device->native, CL_DEVICE_HOST_UNIFIED_MEMORY,
                               sizeof unified, &unified, NULL);
    dm->host_unified = unified != CL_FALSE;
  }
  return !dm->host_unified;
}

bool tt_plan_device_memory(cl_context ctx, cl_uint dom)
{
  return device_memory(ctx, dom);
}

/* Does the backend run its commands on the very host memory of a CL_MEM_USE_HOST_PTR
 * buffer? A fill must show in that memory and a store there in a read, with no map between. */
static bool probe_direct(struct tt_domain *dm)
{
  const size_t n = 4096;
  unsigned char *mem = aligned_alloc(n, n), back[64];
  cl_int err = mem ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
  cl_command_queue q = NULL;
  cl_mem b = NULL;
  bool ok = false;
  if (mem)
    q = dm->bp->d->clCreateCommandQueue(dm->native, dm->first_device->native, 0, &err);
  if (q)
    b = dm->bp->d->clCreateBuffer(dm->native, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, n, mem,
                                  &err);
  if (b) {
    const unsigned char pattern = 0x5a;
    memset(mem, 0, n);
    ok = dm->bp->d->clEnqueueFillBuffer(q, b, &pattern, 1, 0, n, 0, NULL, NULL) == CL_SUCCESS &&
         dm->bp->d->clFinish(q) == CL_SUCCESS;
    for (size_t i = 0; ok && i < n; i++)
      ok = mem[i] == pattern;
    memset(mem + 64, 0xa5, sizeof back);
    ok = ok && dm->bp->d->clEnqueueReadBuffer(q, b, CL_TRUE, 64, sizeof back, back, 0, NULL,
                                              NULL) == CL_SUCCESS;
    for (size_t i = 0; ok && i < sizeof back; i++)
      ok = back[i] == 0xa5;
    dm->bp->d->clReleaseMemObject(b);
    dm->bp->d->clFinish(q);
  }
  if (q)
    dm->bp->d->clReleaseCommandQueue(q);
  /* The backend may keep the memory until its own release completes: one page, kept. */
  if (!b)
    free(mem);
  TT_LOG(TT_LOG_MM, "%s: buffers %s in host memory of Tutti's (%s)", dm->bp->short_name,
         ok ? "live" : "do not live", b ? "probed" : tt_error_name(err));
  return ok;
}

bool tt_plan_direct_memory(cl_context ctx, cl_uint dom)
{
  struct tt_domain *dm = &ctx->domains[dom];
  if (dm->direct >= 0)
    return dm->direct;
  static pthread_mutex_t probing = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&probing);
  if (dm->direct < 0) {
    bool several = false;
    for (cl_uint i = 0; i < ctx->ndomains; i++)
      several |= !ctx->domains[i].local;
    dm->direct = dm->local && several && tt_env()->staging < 0 && !device_memory(ctx, dom) &&
                 probe_direct(dm);
  }
  pthread_mutex_unlock(&probing);
  return dm->direct;
}

/* len bytes of the domain's pinned host memory: a CL_MEM_ALLOC_HOST_PTR buffer (*buffer), mapped
 * on the unmaps' queue, behind which nothing ever waits (the internal queue may hold commands
 * waiting for other ranks). NULL with *err on failure. */
static void *pinned_map(struct tt_domain *dm, size_t len, cl_mem *buffer, cl_int *err)
{
  *buffer = NULL;
  *err = make_queue(dm, &dm->unmaps);
  cl_mem b = *err == CL_SUCCESS
                 ? dm->bp->d->clCreateBuffer(dm->native, CL_MEM_ALLOC_HOST_PTR, len, NULL, err)
                 : NULL;
  void *p = b ? dm->bp->d->clEnqueueMapBuffer(dm->unmaps->native, b, CL_TRUE,
                                              CL_MAP_READ | CL_MAP_WRITE, 0, len, 0, NULL, NULL,
                                              err)
              : NULL;
  if (!p && b)
    dm->bp->d->clReleaseMemObject(b);
  if (p)
    *buffer = b;
  return p;
}

void *tt_plan_pinned_new(cl_context ctx, cl_uint dom, size_t len, cl_mem *buffer)
{
  struct tt_domain *dm = &ctx->domains[dom];
  *buffer = NULL;
  if (!device_memory(ctx, dom))
    return NULL;
  cl_int err;
  void *p = pinned_map(dm, len, buffer, &err);
  if (!p)
    TT_LOG(TT_LOG_MM, "no pinned memory of %zu bytes on %s: %s", len, dm->bp->short_name,
           tt_error_name(err));
  return p;
}

void tt_plan_pinned_free(struct tt_domain *dm, cl_mem buffer, void *p)
{
  if (dm->unmaps)
    dm->bp->d->clEnqueueUnmapMemObject(dm->unmaps->native, buffer, p, 0, NULL, NULL);
  dm->bp->d->clReleaseMemObject(buffer);
}

/* A free slot of the domain's pinned staging (made on first use), or -1. */
static int staging_slot(cl_context ctx, cl_uint dom, struct tt_staging **out)
{
  struct tt_domain *dm = &ctx->domains[dom];
  if (!dm->staging) {
    struct tt_staging *st = calloc(1, sizeof *st);
    cl_int err = CL_OUT_OF_HOST_MEMORY;
    if (!st || !(st->host = pinned_map(dm, staging_slots() * PIECE_BYTES, &st->buffer, &err))) {
      TT_LOG(TT_LOG_MM, "no pinned staging on %s: %s", dm->bp->short_name, tt_error_name(err));
      free(st);
      dm->host_unified = 1; /* do not try again: maps it is */
      return -1;
    }
    tt_nqueue_ref(dm->unmaps);
    st->q = dm->unmaps;
    pthread_mutex_init(&st->lock, NULL);
    st->free_slots = (1u << staging_slots()) - 1;
    dm->staging = st;
  }
  struct tt_staging *st = dm->staging;
  pthread_mutex_lock(&st->lock);
  int slot = st->free_slots ? __builtin_ctz(st->free_slots) : -1;
  if (slot >= 0)
    st->free_slots &= ~(1u << slot);
  pthread_mutex_unlock(&st->lock);
  *out = st;
  return slot;
}

static void staged_free(struct staged *s)
{
  if (s->slot >= 0) {
    pthread_mutex_lock(&s->st->lock);
    s->st->free_slots |= 1u << s->slot;
    pthread_mutex_unlock(&s->st->lock);
  }
  free(s->own);
  free(s);
}

static void *slot_ptr(const struct staged *s)
{
  return s->own ? s->own : s->st->host + (size_t)s->slot * PIECE_BYTES;
}

static void staged_sent(void *arg, int ok)
{
  char s[256];
  if (!ok)
    TT_WARN("sending %s failed (MPI error)", xfer_str(&((struct staged *)arg)->what, s, sizeof s));
  staged_free(arg);
}

static void CL_CALLBACK staged_read(cl_event ev, cl_int status, void *arg)
{
  struct staged *s = arg;
  char m[256];
  if (status < 0)
    TT_WARN("reading %s into staging failed (%s): sending it anyway",
            xfer_str(&s->what, m, sizeof m), tt_error_name(status));
  if (tt_transport_isend(TT_CH_DATA, slot_ptr(s), s->len, s->peer, s->id, staged_sent, s) != 0)
    TT_WARN("sending %s failed", xfer_str(&s->what, m, sizeof m));
  tt_transport_promise(-1);
}

static void staged_received(void *arg, int ok)
{
  char m[256];
  if (!ok)
    TT_WARN("receiving %s failed (MPI error)", xfer_str(&((struct staged *)arg)->what, m, sizeof m));
  /* The write may run, finish and free the piece as soon as the mirror is set: the receive
   * holds a reference of its own. */
  cl_event mirror = ((struct staged *)arg)->mirror;
  struct tt_nqueue *wq = ((struct staged *)arg)->wq;
  user_event_end(mirror, ok);
  /* Some backends (NVIDIA) start a command whose user event was set only at a flush. */
  wq->d->clFlush(wq->native);
  tt_nqueue_unref(wq);
}

static void CL_CALLBACK staged_written(cl_event ev, cl_int status, void *arg)
{
  struct staged *s = arg;
  TT_NATIVE_DISPATCH(s->mirror)->clReleaseEvent(s->mirror);
  staged_free(s);
}

/* One piece through pinned staging, or through host memory of its own (own_copy): send side
 * (read, then send) or receive side (receive, then write on the command's queue). Returns 0
 * when done, -1 when no slot was free (the caller maps instead), 1 on an error (f->err). */
static int staged_piece(struct fetch *f, cl_uint dom, size_t off, size_t n, bool send, int peer,
                        uint64_t id, bool own_copy)
{
  struct tt_staging *st = NULL;
  int slot = -1;
  unsigned char *own = NULL;
  if (own_copy) {
    own = malloc(n);
    if (!own) {
      f->err = CL_OUT_OF_HOST_MEMORY;
      return 1;
    }
  } else if ((slot = staging_slot(f->ctx, dom, &st)) < 0) {
    return -1;
  }
  struct tt_domain *dm = &f->ctx->domains[dom];
  struct staged *s = calloc(1, sizeof *s);
  if (!s) {
    if (slot >= 0) {
      pthread_mutex_lock(&st->lock);
      st->free_slots |= 1u << slot;
      pthread_mutex_unlock(&st->lock);
    }
    free(own);
    f->err = CL_OUT_OF_HOST_MEMORY;
    return 1;
  }
  *s = (struct staged){{0}, st, slot, own, n, peer, id, NULL, NULL};
  s->what = send ? xfer_of(f, dm->rank, peer, off, n, id) : xfer_of(f, peer, dm->rank, off, n, id);
  cl_event ev = NULL;
  size_t at = 0;
  cl_mem native = placed(f, dom, off, n, &at, NULL);
  if (!native) {
    /* Nothing issued: the slot and copy go back as they came. */
  } else if (send) {
    struct tt_nqueue *q;
    struct tt_deps deps;
    tt_deps_init(&deps);
    f->err = tt_plan_internal_queue(f->ctx, dom, &q);
    if (f->err == CL_SUCCESS)
      f->err = order_after(&deps, f->ctx, dom, q, f->root, off, n, false);
    if (f->err == CL_SUCCESS)
      f->err = dm->bp->d->clEnqueueReadBuffer(q->native, native, CL_FALSE, at, n, slot_ptr(s), deps.n, deps.n ? deps.ev : NULL, &ev);
    tt_deps_release(&deps);
    if (f->err == CL_SUCCESS) {
      trace_internal(dm, false, own ? "host copy: read for sending" : "staging: read for sending",
                     ev, cur_cmd);
      record_access(f->root, off, n, false, dom, q, ev, false);
      tt_transport_promise(1);
      if (tt_native_callback(ev, CL_COMPLETE, staged_read, s) != CL_SUCCESS) {
        dm->bp->d->clWaitForEvents(1, &ev);
        staged_read(ev, CL_COMPLETE, s);
      }
    }
  } else {
    s->mirror = dm->bp->d->clCreateUserEvent(dm->native, &f->err);
    if (s->mirror)
      f->err = dm->bp->d->clEnqueueWriteBuffer(f->nq->native, native, CL_FALSE, at, n,
                                               slot_ptr(s), 1, &s->mirror, &ev);
    if (f->err == CL_SUCCESS) {
      trace_internal(dm, true, own ? "host copy: write of received bytes"
                                   : "staging: write of received bytes", ev, cur_cmd);
      record_access(f->root, off, n, true, dom, f->nq, ev, false);
      dm->bp->d->clRetainEvent(ev);
      f->err = tt_deps_take(f->deps, ev);
      if (tt_native_callback(ev, CL_COMPLETE, staged_written, s) != CL_SUCCESS)
        TT_WARN("a staging slot (or host copy) of %s stays taken", dm->bp->short_name);
      dm->bp->d->clRetainEvent(s->mirror);
      tt_nqueue_ref(f->nq);
      s->wq = f->nq;
      if (tt_transport_irecv(TT_CH_DATA, slot_ptr(s), n, peer, id, staged_received, s) != 0) {
        char m[256];
        TT_WARN("receiving %s failed", xfer_str(&s->what, m, sizeof m));
        f->err = CL_OUT_OF_RESOURCES;
      }
    } else if (s->mirror) {
      dm->bp->d->clReleaseEvent(s->mirror);
    }
  }
  if (ev)
    dm->bp->d->clReleaseEvent(ev);
  if (f->err != CL_SUCCESS && !ev) {
    staged_free(s);
    return 1;
  }
  return f->err != CL_SUCCESS;
}

void tt_plan_domain_release(struct tt_domain *dm)
{
  if (dm->staging) {
    struct tt_staging *st = dm->staging;
    dm->bp->d->clEnqueueUnmapMemObject(st->q->native, st->buffer, st->host, 0, NULL, NULL);
    dm->bp->d->clFinish(st->q->native);
    dm->bp->d->clReleaseMemObject(st->buffer);
    tt_nqueue_unref(st->q);
    pthread_mutex_destroy(&st->lock);
    free(st);
    dm->staging = NULL;
  }
  tt_window_domain_release(dm);
  if (dm->internal)
    tt_nqueue_unref(dm->internal);
  if (dm->unmaps)
    tt_nqueue_unref(dm->unmaps);
  dm->internal = dm->unmaps = NULL;
}

/* Buffers in host memory of Tutti's (tt_plan_direct_memory): the transport sends from and
 * receives into the buffer's memory itself, once the commands the transfer must follow are
 * complete (callbacks on their events, nothing on any queue); a user event of the domain
 * stands for the transfer in the buffer's accesses, set when every piece has moved. */
/* Counts in *waiting each event of deps not complete yet and has ready(arg) called as each
 * completes (the caller holds one more count while setting up, and acts when the count ends).
 * An event that takes no callback is waited for here. */
static void wait_for(struct tt_deps *deps, atomic_int *waiting,
                     void (CL_CALLBACK *ready)(cl_event, cl_int, void *), void *arg)
{
  for (size_t i = 0; i < deps->n; i++) {
    cl_int st = CL_QUEUED;
    const cl_icd_dispatch *d = TT_NATIVE_DISPATCH(deps->ev[i]);
    d->clGetEventInfo(deps->ev[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    if (st == CL_COMPLETE || st < 0)
      continue;
    atomic_fetch_add(waiting, 1);
    if (tt_native_callback(deps->ev[i], CL_COMPLETE, ready, arg) != CL_SUCCESS) {
      d->clWaitForEvents(1, &deps->ev[i]);
      atomic_fetch_sub(waiting, 1);
    }
  }
}

struct direct {
  struct xfer what;     /* first: the transport describes operations by it */
  cl_event done;        /* set when every piece has moved */
  cl_mem buffer;        /* the native buffer (retained: its memory goes with it) */
  struct tt_nqueue *nq; /* receiving: the command's queue, flushed once done is set */
  unsigned char *base;
  size_t len;
  int peer;
  uint64_t id;
  bool send;
  atomic_int waiting;   /* events still to complete before posting (+1 while setting up) */
  atomic_int moving;    /* pieces still moving */
  atomic_bool failed;
};

static void direct_moved(void *arg, int ok)
{
  struct direct *x = arg;
  if (!ok)
    atomic_store(&x->failed, true);
  if (atomic_fetch_sub(&x->moving, 1) != 1)
    return;
  char s[256];
  if (atomic_load(&x->failed))
    TT_WARN("moving %s failed (MPI error)", xfer_str(&x->what, s, sizeof s));
  user_event_end(x->done, !atomic_load(&x->failed));
  tt_reaper_enter(); /* the buffer's last release may run its destructors */
  TT_NATIVE_DISPATCH(x->buffer)->clReleaseMemObject(x->buffer);
  tt_reaper_leave();
  if (x->nq) {
    /* Some backends start a command whose user event was set only at a flush. */
    x->nq->d->clFlush(x->nq->native);
    tt_nqueue_unref(x->nq);
  }
  free(x);
}

static void direct_post(struct direct *x)
{
  size_t piece = PIECE_BYTES;
  bool send = x->send;
  atomic_store(&x->moving, (int)((x->len + piece - 1) / piece));
  /* x may be gone once the last piece is posted. */
  size_t len = x->len;
  unsigned char *base = x->base;
  int peer = x->peer;
  uint64_t id = x->id;
  for (size_t at = 0; at < len; at += piece, id++) {
    size_t n = len - at < piece ? len - at : piece;
    int r = send ? tt_transport_isend(TT_CH_DATA, base + at, n, peer, id, direct_moved, x)
                 : tt_transport_irecv(TT_CH_DATA, base + at, n, peer, id, direct_moved, x);
    if (r != 0)
      direct_moved(x, 0);
  }
  if (send)
    tt_transport_promise(-1);
}

static void CL_CALLBACK direct_ready(cl_event ev, cl_int status, void *arg)
{
  struct direct *x = arg;
  (void)ev;
  (void)status; /* ordering only: a failed earlier command still frees the bytes */
  if (atomic_fetch_sub(&x->waiting, 1) == 1)
    direct_post(x);
}

/* A whole run of bytes from (send) or into this domain's buffer memory. */
static int direct_run(struct fetch *f, cl_uint dom, size_t off, size_t len, bool send, int peer,
                      uint64_t id, cl_mem native, unsigned char *host)
{
  struct tt_domain *dm = &f->ctx->domains[dom];
  struct direct *x = calloc(1, sizeof *x);
  f->err = x ? make_queue(dm, &dm->unmaps) : CL_OUT_OF_HOST_MEMORY;
  if (f->err == CL_SUCCESS)
    x->done = dm->bp->d->clCreateUserEvent(dm->native, &f->err);
  if (f->err != CL_SUCCESS) {
    free(x);
    return 1;
  }
  x->what = send ? xfer_of(f, dm->rank, peer, off, len, id) : xfer_of(f, peer, dm->rank, off, len, id);
  x->base = host;
  x->buffer = native;
  dm->bp->d->clRetainMemObject(x->buffer);
  x->len = len;
  x->peer = peer;
  x->id = id;
  x->send = send;
  struct tt_deps deps;
  tt_deps_init(&deps);
  /* No queue: every conflicting access is waited for (NULL matches none). */
  f->err = order_after(&deps, f->ctx, dom, NULL, f->root, off, len, !send);
  if (f->err != CL_SUCCESS) {
    tt_deps_release(&deps);
    user_event_end(x->done, false);
    dm->bp->d->clReleaseMemObject(x->buffer);
    free(x);
    return 1;
  }
  /* Recorded under the unmaps' queue, as pieces are: no command takes it as ordered. */
  record_access(f->root, off, len, !send, dom, dm->unmaps, x->done, false);
  if (send) {
    tt_transport_promise(1);
  } else {
    dm->bp->d->clRetainEvent(x->done);
    f->err = tt_deps_take(f->deps, x->done);
    tt_nqueue_ref(f->nq);
    x->nq = f->nq;
  }
  atomic_store(&x->waiting, 1);
  wait_for(&deps, &x->waiting, direct_ready, x);
  tt_deps_release(&deps);
  trace_internal(dm, !send, send ? "direct: send from the buffer" : "direct: receive into the buffer",
                 x->done, cur_cmd);
  if (atomic_fetch_sub(&x->waiting, 1) == 1)
    direct_post(x);
  return f->err != CL_SUCCESS;
}

/* --- Copies between GPUs of one host by CUDA (runtime/cuda.h) ---------------------------
 * Between two domains of this rank the destination's GPU copies once the source's writers
 * and the destination's earlier accesses are complete. Between ranks the sender describes its
 * bytes once their writers are complete (TT_CH_PEER), the receiver's GPU copies them straight
 * from the sender's memory once its own earlier accesses are complete and answers; the
 * sender's read ends with that answer. No byte goes through host memory or MPI. */

/* Whether bytes of root move between domains a and b that way: both CUDA domains of one
 * host, root's memory CUDA's there. Every rank alike. */
static bool gpu_pair(cl_context ctx, cl_uint a, cl_uint b, cl_mem root)
{
  const struct tt_domain *x = &ctx->domains[a], *y = &ctx->domains[b];
  return x->cuda >= 0 && y->cuda >= 0 && tt_cuda_wanted(root) &&
         !strcmp(x->first_device->host, y->first_device->host);
}

enum gpu_role { GPU_LOCAL, GPU_SEND, GPU_RECV };

struct gpu_copy {
  struct xfer what;      /* first: the transport describes operations by it */
  enum gpu_role role;
  cl_event read, write;  /* user events: the source's read (LOCAL, SEND), the destination's
                          * write (LOCAL, RECV) */
  cl_mem keep[2];        /* native buffers retained while the copy may touch them */
  struct tt_nqueue *nq;  /* LOCAL, RECV: the command's queue, flushed once write is set */
  int device;            /* the CUDA device that copies (the destination's) */
  uint64_t dst, src;
  size_t len;
  int peer;
  uint64_t id;
  struct tt_cuda_desc desc; /* SEND: sent; RECV: received */
  int32_t answer;           /* 1: copied */
  atomic_int waiting;       /* what is still to happen before the copy (or the send) */
  atomic_int ends;          /* what is still to happen before x goes */
};

static void gpu_set(cl_event ev, bool ok)
{
  if (ev)
    user_event_end(ev, ok);
}

static void gpu_end(struct gpu_copy *x)
{
  if (atomic_fetch_sub(&x->ends, 1) != 1)
    return;
  tt_reaper_enter(); /* the buffers' last releases may run their destructors */
  for (int i = 0; i < 2; i++)
    if (x->keep[i])
      TT_NATIVE_DISPATCH(x->keep[i])->clReleaseMemObject(x->keep[i]);
  tt_reaper_leave();
  if (x->nq) {
    x->nq->d->clFlush(x->nq->native);
    tt_nqueue_unref(x->nq);
  }
  free(x);
}

static void gpu_answer_sent(void *arg, int ok)
{
  (void)ok; /* a lost answer stops the job at the sender */
  gpu_end(arg);
}

/* The copy thread: the bytes are there (or not). */
static void gpu_copied(void *arg, int ok)
{
  struct gpu_copy *x = arg;
  char s[256];
  if (!ok)
    TT_WARN("copying %s between GPUs failed", xfer_str(&x->what, s, sizeof s));
  gpu_set(x->write, ok);
  x->write = NULL;
  if (x->role == GPU_LOCAL) {
    gpu_set(x->read, ok);
    x->read = NULL;
  } else {
    x->answer = ok;
    if (tt_transport_isend(TT_CH_ANSWER, &x->answer, sizeof x->answer, x->peer, x->id,
                           gpu_answer_sent, x) != 0)
      atomic_fetch_sub(&x->ends, 1);
    tt_transport_promise(-1);
  }
  gpu_end(x);
}

/* The sender: the receiver answered. */
static void gpu_answered(void *arg, int ok)
{
  struct gpu_copy *x = arg;
  gpu_set(x->read, ok && x->answer == 1);
  x->read = NULL;
  gpu_end(x);
}

static void gpu_desc_sent(void *arg, int ok)
{
  (void)ok;
  gpu_end(arg);
}

/* Everything before the copy (or the description) happened. */
static void gpu_go(struct gpu_copy *x)
{
  if (x->role == GPU_SEND) {
    atomic_store(&x->ends, 2);
    if (tt_transport_irecv(TT_CH_ANSWER, &x->answer, sizeof x->answer, x->peer, x->id,
                           gpu_answered, x) != 0)
      gpu_answered(x, 0);
    if (tt_transport_isend(TT_CH_PEER, &x->desc, sizeof x->desc, x->peer, x->id, gpu_desc_sent,
                           x) != 0)
      gpu_desc_sent(x, 0);
    tt_transport_promise(-1);
    return;
  }
  if (!x->dst || (x->role == GPU_LOCAL && !x->src) ||
      tt_cuda_copy(x->device, x->dst, x->src, x->role == GPU_RECV ? &x->desc : NULL, x->len,
                   gpu_copied, x) != 0)
    gpu_copied(x, 0);
}

static void gpu_step(struct gpu_copy *x)
{
  if (atomic_fetch_sub(&x->waiting, 1) == 1)
    gpu_go(x);
}

static void CL_CALLBACK gpu_ready(cl_event ev, cl_int status, void *arg)
{
  (void)ev;
  (void)status; /* ordering only, as for direct transfers */
  gpu_step(arg);
}

static void gpu_desc_arrived(void *arg, int ok)
{
  struct gpu_copy *x = arg;
  if (!ok)
    x->desc.ok = 0;
  gpu_step(x);
}

/* One side of a copy in local domain dom: its user event, recorded as the access (under the
 * unmaps' queue, as transfer pieces are), and the accesses it must wait for in deps. */
static cl_event gpu_side(struct fetch *f, cl_uint dom, size_t off, size_t len, bool writes,
                         struct tt_deps *deps)
{
  struct tt_domain *dm = &f->ctx->domains[dom];
  cl_event ev = NULL;
  if ((f->err = make_queue(dm, &dm->unmaps)) == CL_SUCCESS)
    ev = dm->bp->d->clCreateUserEvent(dm->native, &f->err);
  if (!ev)
    return NULL;
  /* No queue: every conflicting access is waited for (NULL matches none). */
  f->err = order_after(deps, f->ctx, dom, NULL, f->root, off, len, writes);
  record_access(f->root, off, len, writes, dom, dm->unmaps, ev, false);
  trace_internal(dm, writes, writes ? "GPU copy: write" : "GPU copy: read", ev, cur_cmd);
  return ev;
}

/* The native buffer of a local domain and the CUDA address of byte off there (0: none). */
static uint64_t gpu_address(struct fetch *f, cl_uint dom, size_t off, size_t len, cl_mem *native,
                            size_t *at)
{
  *native = placed(f, dom, off, len, at, NULL);
  return *native ? tt_cuda_address(*native, *at) : 0;
}

/* role LOCAL: from domain src of this rank into f->dom; SEND: from src here to rank peer;
 * RECV: from rank peer into f->dom. Returns -1 when a LOCAL copy cannot take this path (the
 * caller copies through the host), else whether planning must stop. */
static int gpu_run(struct fetch *f, enum gpu_role role, cl_uint src, size_t off, size_t len,
                   int peer, uint64_t id)
{
  struct gpu_copy *x = calloc(1, sizeof *x);
  if (!x) {
    f->err = CL_OUT_OF_HOST_MEMORY;
    return 1;
  }
  x->role = role;
  x->len = len;
  x->peer = peer;
  x->id = id;
  size_t at = 0;
  cl_mem sn = NULL, dn = NULL;
  if (role == GPU_LOCAL)
    x->src = gpu_address(f, src, off, len, &sn, &at);
  else if (role == GPU_SEND && (sn = placed(f, src, off, len, &at, NULL)))
    tt_cuda_describe(sn, at, &x->desc); /* else desc.ok stays 0: the receiver fails it */
  if (role != GPU_SEND) {
    x->dst = gpu_address(f, f->dom, off, len, &dn, &at);
    x->device = f->ctx->domains[f->dom].cuda;
  }
  if (f->err != CL_SUCCESS || (role == GPU_LOCAL && (!x->src || !x->dst))) {
    free(x);
    return f->err != CL_SUCCESS ? 1 : -1;
  }
  int me = f->ctx->domains[role == GPU_SEND ? src : f->dom].rank;
  x->what = role == GPU_RECV ? xfer_of(f, peer, me, off, len, id)
                             : xfer_of(f, me, role == GPU_SEND ? peer : me, off, len, id);
  x->keep[0] = sn;
  x->keep[1] = dn;
  for (int i = 0; i < 2; i++)
    if (x->keep[i])
      TT_NATIVE_DISPATCH(x->keep[i])->clRetainMemObject(x->keep[i]);
  atomic_store(&x->ends, role == GPU_RECV ? 2 : 1); /* RECV: the copy, and its answer sent */
  atomic_store(&x->waiting, 1); /* setting up */
  struct tt_deps deps;
  tt_deps_init(&deps);
  if (role != GPU_RECV)
    x->read = gpu_side(f, src, off, len, false, &deps);
  if (role != GPU_SEND && f->err == CL_SUCCESS) {
    x->write = gpu_side(f, f->dom, off, len, true, &deps);
    if (x->write) {
      TT_NATIVE_DISPATCH(x->write)->clRetainEvent(x->write);
      f->err = tt_deps_take(f->deps, x->write);
      tt_nqueue_ref(f->nq);
      x->nq = f->nq;
    }
  }
  char s[256];
  if (role == GPU_RECV && !x->dst)
    TT_WARN("receiving %s: the destination is not in CUDA memory",
            xfer_str(&x->what, s, sizeof s));
  if (role != GPU_LOCAL)
    tt_transport_promise(1); /* the description, or the answer */
  if (role == GPU_RECV) {
    atomic_fetch_add(&x->waiting, 1);
    if (tt_transport_irecv(TT_CH_PEER, &x->desc, sizeof x->desc, peer, id, gpu_desc_arrived,
                           x) != 0)
      gpu_desc_arrived(x, 0);
  }
  wait_for(&deps, &x->waiting, gpu_ready, x);
  tt_deps_release(&deps);
  bool failed = f->err != CL_SUCCESS;
  if (failed) {
    TT_WARN("planning the GPU copy of %s failed: %s", xfer_str(&x->what, s, sizeof s),
            tt_error_name(f->err));
  }
  gpu_step(x); /* set up: a failure above still runs the exchange, so the peer is not stuck */
  return failed;
}

/* The holder is here, the destination on another rank: map each piece for reading and send
 * it once mapped. */
static int send_run(struct fetch *f, cl_uint src, size_t off, size_t len, int peer, uint64_t id)
{
  struct tt_domain *sd = &f->ctx->domains[src];
  if (gpu_pair(f->ctx, src, f->dom, f->root))
    return gpu_run(f, GPU_SEND, src, off, len, peer, id);
  unsigned char *host = NULL;
  cl_mem native = placed(f, src, off, len, NULL, &host);
  bool direct = host != NULL;
  if (direct)
    direct_run(f, src, off, len, true, peer, id, native, host);
  for (size_t at = 0; !direct && at < len && f->err == CL_SUCCESS; at += PIECE_BYTES, id++) {
    size_t n = len - at < PIECE_BYTES ? len - at : PIECE_BYTES;
    if (device_memory(f->ctx, src) || (n == len && tt_env()->staging < 0)) {
      int r = staged_piece(f, src, off + at, n, true, peer, id, !device_memory(f->ctx, src));
      if (r >= 0)
        continue;
    }
    cl_event ev = NULL;
    struct piece *p = map_piece(f, src, off + at, n, false, peer, id, &ev);
    if (!p)
      break;
    tt_transport_promise(1);
    if (tt_native_callback(ev, CL_COMPLETE, piece_mapped_for_send, p) != CL_SUCCESS) {
      sd->bp->d->clWaitForEvents(1, &ev);
      piece_mapped_for_send(ev, CL_COMPLETE, p);
    }
    sd->bp->d->clReleaseEvent(ev);
  }
  if (sd->internal)
    sd->bp->d->clFlush(sd->internal->native);
  if (f->err != CL_SUCCESS)
    TT_WARN("sending buffer #%llu bytes %zu+%zu from rank %d to rank %d for command #%llu (%s) "
            "failed: %s", (unsigned long long)f->root->obj.id, off, len, sd->rank, peer,
            (unsigned long long)cur_cmd, cur_name, tt_error_name(f->err));
  else
    TT_LOG(TT_LOG_PLAN, "buffer #%llu bytes %zu+%zu: %s (domain %u) -> rank %d for command "
           "#%llu (%s)", (unsigned long long)f->root->obj.id, off, len, sd->bp->short_name, src,
           peer, (unsigned long long)cur_cmd, cur_name);
  return f->err != CL_SUCCESS;
}

/* The holder is on another rank: map each piece of this domain's copy for writing, receive
 * into it, unmap; the command waits for every piece. */
static int recv_run(struct fetch *f, cl_uint src, size_t off, size_t len, int peer, uint64_t id)
{
  struct tt_domain *dd = &f->ctx->domains[f->dom];
  if (gpu_pair(f->ctx, src, f->dom, f->root))
    return gpu_run(f, GPU_RECV, src, off, len, peer, id);
  unsigned char *host = NULL;
  cl_mem native = placed(f, f->dom, off, len, NULL, &host);
  bool direct = host != NULL;
  if (direct)
    direct_run(f, f->dom, off, len, false, peer, id, native, host);
  for (size_t at = 0; !direct && at < len && f->err == CL_SUCCESS; at += PIECE_BYTES, id++) {
    size_t n = len - at < PIECE_BYTES ? len - at : PIECE_BYTES;
    if (device_memory(f->ctx, f->dom) || (n == len && tt_env()->staging < 0)) {
      int r = staged_piece(f, f->dom, off + at, n, false, peer, id,
                           !device_memory(f->ctx, f->dom));
      if (r >= 0)
        continue;
    }
    cl_event ev = NULL;
    struct piece *p = map_piece(f, f->dom, off + at, n, true, peer, id, &ev);
    if (!p)
      break;
    dd->bp->d->clRetainEvent(p->done);
    f->err = tt_deps_take(f->deps, p->done);
    if (tt_native_callback(ev, CL_COMPLETE, piece_mapped_for_recv, p) != CL_SUCCESS) {
      dd->bp->d->clWaitForEvents(1, &ev);
      piece_mapped_for_recv(ev, CL_COMPLETE, p);
    }
    dd->bp->d->clReleaseEvent(ev);
  }
  if (dd->internal)
    dd->bp->d->clFlush(dd->internal->native);
  if (f->err != CL_SUCCESS)
    TT_WARN("receiving buffer #%llu bytes %zu+%zu from rank %d to rank %d for command #%llu "
            "(%s) failed: %s", (unsigned long long)f->root->obj.id, off, len, peer, dd->rank,
            (unsigned long long)cur_cmd, cur_name, tt_error_name(f->err));
  else
    TT_LOG(TT_LOG_PLAN, "buffer #%llu bytes %zu+%zu: rank %d -> %s (domain %u) for command "
           "#%llu (%s)", (unsigned long long)f->root->obj.id, off, len, peer, dd->bp->short_name,
           f->dom, (unsigned long long)cur_cmd, cur_name);
  return f->err != CL_SUCCESS;
}

/* One run of bytes the command's domain lacks (SnuCL-D Table 2): a copy within this rank, a
 * send from here, a receive here, or nothing when neither end is here. Every rank draws the
 * transfer's ids alike. */
static int fetch_run(void *arg, size_t off, size_t len, tt_holders holders)
{
  struct fetch *f = arg;
  if (f->forced_src < 0 && tt_holders_has(holders, f->dom))
    return 0;
  if (f->forced_src < 0 && tt_holders_next(holders, 0) == UINT_MAX) {
    /* Bytes nobody ever wrote (a windowed buffer's): nothing to move. */
    tt_rangemap_add(f->root->latest, off, len, f->dom);
    return 0;
  }
  cl_uint src = f->forced_src >= 0 ? (cl_uint)f->forced_src : choose_source(f->ctx, holders, f->dom);
  struct tt_domain *sd = &f->ctx->domains[src], *dd = &f->ctx->domains[f->dom];
  int stop = 0;
  if (tt_windowed(f->root)) {
    /* The source's window, on every rank alike (it may come back from host memory, and
     * make room there). */
    struct tt_place p;
    if ((f->err = tt_window_place(f->root, src, off, len, &p)) != CL_SUCCESS)
      return 1;
  }
  if (sd->rank == dd->rank) {
    if (dd->local) {
      /* -1: not between GPUs that way, or it cannot take it: through the host. */
      stop = gpu_pair(f->ctx, src, f->dom, f->root) ? gpu_run(f, GPU_LOCAL, src, off, len, -1, 0)
                                                    : -1;
      if (stop < 0)
        stop = copy_local(f, src, off, len);
    }
  } else if (sd->local || dd->local) {
    static bool described;
    if (!described) {
      tt_transport_describe_with(TT_CH_DATA, describe_xfer);
      tt_transport_describe_with(TT_CH_PEER, describe_xfer);
      tt_transport_describe_with(TT_CH_ANSWER, describe_xfer);
      described = true;
    }
    uint64_t npieces = (len + PIECE_BYTES - 1) / PIECE_BYTES;
    uint64_t id = tt_cluster_pair_ids(sd->rank, dd->rank, npieces);
    if (tt_trace_on)
      tt_trace_transfer_plan(sd->rank, dd->rank, id, npieces, f->root->obj.id, off, len);
    if (sd->local)
      stop = send_run(f, src, off, len, dd->rank, id);
    else
      stop = recv_run(f, src, off, len, sd->rank, id);
  }
  if (!stop && cur_part && dd->local && cur_device && cur_device->actual)
    atomic_fetch_add_explicit(&tt_stats_device(cur_device->index)->halo_bytes, len,
                              memory_order_relaxed);
  if (!stop && f->forced_src < 0)
    tt_rangemap_add(f->root->latest, off, len, f->dom);
  return stop;
}

cl_int tt_plan_use(struct tt_deps *d, cl_context ctx, cl_uint dom, struct tt_nqueue *nq,
                   cl_mem m, size_t off, size_t len, bool reads, bool writes)
{
  cl_mem root = m->root;
  if (len == 0)
    return CL_SUCCESS;
  bool actual = ctx->domains[dom].local;
  struct tt_place place;
  if (tt_windowed(root)) {
    /* The window its bytes arrive in (placed on every rank: window.h). */
    cl_int err = tt_window_place(m, dom, off, len, &place);
    if (err != CL_SUCCESS)
      return err;
  }
  off += m->origin;
  if (root->attached != TT_NOT_ATTACHED) {
    /* No list is kept: another domain fetches from the attached one every time. */
    if (reads && dom != root->attached) {
      struct fetch f = {d, ctx, dom, actual, nq, root, CL_SUCCESS, (int)root->attached};
      fetch_run(&f, off, len, (tt_holders){NULL, 0});
      if (f.err != CL_SUCCESS)
        return f.err;
    }
  } else if (reads && ctx->ndomains > 1) {
    struct fetch f = {d, ctx, dom, actual, nq, root, CL_SUCCESS, -1};
    tt_rangemap_walk(root->latest, off, len, fetch_run, &f);
    if (f.err != CL_SUCCESS)
      return f.err;
  }
  /* A virtual command waits for nothing here: its owner orders it. */
  return actual ? order_after(d, ctx, dom, nq, root, off, len, writes) : CL_SUCCESS;
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
    cl_int st = CL_QUEUED;
    TT_NATIVE_DISPATCH(a->ev)->clGetEventInfo(a->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st,
                                              &st, NULL);
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
static void record_access(cl_mem root, size_t off, size_t len, bool writes, cl_uint dom,
                          struct tt_nqueue *nq, cl_event ev, bool may_fail)
{
  if (writes) {
    /* A write supersedes every access it covers (they start inside it): it already waits
     * for them. */
    size_t first = access_at(root, off), w = first, i = first;
    for (; i < root->naccesses && root->accesses[i].off < off + len; i++) {
      struct tt_access *a = &root->accesses[i];
      if (a->off + a->len <= off + len) {
        drop_access(a);
        continue;
      }
      root->accesses[w++] = *a;
    }
    memmove(root->accesses + w, root->accesses + i, (root->naccesses - i) * sizeof *root->accesses);
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
  acc[at] = (struct tt_access){off, len, writes, dom, nq, ev, may_fail || nq->may_fail};
}

void tt_plan_record_order(cl_mem root, size_t off, size_t len, cl_uint dom,
                          struct tt_nqueue *nq, cl_event ev)
{
  record_access(root, off, len, true, dom, nq, ev, false);
}

void tt_plan_record(cl_mem m, size_t off, size_t len, bool writes, cl_uint dom,
                    struct tt_nqueue *nq, cl_event ev, bool may_fail)
{
  cl_mem root = m->root;
  off += m->origin;
  if (len == 0)
    return;
  /* A write leaves only the command's domain holding the newest bytes, on every rank (an
   * attached buffer keeps its domain: the write goes back there); only the rank that ran it
   * keeps the access. */
  if (writes) {
    root->written = true;
    if (root->attached == TT_NOT_ATTACHED)
      tt_rangemap_set(root->latest, off, len, (int)dom);
  }
  if (nq)
    record_access(root, off, len, writes, dom, nq, ev, may_fail);
}

/* Brings [off, off+len) of root into domain dom from `from` (or from its holders, -1), with
 * Tutti's own queue of dom. */
static cl_int bring(cl_mem root, size_t off, size_t len, cl_uint dom, int from)
{
  cl_context ctx = root->context;
  struct tt_domain *dm = &ctx->domains[dom];
  struct tt_nqueue *q = NULL;
  cl_int err = dm->local ? tt_plan_internal_queue(ctx, dom, &q) : CL_SUCCESS;
  if (err != CL_SUCCESS)
    return err;
  struct tt_deps deps;
  tt_deps_init(&deps);
  struct fetch f = {&deps, ctx, dom, dm->local, q, root, CL_SUCCESS, from};
  if (from >= 0)
    fetch_run(&f, off, len, (tt_holders){NULL, 0});
  else
    tt_rangemap_walk(root->latest, off, len, fetch_run, &f);
  tt_deps_release(&deps);
  if (q)
    dm->bp->d->clFlush(q->native);
  return f.err;
}

cl_int tt_plan_attach(cl_mem root, cl_uint dom)
{
  if (root->attached == dom)
    return CL_SUCCESS;
  cl_context ctx = root->context;
  struct tt_domain *dm = &ctx->domains[dom];
  cl_int err = CL_SUCCESS;
  struct tt_place place = {0};
  /* The attached domain holds every byte: a windowed buffer's window there covers them. */
  if ((err = tt_window_place(root, dom, 0, root->size, &place)) != CL_SUCCESS)
    return err;
  if (!root->written) {
    /* Nothing to copy: the attached device starts from zeros. */
    if (dm->local) {
      struct tt_nqueue *q;
      struct tt_deps deps;
      tt_deps_init(&deps);
      cl_event ev = NULL;
      static const cl_uchar zero = 0;
      err = tt_plan_internal_queue(ctx, dom, &q);
      if (err == CL_SUCCESS)
        err = order_after(&deps, ctx, dom, q, root, 0, root->size, true);
      if (err == CL_SUCCESS)
        err = dm->bp->d->clEnqueueFillBuffer(q->native, place.native, &zero, 1, 0,
                                             root->size, deps.n, deps.n ? deps.ev : NULL, &ev);
      tt_deps_release(&deps);
      if (ev) {
        trace_internal(dm, false, "attach: zeros", ev, cur_cmd);
        record_access(root, 0, root->size, true, dom, q, ev, false);
        dm->bp->d->clReleaseEvent(ev);
        dm->bp->d->clFlush(q->native);
      }
    }
  } else {
    err = bring(root, 0, root->size, dom, root->attached == TT_NOT_ATTACHED ? -1 : (int)root->attached);
  }
  tt_rangemap_set(root->latest, 0, root->size, (int)dom);
  root->attached = dom;
  root->written = true;
  TT_LOG(TT_LOG_PLAN, "buffer #%llu attached to domain %u (rank %d)",
         (unsigned long long)root->obj.id, dom, dm->rank);
  return err;
}

cl_int tt_plan_write_back(cl_mem m, size_t off, size_t len, cl_uint dom)
{
  cl_mem root = m->root;
  if (root->attached == TT_NOT_ATTACHED || root->attached == dom || len == 0)
    return CL_SUCCESS;
  return bring(root, off + m->origin, len, root->attached, (int)dom);
}

void tt_plan_forget(cl_mem root)
{
  for (size_t i = 0; i < root->naccesses; i++)
    drop_access(&root->accesses[i]);
  free(root->accesses);
  root->accesses = NULL;
  root->naccesses = 0;
  root->access_longest = 0;
  root->access_prune_at = 0;
  tt_rangemap_free(root->latest);
  root->latest = NULL;
}
