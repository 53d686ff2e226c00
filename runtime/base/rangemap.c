/* A sorted array of runs: run i covers [start[i], start[i+1]) (the last one up to size), its
 * holders the i-th group of `words` words of bits. Buffers see few runs (whole-buffer writes
 * merge everything back into one), so arrays with linear edits beat a tree here. */
#include "config.h"

#include "runtime/base/rangemap.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct tt_rangemap {
  size_t size;
  size_t n, cap;
  unsigned nholders, words;
  size_t *start;
  uint64_t *bits; /* cap * words */
};

static uint64_t *bits_of(const struct tt_rangemap *m, size_t i)
{
  return m->bits + i * m->words;
}

static tt_holders holders_of(const struct tt_rangemap *m, size_t i)
{
  return (tt_holders){bits_of(m, i), m->words};
}

static int reserve(struct tt_rangemap *m, size_t extra)
{
  if (m->n + extra <= m->cap)
    return 0;
  size_t cap = m->cap * 2 > m->n + extra ? m->cap * 2 : m->n + extra;
  size_t *s = realloc(m->start, cap * sizeof *s);
  if (!s)
    return -1;
  m->start = s;
  uint64_t *b = realloc(m->bits, cap * m->words * sizeof *b);
  if (!b)
    return -1;
  m->bits = b;
  m->cap = cap;
  return 0;
}

struct tt_rangemap *tt_rangemap_new(size_t size, unsigned nholders, int all)
{
  struct tt_rangemap *m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  m->size = size;
  m->nholders = nholders;
  m->words = nholders ? (nholders + 63) / 64 : 1;
  if (reserve(m, 4)) {
    tt_rangemap_free(m);
    return NULL;
  }
  m->n = 1;
  m->start[0] = 0;
  uint64_t *b = bits_of(m, 0);
  for (unsigned k = 0; k < m->words; k++) {
    unsigned left = nholders - k * 64;
    b[k] = !all ? 0 : left >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << left) - 1;
  }
  return m;
}

void tt_rangemap_free(struct tt_rangemap *m)
{
  if (m) {
    free(m->start);
    free(m->bits);
    free(m);
  }
}

static size_t run_end(const struct tt_rangemap *m, size_t i)
{
  return i + 1 < m->n ? m->start[i + 1] : m->size;
}

/* Index of the run containing byte off (off < size). */
static size_t find(const struct tt_rangemap *m, size_t off)
{
  size_t lo = 0, hi = m->n;
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (m->start[mid] <= off)
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
  /* The next run is found again by offset: fn may have split or merged runs anywhere. */
  for (size_t s = off; s < end;) {
    size_t i = find(m, s);
    size_t e = run_end(m, i) < end ? run_end(m, i) : end;
    int r = fn(arg, s, e - s, holders_of(m, i));
    if (r)
      return r;
    s = e;
  }
  return 0;
}

int tt_rangemap_holds(const struct tt_rangemap *m, size_t off, size_t len, unsigned h)
{
  if (len == 0 || off >= m->size)
    return 1;
  size_t end = off + len > m->size ? m->size : off + len;
  for (size_t i = find(m, off); i < m->n && m->start[i] < end; i++)
    if (!tt_holders_has(holders_of(m, i), h))
      return 0;
  return 1;
}

/* Makes a run start at off (0 < off < size); returns its index. Capacity is reserved. */
static size_t split(struct tt_rangemap *m, size_t off)
{
  size_t i = find(m, off);
  if (m->start[i] == off)
    return i;
  size_t after = m->n - i - 1;
  memmove(&m->start[i + 2], &m->start[i + 1], after * sizeof *m->start);
  memmove(bits_of(m, i + 2), bits_of(m, i + 1), after * m->words * sizeof *m->bits);
  m->start[i + 1] = off;
  memcpy(bits_of(m, i + 1), bits_of(m, i), m->words * sizeof *m->bits);
  m->n++;
  return i + 1;
}

/* Joins equal neighbours among runs [lo, hi) after an edit there; every other pair of
 * neighbours differs already, so a CYCLIC buffer's thousands of runs are not all compared
 * again on every part's write. */
static void merge(struct tt_rangemap *m, size_t lo, size_t hi)
{
  size_t w = lo, bytes = m->words * sizeof *m->bits;
  for (size_t i = lo + 1; i < hi; i++) {
    if (!memcmp(bits_of(m, i), bits_of(m, w), bytes))
      continue;
    w++;
    m->start[w] = m->start[i];
    memmove(bits_of(m, w), bits_of(m, i), bytes);
  }
  size_t gone = hi - 1 - w, after = m->n - hi;
  if (!gone)
    return;
  memmove(&m->start[w + 1], &m->start[hi], after * sizeof *m->start);
  memmove(bits_of(m, w + 1), bits_of(m, hi), after * bytes);
  m->n -= gone;
}

/* The runs an edit of runs [first, last) may have made equal to a neighbour. */
static void merge_edit(struct tt_rangemap *m, size_t first, size_t last)
{
  merge(m, first ? first - 1 : 0, last < m->n ? last + 1 : m->n);
}

/* What an edit does to each run of its range: SET makes holder h its only holder (h < 0:
 * nobody), ADD adds h, DROP takes h away where another holds the run too (the only holder
 * keeps its bytes). */
enum edit { EDIT_SET, EDIT_ADD, EDIT_DROP };

/* Whether edit e with holder h changes run i. */
static bool changes(const struct tt_rangemap *m, size_t i, int h, enum edit e)
{
  const uint64_t *b = bits_of(m, i);
  uint64_t bit = h >= 0 ? (uint64_t)1 << (h % 64) : 0;
  bool has = h >= 0 && (b[h / 64] & bit);
  if (e == EDIT_ADD)
    return !has;
  bool others = false;
  for (unsigned k = 0; k < m->words && !others; k++)
    others = (h >= 0 && k == (unsigned)h / 64 ? b[k] & ~bit : b[k]) != 0;
  return e == EDIT_SET ? others || (h >= 0 && !has) : has && others;
}

static int update(struct tt_rangemap *m, size_t off, size_t len, int h, enum edit e)
{
  if (len == 0 || off >= m->size)
    return 0;
  if (h >= 0 && (unsigned)h >= m->nholders)
    return e == EDIT_DROP ? 0 : -1; /* no such holder: nothing to drop */
  size_t end = off + len > m->size ? m->size : off + len;
  /* Nothing to change (a part writing again the chunk it wrote last time): no runs split
   * and joined back, which moves every run after them. */
  bool same = true;
  for (size_t i = find(m, off); i < m->n && m->start[i] < end && same; i++)
    same = !changes(m, i, h, e);
  if (same)
    return 0;
  if (reserve(m, 2))
    return -1;
  size_t first = off ? split(m, off) : 0;
  size_t last = end < m->size ? split(m, end) : m->n; /* first run past the range */
  for (size_t i = first; i < last; i++) {
    if (!changes(m, i, h, e))
      continue;
    uint64_t *b = bits_of(m, i);
    if (e == EDIT_SET)
      memset(b, 0, m->words * sizeof *b);
    if (e == EDIT_DROP)
      b[h / 64] &= ~((uint64_t)1 << (h % 64));
    else if (h >= 0)
      b[h / 64] |= (uint64_t)1 << (h % 64);
  }
  merge_edit(m, first, last);
  return 0;
}

int tt_rangemap_set(struct tt_rangemap *m, size_t off, size_t len, int h)
{
  return update(m, off, len, h, EDIT_SET);
}

int tt_rangemap_add(struct tt_rangemap *m, size_t off, size_t len, unsigned h)
{
  return update(m, off, len, (int)h, EDIT_ADD);
}

int tt_rangemap_drop(struct tt_rangemap *m, size_t off, size_t len, unsigned h)
{
  return update(m, off, len, (int)h, EDIT_DROP);
}

uint64_t tt_rangemap_hash(const struct tt_rangemap *m, uint64_t h)
{
  for (size_t i = 0; i < m->n; i++) {
    h = (h ^ m->start[i]) * 0x100000001b3u;
    for (unsigned k = 0; k < m->words; k++)
      h = (h ^ bits_of(m, i)[k]) * 0x100000001b3u;
  }
  return h;
}

size_t tt_rangemap_runs(const struct tt_rangemap *m)
{
  return m->n;
}
