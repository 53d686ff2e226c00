/* The planner (runtime/command/plan.h): what a command's domain must fetch before it runs and
 * from whom (SnuCL-D Table 2), which domains hold the newest copy of each byte range
 * (runtime/base/rangemap.h), and buffers attached to one domain. Ordering and the plan lock
 * live in runtime/order/, what a write leaves in runtime/memory/window.c, the transfers
 * themselves in runtime/transfer/. */
#include "config.h"

#include "runtime/command/plan.h"
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


/* The first message id of a transfer of [off, off+len) of root between the ranks of domains
 * sd and dd (one id per piece), drawn alike on both ranks, and its place in the trace. */
static uint64_t transfer_ids(const struct tt_domain *sd, const struct tt_domain *dd, cl_mem root,
                             size_t off, size_t len)
{
  uint64_t npieces = tt_transfer_pieces(len);
  uint64_t id = tt_cluster_pair_ids(sd->rank, dd->rank, npieces);
  if (tt_trace_on)
    tt_trace_transfer_plan(sd->rank, dd->rank, id, npieces, root->obj.id, off, len);
  return id;
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
    if (dd->local)
      stop = tt_transfer_local(f, src, off, len);
  } else if (sd->local || dd->local) {
    uint64_t id = transfer_ids(sd, dd, f->root, off, len);
    stop = tt_transfer_remote(f, src, off, len, sd->local ? dd->rank : sd->rank, id, sd->local);
  }
  if (!stop && tt_plan_cur.part && dd->local && tt_plan_cur.device && tt_plan_cur.device->actual)
    atomic_fetch_add_explicit(&tt_stats_device(tt_plan_cur.device->index)->halo_bytes, len,
                              memory_order_relaxed);
  if (!stop && f->forced_src < 0)
    tt_rangemap_add(f->root->latest, off, len, f->dom);
  return stop;
}

cl_int tt_plan_use(struct tt_deps *d, cl_context ctx, cl_uint dom, struct tt_nqueue *nq,
                   cl_mem m, size_t off, size_t len, bool reads, bool writes)
{
  TT_ASSERT_PLAN_HELD();
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
      struct fetch f = {d, ctx, dom, actual, nq, root, CL_SUCCESS, (int)root->attached, NULL, 0};
      fetch_run(&f, off, len, (tt_holders){NULL, 0});
      if (f.err != CL_SUCCESS)
        return f.err;
    }
  } else if (reads && ctx->ndomains > 1) {
    struct fetch f = {d, ctx, dom, actual, nq, root, CL_SUCCESS, -1, NULL, 0};
    tt_rangemap_walk(root->latest, off, len, fetch_run, &f);
    if (f.err != CL_SUCCESS)
      return f.err;
  }
  /* A virtual command waits for nothing here: its owner orders it. */
  return actual ? tt_order_after(d, ctx, dom, nq, root, off, len, writes) : CL_SUCCESS;
}


/* The holders of a run of bytes, when the range is one run (tt_plan_copy_into). */
struct one_run {
  cl_context ctx;
  cl_uint dom;
  unsigned runs;
  cl_uint src;  /* the holder dom would fetch from, or UINT_MAX: none, or dom holds them */
};

static int note_run(void *arg, size_t off, size_t len, tt_holders holders)
{
  (void)off, (void)len;
  struct one_run *r = arg;
  r->runs++;
  r->src = tt_holders_has(holders, r->dom) || tt_holders_next(holders, 0) == UINT_MAX
               ? UINT_MAX
               : choose_source(r->ctx, holders, r->dom);
  return r->runs > 1; /* more than one run: not taken */
}

cl_int tt_plan_copy_into(struct tt_deps *d, cl_context ctx, cl_uint dom, struct tt_nqueue *nq,
                         cl_mem src, size_t so, cl_mem dst, size_t dof, size_t len, bool *taken)
{
  TT_ASSERT_PLAN_HELD();
  *taken = false;
  cl_mem sr = src->root, dr = dst->root;
  if (len == 0 || ctx->ndomains < 2 || sr == dr || tt_windowed(sr) || tt_windowed(dr) ||
      sr->attached != TT_NOT_ATTACHED || dr->attached != TT_NOT_ATTACHED)
    return CL_SUCCESS;
  so += src->origin;
  dof += dst->origin;
  struct one_run r = {ctx, dom, 0, UINT_MAX};
  tt_rangemap_walk(sr->latest, so, len, note_run, &r);
  if (r.runs != 1 || r.src == UINT_MAX ||
      !tt_transfer_into_possible(ctx, r.src, sr, so, dom, dr, dof))
    return CL_SUCCESS;
  *taken = true;
  struct tt_domain *sd = &ctx->domains[r.src], *dd = &ctx->domains[dom];
  TT_LOG(TT_LOG_PLAN, "buffer #%llu bytes %zu+%zu: domain %u (rank %d) -> buffer #%llu bytes "
         "%zu+%zu in domain %u (rank %d), by the GPUs, for command #%llu (%s)",
         (unsigned long long)sr->obj.id, so, len, r.src, sd->rank, (unsigned long long)dr->obj.id,
         dof, len, dom, dd->rank, (unsigned long long)tt_plan_cur.cmd, tt_plan_cur.name);
  struct fetch f = {d, ctx, dom, dd->local, nq, sr, CL_SUCCESS, -1, dr,
                    (ptrdiff_t)dof - (ptrdiff_t)so};
  if (sd->rank == dd->rank) {
    if (dd->local)
      tt_transfer_into(&f, r.src, so, len, -1, 0, false);
  } else if (sd->local || dd->local) {
    uint64_t id = transfer_ids(sd, dd, sr, so, len);
    tt_transfer_into(&f, r.src, so, len, sd->local ? dd->rank : sd->rank, id, sd->local);
  }
  return f.err;
}

/* Brings [off, off+len) of root into domain dom from `from` (or from its holders, -1), with
 * Tutti's own queue of dom. */
static cl_int bring(cl_mem root, size_t off, size_t len, cl_uint dom, int from)
{
  cl_context ctx = root->context;
  struct tt_domain *dm = &ctx->domains[dom];
  struct tt_nqueue *q = NULL;
  cl_int err = dm->local ? tt_order_internal_queue(ctx, dom, &q) : CL_SUCCESS;
  if (err != CL_SUCCESS)
    return err;
  struct tt_deps deps;
  tt_deps_init(&deps);
  struct fetch f = {&deps, ctx, dom, dm->local, q, root, CL_SUCCESS, from, NULL, 0};
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
    if (dm->local) {
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

cl_int tt_plan_write_back(cl_mem m, size_t off, size_t len, cl_uint dom)
{
  TT_ASSERT_PLAN_HELD();
  cl_mem root = m->root;
  if (root->attached == TT_NOT_ATTACHED || root->attached == dom || len == 0)
    return CL_SUCCESS;
  return bring(root, off + m->origin, len, root->attached, (int)dom);
}

void tt_plan_forget(cl_mem root)
{
  tt_order_accesses_free(root);
  tt_rangemap_free(root->latest);
  root->latest = NULL;
}
