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

size_t tt_part_edge_width(size_t both, size_t len, size_t groups)
{
  if (!both || !len || !groups)
    return 0;
  size_t per = (len + groups - 1) / groups;
  size_t g = (both / 2 + per - 1) / per;
  return g ? g : 1; /* a single shared byte still makes an edge */
}

size_t tt_part_edges_first(const struct tt_part *parts, size_t n, const size_t *edge,
                           struct tt_part *out)
{
  size_t *top = calloc(n + 1, sizeof *top), *bottom = calloc(n + 1, sizeof *bottom);
  size_t m = 0;
  bool any = false;
  for (size_t p = 0; p + 1 < n && top && bottom; p++) {
    size_t e = edge[p];
    /* Both sides of the boundary split off an edge as wide (p + 1's reads alike). */
    size_t room_a = parts[p].g1 - parts[p].g0, room_b = parts[p + 1].g1 - parts[p + 1].g0;
    if (e && e < room_a && e < room_b) {
      bottom[p] = top[p + 1] = e;
      any = true;
    }
  }
  for (size_t p = 0; p < n && any; p++) {
    const struct tt_part *a = &parts[p];
    size_t t = top[p], b = bottom[p];
    if (t + b >= a->g1 - a->g0)
      t = b = 0; /* too thin to split: the whole part goes first */
    if (t || !b)
      tt_part_set(&out[m++], a->queue, a->g0, t ? a->g0 + t : a->g1);
    if (b)
      tt_part_set(&out[m++], a->queue, a->g1 - b, a->g1);
    top[p] = t, bottom[p] = b;
  }
  for (size_t p = 0; p < n && any; p++) {
    const struct tt_part *a = &parts[p];
    if ((top[p] || bottom[p]) && a->g0 + top[p] < a->g1 - bottom[p])
      tt_part_set(&out[m++], a->queue, a->g0 + top[p], a->g1 - bottom[p]);
  }
  free(top);
  free(bottom);
  return m;
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

size_t tt_part_shared_reads(const struct tt_part_range *a, size_t na,
                            const struct tt_part_range *b, size_t nb, size_t size, size_t *len)
{
  size_t both = 0;
  *len = 0;
  for (size_t j = 0; j < nb; j++)
    if (b[j].len == size)
      return 0;
  for (size_t i = 0; i < na; i++) {
    const struct tt_part_range *x = &a[i];
    if (x->len == size)
      return 0;
    *len += x->len;
    for (size_t j = 0; j < nb; j++) {
      const struct tt_part_range *y = &b[j];
      size_t lo = x->off > y->off ? x->off : y->off;
      size_t hi = x->off + x->len < y->off + y->len ? x->off + x->len : y->off + y->len;
      both += hi > lo ? hi - lo : 0;
    }
  }
  return both;
}

static int write_cmp(const void *a, const void *b)
{
  const struct tt_part_write *x = a, *y = b;
  if (x->buffer != y->buffer)
    return x->buffer < y->buffer ? -1 : 1;
  return x->off < y->off ? -1 : x->off > y->off;
}

/* A sweep in order of offsets, keeping the two furthest ends of distinct parts. */
bool tt_part_writes_overlap(struct tt_part_write *w, size_t n)
{
  if (n)
    qsort(w, n, sizeof *w, write_cmp);
  uint64_t buffer = 0;
  struct {
    size_t end, part;
    bool set;
  } best = {0, 0, false}, second = {0, 0, false};
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || w[i].buffer != buffer) {
      buffer = w[i].buffer;
      best.set = second.set = false;
    }
    if ((best.set && best.part != w[i].part && w[i].off < best.end) ||
        (second.set && second.part != w[i].part && w[i].off < second.end))
      return true;
    if (!best.set || w[i].end > best.end) {
      if (best.set && best.part != w[i].part)
        second = best;
      best.end = w[i].end;
      best.part = w[i].part;
      best.set = true;
    } else if (w[i].part != best.part && (!second.set || w[i].end > second.end)) {
      second.end = w[i].end;
      second.part = w[i].part;
      second.set = true;
    }
  }
  return false;
}

bool tt_part_reweigh(unsigned n, const size_t *groups, const uint64_t *ns, const uint64_t *old,
                     uint64_t one, uint64_t *out)
{
  uint64_t lo = UINT64_MAX, hi = 0;
  for (unsigned p = 0; p < n; p++) {
    lo = ns[p] < lo ? ns[p] : lo;
    hi = ns[p] > hi ? ns[p] : hi;
  }
  if (n == 0 || lo == 0 || hi * 100 <= lo * 105)
    return false;
  /* Speeds in groups per nanosecond, scaled by 2^40, then as shares of one. */
  unsigned __int128 total = 0;
  for (unsigned p = 0; p < n; p++)
    total += ((unsigned __int128)groups[p] << 40) / ns[p];
  if (!total)
    return false;
  uint64_t got = 0;
  for (unsigned p = 0; p < n; p++) {
    unsigned __int128 speed = ((unsigned __int128)groups[p] << 40) / ns[p];
    /* A quarter of the equal (or last) split, three quarters of the measured one: near the
     * measured speeds in one step or two, less moved by noise. */
    uint64_t before = old ? old[p] : one / n, fresh = (uint64_t)(speed * one / total);
    out[p] = before / 4 + fresh / 4 * 3;
    got += out[p];
  }
  out[n - 1] += one - got; /* rounding: the sum stays one */
  return true;
}

bool tt_part_equal(const struct tt_part *a, const struct tt_part *b, size_t n)
{
  for (size_t p = 0; p < n; p++)
    if (a[p].queue != b[p].queue || a[p].g0 != b[p].g0 || a[p].g1 != b[p].g1)
      return false;
  return true;
}
