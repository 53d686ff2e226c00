/* Windows: a windowed buffer's native buffers in each domain (runtime/window.h). */
#include "config.h"

#include "runtime/window.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"
#include "runtime/log.h"
#include "runtime/plan.h"
#include "runtime/rangemap.h"
#include "runtime/stats.h"

/* Windows start and end at multiples of this (the end clamped to the buffer): a split
 * launch's rebased pointers then point at whole elements of any built-in type, and a window
 * widened by a row or two is not remade at every launch. */
#define WINDOW_ALIGN ((size_t)4096)

/* Buffers in memory of Tutti's start at a page. */
#define HOST_ALIGN ((size_t)4096)

struct tt_window {
  size_t lo, hi;
  cl_mem native;
  unsigned char *host;
};

struct tt_window_set {
  struct tt_window *w; /* sorted by lo; disjoint and not touching */
  size_t n, cap;
};

static void CL_CALLBACK free_host(cl_mem native, void *mem)
{
  (void)native;
  free(mem);
}

cl_mem tt_window_native_new(cl_context ctx, cl_uint dom, cl_mem_flags flags, size_t size,
                            void *host_ptr, void **host, cl_int *err)
{
  struct tt_domain *dm = &ctx->domains[dom];
  *host = NULL;
  if ((flags & CL_MEM_USE_HOST_PTR) || !tt_plan_direct_memory(ctx, dom))
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

/* Windows held in a domain count for its first device (TUTTI_STATS). */
static void count(cl_mem root, cl_uint dom, int64_t delta)
{
  cl_device_id dev = root->context->domains[dom].first_device;
  if (!dev)
    return;
  struct tt_stats_device *s = tt_stats_device(dev->index);
  uint64_t now = atomic_fetch_add_explicit(&s->window_bytes, (uint64_t)delta,
                                           memory_order_relaxed) + (uint64_t)delta;
  uint64_t peak = atomic_load_explicit(&s->window_peak, memory_order_relaxed);
  while (now > peak && !atomic_compare_exchange_weak(&s->window_peak, &peak, now))
    ;
}

/* Copies the bytes of old window o into new window w (o inside w) on dom's internal queue,
 * after every command on those bytes, and before any later one. */
static cl_int carry_over(cl_mem root, cl_uint dom, const struct tt_window *o,
                         const struct tt_window *w)
{
  cl_context ctx = root->context;
  struct tt_domain *dm = &ctx->domains[dom];
  struct tt_nqueue *q = NULL;
  struct tt_deps deps;
  tt_deps_init(&deps);
  cl_event ev = NULL;
  cl_int err = tt_plan_internal_queue(ctx, dom, &q);
  if (err == CL_SUCCESS)
    err = tt_plan_order_after(&deps, ctx, dom, q, root, o->lo, o->hi - o->lo, true);
  if (err == CL_SUCCESS)
    err = dm->bp->d->clEnqueueCopyBuffer(q->native, o->native, w->native, 0, o->lo - w->lo,
                                         o->hi - o->lo, deps.n, deps.n ? deps.ev : NULL, &ev);
  tt_deps_release(&deps);
  if (err != CL_SUCCESS) {
    TT_LOG(TT_LOG_ERR, "buffer #%llu: widening a window of %s to bytes %zu-%zu failed: %s",
           (unsigned long long)root->obj.id, dm->bp->short_name, w->lo, w->hi,
           tt_error_name(err));
    return err;
  }
  dm->bp->d->clFlush(q->native);
  tt_plan_record_order(root, o->lo, o->hi - o->lo, dom, q, ev);
  dm->bp->d->clReleaseEvent(ev);
  return CL_SUCCESS;
}

/* A window of dom covering [lo, hi) (aligned), made from the windows it reaches. */
static cl_int window_cover(cl_mem root, cl_uint dom, size_t lo, size_t hi, struct tt_window **out)
{
  struct tt_window_set *s = &root->windows[dom];
  /* Windows reaching [lo, hi] (touching counts): i .. j-1. */
  size_t i = 0;
  while (i < s->n && s->w[i].hi < lo)
    i++;
  size_t j = i;
  while (j < s->n && s->w[j].lo <= hi)
    j++;
  if (j == i + 1 && s->w[i].lo <= lo && s->w[i].hi >= hi) {
    *out = &s->w[i];
    return CL_SUCCESS;
  }
  struct tt_window w = {lo, hi, NULL, NULL};
  if (j > i) {
    w.lo = s->w[i].lo < lo ? s->w[i].lo : lo;
    w.hi = s->w[j - 1].hi > hi ? s->w[j - 1].hi : hi;
  }
  cl_context ctx = root->context;
  cl_int err = CL_SUCCESS;
  void *host;
  cl_mem_flags flags = root->flags & ~(cl_mem_flags)(CL_MEM_COPY_HOST_PTR | CL_MEM_ALLOC_HOST_PTR);
  w.native = tt_window_native_new(ctx, dom, flags, w.hi - w.lo, NULL, &host, &err);
  w.host = host;
  if (!w.native) {
    TT_LOG(TT_LOG_ERR, "buffer #%llu: a window of bytes %zu-%zu (%zu bytes) on %s: %s",
           (unsigned long long)root->obj.id, w.lo, w.hi, w.hi - w.lo,
           ctx->domains[dom].bp->short_name, tt_error_name(err));
    return err == CL_SUCCESS || err == CL_INVALID_BUFFER_SIZE ? CL_MEM_OBJECT_ALLOCATION_FAILURE
                                                               : err;
  }
  for (size_t k = i; k < j && err == CL_SUCCESS; k++)
    err = carry_over(root, dom, &s->w[k], &w);
  if (err != CL_SUCCESS) {
    ctx->domains[dom].bp->d->clReleaseMemObject(w.native);
    return err;
  }
  /* The old windows go once their commands are done (the backend keeps them till then). */
  int64_t delta = (int64_t)(w.hi - w.lo);
  for (size_t k = i; k < j; k++) {
    ctx->domains[dom].bp->d->clReleaseMemObject(s->w[k].native);
    delta -= (int64_t)(s->w[k].hi - s->w[k].lo);
  }
  if (j == i && s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 4;
    struct tt_window *g = realloc(s->w, cap * sizeof *g);
    if (!g) {
      ctx->domains[dom].bp->d->clReleaseMemObject(w.native);
      return CL_OUT_OF_HOST_MEMORY;
    }
    s->w = g;
    s->cap = cap;
  }
  /* Replace w[i .. j-1] (none: insert at i) by the one window. */
  memmove(&s->w[i + 1], &s->w[j > i ? j : i], (s->n - (j > i ? j : i)) * sizeof *s->w);
  s->n = s->n + 1 - (j - i);
  s->w[i] = w;
  count(root, dom, delta);
  TT_LOG(TT_LOG_PLAN, "buffer #%llu: window %zu-%zu on %s (domain %u), %zu window(s) there",
         (unsigned long long)root->obj.id, w.lo, w.hi, ctx->domains[dom].bp->short_name, dom,
         s->n);
  *out = &s->w[i];
  return CL_SUCCESS;
}

cl_int tt_window_place(cl_mem m, cl_uint dom, size_t off, size_t len, struct tt_place *out)
{
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
  size_t lo = off & ~(WINDOW_ALIGN - 1);
  size_t hi = (off + (len ? len : 1) + WINDOW_ALIGN - 1) & ~(WINDOW_ALIGN - 1);
  if (hi > root->size)
    hi = root->size;
  struct tt_window *w = NULL;
  cl_int err = window_cover(root, dom, lo, hi, &w);
  if (err != CL_SUCCESS)
    return err;
  out->native = w->native;
  out->off = off - w->lo;
  out->host = w->host ? w->host + (off - w->lo) : NULL;
  out->window_lo = w->lo;
  return CL_SUCCESS;
}

void tt_window_enable(cl_mem root)
{
  cl_context ctx = root->context;
  /* Only replicated facts decide: every rank makes the same buffer windowed. */
  if (tt_windowed(root) || root->written || root->host_ptr || atomic_load(&root->nsubs) || atomic_load(&root->map_count) ||
      root->attached != TT_NOT_ATTACHED)
    return;
  struct tt_window_set *w = calloc(ctx->ndomains, sizeof *w);
  if (!w)
    return; /* stays whole: correct, only larger */
  for (cl_uint i = 0; i < ctx->ndomains; i++)
    if (root->native[i]) {
      ctx->domains[i].bp->d->clReleaseMemObject(root->native[i]);
      root->native[i] = NULL;
    }
  free(root->direct);
  root->direct = NULL;
  root->windows = w;
  /* Nothing was written: no domain holds anything worth fetching. */
  tt_rangemap_set(root->latest, 0, root->size, -1);
}

size_t tt_window_bytes(cl_mem root, cl_uint dom)
{
  size_t n = 0;
  for (size_t i = 0; tt_windowed(root) && i < root->windows[dom].n; i++)
    n += root->windows[dom].w[i].hi - root->windows[dom].w[i].lo;
  return n;
}

void tt_window_take_all(cl_mem root, cl_mem **out, size_t *n)
{
  *out = NULL;
  *n = 0;
  if (!tt_windowed(root))
    return;
  cl_context ctx = root->context;
  size_t total = 0;
  for (cl_uint d = 0; d < ctx->ndomains; d++)
    total += root->windows[d].n;
  cl_mem *list = total ? malloc(total * sizeof *list) : NULL;
  for (cl_uint d = 0; d < ctx->ndomains; d++) {
    struct tt_window_set *s = &root->windows[d];
    for (size_t i = 0; i < s->n; i++) {
      count(root, d, -(int64_t)(s->w[i].hi - s->w[i].lo));
      if (list)
        list[(*n)++] = s->w[i].native;
      else
        TT_NATIVE_DISPATCH(s->w[i].native)->clReleaseMemObject(s->w[i].native);
    }
    free(s->w);
  }
  free(root->windows);
  root->windows = NULL;
  *out = list;
}
