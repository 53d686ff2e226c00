/* Copies between GPUs of one host by CUDA's copy engines (runtime/transfer/gpu.h). */
#include "config.h"

#include "runtime/transfer/gpu.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/base/cuda.h"
#include "runtime/base/log.h"
#include "runtime/job/callback.h"
#include "runtime/job/stats.h"
#include "runtime/job/trace.h"
#include "runtime/job/transport.h"
#include "runtime/job/wire.h"
#include "runtime/memory/window.h"
#include "runtime/order/event.h"

/* --- Copies between GPUs of one host by CUDA (runtime/base/cuda.h) ---------------------------
 * Between two domains of this rank the destination's GPU copies once the source's writers
 * and the destination's earlier accesses are complete. Between ranks the sender describes its
 * bytes once their writers are complete (TT_CH_PEER), the receiver's GPU copies them straight
 * from the sender's memory once its own earlier accesses are complete and answers; the
 * sender's read ends with that answer. No byte goes through host memory or MPI. */

/* The size of the native buffer holding byte `at` of root in domain dom: a window's, for a
 * distributed buffer (placed on every rank before its bytes move: runtime/command/coherence.c). */
static size_t native_size(cl_mem root, cl_uint dom, size_t at)
{
  return tt_windowed(root) ? tt_window_size_at(root, dom, at) : root->size;
}

/* Whether bytes of root from byte `at` move between domains a and b that way: both CUDA
 * domains of one host whose GPUs have peer access to each other, the native buffers holding
 * them CUDA's at both ends (else through host memory: pinned pieces, and MPI between
 * ranks). Every rank alike. */
bool tt_gpu_pair(cl_context ctx, cl_uint a, cl_uint b, cl_mem root, size_t at)
{
  return tt_gpu_pair_of(ctx, a, root, at, b, root, at);
}

bool tt_gpu_pair_of(cl_context ctx, cl_uint a, cl_mem ra, size_t ata, cl_uint b, cl_mem rb,
                    size_t atb)
{
  const struct tt_domain *x = &ctx->domains[a], *y = &ctx->domains[b];
  return x->cuda >= 0 && y->cuda >= 0 && !strcmp(x->first_device->host, y->first_device->host) &&
         (x->first_device->cuda_peers >> y->cuda & 1) &&
         tt_cuda_fits(native_size(ra, a, ata), ra->flags) &&
         tt_cuda_fits(native_size(rb, b, atb), rb->flags);
}

struct gpu_copy {
  struct transfer_desc what;      /* first: the transport describes operations by it */
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
  cl_device_id device_of;   /* traces: the device of this side, and the command's id */
  uint64_t cmd;
  uint64_t t_plan, t_ready; /* traces: planned, everything before the copy happened */
  atomic_int waiting;       /* what is still to happen before the copy (or the send) */
  atomic_int ends;          /* what is still to happen before x goes */
};

static void gpu_set(cl_event ev, bool ok)
{
  if (ev)
    tt_user_event_end(ev, ok);
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

/* The bytes are there (or not): on the copy thread, or where the copy ran at once. */
static void gpu_copied(void *arg, int ok)
{
  struct gpu_copy *x = arg;
  char s[256];
  if (!ok)
    TT_WARN("copying %s between GPUs failed", tt_transfer_str(&x->what, s, sizeof s));
  if (tt_trace_on && x->device_of) {
    uint64_t now = tt_stats_now_ns();
    tt_trace_host_slice(x->device_of, "GPU copy: waits", x->cmd, x->t_plan, x->t_ready);
    tt_trace_host_slice(x->device_of, "GPU copy: CUDA", x->cmd, x->t_ready, now);
  }
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
  if (ok)
    tt_transport_check(x->peer, TT_CH_ANSWER,
                       tt_wire_answer_check(&x->answer, tt_transport_received()));
  if (tt_trace_on && x->device_of) {
    tt_trace_host_slice(x->device_of, "GPU copy: waits to send", x->cmd, x->t_plan, x->t_ready);
    tt_trace_host_slice(x->device_of, "GPU copy: sent, answered", x->cmd, x->t_ready,
                        tt_stats_now_ns());
  }
  gpu_set(x->read, ok && x->answer == 1);
  x->read = NULL;
  gpu_end(x);
}

static void gpu_desc_sent(void *arg, int ok)
{
  (void)ok;
  gpu_end(arg);
}

/* Copies of at most this many bytes run on the thread that saw their last wait end: within a
 * rank, on the planning thread when nothing is to wait for (copied_at_once, which then also
 * needs no user events), else on Tutti's poller; from another rank, where the description
 * arrives (the transport's thread). 1 MiB then takes (H200, NVLink) tens of microseconds less
 * than through the copy thread's wake-up. */
#define COPY_HERE_MAX ((size_t)4 << 20)

/* Everything before the copy (or the description) happened; here: on a thread of Tutti's
 * (not a backend's, whose callbacks must not call CUDA). */
static void gpu_go(struct gpu_copy *x, bool here)
{
  if (tt_trace_on)
    x->t_ready = tt_stats_now_ns();
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
  const struct tt_cuda_desc *peer = x->role == GPU_RECV ? &x->desc : NULL;
  if (!x->dst || (x->role == GPU_LOCAL && !x->src))
    gpu_copied(x, 0);
  else if (here && x->len <= COPY_HERE_MAX)
    gpu_copied(x, tt_cuda_copy_now(x->device, x->dst, x->src, peer, x->len));
  else if (tt_cuda_copy(x->device, x->dst, x->src, peer, x->len, gpu_copied, x) != 0)
    gpu_copied(x, 0);
}

static void gpu_step(struct gpu_copy *x, bool here)
{
  if (atomic_fetch_sub(&x->waiting, 1) == 1)
    gpu_go(x, here);
}

static void CL_CALLBACK gpu_ready(cl_event ev, cl_int status, void *arg)
{
  (void)ev;
  (void)status; /* ordering only, as for direct transfers */
  gpu_step(arg, tt_native_callback_on_own_thread());
}

static void gpu_desc_arrived(void *arg, int ok)
{
  struct gpu_copy *x = arg;
  if (!ok)
    x->desc.ok = 0;
  else
    tt_transport_check(x->peer, TT_CH_PEER,
                       tt_wire_cuda_check(&x->desc, tt_transport_received(), x->len));
  gpu_step(x, true);
}

/* One side of a copy in actual domain dom: its user event, and the accesses it must wait for
 * in deps. Both sides are ordered before either is recorded (gpu_record): were the read
 * recorded first, the write would wait for it, and so for the copy itself. */
static cl_event gpu_side(struct fetch *f, cl_mem root, cl_uint dom, size_t off, size_t len,
                         bool writes, struct tt_deps *deps)
{
  struct tt_domain *dm = &f->ctx->domains[dom];
  cl_event ev = NULL;
  if ((f->err = tt_order_queue_make(dm, &dm->unmaps)) == CL_SUCCESS)
    ev = dm->bp->d->clCreateUserEvent(dm->native, &f->err);
  if (!ev)
    return NULL;
  /* The host waits: every conflicting access of the side's domain, by its own event. */
  f->err = tt_order_after_host(deps, f->ctx, dom, root, off, len, writes);
  return ev;
}

/* Records a side's event as its access (under the unmaps' queue, as transfer pieces are). */
static void gpu_record(struct fetch *f, cl_mem root, cl_uint dom, size_t off, size_t len,
                       bool writes, cl_event ev)
{
  struct tt_domain *dm = &f->ctx->domains[dom];
  if (!ev)
    return;
  tt_order_access_record(root, off, len, writes, dom, dm->unmaps, ev, false);
  tt_order_trace_internal(dm, writes, writes ? "GPU copy: write" : "GPU copy: read", ev,
                         tt_plan_cur.cmd);
}

/* The native buffer of a actual domain and the CUDA address of byte off there (0: none). */
static uint64_t gpu_address(struct fetch *f, cl_mem root, cl_uint dom, size_t off, size_t len,
                            cl_mem *native, size_t *at)
{
  *native = tt_transfer_placed_in(f, root, dom, off, len, at, NULL);
  return *native ? tt_cuda_address(*native, *at) : 0;
}

/* A copy within the rank of at most COPY_HERE_MAX bytes whose source's writers and
 * destination's earlier accesses are all complete runs here and now: afterwards nothing
 * needs ordering after it, so it takes no user events, records no accesses and retains no
 * buffers (their NVIDIA calls cost a 1 MiB copy more than the copy itself: doc/testing.md,
 * "Figures behind the code").
 * False (nothing done) when it must wait, or the copy failed: the caller takes the usual
 * path, which reports it. */
static bool copied_at_once(struct fetch *f, struct gpu_copy *x, cl_uint src, size_t off,
                           cl_mem droot, size_t doff)
{
  if (x->len > COPY_HERE_MAX)
    return false;
  struct tt_deps deps;
  tt_deps_init(&deps);
  cl_int err = tt_order_after_host(&deps, f->ctx, src, f->root, off, x->len, false);
  if (err == CL_SUCCESS)
    err = tt_order_after_host(&deps, f->ctx, f->dom, droot, doff, x->len, true);
  bool free_now = err == CL_SUCCESS;
  for (cl_uint i = 0; i < deps.n && free_now; i++)
    free_now = tt_native_status(deps.ev[i]) <= CL_COMPLETE;
  tt_deps_release(&deps);
  if (tt_trace_on)
    x->t_ready = tt_stats_now_ns();
  if (!free_now || !tt_cuda_copy_now(x->device, x->dst, x->src, NULL, x->len))
    return false;
  atomic_store(&x->ends, 1);
  gpu_copied(x, true); /* traces it, and frees x */
  return true;
}

/* role LOCAL: from domain src of this rank into f->dom; SEND: from src here to rank peer;
 * RECV: from rank peer into f->dom. Returns -1 when a LOCAL copy cannot take this path (the
 * caller copies through the host), else whether planning must stop. */
int tt_gpu_run(struct fetch *f, enum gpu_role role, cl_uint src, size_t off, size_t len,
               int peer, uint64_t id)
{
  struct gpu_copy *x = calloc(1, sizeof *x);
  if (!x) {
    f->err = CL_OUT_OF_HOST_MEMORY;
    return 1;
  }
  x->role = role;
  x->len = len;
  if (tt_trace_on) {
    x->t_plan = tt_stats_now_ns();
    x->cmd = tt_plan_cur.cmd;
    x->device_of = f->ctx->domains[role == GPU_SEND ? src : f->dom].first_device;
  }
  x->peer = peer;
  x->id = id;
  /* Where the bytes land: root's own copy in f->dom, or a copy command's destination. */
  cl_mem droot = f->into ? f->into : f->root;
  size_t doff = f->into ? (size_t)((ptrdiff_t)off + f->into_delta) : off;
  size_t at = 0;
  cl_mem sn = NULL, dn = NULL;
  if (role == GPU_LOCAL)
    x->src = gpu_address(f, f->root, src, off, len, &sn, &at);
  else if (role == GPU_SEND && (sn = tt_transfer_placed(f, src, off, len, &at, NULL)))
    tt_cuda_describe(sn, at, &x->desc); /* else desc.ok stays 0: the receiver fails it */
  if (role != GPU_SEND) {
    x->dst = gpu_address(f, droot, f->dom, doff, len, &dn, &at);
    x->device = f->ctx->domains[f->dom].cuda;
  }
  if (f->err != CL_SUCCESS || (role == GPU_LOCAL && (!x->src || !x->dst))) {
    free(x);
    return f->err != CL_SUCCESS ? 1 : -1;
  }
  if (role == GPU_LOCAL && copied_at_once(f, x, src, off, droot, doff))
    return 0;
  int me = f->ctx->domains[role == GPU_SEND ? src : f->dom].rank;
  x->what = role == GPU_RECV ? tt_transfer_of(f, peer, me, off, len, id)
                             : tt_transfer_of(f, me, role == GPU_SEND ? peer : me, off, len, id);
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
    x->read = gpu_side(f, f->root, src, off, len, false, &deps);
  if (role != GPU_SEND && f->err == CL_SUCCESS)
    x->write = gpu_side(f, droot, f->dom, doff, len, true, &deps);
  if (role != GPU_RECV)
    gpu_record(f, f->root, src, off, len, false, x->read);
  if (role != GPU_SEND) {
    gpu_record(f, droot, f->dom, doff, len, true, x->write);
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
            tt_transfer_str(&x->what, s, sizeof s));
  if (role != GPU_LOCAL)
    tt_transport_promise(1); /* the description, or the answer */
  if (role == GPU_RECV) {
    atomic_fetch_add(&x->waiting, 1);
    if (tt_transport_irecv(TT_CH_PEER, &x->desc, sizeof x->desc, peer, id, gpu_desc_arrived,
                           x) != 0)
      gpu_desc_arrived(x, 0);
  }
  tt_transfer_wait_for(&deps, &x->waiting, gpu_ready, x);
  tt_deps_release(&deps);
  bool failed = f->err != CL_SUCCESS;
  if (failed) {
    TT_WARN("planning the GPU copy of %s failed: %s", tt_transfer_str(&x->what, s, sizeof s),
            tt_error_name(f->err));
  }
  gpu_step(x, true); /* set up: a failure above still runs the exchange, so the peer is not
                     * stuck */
  return failed;
}

/* Registers, once, how the transport names operations of buffer bytes in its messages. */

bool tt_transfer_into_possible(cl_context ctx, cl_uint src, cl_mem sroot, size_t so, cl_uint dom,
                               cl_mem droot, size_t dof)
{
  return tt_gpu_pair_of(ctx, src, sroot, so, dom, droot, dof);
}
