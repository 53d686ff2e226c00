/* An interval map over a buffer's bytes: for each range, the set of holders (memory domains,
 * later ranks' devices) that have its newest bytes. Consistency is kept per byte range, not
 * per buffer, so sub-buffers, Lightning's chunks and halos share one mechanism and a kernel
 * that writes half a buffer leaves the other half where it was (doc/architecture.md). Holder sets are
 * as wide as the map's holder count (a job of hundreds of ranks has hundreds of domains).
 * Pure data structure: no OpenCL, no MPI, unit tested on its own. */
#ifndef TUTTI_RANGEMAP_H
#define TUTTI_RANGEMAP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* A set of holders as a map hands it out (bit i of the words: holder i); valid until the map
 * changes. */
typedef struct {
  const uint64_t *w;
  unsigned words;
} tt_holders;

static inline int tt_holders_has(tt_holders h, unsigned i)
{
  return i / 64 < h.words && (h.w[i / 64] >> (i % 64) & 1);
}

/* The lowest holder at or after `from`, or UINT_MAX when none. */
static inline unsigned tt_holders_next(tt_holders h, unsigned from)
{
  for (unsigned k = from / 64; k < h.words; k++) {
    uint64_t bits = h.w[k] & (k == from / 64 ? ~(uint64_t)0 << (from % 64) : ~(uint64_t)0);
    if (bits)
      return k * 64 + (unsigned)__builtin_ctzll(bits);
  }
  return UINT_MAX;
}

struct tt_rangemap;

/* A map of `size` bytes among `nholders` holders, every byte held by all of them (all) or by
 * none. NULL when out of memory. */
struct tt_rangemap *tt_rangemap_new(size_t size, unsigned nholders, int all);
void tt_rangemap_free(struct tt_rangemap *m);

/* Calls fn once for each maximal run of equal holders inside [off, off+len), in order.
 * fn returns nonzero to stop early; the walk returns that value (0 when it went through). fn
 * may change the map anywhere (its holders argument is then stale): the walk goes on from the
 * end of the run it passed, with the holders found there then. */
int tt_rangemap_walk(const struct tt_rangemap *m, size_t off, size_t len,
                     int (*fn)(void *arg, size_t off, size_t len, tt_holders holders), void *arg);

/* Whether holder h holds every byte of [off, off+len). */
int tt_rangemap_holds(const struct tt_rangemap *m, size_t off, size_t len, unsigned h);

/* [off, off+len) is now held by holder h alone (a write), or by nobody when h < 0. Returns 0,
 * or -1 when out of memory (the map is then unchanged). */
int tt_rangemap_set(struct tt_rangemap *m, size_t off, size_t len, int h);

/* Adds holder h to [off, off+len) (a copy arrived). Same return as tt_rangemap_set. */
int tt_rangemap_add(struct tt_rangemap *m, size_t off, size_t len, unsigned h);

/* Removes holder h from the runs of [off, off+len) that another holder holds too (an evicted
 * copy whose bytes live elsewhere); runs h alone holds keep it. Same return as
 * tt_rangemap_set. */
int tt_rangemap_drop(struct tt_rangemap *m, size_t off, size_t len, unsigned h);

/* h mixed with the map's runs and holders (ranks compare maps by it). */
uint64_t tt_rangemap_hash(const struct tt_rangemap *m, uint64_t h);

/* Number of runs (for tests and statistics). */
size_t tt_rangemap_runs(const struct tt_rangemap *m);

#endif
