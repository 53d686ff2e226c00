/* Partitioning a split launch's work-groups (annotations/partition.h). */
#include "config.h"

#include "annotations/partition.h"

#include <stdlib.h>

void tt_part_set(struct tt_part *p, unsigned queue, size_t g0, size_t g1)
{
  p->queue = queue;
  p->g0 = g0;
  p->g1 = g1;
}

void tt_part_equal_bounds(unsigned nq, size_t G, size_t *bounds)
{
  for (unsigned q = 0; q <= nq; q++)
    bounds[q] = (size_t)((unsigned __int128)q * G / nq);
}

void tt_part_weighted_bounds(unsigned nq, const uint64_t *w, uint64_t one, size_t G,
                             size_t *bounds)
{
  unsigned __int128 cum = 0;
  bounds[0] = 0;
  for (unsigned q = 0; q < nq; q++) {
    cum += w[q];
    size_t e = q + 1 == nq ? G : (size_t)((unsigned __int128)G * cum / one);
    /* At least one group each: a device given none would never be measured again. */
    if (e < bounds[q] + 1)
      e = bounds[q] + 1;
    if (e > G - (nq - q - 1))
      e = G - (nq - q - 1);
    bounds[q + 1] = e;
  }
}

size_t tt_part_from_bounds(unsigned nq, const size_t *bounds, struct tt_part *out)
{
  size_t n = 0;
  for (unsigned q = 0; q < nq; q++)
    if (bounds[q + 1] > bounds[q])
      tt_part_set(&out[n++], q, bounds[q], bounds[q + 1]);
  return n;
}

size_t tt_part_distribution(bool block, size_t E, size_t chunk, unsigned ndev,
                            const int *queue_of, size_t G, struct tt_part **out)
{
  if (block)
    chunk = ndev ? (E + ndev - 1) / ndev : 0;
  if (!E || !chunk || !ndev)
    return 0;
  size_t nseg = (E + chunk - 1) / chunk;
  struct tt_part *p = calloc(nseg, sizeof *p);
  if (!p)
    return 0;
  size_t n = 0;
  for (size_t s = 0; s < nseg; s++) {
    int q = queue_of[s % ndev];
    if (q < 0) {
      free(p);
      return 0;
    }
    size_t lo = s * chunk, hi = lo + chunk < E ? lo + chunk : E;
    /* The same rounding for both ends of neighbours: no gap, no overlap. */
    size_t g0 = (size_t)((unsigned __int128)lo * G / E), g1 = (size_t)((unsigned __int128)hi * G / E);
    if (g1 > g0)
      tt_part_set(&p[n++], (unsigned)q, g0, g1);
  }
  *out = p;
  return n;
}
