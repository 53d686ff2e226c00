/* Windows: a windowed buffer's native buffers in each domain, and their eviction
 * (runtime/memory/window.h; prefetch.c and windowed.c share its helpers through
 * window_impl.h). */
#include "config.h"

#include "runtime/memory/window.h"
#include "runtime/memory/window_impl.h"
#include "runtime/memory/spill.h"
#include "runtime/base/cuda.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/base/backend.h"
#include "runtime/job/check.h"
#include "runtime/job/cluster.h"
#include "runtime/base/env.h"
#include "runtime/order/event.h"
#include "runtime/base/log.h"
#include "runtime/order/order.h"
#include "runtime/memory/domain.h"
#include "runtime/base/rangemap.h"
#include "runtime/job/stats.h"

/* Windows start and end at multiples of this (the end clamped to the buffer): a split
 * launch's rebased pointers then point at whole elements of any built-in type, and a window
 * widened by a row or two is not remade at every launch. */
#define WINDOW_ALIGN ((size_t)4096)

/* Buffers in memory of Tutti's start at a page. */
#define HOST_ALIGN ((size_t)4096)

/* Places so far (the LRU clock). Plan lock. */
static uint64_t clock_now;

/* Every eviction so far, mixed with the holders it left (TUTTI_STATS; equal on every rank).
 * Written under the plan lock. */

/* Bytes of spill copies in this rank's memory (freed from backend callbacks). */

static void CL_CALLBACK free_host(cl_mem native, void *mem)
{
  (void)native;
  free(mem);
}

cl_mem tt_window_native_new(cl_context ctx, cl_uint dom, cl_mem root, cl_mem_flags flags,
                            size_t size, void *host_ptr, void **host, cl_int *err)
{
  struct tt_domain *dm = &ctx->domains[dom];
  *host = NULL;
  if (dm->cuda >= 0 && tt_cuda_fits(size, root->flags))
    return tt_cuda_buffer_new(dm->bp, dm->native, dm->first_device->native, dm->cuda, flags,
                              size, flags & CL_MEM_COPY_HOST_PTR ? host_ptr : NULL, err);
  /* Tutti reads and writes its native buffers for transfers and eviction whatever the
   * program said of its own access (checked at Tutti's entry points). */
  flags &= ~(cl_mem_flags)(CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS);
  if ((flags & CL_MEM_USE_HOST_PTR) || !tt_domain_direct_memory(ctx, dom))
    return dm->bp->d->clCreateBuffer(dm->native, flags, size, host_ptr, err);
  /* The buffer lives in memory of Tutti's: transfers between ranks move it directly. */
  void *mem = aligned_alloc(HOST_ALIGN, (size + HOST_ALIGN - 1) & ~(HOST_ALIGN - 1));
  if (!mem) {
    *err = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  if (flags & CL_MEM_COPY_HOST_PTR)
    memcpy(mem, host_ptr, size);
  flags = (flags & ~(cl_mem_flags)(CL_MEM_COPY_HOST_PTR | CL_MEM_ALLOC_HOST_PTR)) |
          CL_MEM_USE_HOST_PTR;
  cl_mem m = dm->bp->d->clCreateBuffer(dm->native, flags, size, mem, err);
  /* The memory goes when the backend's buffer does (its commands may outlive ours). */
  if (m && (*err = dm->bp->d->clSetMemObjectDestructorCallback(m, free_host, mem)) != CL_SUCCESS) {
    dm->bp->d->clReleaseMemObject(m);
    m = NULL;
  }
  if (!m)
    free(mem);
  else
    *host = mem;
  return m;
}

/* The flags of root's windows: the program's, less those about its own host memory. */
static cl_mem_flags window_flags(cl_mem root)
{
  return root->flags & ~(cl_mem_flags)(CL_MEM_COPY_HOST_PTR | CL_MEM_ALLOC_HOST_PTR);
}

struct tt_stats_device *tt_window_stats_of(cl_context ctx, cl_uint dom)
{
  cl_device_id dev = ctx->domains[dom].first_device;
  return tt_stats_device(dev ? dev->index : UINT32_MAX);
}

/* Windows held in a domain count for its first device (TUTTI_STATS). */
void tt_window_count(cl_mem root, cl_uint dom, int64_t delta)
{
  root->context->domains[dom].held += (size_t)delta;
  struct tt_stats_device *s = tt_window_stats_of(root->context, dom);
  uint64_t now = atomic_fetch_add_explicit(&s->window_bytes, (uint64_t)delta,
                                           memory_order_relaxed) + (uint64_t)delta;
  uint64_t peak = atomic_load_explicit(&s->window_peak, memory_order_relaxed);
  while (now > peak && !atomic_compare_exchange_weak(&s->window_peak, &peak, now))
    ;
}

/* The backend's short name of a domain, local or not (for messages). */
const char *tt_window_dom_name(const struct tt_domain *dm)
{
  return dm->bp ? dm->bp->short_name : dm->first_device ? dm->first_device->backend : "?";
}

/* Whether root's windows must stay where they are: native buffers cut from them
 * (sub-buffers), mappings, an attachment. */
static bool pinned_root(cl_mem root)
{
  return atomic_load(&root->nsubs) || atomic_load(&root->map_count) ||
         root->attached != TT_NOT_ATTACHED;
}

/* The most bytes of windows Tutti keeps in a actual domain: TUTTI_DEVICE_MEM's budget for its
 * first device, else that device's global memory less an eighth (at least 256 MiB). */
size_t tt_window_budget(cl_context ctx, cl_uint dom)
{
  struct tt_domain *dm = &ctx->domains[dom];
  if (dm->budget)
    return dm->budget;
  cl_device_id dev = dm->first_device;
  size_t b = 0;
  const char *given = tt_env()->device_mem;
  if (!(given && dev && tt_env_device_mem(given, dev->index, &b) == 1)) {
    /* Every rank reads the same answer: the owner's, shared at start-up, in a job of many. */
    cl_ulong g = 0;
    if (dev)
      tt_cluster_device_query(dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof g, &g, NULL);
    cl_ulong margin = g / 8 > ((cl_ulong)256 << 20) ? g / 8 : (cl_ulong)256 << 20;
    b = g > margin ? (size_t)(g - margin) : SIZE_MAX;
  }
  dm->budget = b;
  TT_LOG(TT_LOG_MM, "domain %u (%s): %zu bytes of windows at most", dom, tt_window_dom_name(dm), b);
  return b;
}

/* Moving an evicted window's bytes between its native buffer and its host copy: the runs its
 * domain holds newest, on Tutti's queue of the domain, the first after every command on the
 * window's bytes (the rest follow it in order). */
struct spill_walk {
  cl_mem root;
  cl_uint dom;
  bool actual;             /* the domain is this rank's: bytes move (else only counted) */
  bool back;               /* host copy -> device (else device -> host copy, made here) */
  bool ahead;              /* back, ahead of use (prefetch) */
  bool clean;              /* out, into a clean copy that holds the bytes already */
  cl_mem native;           /* the device window, starting at native_lo */
  size_t native_lo;
  size_t lo, len;          /* the bytes moved */
  struct tt_spill *sp;     /* the host copy, holding the buffer's bytes from spill_lo */
  size_t spill_lo;
  struct tt_nqueue *q;
  cl_event last;           /* the last command issued (owned) */
  cl_int err;
  size_t bytes;            /* the domain's newest bytes in the window */
};

static int spill_run(void *arg, size_t off, size_t len, tt_holders holders)
{
  struct spill_walk *m = arg;
  if (!tt_holders_has(holders, m->dom))
    return 0;
  m->bytes += len;
  if (!m->actual || m->clean)
    return 0;
  cl_context ctx = m->root->context;
  struct tt_domain *dm = &ctx->domains[m->dom];
  struct tt_deps deps;
  tt_deps_init(&deps);
  if (!m->q) {
    m->err = tt_order_internal_queue(ctx, m->dom, &m->q);
    if (m->err == CL_SUCCESS && !m->sp &&
        !(m->sp = tt_spill_new(m->len, tt_window_stats_of(ctx, m->dom), ctx, m->dom)))
      m->err = CL_OUT_OF_HOST_MEMORY;
    if (m->err == CL_SUCCESS)
      m->err = tt_order_after(&deps, ctx, m->dom, m->q, m->root, m->lo, m->len, true);
  }
  cl_event ev = NULL;
  unsigned char *host = m->err == CL_SUCCESS ? m->sp->mem + (off - m->spill_lo) : NULL;
  const cl_event *wait = deps.n ? deps.ev : NULL;
  if (m->err == CL_SUCCESS && m->back)
    m->err = dm->bp->d->clEnqueueWriteBuffer(m->q->native, m->native, CL_FALSE, off - m->native_lo,
                                             len, host, deps.n, wait, &ev);
  else if (m->err == CL_SUCCESS)
    m->err = dm->bp->d->clEnqueueReadBuffer(m->q->native, m->native, CL_FALSE, off - m->native_lo,
                                            len, host, deps.n, wait, &ev);
  tt_deps_release(&deps);
  if (m->err != CL_SUCCESS)
    return 1;
  tt_order_trace(dm, m->ahead ? "prefetch" : m->back ? "evicted bytes back" : "evict: write back",
                ev);
  if (m->back)
    tt_order_record(m->root, off, len, m->dom, m->q, ev);
  else /* later writers of these bytes wait for the read */
    tt_window_record(m->root, off, len, false, m->dom, m->q, ev, false);
  if (m->last)
    dm->bp->d->clReleaseEvent(m->last);
  m->last = ev;
  return 0;
}

/* A digest of the runs of [lo, hi) that domain dom holds newest. */
struct held_digest {
  cl_uint dom;
  uint64_t h;
};

static int held_run(void *arg, size_t off, size_t len, tt_holders holders)
{
  struct held_digest *d = arg;
  if (tt_holders_has(holders, d->dom)) {
    uint64_t v[] = {d->h, off, len};
    d->h = tt_check_bytes(v, sizeof v);
  }
  return 0;
}

static uint64_t held_by(cl_mem root, cl_uint dom, size_t lo, size_t hi)
{
  struct held_digest d = {dom, 1469598103934665603u};
  tt_rangemap_walk(root->latest, lo, hi - lo, held_run, &d);
  return d.h | 1; /* never 0: 0 says no clean copy */
}

/* A native buffer an eviction freed, handed to the window being made when it has the same
 * size and flags (a new buffer of the backend's costs a page fault per page on first touch):
 * reused only after its eviction reads, the last of which it holds. */
struct spare {
  size_t len;
  cl_mem_flags flags;
  cl_mem native;
  unsigned char *host;
  cl_event read;
};

/* Giving up an evicted window's bytes where another domain holds them on its device (in a
 * resident window of its own): fetched from there when needed again. Bytes whose other
 * holders are evicted too stay (written back, as if held alone): bringing them back from
 * another device would cost that device a window. */
struct drop_walk {
  cl_mem root;
  cl_uint dom;
  int err;
};

/* The first window of s whose first byte (by_end: end) lies past x: s is sorted and disjoint,
 * so both are in order (a CYCLIC buffer's device has a window per chunk it owns, looked up
 * for every part). */
static size_t first_past(const struct tt_window_set *s, size_t x, bool by_end)
{
  size_t lo = 0, hi = s->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if ((by_end ? s->w[mid].hi : s->w[mid].lo) <= x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The window of root in dom holding byte `at`, or NULL. */
struct tt_window *tt_window_holding(cl_mem root, cl_uint dom, size_t at)
{
  struct tt_window_set *s = &root->windows[dom];
  size_t k = first_past(s, at, false);
  return k && at < s->w[k - 1].hi ? &s->w[k - 1] : NULL;
}

size_t tt_window_size_at(cl_mem root, cl_uint dom, size_t at)
{
  TT_ASSERT_PLAN_HELD();
  const struct tt_window *w = tt_window_holding(root, dom, at);
  return w ? w->hi - w->lo : 0;
}

static int drop_run(void *arg, size_t off, size_t len, tt_holders holders)
{
  struct drop_walk *d = arg;
  for (unsigned o = tt_holders_next(holders, 0); o != UINT_MAX;
       o = tt_holders_next(holders, o + 1)) {
    const struct tt_window *w = o == d->dom ? NULL : tt_window_holding(d->root, o, off);
    if (w && w->resident && w->hi >= off + len) {
      d->err = tt_rangemap_drop(d->root->latest, off, len, d->dom);
      return d->err;
    }
  }
  return 0;
}


typedef cl_int (*internal_issue)(struct tt_domain *dm, cl_command_queue q, const struct tt_deps *d,
                                 const void *arg, cl_event *ev);
static cl_int issue_ordered(cl_mem root, cl_uint dom, size_t lo, size_t len, internal_issue issue,
                            const void *arg, cl_event *out);
static cl_int issue_marker(struct tt_domain *dm, cl_command_queue q, const struct tt_deps *d,
                           const void *arg, cl_event *ev);

/* Takes window k of root's windows in dom off the device, alike on every rank: the bytes
 * another domain holds too on its device are given up there (fetched from it when needed
 * again); those the domain alone holds newest (or with evicted holders only) are read into
 * its rank's memory (a spill copy, or none read when the window's clean copy holds them), and
 * the window stays listed, evicted; without any, it goes. On the domain's rank, its native
 * buffer goes to *keep when that is empty and wants its size and flags (and the reads or a
 * marker ordered its reuse), else is released. */
static cl_int evict(cl_mem root, cl_uint dom, size_t k, struct spare *keep)
{
  cl_context ctx = root->context;
  struct tt_domain *dm = &ctx->domains[dom];
  struct tt_window_set *s = &root->windows[dom];
  struct tt_window *w = &s->w[k];
  size_t len = w->hi - w->lo;
  struct drop_walk d = {root, dom, 0};
  tt_rangemap_walk(root->latest, w->lo, len, drop_run, &d);
  if (d.err)
    return CL_OUT_OF_HOST_MEMORY;
  /* A clean copy (the window came back from it, nothing changed since) holds every byte the
   * domain holds newest here: nothing to read. */
  bool clean = w->spill && w->clean && w->clean == held_by(root, dom, w->lo, w->hi);
  struct spill_walk e = {.root = root, .dom = dom, .actual = dm->actual, .back = false,
                         .clean = clean, .native = w->native, .native_lo = w->lo, .lo = w->lo,
                         .len = len, .sp = clean ? w->spill : NULL,
                         .spill_lo = clean ? w->spill_lo : w->lo};
  if (w->spill && !clean)
    tt_window_spill_unref(ctx, dom, w, w->spill->read != NULL); /* changed since: a new copy */
  w->clean = 0;
  tt_rangemap_walk(root->latest, w->lo, len, spill_run, &e);
  if (e.q)
    dm->bp->d->clFlush(e.q->native);
  if (e.sp && !clean)
    e.sp->read = e.last;
  if (clean)
    atomic_fetch_add_explicit(&tt_window_stats_of(ctx, dom)->clean, e.bytes, memory_order_relaxed);
  if (e.err != CL_SUCCESS) {
    TT_LOG(TT_LOG_ERR, "buffer #%llu: evicting bytes %zu-%zu from %s (domain %u) failed: %s",
           (unsigned long long)root->obj.id, w->lo, w->hi, tt_window_dom_name(dm), dom,
           tt_error_name(e.err));
    if (e.sp)
      tt_spill_release(ctx, dom, e.sp, NULL, false);
    return e.err;
  }
  TT_LOG(TT_LOG_MM, "buffer #%llu: window %zu-%zu evicted from %s (domain %u), %zu of its "
         "bytes newest there%s", (unsigned long long)root->obj.id, w->lo, w->hi, tt_window_dom_name(dm),
         dom, e.bytes, e.sp ? ", kept in host memory" : "");
  struct tt_stats_device *st = tt_window_stats_of(ctx, dom);
  atomic_fetch_add_explicit(&st->evictions, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&st->evicted, len, memory_order_relaxed);
  atomic_fetch_add_explicit(&st->written_back, e.bytes, memory_order_relaxed);
  /* What was decided, and the holders it left, for the ranks to compare. */
  uint64_t v[] = {atomic_load_explicit(&tt_stats.evictions_digest, memory_order_relaxed), root->obj.id,
                  dom, w->lo, w->hi, e.bytes, tt_rangemap_hash(root->latest, 0)};
  atomic_store_explicit(&tt_stats.evictions_digest, tt_check_bytes(v, sizeof v),
                        memory_order_relaxed);
  if (tt_check_active)
    tt_check_call("eviction", 0, v + 1, sizeof v / sizeof v[0] - 1);
  tt_window_count(root, dom, -(int64_t)len);
  w->resident = false;
  dm->evicted = true;
  /* Only the domain's rank has a native buffer to hand on or free. Its next window uses it
   * after the eviction's reads (they follow every command on it), or when nothing was read,
   * after a marker following those commands. */
  cl_event after = NULL;
  if (w->native && keep && !keep->native && e.sp && keep->len == len &&
      keep->flags == window_flags(root)) {
    if (clean) {
      if (issue_ordered(root, dom, w->lo, len, issue_marker, NULL, &after) != CL_SUCCESS)
        after = NULL;
    } else if ((after = e.sp->read)) {
      dm->bp->d->clRetainEvent(after);
    }
  }
  if (after) {
    keep->native = w->native;
    keep->host = w->host;
    keep->read = after;
  } else if (w->native) {
    /* The backend keeps it until the commands on it, the reads above among them, are done. */
    dm->bp->d->clReleaseMemObject(w->native);
  }
  w->native = NULL;
  w->host = NULL;
  w->spill = e.sp;
  w->spill_lo = e.spill_lo;
  if (!e.bytes) {
    tt_window_spill_unref(ctx, dom, w, w->spill && w->spill->read);
    memmove(&s->w[k], &s->w[k + 1], (s->n - k - 1) * sizeof *s->w);
    s->n--;
  }
  return CL_SUCCESS;
}

/* When a window will be used again, foretold from the time between its last two uses by the
 * program: UINT64_MAX when that cannot be told (used once so far, or overdue). A sweep over
 * more chunks than fit then keeps the chunks it needs soonest, where evicting the least
 * recently used would evict each chunk just before its turn; data used by every command
 * stays. */
static uint64_t next_use(const struct tt_window *w)
{
  if (tt_env()->evict_lru)
    return 0; /* all alike: the least recently used goes */
  uint64_t next = w->period ? w->last_use + w->period : UINT64_MAX;
  return next > clock_now ? next : UINT64_MAX;
}

/* Makes room for `need` more bytes of windows in dom by evicting, among the windows no
 * command being planned uses (none of root's overlapping [lo, hi)) and no reduction copy, the
 * one to be used again last (next_use), the least recently used among equals. Failing, it
 * says why (unless quiet: a prefetch). */
static cl_int make_room(cl_mem root, cl_uint dom, size_t need, size_t lo, size_t hi,
                        struct spare *keep, bool quiet)
{
  cl_context ctx = root->context;
  struct tt_domain *dm = &ctx->domains[dom];
  size_t budget = tt_window_budget(ctx, dom);
  while (dm->held + need > budget) {
    cl_mem victim = NULL;
    size_t vk = 0;
    uint64_t oldest = UINT64_MAX, farthest = 0;
    for (size_t r = 0; r < ctx->nwindowed; r++) {
      cl_mem b = ctx->windowed[r];
      /* A split launch's reduction copies stay until its combine has read them: evicting
       * them would read them out and bring them back for it, each on its own. */
      if (pinned_root(b) || b->transient)
        continue;
      struct tt_window_set *s = &b->windows[dom];
      for (size_t k = 0; k < s->n; k++) {
        struct tt_window *w = &s->w[k];
        if (!w->resident || w->epoch == tt_plan_epoch || (b == root && w->lo < hi && w->hi > lo))
          continue;
        uint64_t next = next_use(w);
        if (next > farthest || (next == farthest && w->used < oldest)) {
          farthest = next;
          oldest = w->used;
          victim = b;
          vk = k;
        }
      }
    }
    if (!victim) {
      /* Every rank fails the command; the domain's own says why. */
      cl_device_id dev = dm->first_device;
      if (dm->actual && !quiet)
        TT_WARN("device %u (%s): %zu more bytes of windows do not fit its budget of "
             "%zu bytes (TUTTI_DEVICE_MEM) beside the %zu bytes that must stay there (used by "
             "the command being planned, reduction copies, mapped, attached or cut into sub-buffers)",
             dev ? dev->index : 0, tt_window_dom_name(dm), need, budget, dm->held);
      return CL_MEM_OBJECT_ALLOCATION_FAILURE;
    }
    cl_int err = evict(victim, dom, vk, keep);
    if (err != CL_SUCCESS)
      return err;
  }
  return CL_SUCCESS;
}

/* Brings the bytes of evicted window o that new window w covers into w, ahead of use or not
 * (on other ranks, counts them only); o's host copy then holds the last command on it. */
static cl_int refill(cl_mem root, cl_uint dom, struct tt_window *o, const struct tt_window *w,
                     bool ahead)
{
  struct tt_domain *dm = &root->context->domains[dom];
  size_t lo = o->lo > w->lo ? o->lo : w->lo, hi = o->hi < w->hi ? o->hi : w->hi;
  struct spill_walk r = {.root = root, .dom = dom, .actual = dm->actual, .back = true,
                         .ahead = ahead, .native = w->native, .native_lo = w->lo, .lo = lo,
                         .len = hi - lo, .sp = o->spill, .spill_lo = o->spill_lo};
  tt_rangemap_walk(root->latest, lo, hi - lo, spill_run, &r);
  if (r.err != CL_SUCCESS) {
    TT_LOG(TT_LOG_ERR, "buffer #%llu: bringing evicted bytes %zu-%zu back to %s failed: %s",
           (unsigned long long)root->obj.id, lo, hi, tt_window_dom_name(dm), tt_error_name(r.err));
    if (r.last)
      TT_NATIVE_DISPATCH(r.last)->clReleaseEvent(r.last);
    return r.err;
  }
  struct tt_stats_device *st = tt_window_stats_of(root->context, dom);
  atomic_fetch_add_explicit(&st->refetched, r.bytes, memory_order_relaxed);
  if (ahead)
    atomic_fetch_add_explicit(&st->prefetched, r.bytes, memory_order_relaxed);
  if (r.q)
    dm->bp->d->clFlush(r.q->native);
  if (r.last && o->spill) {
    if (o->spill->read)
      TT_NATIVE_DISPATCH(o->spill->read)->clReleaseEvent(o->spill->read);
    o->spill->read = r.last;
  } else if (r.last) {
    TT_NATIVE_DISPATCH(r.last)->clReleaseEvent(r.last);
  }
  return CL_SUCCESS;
}

/* Gives up evicted window o's share of its host copy: the last share frees it (or hands it
 * back to the domain, `queued` when its last use went to the domain's internal queue). */
void tt_window_spill_unref(cl_context ctx, cl_uint dom, struct tt_window *o, bool queued)
{
  if (o->spill && --o->spill->refs == 0)
    tt_spill_release(ctx, dom, o->spill, NULL, queued);
  o->spill = NULL;
}

/* Issues, through issue, a command of Tutti's on dom's internal queue that rewrites [lo,
 * lo+len) of root there without changing the bytes: after every command on them, recorded so
 * that later ones wait for it (the latest holders stay); its event in *out (unless NULL). */
static cl_int issue_ordered(cl_mem root, cl_uint dom, size_t lo, size_t len, internal_issue issue,
                            const void *arg, cl_event *out)
{
  cl_context ctx = root->context;
  struct tt_domain *dm = &ctx->domains[dom];
  struct tt_nqueue *q = NULL;
  struct tt_deps deps;
  tt_deps_init(&deps);
  cl_event ev = NULL;
  cl_int err = tt_order_internal_queue(ctx, dom, &q);
  if (err == CL_SUCCESS)
    err = tt_order_after(&deps, ctx, dom, q, root, lo, len, true);
  if (err == CL_SUCCESS)
    err = issue(dm, q->native, &deps, arg, &ev);
  tt_deps_release(&deps);
  if (err != CL_SUCCESS)
    return err;
  dm->bp->d->clFlush(q->native);
  tt_order_record(root, lo, len, dom, q, ev);
  if (out)
    *out = ev; /* the caller's reference */
  else
    dm->bp->d->clReleaseEvent(ev);
  return CL_SUCCESS;
}

/* arg: the old window and the new one that holds it. */
static cl_int issue_copy(struct tt_domain *dm, cl_command_queue q, const struct tt_deps *d,
                         const void *arg, cl_event *ev)
{
  const struct tt_window *const *ow = arg;
  const struct tt_window *o = ow[0], *w = ow[1];
  return dm->bp->d->clEnqueueCopyBuffer(q, o->native, w->native, 0, o->lo - w->lo, o->hi - o->lo,
                                        d->n, d->n ? d->ev : NULL, ev);
}

static cl_int issue_marker(struct tt_domain *dm, cl_command_queue q, const struct tt_deps *d,
                           const void *arg, cl_event *ev)
{
  (void)arg;
  return dm->bp->d->clEnqueueMarkerWithWaitList(q, d->n, d->n ? d->ev : NULL, ev);
}

/* Copies the bytes of old window o into new window w (o inside w) on dom's internal queue,
 * after every command on those bytes, and before any later one. */
static cl_int carry_over(cl_mem root, cl_uint dom, const struct tt_window *o,
                         const struct tt_window *w)
{
  const struct tt_window *ow[2] = {o, w};
  cl_int err = issue_ordered(root, dom, o->lo, o->hi - o->lo, issue_copy, ow, NULL);
  if (err != CL_SUCCESS)
    TT_LOG(TT_LOG_ERR, "buffer #%llu: widening a window of %s to bytes %zu-%zu failed: %s",
           (unsigned long long)root->obj.id, tt_window_dom_name(&root->context->domains[dom]), w->lo,
           w->hi, tt_error_name(err));
  return err;
}

/* Windows of s overlapping [lo, hi): *i .. *j-1. */
void tt_window_overlap(const struct tt_window_set *s, size_t lo, size_t hi, size_t *i, size_t *j)
{
  *i = first_past(s, lo, true);
  *j = *i;
  while (*j < s->n && s->w[*j].lo < hi)
    ++*j;
}

/* The window of dom holding byte `at` of the windowed buffer whose id is id (*root: that
 * buffer), or NULL. */
struct tt_window *tt_window_at(cl_context ctx, cl_uint dom, uint64_t id, size_t at,
                                   cl_mem *root)
{
  for (size_t r = 0; r < ctx->nwindowed; r++)
    if (ctx->windowed[r]->obj.id == id) {
      *root = ctx->windowed[r];
      return tt_window_holding(*root, dom, at);
    }
  return NULL;
}

/* The first use by the command being planned sets when it was used (later uses by the
 * same command, on this rank only among them, change nothing); a use of the program's
 * (not a prefetch) makes w the next window of the one its domain used before, unless w
 * lives for one command only (gone by the next time round). */
void tt_window_touch(cl_mem root, cl_uint dom, struct tt_window *w, bool ahead)
{
  if (w->epoch == tt_plan_epoch)
    return;
  w->used = ++clock_now;
  w->epoch = tt_plan_epoch;
  struct tt_domain *dm = &root->context->domains[dom];
  if (ahead || root->transient)
    return;
  w->period = w->last_use ? clock_now - w->last_use : 0;
  w->last_use = clock_now;
  struct tt_window *last = dm->last_root ? tt_window_holding(dm->last_root, dom, dm->last_at) : NULL;
  if (last && last != w) {
    last->next_id = root->obj.id;
    last->next_at = w->lo;
  }
  dm->last_root = root;
  dm->last_at = w->lo;
}

/* Window w takes sp's native buffer: on Tutti's queue, where the eviction reads of its old
 * bytes went, a marker after them and after every command on w's bytes, which later commands
 * on those bytes wait for. */
static cl_int reuse(cl_mem root, cl_uint dom, struct tt_window *w, struct spare *sp)
{
  cl_int err = issue_ordered(root, dom, w->lo, w->hi - w->lo, issue_marker, NULL, NULL);
  if (err != CL_SUCCESS)
    return err;
  TT_LOG(TT_LOG_MM, "buffer #%llu: window %zu-%zu on %s reuses an evicted window's memory",
         (unsigned long long)root->obj.id, w->lo, w->hi, root->context->domains[dom].bp->short_name);
  w->native = sp->native;
  w->host = sp->host;
  sp->native = NULL;
  return CL_SUCCESS;
}

/* An evicted window's piece [lo, hi), sharing its host copy. */
static struct tt_window piece_of(const struct tt_window *o, size_t lo, size_t hi)
{
  struct tt_window p = *o;
  p.lo = lo;
  p.hi = hi;
  if (p.spill)
    p.spill->refs++;
  return p;
}

/* A window of dom covering [lo, hi) (aligned), made from the windows on the device it overlaps
 * (their bytes carried over) and the parts of evicted windows it overlaps (brought back from
 * host memory; the rest of an evicted window stays evicted, beside it), room made first.
 * Native buffers and bytes move on the domain's rank only. */
/* A new window follows on from the windows it replaces, s->w[i .. j) (the last of them that
 * knew a next), and keeps the rhythm of the one used last. */
static void inherit_rhythm(const struct tt_window_set *s, size_t i, size_t j,
                           struct tt_window *w)
{
  for (size_t k = i; k < j; k++) {
    if (s->w[k].next_id) {
      w->next_id = s->w[k].next_id;
      w->next_at = s->w[k].next_at;
    }
    if (s->w[k].last_use > w->last_use) {
      w->last_use = s->w[k].last_use;
      w->period = s->w[k].period;
    }
  }
}

/* The same window back whole (w over old's bytes) from its host copy: the copy stays with it,
 * clean (evicted again unchanged, it reads nothing). Not unpinned memory on a device with
 * memory of its own (the program's bytes before their first use): every return from it would
 * copy at half speed, where one more eviction reads them into pinned memory for good. */
static void keep_host_copy(cl_mem root, cl_uint dom, struct tt_window *old, struct tt_window *w)
{
  cl_context ctx = root->context;
  if (old->resident || !old->spill || !ctx->domains[dom].actual || old->lo != w->lo ||
      old->hi != w->hi ||
      !(old->spill->pinned || old->spill->file || !tt_domain_device_memory(ctx, dom)))
    return;
  w->spill = old->spill;
  w->spill_lo = old->spill_lo;
  w->clean = held_by(root, dom, w->lo, w->hi);
  old->spill = NULL;
}

/* Room for n windows in s; false without memory. */
static bool set_room(struct tt_window_set *s, size_t n)
{
  if (n <= s->cap)
    return true;
  size_t cap = s->cap ? s->cap * 2 : 4;
  while (cap < n)
    cap *= 2;
  struct tt_window *g = realloc(s->w, cap * sizeof *g);
  if (!g)
    return false;
  s->w = g;
  s->cap = cap;
  return true;
}

cl_int tt_window_cover(cl_mem root, cl_uint dom, size_t lo, size_t hi, bool ahead,
                           struct tt_window **out)
{
  struct tt_window_set *s = &root->windows[dom];
  size_t i, j;
  tt_window_overlap(s, lo, hi, &i, &j);
  if (j == i + 1 && s->w[i].resident && s->w[i].lo <= lo && s->w[i].hi >= hi) {
    tt_window_touch(root, dom, &s->w[i], ahead);
    *out = &s->w[i];
    return CL_SUCCESS;
  }
  /* Windows never tt_window_overlap (they may touch): the new one takes in the resident ones it
   * overlaps, and the parts of evicted ones within them. */
  struct tt_window w = {.lo = lo, .hi = hi, .resident = true};
  size_t kept = 0;
  for (size_t k = i; k < j; k++)
    if (s->w[k].resident) {
      w.lo = s->w[k].lo < w.lo ? s->w[k].lo : w.lo;
      w.hi = s->w[k].hi > w.hi ? s->w[k].hi : w.hi;
      kept += s->w[k].hi - s->w[k].lo;
    }
  cl_context ctx = root->context;
  struct tt_domain *dm = &ctx->domains[dom];
  cl_mem_flags flags = window_flags(root);
  struct spare spare = {w.hi - w.lo, flags, NULL, NULL, NULL};
  cl_int err = make_room(root, dom, w.hi - w.lo - kept, w.lo, w.hi, dm->actual ? &spare : NULL,
                         ahead);
  if (err == CL_SUCCESS && spare.native)
    err = reuse(root, dom, &w, &spare);
  if (spare.read)
    TT_NATIVE_DISPATCH(spare.read)->clReleaseEvent(spare.read);
  if (err != CL_SUCCESS) {
    if (spare.native)
      TT_NATIVE_DISPATCH(spare.native)->clReleaseMemObject(spare.native);
    return err;
  }
  /* Eviction may have dropped other windows of this buffer. */
  tt_window_overlap(s, w.lo, w.hi, &i, &j);
  inherit_rhythm(s, i, j, &w);
  void *host = w.host;
  if (dm->actual && !w.native)
    w.native = tt_window_native_new(ctx, dom, root, flags, w.hi - w.lo, NULL, &host, &err);
  w.host = host;
  if (dm->actual && !w.native) {
    TT_LOG(TT_LOG_ERR, "buffer #%llu: a window of bytes %zu-%zu (%zu bytes) on %s: %s",
           (unsigned long long)root->obj.id, w.lo, w.hi, w.hi - w.lo, tt_window_dom_name(dm),
           tt_error_name(err));
    return err == CL_SUCCESS || err == CL_INVALID_BUFFER_SIZE ? CL_MEM_OBJECT_ALLOCATION_FAILURE
                                                               : err;
  }
  for (size_t k = i; k < j && err == CL_SUCCESS; k++)
    if (s->w[k].resident)
      err = dm->actual ? carry_over(root, dom, &s->w[k], &w) : CL_SUCCESS;
    else
      err = refill(root, dom, &s->w[k], &w, ahead);
  if (err == CL_SUCCESS && j == i + 1)
    keep_host_copy(root, dom, &s->w[i], &w);
  /* What stays evicted on either side: pieces of the first and last windows replaced. */
  bool left = j > i && !s->w[i].resident && s->w[i].lo < w.lo;
  bool right = j > i && !s->w[j - 1].resident && s->w[j - 1].hi > w.hi;
  size_t n = 1 + left + right;
  if (err == CL_SUCCESS && !set_room(s, s->n - (j - i) + n))
    err = CL_OUT_OF_HOST_MEMORY;
  if (err != CL_SUCCESS) {
    if (w.native)
      dm->bp->d->clReleaseMemObject(w.native);
    tt_window_spill_unref(ctx, dom, &w, w.spill && w.spill->read);
    return err;
  }
  struct tt_window l = left ? piece_of(&s->w[i], s->w[i].lo, w.lo) : (struct tt_window){0};
  struct tt_window r = right ? piece_of(&s->w[j - 1], w.hi, s->w[j - 1].hi) : (struct tt_window){0};
  /* The old windows go once their commands are done (the backend keeps them till then);
   * evicted ones give up their share of their host copies. */
  for (size_t k = i; k < j; k++) {
    if (s->w[k].native)
      dm->bp->d->clReleaseMemObject(s->w[k].native);
    tt_window_spill_unref(ctx, dom, &s->w[k], s->w[k].spill && s->w[k].spill->read);
  }
  /* Replace w[i .. j-1] (none: insert at i) by the window and the pieces beside it. */
  memmove(&s->w[i + n], &s->w[j], (s->n - j) * sizeof *s->w);
  s->n = s->n - (j - i) + n;
  if (left)
    s->w[i++] = l;
  s->w[i] = w;
  if (right)
    s->w[i + 1] = r;
  tt_window_touch(root, dom, &s->w[i], ahead);
  tt_window_count(root, dom, (int64_t)(w.hi - w.lo) - (int64_t)kept);
  TT_LOG(TT_LOG_PLAN, "buffer #%llu: window %zu-%zu on %s (domain %u), %zu window(s) there",
         (unsigned long long)root->obj.id, w.lo, w.hi, tt_window_dom_name(dm), dom, s->n);
  *out = &s->w[i];
  return CL_SUCCESS;
}

void tt_window_written(cl_mem root, cl_uint dom, size_t off, size_t len)
{
  TT_ASSERT_PLAN_HELD();
  if (!tt_windowed(root) || !len)
    return;
  struct tt_window_set *s = &root->windows[dom];
  size_t i, j;
  tt_window_overlap(s, off, off + len, &i, &j);
  for (size_t k = i; k < j; k++)
    if (s->w[k].resident && s->w[k].spill) {
      tt_window_spill_unref(root->context, dom, &s->w[k], s->w[k].spill->read != NULL);
      s->w[k].clean = 0;
    }
}

/* [lo, hi): [off, off+len) of root widened to whole pages, as windows are. */
void tt_window_span(cl_mem root, size_t off, size_t len, size_t *lo, size_t *hi)
{
  *lo = off & ~(WINDOW_ALIGN - 1);
  *hi = (off + (len ? len : 1) + WINDOW_ALIGN - 1) & ~(WINDOW_ALIGN - 1);
  if (*hi > root->size)
    *hi = root->size;
}

cl_int tt_window_place(cl_mem m, cl_uint dom, size_t off, size_t len, struct tt_place *out)
{
  TT_ASSERT_PLAN_HELD();
  cl_mem root = m->root;
  /* A sub-buffer has a native buffer of its own (a windowed root's is cut from a window over
   * the whole buffer, which stays). */
  if (!tt_windowed(root) || m != root) {
    out->native = m->native[dom];
    out->off = off;
    out->host = root->direct && root->direct[dom]
                    ? (unsigned char *)root->direct[dom] + m->origin + off
                    : NULL;
    out->window_lo = 0;
    return CL_SUCCESS;
  }
  size_t lo, hi;
  tt_window_span(root, off, len, &lo, &hi);
  struct tt_window *w = NULL;
  cl_int err = tt_window_cover(root, dom, lo, hi, false, &w);
  if (err != CL_SUCCESS)
    return err;
  out->native = w->native;
  out->off = off - w->lo;
  out->host = w->host ? w->host + (off - w->lo) : NULL;
  out->window_lo = w->lo;
  return CL_SUCCESS;
}

/* Records what a command did (runtime/memory/window.h): a write leaves only its domain
 * holding the newest bytes. */
void tt_window_record(cl_mem m, size_t off, size_t len, bool writes, cl_uint dom,
                    struct tt_nqueue *nq, cl_event ev, bool may_fail)
{
  TT_ASSERT_PLAN_HELD();
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
    tt_window_written(root, dom, off, len);
  }
  if (nq)
    tt_order_access_record(root, off, len, writes, dom, nq, ev, may_fail);
}
