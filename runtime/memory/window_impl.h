/* What the files of runtime/memory/ that keep windows share (window.c: placement and
 * eviction; prefetch.c: bringing windows back ahead of use; windowed.c: making a buffer
 * windowed and taking its windows back). Nothing outside this folder includes it: the
 * interface is runtime/memory/window.h. Every function here runs under the plan lock. */
#ifndef TUTTI_WINDOW_IMPL_H
#define TUTTI_WINDOW_IMPL_H

#include "runtime/memory/window.h"
#include "runtime/job/stats.h"

/* Every rank keeps the windows of every domain of a context, and decides their placement
 * and eviction alike from replicated facts (command order, sizes, budgets, holders); only the
 * domain's own rank has native buffers and host copies. */
struct tt_window {
  size_t lo, hi;
  bool resident;        /* on its device (counted in the domain's held bytes), else evicted */
  cl_mem native;        /* actual domains: the native buffer while resident, else NULL */
  unsigned char *host;
  uint64_t used;        /* when a command last used it (an order of places, alike per rank) */
  uint64_t epoch;       /* tt_plan_epoch of that command: pinned while it is planned */
  struct tt_spill *spill; /* actual domains: evicted, with the bytes its domain held newest;
                         * resident, the clean copy it came back from (below), or NULL */
  size_t spill_lo;      /* the buffer offset of spill->mem[0] (pieces of an evicted window
                         * share its copy) */
  uint64_t clean;       /* resident with a clean copy: a digest of the runs its domain held
                         * newest when it came back. Evicted again while no command wrote its
                         * bytes there (a write drops the copy, tt_window_written) and its
                         * domain holds the same runs, it reads nothing: the copy has them */
  uint64_t next_id;     /* the window its domain's commands used next after it, last time: */
  size_t next_at;       /* its buffer's id (0: none) and a byte in it (prefetch follows it) */
  uint64_t last_use;    /* the program's last use (as used, prefetches aside; 0: none) and */
  uint64_t period;      /* the time between its last two (0: one use so far) */
};

struct tt_window_set {
  struct tt_window *w; /* sorted by lo; disjoint (touching allowed) */
  size_t n, cap;
};

/* Windows of s overlapping [lo, hi): *i .. *j-1. */
void tt_window_overlap(const struct tt_window_set *s, size_t lo, size_t hi, size_t *i, size_t *j);

/* The window of root in dom holding byte `at`, or NULL. */
struct tt_window *tt_window_holding(cl_mem root, cl_uint dom, size_t at);

/* The window of dom holding byte `at` of the windowed buffer whose id is id (*root: that
 * buffer), or NULL. */
struct tt_window *tt_window_at(cl_context ctx, cl_uint dom, uint64_t id, size_t at, cl_mem *root);

/* A command's use of w (ahead: a prefetch's), for the eviction order and the prefetch chain. */
void tt_window_touch(cl_mem root, cl_uint dom, struct tt_window *w, bool ahead);

/* A window of dom covering [lo, hi) (aligned), room made first (window.c). */
cl_int tt_window_cover(cl_mem root, cl_uint dom, size_t lo, size_t hi, bool ahead,
                    struct tt_window **out);

/* [lo, hi): [off, off+len) of root widened to whole pages, as windows are. */
void tt_window_span(cl_mem root, size_t off, size_t len, size_t *lo, size_t *hi);

/* The most bytes of windows Tutti keeps in a actual domain. */
size_t tt_window_budget(cl_context ctx, cl_uint dom);

/* The backend's short name of a domain, local or not (for messages). */
const char *tt_window_dom_name(const struct tt_domain *dm);

/* The statistics of a domain's first device, and a change of the bytes its windows hold. */
struct tt_stats_device *tt_window_stats_of(cl_context ctx, cl_uint dom);
void tt_window_count(cl_mem root, cl_uint dom, int64_t delta);

/* Drops window o's host copy (queued: after the reads into it that are under way). */
void tt_window_spill_unref(cl_context ctx, cl_uint dom, struct tt_window *o, bool queued);

#endif
