/* An interval map over a buffer's bytes: for each range, the set of holders (memory domains,
 * later ranks' devices) that have its newest bytes. Consistency is kept per byte range, not
 * per buffer, so sub-buffers, Lightning's chunks and halos share one mechanism and a kernel
 * that writes half a buffer leaves the other half where it was (DESIGN.md). Pure data
 * structure: no OpenCL, no MPI, unit tested on its own. */
#ifndef TUTTI_RANGEMAP_H
#define TUTTI_RANGEMAP_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t tt_holders; /* bit i: holder i */

struct tt_rangemap;

/* A map of `size` bytes, every byte held by `initial`. NULL when out of memory. */
struct tt_rangemap *tt_rangemap_new(size_t size, tt_holders initial);
void tt_rangemap_free(struct tt_rangemap *m);

/* Calls fn once for each maximal run of equal holders inside [off, off+len), in order.
 * fn returns nonzero to stop early; the walk returns that value (0 when it went through). */
int tt_rangemap_walk(const struct tt_rangemap *m, size_t off, size_t len,
                     int (*fn)(void *arg, size_t off, size_t len, tt_holders holders), void *arg);

/* The holders shared by every byte of [off, off+len). */
tt_holders tt_rangemap_common(const struct tt_rangemap *m, size_t off, size_t len);

/* [off, off+len) is now held by exactly `holders` (a write). Returns 0, or -1 when out of
 * memory (the map is then unchanged). */
int tt_rangemap_set(struct tt_rangemap *m, size_t off, size_t len, tt_holders holders);

/* Adds holders to [off, off+len) (a copy arrived). Same return as tt_rangemap_set. */
int tt_rangemap_add(struct tt_rangemap *m, size_t off, size_t len, tt_holders holders);

/* Number of runs (for tests and statistics). */
size_t tt_rangemap_runs(const struct tt_rangemap *m);

#endif
