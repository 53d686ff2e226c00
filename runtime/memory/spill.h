/* Within runtime/memory/: where evicted bytes wait (runtime/memory/spill.c): pinned host
 * memory where the device has memory of its own, malloc'ed memory while TUTTI_HOST_MEM
 * allows, else a mapping of a file made and unlinked at once in TUTTI_SPILL_DIR. Blocks of a
 * domain's pinned memory go back to the domain (its spill_blocks) for later evictions. */
#ifndef TUTTI_MEMORY_SPILL_H
#define TUTTI_MEMORY_SPILL_H

#include <stdatomic.h>

#include "runtime/base/tutti_internal.h"
#include "runtime/job/stats.h"

struct tt_spill {
  struct tt_spill *next; /* in a domain's spill_blocks */
  unsigned char *mem;
  size_t len;
  bool file;     /* a mapping of an unlinked file in TUTTI_SPILL_DIR (TUTTI_HOST_MEM reached) */
  cl_mem pinned; /* the mapped buffer whose pinned memory it is (device-memory domains): it
                  * goes back to its domain's spill_blocks, never freed before the domain */
  cl_event read; /* the last read into it or write from it (in-order queue: all of them), or
                  * NULL */
  unsigned refs; /* the evicted windows sharing it (the pieces of one left on the host) */
};

/* Room for len bytes (a domain's block of that size when it has one: ctx given), counted in
 * st; NULL when neither memory nor a file could be had (said once). */
struct tt_spill *tt_spill_new(size_t len, struct tt_stats_device *st, cl_context ctx,
                              cl_uint dom);
/* Frees sp; a pinned one (dm given: only its domain frees those) through the backend. */
void tt_spill_free(struct tt_domain *dm, struct tt_spill *sp);
/* Gives up sp, whose last use is ev (else sp->read): back to domain dom, or freed once ev is
 * done (queued: every read and write of it went to dom's internal queue). */
void tt_spill_release(cl_context ctx, cl_uint dom, struct tt_spill *sp, cl_event ev,
                      bool queued);

#endif
