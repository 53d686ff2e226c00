/* A sorted array of runs: run i covers [start[i], start[i+1]) (the last one up to size).
 * Buffers see few runs (whole-buffer writes merge everything back into one), so an array
 * with linear edits beats a tree here. */
#include "config.h"

#include "runtime/rangemap.h"

#include <stdlib.h>
#include <string.h>

struct run {
  size_t start;
  tt_holders holders;
};

struct tt_rangemap {
  size_t size;
  size_t n, cap;
  struct run *runs;
};

struct tt_rangemap *tt_rangemap_new(size_t size, tt_holders initial)
{
  struct tt_rangemap *m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  m->cap = 4;
  m->runs = malloc(m->cap * sizeof *m->runs);
  if (!m->runs) {
    free(m);
    return NULL;
  }
  m->size = size;
  m->n = 1;
  m->runs[0] = (struct run){0, initial};
  return m;
}

void tt_rangemap_free(struct tt_rangemap *m)
{
  if (m) {
    free(m->runs);
    free(m);
  }
}

static size_t run_end(const struct tt_rangemap *m, size_t i)
{
  return i + 1 < m->n ? m->runs[i + 1].start : m->size;
}

/* Index of the run containing byte off (off < size). */
static size_t find(const struct tt_rangemap *m, size_t off)
{
  size_t lo = 0, hi = m->n;
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (m->runs[mid].start <= off)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

int tt_rangemap_walk(const struct tt_rangemap *m, size_t off, size_t len,
                     int (*fn)(void *, size_t, size_t, tt_holders), void *arg)
{
  if (len == 0 || off >= m->size)
    return 0;
  size_t end = off + len > m->size ? m->size : off + len;
  for (size_t i = find(m, off); i < m->n && m->runs[i].start < end; i++) {
    size_t s = m->runs[i].start > off ? m->runs[i].start : off;
    size_t e = run_end(m, i) < end ? run_end(m, i) : end;
    int r = fn(arg, s, e - s, m->runs[i].holders);
    if (r)
      return r;
  }
  return 0;
}

tt_holders tt_rangemap_common(const struct tt_rangemap *m, size_t off, size_t len)
{
  if (len == 0 || off >= m->size)
    return 0;
  size_t end = off + len > m->size ? m->size : off + len;
  tt_holders h = ~(tt_holders)0;
  for (size_t i = find(m, off); i < m->n && m->runs[i].start < end; i++)
    h &= m->runs[i].holders;
  return h;
}

static int reserve(struct tt_rangemap *m, size_t extra)
{
  if (m->n + extra <= m->cap)
    return 0;
  size_t cap = m->cap * 2 > m->n + extra ? m->cap * 2 : m->n + extra;
  struct run *r = realloc(m->runs, cap * sizeof *r);
  if (!r)
    return -1;
  m->runs = r;
  m->cap = cap;
  return 0;
}

/* Makes a run start at off (0 < off < size); returns its index. Capacity is reserved. */
static size_t split(struct tt_rangemap *m, size_t off)
{
  size_t i = find(m, off);
  if (m->runs[i].start == off)
    return i;
  memmove(&m->runs[i + 2], &m->runs[i + 1], (m->n - i - 1) * sizeof *m->runs);
  m->runs[i + 1] = (struct run){off, m->runs[i].holders};
  m->n++;
  return i + 1;
}

static void merge(struct tt_rangemap *m)
{
  size_t w = 0;
  for (size_t i = 1; i < m->n; i++) {
    if (m->runs[i].holders == m->runs[w].holders)
      continue;
    m->runs[++w] = m->runs[i];
  }
  m->n = w + 1;
}

static int update(struct tt_rangemap *m, size_t off, size_t len, tt_holders h, int add)
{
  if (len == 0 || off >= m->size)
    return 0;
  size_t end = off + len > m->size ? m->size : off + len;
  if (reserve(m, 2))
    return -1;
  size_t first = off ? split(m, off) : 0;
  size_t last = end < m->size ? split(m, end) : m->n; /* first run past the range */
  for (size_t i = first; i < last; i++)
    m->runs[i].holders = add ? m->runs[i].holders | h : h;
  merge(m);
  return 0;
}

int tt_rangemap_set(struct tt_rangemap *m, size_t off, size_t len, tt_holders holders)
{
  return update(m, off, len, holders, 0);
}

int tt_rangemap_add(struct tt_rangemap *m, size_t off, size_t len, tt_holders holders)
{
  return update(m, off, len, holders, 1);
}

size_t tt_rangemap_runs(const struct tt_rangemap *m)
{
  return m->n;
}
