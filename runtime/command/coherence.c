/* The planner (runtime/command/coherence.h): what a command's domain must fetch before it runs and
 * from whom (SnuCL-D Table 2), which domains hold the newest copy of each byte range
 * (runtime/base/rangemap.h), and buffers attached to one domain. Ordering and the plan lock
 * live in runtime/order/, what a write leaves in runtime/memory/window.c, the transfers
 * themselves in runtime/transfer/. */
#include "config.h"

#include "runtime/command/coherence.h"
#include "runtime/transfer/transfer.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/base/log.h"
#include "runtime/base/rangemap.h"
#include "runtime/job/trace.h"
#include "runtime/job/cluster.h"
#include "runtime/job/stats.h"
#include "runtime/memory/window.h"

/* The job's answers to the transfer planner's questions (runtime/transfer/route.h), for
 * f's command. */
static int view_rank(void *arg, unsigned dom)
{
  return ((struct fetch *)arg)->ctx->domains[dom].rank;
}

static uint64_t view_ids(void *arg, int a, int b, uint64_t n)
{
  (void)arg;
  return tt_cluster_pair_ids(a, b, n);
}

static int view_place(void *arg, unsigned dom, size_t off, size_t len)
{
  struct fetch *f = arg;
  struct tt_place p;
  f->err = tt_window_place(f->root, dom, off, len, &p);
  return f->err != CL_SUCCESS;
}

/* A copy command's bytes land in its destination (f->into) at their offset there. */
static bool view_cuda(void *arg, unsigned a, unsigned b, size_t at)
{
  struct fetch *f = arg;
  cl_mem into = f->into ? f->into : f->root;
  return !f->root->image && !into->image &&
         tt_transfer_into_possible(f->ctx, a, f->root, at, b, into,
                                   (size_t)((ptrdiff_t)at + f->into_delta));
}

static bool view_direct(void *arg, unsigned dom, size_t off, size_t len)
{
  return tt_transfer_direct(arg, dom, off, len);
}

static bool view_device_memory(void *arg, unsigned dom)
{
  return tt_domain_device_memory(((struct fetch *)arg)->ctx, dom);
}

static int view_stage(void *arg, unsigned dom, uint64_t n, void **reserved)
{
  return tt_transfer_stage(arg, dom, n, reserved);
}

/* Runs a planned step; a split launch's part counts the bytes it fetched (halos). */
static int view_run(void *arg, const struct tt_step *s)
{
  struct fetch *f = arg;
  if (tt_trace_on && s->peer >= 0)
    tt_trace_transfer_plan(f->ctx->domains[s->src].rank, f->ctx->domains[s->dst].rank, s->id,
                           s->pieces, f->root->obj.id, s->off, s->len);
  int stop = tt_transfer_run(f, s);
  if (!stop && s->route != TT_ROUTE_UNWRITTEN && tt_plan_cur.part &&
      f->ctx->domains[s->dst].actual && tt_plan_cur.device && tt_plan_cur.device->actual)
    atomic_fetch_add_explicit(&tt_stats_device(tt_plan_cur.device->index)->halo_bytes, s->len,
                              memory_order_relaxed);
  return stop;
}

/* The planner's view for f's command. */
static void view_of(struct fetch *f, struct tt_route_view *v)
{
  *v = (struct tt_route_view){
      .me = tt_cluster_rank(), .piece = tt_env()->piece, .one_piece_copy = tt_env()->staging < 0,
      .windowed = tt_windowed(f->root), .host_copies = f->root->image != NULL, .arg = f,
      .rank = view_rank, .ids = view_ids, .place = view_place, .cuda = view_cuda,
      .direct = view_direct, .device_memory = view_device_memory, .stage = view_stage,
      .run = view_run};
}

/* What f's domain lacks of [off, off+len) of its buffer, planned and run (from: the domain
 * every byte comes from, or -1: their holders). */
static void fetch(struct fetch *f, size_t off, size_t len, int from)
{
  struct tt_route_view v;
  view_of(f, &v);
  int r = tt_route_fetch(&v, f->root->latest, off, len, f->dom, from);
  if (r && f->err == CL_SUCCESS)
    f->err = CL_OUT_OF_HOST_MEMORY; /* the holders could not be noted */
}

cl_int tt_coherence_use(struct tt_deps *d, cl_context ctx, cl_uint dom, struct tt_nqueue *nq,
                        cl_mem m, size_t off, size_t len, bool reads, bool writes)
{
  TT_ASSERT_PLAN_HELD();
  cl_mem root = m->root;
  if (len == 0)
    return CL_SUCCESS;
  bool actual = ctx->domains[dom].actual;
  struct tt_place place;
  if (tt_windowed(root)) {
    /* The window its bytes arrive in (placed on every rank: window.h). */
    cl_int err = tt_window_place(m, dom, off, len, &place);
    if (err != CL_SUCCESS)
      return err;
  }
  off += m->origin;
  /* An attached buffer keeps no list: another domain fetches from the attached one every
   * time. */
  bool attached = root->attached != TT_NOT_ATTACHED;
  if (reads && (attached ? dom != root->attached : ctx->ndomains > 1)) {
    struct fetch f = {d, ctx, dom, nq, root, CL_SUCCESS, NULL, 0};
    fetch(&f, off, len, attached ? (int)root->attached : -1);
    if (f.err != CL_SUCCESS)
      return f.err;
  }
  /* A virtual command waits for nothing here: its owner orders it. */
  return actual ? tt_order_after(d, ctx, dom, nq, root, off, len, writes) : CL_SUCCESS;
}

cl_int tt_coherence_copy_into(struct tt_deps *d, cl_context ctx, cl_uint dom,
                              struct tt_nqueue *nq, cl_mem src, size_t so, cl_mem dst,
                              size_t dof, size_t len, bool *taken)
{
  TT_ASSERT_PLAN_HELD();
  *taken = false;
  cl_mem sr = src->root, dr = dst->root;
  if (len == 0 || ctx->ndomains < 2 || sr == dr || tt_windowed(sr) || tt_windowed(dr) ||
      sr->attached != TT_NOT_ATTACHED || dr->attached != TT_NOT_ATTACHED)
    return CL_SUCCESS;
  so += src->origin;
  dof += dst->origin;
  struct fetch f = {d, ctx, dom, nq, sr, CL_SUCCESS, dr, (ptrdiff_t)dof - (ptrdiff_t)so};
  struct tt_route_view v;
  view_of(&f, &v);
  if (tt_route_copy_into(&v, sr->latest, so, len, dom, taken) && f.err == CL_SUCCESS)
    f.err = CL_OUT_OF_RESOURCES;
  if (*taken)
    TT_LOG(TT_LOG_PLAN, "buffer #%llu bytes %zu+%zu -> buffer #%llu bytes %zu+%zu in domain %u "
           "(rank %d), by the GPUs, for command #%llu (%s)", (unsigned long long)sr->obj.id, so,
           len, (unsigned long long)dr->obj.id, dof, len, dom, ctx->domains[dom].rank,
           (unsigned long long)tt_plan_cur.cmd, tt_plan_cur.name);
  return f.err;
}

/* Brings [off, off+len) of root into domain dom from `from` (or from its holders, -1), with
 * Tutti's own queue of dom. */
static cl_int bring(cl_mem root, size_t off, size_t len, cl_uint dom, int from)
{
  cl_context ctx = root->context;
  struct tt_domain *dm = &ctx->domains[dom];
  struct tt_nqueue *q = NULL;
  cl_int err = dm->actual ? tt_order_internal_queue(ctx, dom, &q) : CL_SUCCESS;
  if (err != CL_SUCCESS)
    return err;
  struct tt_deps deps;
  tt_deps_init(&deps);
  struct fetch f = {&deps, ctx, dom, q, root, CL_SUCCESS, NULL, 0};
  fetch(&f, off, len, from);
  tt_deps_release(&deps);
  if (q)
    dm->bp->d->clFlush(q->native);
  return f.err;
}

cl_int tt_coherence_attach(cl_mem root, cl_uint dom)
{
  TT_ASSERT_PLAN_HELD();
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
    if (dm->actual) {
      struct tt_nqueue *q;
      struct tt_deps deps;
      tt_deps_init(&deps);
      cl_event ev = NULL;
      static const cl_uchar zero = 0;
      err = tt_order_internal_queue(ctx, dom, &q);
      if (err == CL_SUCCESS)
        err = tt_order_after(&deps, ctx, dom, q, root, 0, root->size, true);
      if (err == CL_SUCCESS)
        err = dm->bp->d->clEnqueueFillBuffer(q->native, place.native, &zero, 1, 0,
                                             root->size, deps.n, deps.n ? deps.ev : NULL, &ev);
      tt_deps_release(&deps);
      if (ev) {
        tt_order_trace_internal(dm, false, "attach: zeros", ev, tt_plan_cur.cmd);
        tt_order_access_record(root, 0, root->size, true, dom, q, ev, false);
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

cl_int tt_coherence_write_back(cl_mem m, size_t off, size_t len, cl_uint dom)
{
  TT_ASSERT_PLAN_HELD();
  cl_mem root = m->root;
  if (root->attached == TT_NOT_ATTACHED || root->attached == dom || len == 0)
    return CL_SUCCESS;
  return bring(root, off + m->origin, len, root->attached, (int)dom);
}

void tt_coherence_forget(cl_mem root)
{
  tt_order_accesses_free(root);
  tt_rangemap_free(root->latest);
  root->latest = NULL;
}
