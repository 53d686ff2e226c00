/* The executor of the transfer planner's steps (runtime/transfer/transfer.h,
 * runtime/transfer/route.h): bytes a command's domain lacks, moved from a holder through host
 * memory within a rank, between ranks in pieces (mapped here, through pinned staging or host
 * copies: runtime/transfer/staging.c, or straight from and into buffers in host memory here),
 * or between GPUs of one host by CUDA's copy engines (runtime/transfer/gpu.c). */
#include "config.h"

#include "runtime/memory/domain.h"
#include "runtime/transfer/gpu.h"
#include "runtime/transfer/moves.h"
#include "runtime/transfer/staging.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/base/env.h"
#include "runtime/order/event.h"
#include "runtime/base/log.h"
#include "runtime/job/trace.h"
#include "runtime/job/transport.h"
#include "runtime/memory/window.h"

/* Transfers between ranks travel in pieces (TUTTI_PIECE bytes, 4 MiB by default), so that
 * the source, the network and the destination overlap. A transfer of several pieces between
 * buffers in host memory (PoCL) maps each piece: MPI then reads and writes the buffer itself.
 * A transfer of one piece goes through a host copy instead (a read into it, then one
 * message; on the other side a receive posted at once, then a write), which takes no map,
 * unmap or callback round trips. Buffers in device memory go through pinned staging. */

struct piece {
  struct transfer_desc what;    /* first: the transport describes operations by it */
  struct tt_nqueue *q; /* the queue its unmap goes to (referenced) */
  cl_mem buffer;       /* native buffer (retained) */
  void *ptr;           /* mapped piece */
  size_t len;
  int peer;
  uint64_t id;
  cl_event done;       /* native user event: the piece is through and unmapped */
  cl_device_id device; /* of the queues it is mapped and unmapped on (traces) */
  bool receiving;
  bool failed;         /* receiving, its message failed: done fails too (its bytes are not in) */
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
  p->q->d->clSetUserEventStatus(p->done, status < 0  ? status
                                         : p->failed ? CL_OUT_OF_RESOURCES
                                                     : CL_COMPLETE);
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
  struct transfer_desc what = p->what;
  char s[256];
  tt_nqueue_ref(q);
  if (!ok)
    TT_WARN("moving %s failed (MPI error)", tt_transfer_str(&what, s, sizeof s));
  p->failed = !ok && p->receiving;
  cl_event ev = NULL;
  cl_int err = q->d->clEnqueueUnmapMemObject(q->native, p->buffer, p->ptr, 0, NULL, &ev);
  if (err == CL_SUCCESS && tt_trace_on && p->device)
    tt_trace_command(p->device, "piece: unmap", TT_TRACE_INTERNAL, what.cmd, ev, q->d);
  if (err == CL_SUCCESS)
    err = tt_native_callback(ev, CL_COMPLETE, piece_unmapped, p);
  if (err != CL_SUCCESS) {
    TT_WARN("unmapping %s failed (%s)", tt_transfer_str(&what, s, sizeof s), tt_error_name(err));
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
    TT_WARN("mapping %s failed (%s): sending it anyway", tt_transfer_str(&p->what, s, sizeof s),
            tt_error_name(status));
  if (tt_transport_isend(TT_CH_DATA, p->ptr, p->len, p->peer, p->id, piece_through, p) != 0)
    piece_through(p, 0);
  tt_transport_promise(-1);
}

static void CL_CALLBACK piece_mapped_for_recv(cl_event ev, cl_int status, void *arg)
{
  struct piece *p = arg;
  char s[256];
  if (status < 0)
    TT_WARN("mapping %s failed (%s)", tt_transfer_str(&p->what, s, sizeof s), tt_error_name(status));
  if (tt_transport_irecv(TT_CH_DATA, p->ptr, p->len, p->peer, p->id, piece_through, p) != 0)
    piece_through(p, 0);
}

/* Maps one piece on domain dom's internal queue after the accesses it conflicts with, and
 * records the piece's transfer as an access whose event is the piece's user event. Returns
 * the piece (with its map event in *map_ev), or NULL with f->err set. */
static struct piece *map_piece(struct fetch *f, cl_uint dom, size_t off, size_t n, bool writes,
                               int peer, uint64_t id, cl_event *map_ev)
{
  struct tt_domain *dm = &f->ctx->domains[dom];
  struct tt_nqueue *q;
  f->err = tt_order_internal_queue(f->ctx, dom, &q);
  if (f->err == CL_SUCCESS)
    f->err = tt_order_queue_make(dm, &dm->unmaps);
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
  p->receiving = writes;
  int me = dm->rank;
  p->what = writes ? tt_transfer_of(f, peer, me, off, n, id) : tt_transfer_of(f, me, peer, off, n, id);
  p->done = dm->bp->d->clCreateUserEvent(dm->native, &f->err);
  if (!p->done) {
    piece_free(p);
    return NULL;
  }
  struct tt_deps deps;
  tt_deps_init(&deps);
  size_t at = 0;
  p->buffer = tt_transfer_placed(f, dom, off, n, &at, NULL);
  if (f->err == CL_SUCCESS)
    f->err = tt_order_after(&deps, f->ctx, dom, q, f->root, off, n, writes);
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
  tt_order_trace_internal(dm, false, writes ? "piece: map for receiving" : "piece: map for sending",
                         *map_ev, tt_plan_cur.cmd);
  dm->bp->d->clRetainMemObject(p->buffer);
  /* The piece is through when its user event says so, not when the map (a command of the
   * internal queue) is: recorded under the unmaps' queue, so that no command of the internal
   * queue takes it as already ordered. */
  tt_order_access_record(f->root, off, n, writes, dom, dm->unmaps, p->done, false);
  return p;
}

void tt_transfer_domain_release(struct tt_domain *dm)
{
  tt_stage_release(dm);
  tt_window_domain_release(dm);
  for (cl_uint i = 0; dm->last_part && i < dm->bp->ndevices; i++)
    if (dm->last_part[i].ev) {
      dm->bp->d->clReleaseEvent(dm->last_part[i].ev);
      tt_nqueue_unref(dm->last_part[i].nq);
    }
  free(dm->last_part);
  dm->last_part = NULL;
  if (dm->internal)
    tt_nqueue_unref(dm->internal);
  if (dm->unmaps)
    tt_nqueue_unref(dm->unmaps);
  dm->internal = dm->unmaps = NULL;
}

/* Buffers in host memory of Tutti's (tt_domain_direct_memory): the transport sends from and
 * receives into the buffer's memory itself, once the commands the transfer must follow are
 * complete (callbacks on their events, nothing on any queue); a user event of the domain
 * stands for the transfer in the buffer's accesses, set when every piece has moved. */
struct direct {
  struct transfer_desc what;     /* first: the transport describes operations by it */
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
    TT_WARN("moving %s failed (MPI error)", tt_transfer_str(&x->what, s, sizeof s));
  tt_user_event_end(x->done, !atomic_load(&x->failed));
  tt_reaper_enter(); /* the buffer's last release may run its destructors */
  TT_NATIVE_DISPATCH(x->buffer)->clReleaseMemObject(x->buffer);
  tt_reaper_leave();
  if (x->nq) {
    /* Some backends start a command whose user event was set only at a flush. */
    x->nq->d->clFlush(x->nq->native);
    tt_nqueue_gate(x->nq, -1);
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
  f->err = x ? tt_order_queue_make(dm, &dm->unmaps) : CL_OUT_OF_HOST_MEMORY;
  if (f->err == CL_SUCCESS)
    x->done = dm->bp->d->clCreateUserEvent(dm->native, &f->err);
  if (f->err != CL_SUCCESS) {
    free(x);
    return 1;
  }
  x->what = send ? tt_transfer_of(f, dm->rank, peer, off, len, id) : tt_transfer_of(f, peer, dm->rank, off, len, id);
  x->base = host;
  x->buffer = native;
  dm->bp->d->clRetainMemObject(x->buffer);
  x->len = len;
  x->peer = peer;
  x->id = id;
  x->send = send;
  struct tt_deps deps;
  tt_deps_init(&deps);
  /* The host waits: every conflicting access of this domain, by its own event. */
  f->err = tt_order_after_host(&deps, f->ctx, dom, f->root, off, len, !send);
  if (f->err != CL_SUCCESS) {
    tt_deps_release(&deps);
    tt_user_event_end(x->done, false);
    dm->bp->d->clReleaseMemObject(x->buffer);
    free(x);
    return 1;
  }
  /* Recorded under the unmaps' queue, as pieces are: no command takes it as ordered. */
  tt_order_access_record(f->root, off, len, !send, dom, dm->unmaps, x->done, false);
  if (send) {
    tt_transport_promise(1);
  } else {
    dm->bp->d->clRetainEvent(x->done);
    f->err = tt_deps_take(f->deps, x->done);
    tt_nqueue_ref(f->nq);
    x->nq = f->nq;
    tt_nqueue_gate(x->nq, 1);
  }
  atomic_store(&x->waiting, 1);
  tt_transfer_wait_for(&deps, &x->waiting, direct_ready, x);
  tt_deps_release(&deps);
  tt_order_trace_internal(dm, !send,
                         send ? "direct: send from the buffer" : "direct: receive into the buffer",
                         x->done, tt_plan_cur.cmd);
  if (atomic_fetch_sub(&x->waiting, 1) == 1)
    direct_post(x);
  return f->err != CL_SUCCESS;
}

/* Each piece of a step between ranks mapped where the buffer lives and, once mapped, sent
 * or received into; the command waits for every piece received. */
static void run_mapped(struct fetch *f, const struct tt_step *s, cl_uint dom)
{
  struct tt_domain *dm = &f->ctx->domains[dom];
  void (CL_CALLBACK *mapped)(cl_event, cl_int, void *) =
      s->send ? piece_mapped_for_send : piece_mapped_for_recv;
  for (uint64_t i = 0; i < s->pieces && f->err == CL_SUCCESS; i++) {
    struct tt_piece pc;
    tt_route_piece(s, PIECE_BYTES, i, &pc);
    cl_event ev = NULL;
    struct piece *p = map_piece(f, dom, pc.off, pc.len, !s->send, s->peer, pc.id, &ev);
    if (!p)
      break;
    if (s->send) {
      tt_transport_promise(1);
    } else {
      dm->bp->d->clRetainEvent(p->done);
      f->err = tt_deps_take(f->deps, p->done);
    }
    if (tt_native_callback(ev, CL_COMPLETE, mapped, p) != CL_SUCCESS) {
      dm->bp->d->clWaitForEvents(1, &ev);
      mapped(ev, CL_COMPLETE, p);
    }
    dm->bp->d->clReleaseEvent(ev);
  }
}

/* Each piece through its slot of the staging the planner reserved (s->reserved); slots of
 * pieces never issued (an error stopped the loop) are left to the others. */
static void run_staged(struct fetch *f, const struct tt_step *s, cl_uint dom)
{
  struct chains *ch = s->reserved;
  uint64_t i = 0;
  for (; i < s->pieces && f->err == CL_SUCCESS; i++) {
    struct tt_piece pc;
    tt_route_piece(s, PIECE_BYTES, i, &pc);
    if (!tt_stage_piece(f, dom, pc.off, pc.len, s->send, s->peer, pc.id, ch, pc.slot, pc.after,
                        pc.before))
      break;
  }
  for (int k = 0; k < s->slots; k++) {
    size_t made = tt_stage_pieces_in_slot(i, k, s->slots),
           all = tt_stage_pieces_in_slot(s->pieces, k, s->slots);
    if (made < all)
      tt_stage_chain_leave(ch, k, (int)(all - made));
  }
  tt_stage_chains_put(ch);
}

/* A step between this rank and s->peer by any route but the copy engines'. */
static int run_between(struct fetch *f, const struct tt_step *s)
{
  cl_uint dom = s->send ? s->src : f->dom; /* this rank's end */
  struct tt_domain *dm = &f->ctx->domains[dom];
  if (s->route == TT_ROUTE_DIRECT) {
    unsigned char *host = NULL;
    cl_mem native = tt_transfer_placed(f, dom, s->off, s->len, NULL, &host);
    if (native)
      direct_run(f, dom, s->off, s->len, s->send, s->peer, s->id, native, host);
  } else if (s->route == TT_ROUTE_STAGED) {
    run_staged(f, s, dom);
  } else if (s->route == TT_ROUTE_HOST_COPY) {
    tt_stage_piece(f, dom, s->off, s->len, s->send, s->peer, s->id, NULL, 0, false, false);
  } else {
    run_mapped(f, s, dom);
  }
  if (dm->internal)
    dm->bp->d->clFlush(dm->internal->native);
  int from = s->send ? dm->rank : s->peer, to = s->send ? s->peer : dm->rank;
  if (f->err != CL_SUCCESS)
    TT_WARN("%s buffer #%llu bytes %zu+%zu from rank %d to rank %d for command #%llu (%s) "
            "failed: %s", s->send ? "sending" : "receiving", (unsigned long long)f->root->obj.id,
            s->off, s->len, from, to, (unsigned long long)tt_plan_cur.cmd, tt_plan_cur.name,
            tt_error_name(f->err));
  else
    TT_LOG(TT_LOG_PLAN, "buffer #%llu bytes %zu+%zu: rank %d -> rank %d (%s, domain %u of %s) "
           "for command #%llu (%s)", (unsigned long long)f->root->obj.id, s->off, s->len, from,
           to, tt_route_name(s->route), dom, dm->bp->short_name,
           (unsigned long long)tt_plan_cur.cmd, tt_plan_cur.name);
  return f->err != CL_SUCCESS;
}

/* The copy engines could not take bytes the plan gave them (only when the CUDA addresses of
 * buffers known to be CUDA's cannot be found): a copy command's have no other way into its
 * destination. */
static int engines_lost(struct fetch *f, const struct tt_step *s)
{
  TT_WARN("copying buffer #%llu bytes %zu+%zu into buffer #%llu for command #%llu (%s): "
          "the GPUs' memory could not be found", (unsigned long long)f->root->obj.id, s->off,
          s->len, (unsigned long long)(f->into ? f->into : f->root)->obj.id,
          (unsigned long long)tt_plan_cur.cmd, tt_plan_cur.name);
  f->err = CL_OUT_OF_RESOURCES;
  return 1;
}

int tt_transfer_run(struct fetch *f, const struct tt_step *s)
{
  tt_transfer_describe_once();
  int stop;
  switch (s->route) {
  case TT_ROUTE_UNWRITTEN:
  case TT_ROUTE_ELSEWHERE:
    return 0;
  case TT_ROUTE_LOCAL_CUDA:
    stop = tt_gpu_run(f, GPU_LOCAL, s->src, s->off, s->len, -1, 0);
    if (stop >= 0)
      return stop;
    /* It cannot take these bytes after all: through the host. */
    return f->into ? engines_lost(f, s) : tt_stage_copy_local(f, s->src, s->off, s->len);
  case TT_ROUTE_LOCAL_HOST:
    return tt_stage_copy_local(f, s->src, s->off, s->len);
  case TT_ROUTE_CUDA:
    stop = tt_gpu_run(f, s->send ? GPU_SEND : GPU_RECV, s->src, s->off, s->len, s->peer, s->id);
    return stop < 0 ? engines_lost(f, s) : stop;
  default:
    return run_between(f, s);
  }
}

int tt_transfer_stage(struct fetch *f, cl_uint dom, uint64_t npieces, void **reserved)
{
  struct chains *ch = tt_stage_chains_new(f->ctx, dom, npieces);
  *reserved = ch;
  return ch ? tt_stage_chain_slots(ch) : 0;
}

bool tt_transfer_direct(struct fetch *f, cl_uint dom, size_t off, size_t len)
{
  unsigned char *host = NULL;
  cl_int err = f->err;
  cl_mem native = tt_transfer_placed(f, dom, off, len, NULL, &host);
  f->err = err; /* a window that cannot be placed fails when the step runs */
  return native && host;
}
