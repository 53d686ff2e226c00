/* Host memory and files for evicted bytes (runtime/memory/spill.h). */
#include "config.h"

#include "runtime/memory/spill.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/base/backend.h"
#include "runtime/base/env.h"
#include "runtime/base/log.h"
#include "runtime/job/callback.h"
#include "runtime/memory/domain.h"

/* Bytes held in this rank's memory for evicted windows (TUTTI_HOST_MEM). */
static atomic_size_t host_held;

/* Room for len bytes in this rank's memory: malloc'ed while TUTTI_HOST_MEM allows, else a
 * mapping of a file made and unlinked at once in TUTTI_SPILL_DIR (gone however the process
 * ends). */
struct tt_spill *tt_spill_new(size_t len, struct tt_stats_device *st, cl_context ctx,
                              cl_uint dom)
{
  struct tt_domain *dm = ctx ? &ctx->domains[dom] : NULL;
  /* A block whose write back into the device is on dm's internal queue, before the reads
   * into it this one is for. */
  for (struct tt_spill **p = dm ? &dm->spill_blocks : NULL; p && *p; p = &(*p)->next)
    if ((*p)->len == len) {
      struct tt_spill *sp = *p;
      *p = sp->next;
      sp->next = NULL;
      sp->refs = 1;
      return sp;
    }
  struct tt_spill *sp = calloc(1, sizeof *sp);
  if (!sp)
    return NULL;
  sp->len = len;
  sp->refs = 1;
  size_t limit = tt_env()->host_mem;
  size_t before = atomic_fetch_add(&host_held, len);
  bool fits = !limit || before + len <= limit;
  /* Pinned memory where the device has its own: its reads and writes overlap kernels. */
  if (fits && ctx && (sp->mem = tt_domain_pinned_new(ctx, dom, len, &sp->pinned)))
    return sp;
  if (fits && (sp->mem = malloc(len)))
    return sp;
  atomic_fetch_sub(&host_held, len);
  char path[4096];
  snprintf(path, sizeof path, "%s/tutti-spill-XXXXXX", tt_env()->spill_dir);
  int fd = mkstemp(path);
  if (fd >= 0) {
    unlink(path);
    void *p = ftruncate(fd, (off_t)len) == 0
                  ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                  : MAP_FAILED;
    if (p != MAP_FAILED) {
      sp->mem = p;
      sp->file = true;
    }
    close(fd);
  }
  if (!sp->mem) {
    TT_WARN("no room for %zu evicted bytes: in memory (TUTTI_HOST_MEM %zu, %zu "
           "held) nor in a file in %s (TUTTI_SPILL_DIR): %s", len, limit, before, tt_env()->spill_dir,
           strerror(errno));
    free(sp);
    return NULL;
  }
  atomic_fetch_add_explicit(&st->to_files, len, memory_order_relaxed);
  return sp;
}

/* Frees sp; a pinned one (dm given: only its domain frees those) through the backend. */
void tt_spill_free(struct tt_domain *dm, struct tt_spill *sp)
{
  if (sp->file) {
    munmap(sp->mem, sp->len);
  } else {
    if (sp->pinned)
      tt_domain_pinned_free(dm, sp->pinned, sp->mem);
    else
      free(sp->mem);
    atomic_fetch_sub(&host_held, sp->len);
  }
  if (sp->read)
    TT_NATIVE_DISPATCH(sp->read)->clReleaseEvent(sp->read);
  free(sp);
}

static void CL_CALLBACK spill_free_after(cl_event ev, cl_int status, void *sp)
{
  (void)ev;
  (void)status;
  tt_spill_free(NULL, sp);
}

/* Frees sp once ev (a command reading or writing it) is done; now when ev is NULL. Never a
 * pinned one. */
static void spill_free_at(struct tt_spill *sp, cl_event ev)
{
  if (!ev || tt_native_callback(ev, CL_COMPLETE, spill_free_after, sp) != CL_SUCCESS) {
    if (ev)
      TT_NATIVE_DISPATCH(ev)->clWaitForEvents(1, &ev);
    tt_spill_free(NULL, sp);
  }
}

/* Gives up sp, whose last use is ev (else sp->read). Pinned memory, and memory whose reads and
 * writes all went to dom's internal queue (queued), goes back to the domain: a later eviction
 * of the domain reads into it on that queue, after them. The rest is freed once ev is done,
 * and so is unpinned memory of a domain with memory of its own (a program's bytes waiting
 * for their first use): its evictions get pinned memory, twice as fast to copy. */
void tt_spill_release(cl_context ctx, cl_uint dom, struct tt_spill *sp, cl_event ev,
                      bool queued)
{
  if (!sp->pinned && (!queued || sp->file || tt_domain_device_memory(ctx, dom))) {
    spill_free_at(sp, ev ? ev : sp->read);
    return;
  }
  if (sp->read)
    TT_NATIVE_DISPATCH(sp->read)->clReleaseEvent(sp->read);
  sp->read = NULL;
  sp->next = ctx->domains[dom].spill_blocks;
  ctx->domains[dom].spill_blocks = sp;
}

void tt_window_domain_release(struct tt_domain *dm)
{
  if (dm->spill_blocks && dm->internal)
    dm->bp->d->clFinish(dm->internal->native);
  while (dm->spill_blocks) {
    struct tt_spill *sp = dm->spill_blocks;
    dm->spill_blocks = sp->next;
    tt_spill_free(dm, sp);
  }
}

