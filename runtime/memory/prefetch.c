/* Windows brought back ahead of use (runtime/memory/window.h, tt_window_prefetch). */
#include "config.h"

#include "runtime/memory/window_impl.h"

#include "runtime/base/env.h"
#include "runtime/base/log.h"
#include "runtime/order/order.h"
#include "runtime/job/check.h"

/* Brings back the evicted ones of want[0 .. n), pinned with the command's own windows
 * (touched ahead) by the caller; room is made as for any window, but a prefetch that finds
 * none stops quietly. */
static void prefetch_wanted(cl_context ctx, cl_uint dom, const struct tt_window_range *want,
                            size_t n)
{
  struct tt_domain *dm = &ctx->domains[dom];
  struct tt_window *w;
  for (size_t i = 0; i < n; i++) {
    if (tt_check_active) {
      uint64_t v[] = {want[i].root->obj.id, dom, want[i].lo, want[i].hi};
      tt_check_call("prefetch", 0, v, sizeof v / sizeof v[0]);
    }
    TT_LOG(TT_LOG_MM, "buffer #%llu: window %zu-%zu prefetched into %s (domain %u)",
           (unsigned long long)want[i].root->obj.id, want[i].lo, want[i].hi, tt_window_dom_name(dm), dom);
    if (tt_window_cover(want[i].root, dom, want[i].lo, want[i].hi, true, &w) != CL_SUCCESS)
      break;
  }
}

/* The most windows one prefetch looks ahead at, whatever their bytes. */
#define PREFETCH_STEPS 16

/* What the next command will use, told by its caller (the next part of a split launch on
 * this domain): the ranges that overlap evicted windows come back (within `ahead` bytes in
 * all, in order); the resident ones are pinned beside them. Returns the bytes looked at. */
static size_t prefetch_told(cl_context ctx, cl_uint dom, const struct tt_window_range *next,
                            size_t nnext, size_t ahead)
{
  struct tt_window_range want[PREFETCH_STEPS] = {{NULL, 0, 0}};
  size_t n = 0, bytes = 0;
  for (size_t r = 0; r < nnext && n < PREFETCH_STEPS; r++) {
    cl_mem root = next[r].root;
    if (!tt_windowed(root) || root->transient)
      continue;
    size_t lo, hi, i, j;
    tt_window_span(root, next[r].lo, next[r].hi - next[r].lo, &lo, &hi);
    if (hi - lo > ahead - bytes)
      break;
    struct tt_window_set *s = &root->windows[dom];
    tt_window_overlap(s, lo, hi, &i, &j);
    bool evicted = false;
    for (size_t k = i; k < j; k++) {
      evicted |= !s->w[k].resident;
      if (s->w[k].resident)
        tt_window_touch(root, dom, &s->w[k], true);
    }
    bytes += hi - lo;
    if (evicted)
      want[n++] = (struct tt_window_range){root, lo, hi};
  }
  prefetch_wanted(ctx, dom, want, n);
  return bytes;
}

/* What came next last time: from the window used last, the windows within `ahead` bytes
 * are pinned with the command's own while the prefetch lasts (and become the newest used),
 * and the evicted ones among them come back, in that order. A window the command being
 * planned uses ends the walk. Returns the bytes looked at. */
static size_t prefetch_chain(cl_context ctx, cl_uint dom, size_t ahead)
{
  struct tt_domain *dm = &ctx->domains[dom];
  struct tt_window_range want[PREFETCH_STEPS] = {{NULL, 0, 0}};
  size_t n = 0, bytes = 0;
  cl_mem root = dm->last_root;
  struct tt_window *w = tt_window_holding(root, dom, dm->last_at);
  for (int step = 0; w && w->next_id && step < PREFETCH_STEPS; step++) {
    w = tt_window_at(ctx, dom, w->next_id, w->next_at, &root);
    if (!w || w->epoch == tt_plan_epoch || w->hi - w->lo > ahead - bytes)
      break;
    bytes += w->hi - w->lo;
    tt_window_touch(root, dom, w, true);
    if (!w->resident)
      want[n++] = (struct tt_window_range){root, w->lo, w->hi};
  }
  prefetch_wanted(ctx, dom, want, n);
  return bytes;
}

void tt_window_prefetch(cl_context ctx, cl_uint dom, const struct tt_window_range *next,
                        size_t nnext)
{
  TT_ASSERT_PLAN_HELD();
  struct tt_domain *dm = &ctx->domains[dom];
  size_t ahead = tt_env()->lookahead;
  if (!dm->last_root || !ahead || !dm->evicted)
    return;
  if (ahead == SIZE_MAX) {
    /* By default a quarter of the budget, where the chain guesses; what the next command
     * will use for certain, up to all of it (those windows would come back for it anyway). */
    size_t budget = tt_window_budget(ctx, dom);
    ahead = budget == SIZE_MAX ? 0 : nnext ? budget : budget / 4;
  }
  size_t bytes = nnext ? prefetch_told(ctx, dom, next, nnext, ahead)
                       : prefetch_chain(ctx, dom, ahead);
  /* Their pins end here: what comes before the next command (a sub-buffer's window) may
   * evict them. */
  if (bytes)
    tt_plan_epoch++;
}
