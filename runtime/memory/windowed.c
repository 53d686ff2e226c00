/* Making a buffer windowed, and taking its windows back when it goes
 * (runtime/memory/window.h). */
#include "config.h"

#include "runtime/memory/window_impl.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/base/cuda.h"
#include "runtime/base/env.h"
#include "runtime/base/rangemap.h"
#include "runtime/memory/spill.h"

/* Makes root windowed with no window yet, and lists it with its context's windowed buffers. */
static bool windows_make(cl_mem root)
{
  cl_context ctx = root->context;
  if (ctx->nwindowed == ctx->capwindowed) {
    size_t cap = ctx->capwindowed ? ctx->capwindowed * 2 : 16;
    cl_mem *g = realloc(ctx->windowed, cap * sizeof *g);
    if (!g)
      return false;
    ctx->windowed = g;
    ctx->capwindowed = cap;
  }
  struct tt_window_set *w = calloc(ctx->ndomains, sizeof *w);
  if (!w)
    return false; /* stays whole: correct, only larger */
  for (cl_uint i = 0; i < ctx->ndomains; i++)
    if (root->native[i]) {
      ctx->domains[i].bp->d->clReleaseMemObject(root->native[i]);
      root->native[i] = NULL;
    }
  free(root->direct);
  root->direct = NULL;
  root->windows = w;
  ctx->windowed[ctx->nwindowed++] = root;
  return true;
}

void tt_window_enable(cl_mem root)
{
  /* Only replicated facts decide: every rank makes the same buffer windowed. */
  if (tt_windowed(root) || root->written || root->host_ptr || atomic_load(&root->nsubs) ||
      atomic_load(&root->map_count) || root->attached != TT_NOT_ATTACHED || !windows_make(root))
    return;
  /* Nothing was written: no domain holds anything worth fetching. */
  tt_rangemap_set(root->latest, 0, root->size, -1);
}

bool tt_window_spill_new(cl_mem root)
{
  return tt_env()->device_mem && !(root->flags & CL_MEM_USE_HOST_PTR);
}

bool tt_window_cuda_new(cl_mem root)
{
  /* The device table says every domain's path alike on every rank. */
  cl_context ctx = root->context;
  unsigned gpus = 0;
  for (cl_uint d = 0; d < ctx->ndomains; d++)
    gpus += ctx->domains[d].cuda >= 0;
  return tt_cuda_windows(root->size, root->flags, gpus);
}

cl_int tt_window_enable_copy(cl_mem root, const void *bytes)
{
  cl_context ctx = root->context;
  if (!windows_make(root))
    return CL_OUT_OF_HOST_MEMORY;
  /* Every domain holds the bytes as an evicted window: a local one in this rank's memory
   * until a command needs them. */
  for (cl_uint d = 0; d < ctx->ndomains; d++) {
    struct tt_window_set *s = &root->windows[d];
    struct tt_spill *sp = NULL;
    if (ctx->domains[d].actual && !(sp = tt_spill_new(root->size, tt_window_stats_of(ctx, d), NULL, 0)))
      return CL_OUT_OF_HOST_MEMORY;
    if (!(s->w = malloc(sizeof *s->w))) {
      if (sp)
        tt_spill_free(NULL, sp);
      return CL_OUT_OF_HOST_MEMORY;
    }
    if (sp)
      memcpy(sp->mem, bytes, root->size);
    s->w[0] = (struct tt_window){.lo = 0, .hi = root->size, .spill = sp};
    s->n = s->cap = 1;
  }
  return CL_SUCCESS;
}

void tt_window_take_all(cl_mem root, cl_mem **out, size_t *n)
{
  *out = NULL;
  *n = 0;
  if (!tt_windowed(root))
    return;
  cl_context ctx = root->context;
  for (size_t r = 0; r < ctx->nwindowed; r++)
    if (ctx->windowed[r] == root) {
      ctx->windowed[r] = ctx->windowed[--ctx->nwindowed];
      break;
    }
  if (!ctx->nwindowed) {
    free(ctx->windowed);
    ctx->windowed = NULL;
    ctx->capwindowed = 0;
  }
  size_t total = 0;
  for (cl_uint d = 0; d < ctx->ndomains; d++) {
    total += root->windows[d].n;
    if (ctx->domains[d].last_root == root)
      ctx->domains[d].last_root = NULL;
  }
  cl_mem *list = total ? malloc(total * sizeof *list) : NULL;
  for (cl_uint d = 0; d < ctx->ndomains; d++) {
    struct tt_window_set *s = &root->windows[d];
    for (size_t i = 0; i < s->n; i++) {
      tt_window_spill_unref(ctx, d, &s->w[i], false);
      if (!s->w[i].resident)
        continue;
      tt_window_count(root, d, -(int64_t)(s->w[i].hi - s->w[i].lo));
      if (!s->w[i].native)
        continue;
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
