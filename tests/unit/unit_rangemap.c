/* Unit test of the interval map of latest holders (no OpenCL, no MPI). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/base/rangemap.h"
#include "tests/unit/unit.h"

/* A holder set written as a list of holders, for comparisons: "0,1", "" for none. */
static const char *list(tt_holders h, char *buf, size_t cap)
{
  size_t n = 0;
  buf[0] = 0;
  for (unsigned i = tt_holders_next(h, 0); i != UINT_MAX && n + 8 < cap; i = tt_holders_next(h, i + 1))
    n += (size_t)snprintf(buf + n, cap - n, n ? ",%u" : "%u", i);
  return buf;
}

struct seg {
  size_t off, len;
  char h[64];
};
struct collect {
  struct seg s[128];
  int n;
};

static int collect(void *arg, size_t off, size_t len, tt_holders h)
{
  struct collect *c = arg;
  c->s[c->n].off = off;
  c->s[c->n].len = len;
  list(h, c->s[c->n].h, sizeof c->s[c->n].h);
  c->n++;
  return 0;
}

/* Random writes, copies and drops on a map of 257 bytes among 3 holders, against a byte by
 * byte model: the same holders everywhere, and as many runs as the model has maximal runs
 * (edits join equal neighbours only around themselves, so nothing may stay split). */
static void against_model(void)
{
  enum { SIZE = 257 };
  unsigned char model[SIZE];
  struct tt_rangemap *m = tt_rangemap_new(SIZE, 3, 0);
  memset(model, 0, sizeof model);
  unsigned long long x = 88172645463325252ull;
  for (int step = 0; step < 20000; step++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    size_t off = x % SIZE, len = (x >> 16) % 40;
    unsigned h = (x >> 32) % 3, op = (x >> 40) % 3;
    size_t end = off + len > SIZE ? SIZE : off + len;
    if (op == 0) {
      CHECK(tt_rangemap_set(m, off, len, (int)h) == 0);
      for (size_t i = off; i < end; i++)
        model[i] = (unsigned char)(1u << h);
    } else if (op == 1) {
      CHECK(tt_rangemap_add(m, off, len, h) == 0);
      for (size_t i = off; i < end; i++)
        model[i] |= (unsigned char)(1u << h);
    } else {
      CHECK(tt_rangemap_drop(m, off, len, h) == 0);
      for (size_t i = off; i < end; i++)
        if (model[i] & ~(1u << h))
          model[i] &= (unsigned char)~(1u << h);
    }
    size_t runs = 1;
    for (size_t i = 1; i < SIZE; i++)
      runs += model[i] != model[i - 1];
    int same = tt_rangemap_runs(m) == runs;
    for (size_t i = 0; i < SIZE && same; i++)
      for (unsigned k = 0; k < 3; k++)
        same &= !tt_rangemap_holds(m, i, 1, k) == !(model[i] >> k & 1);
    CHECK(same);
    if (!same)
      break;
  }
  tt_rangemap_free(m);
}

static int stop_at_second(void *arg, size_t off, size_t len, tt_holders h)
{
  int *n = arg;
  return ++*n == 2 ? 7 : 0;
}

/* At each run past the first, holder 0 takes every byte before it: runs behind the walk
 * merge into one. */
struct merging {
  struct tt_rangemap *m;
  size_t bytes;
  int calls;
};

static int merge_behind(void *arg, size_t off, size_t len, tt_holders h)
{
  (void)h;
  struct merging *g = arg;
  g->bytes += len;
  if (g->calls++ && off)
    tt_rangemap_set(g->m, 0, off, 0);
  return 0;
}

#define IS(seg, o, l, hs) ((seg).off == (o) && (seg).len == (l) && !strcmp((seg).h, (hs)))

int main(void)
{
  /* 130 holders: sets three words wide. */
  struct tt_rangemap *m = tt_rangemap_new(100, 130, 0);
  CHECK(tt_rangemap_runs(m) == 1 && !tt_rangemap_holds(m, 0, 100, 0));
  CHECK(tt_rangemap_add(m, 0, 100, 0) == 0 && tt_rangemap_add(m, 0, 100, 1) == 0);
  CHECK(tt_rangemap_runs(m) == 1 && tt_rangemap_holds(m, 0, 100, 1) && !tt_rangemap_holds(m, 0, 100, 2));

  /* A write in the middle splits into three runs. */
  CHECK(tt_rangemap_set(m, 40, 20, 2) == 0);
  CHECK(tt_rangemap_runs(m) == 3);
  struct collect c = {.n = 0};
  tt_rangemap_walk(m, 0, 100, collect, &c);
  CHECK(c.n == 3 && IS(c.s[0], 0, 40, "0,1") && IS(c.s[1], 40, 20, "2") && IS(c.s[2], 60, 40, "0,1"));
  CHECK(!tt_rangemap_holds(m, 30, 20, 0) && tt_rangemap_holds(m, 45, 10, 2));

  /* A walk clips to the asked range. */
  c.n = 0;
  tt_rangemap_walk(m, 50, 20, collect, &c);
  CHECK(c.n == 2 && IS(c.s[0], 50, 10, "2") && IS(c.s[1], 60, 10, "0,1"));

  /* Adding a holder to part of a run; holders past the first word. */
  CHECK(tt_rangemap_add(m, 50, 30, 0) == 0);
  CHECK(tt_rangemap_add(m, 55, 5, 129) == 0 && tt_rangemap_add(m, 55, 5, 64) == 0);
  c.n = 0;
  tt_rangemap_walk(m, 0, 100, collect, &c);
  CHECK(c.n == 5 && IS(c.s[1], 40, 10, "2") && IS(c.s[2], 50, 5, "0,2") &&
        IS(c.s[3], 55, 5, "0,2,64,129") && IS(c.s[4], 60, 40, "0,1"));
  CHECK(tt_rangemap_holds(m, 55, 5, 129) && !tt_rangemap_holds(m, 50, 10, 129));
  CHECK(tt_rangemap_add(m, 0, 1, 130) == -1);

  /* A write covering everything merges back into one run; a write by nobody empties. */
  CHECK(tt_rangemap_set(m, 0, 100, 127) == 0);
  CHECK(tt_rangemap_runs(m) == 1 && tt_rangemap_holds(m, 0, 100, 127));
  CHECK(tt_rangemap_set(m, 0, 100, -1) == 0 && !tt_rangemap_holds(m, 0, 100, 127));
  c.n = 0;
  tt_rangemap_walk(m, 0, 100, collect, &c);
  CHECK(c.n == 1 && IS(c.s[0], 0, 100, ""));
  CHECK(tt_rangemap_set(m, 0, 100, 1) == 0);

  /* Edges: ranges at both ends, past the end, empty. */
  CHECK(tt_rangemap_set(m, 0, 1, 3) == 0);
  CHECK(tt_rangemap_set(m, 99, 5, 3) == 0);
  CHECK(tt_rangemap_runs(m) == 3);
  CHECK(tt_rangemap_holds(m, 99, 1, 3) && tt_rangemap_holds(m, 1, 98, 1));
  CHECK(tt_rangemap_set(m, 100, 10, 0) == 0 && tt_rangemap_runs(m) == 3);
  CHECK(tt_rangemap_set(m, 10, 0, 0) == 0 && tt_rangemap_runs(m) == 3);
  int seen = 0;
  CHECK(tt_rangemap_walk(m, 0, 100, stop_at_second, &seen) == 7 && seen == 2);

  /* Many small writes: every other byte. */
  for (size_t i = 0; i < 100; i += 2)
    CHECK(tt_rangemap_set(m, i, 1, 4) == 0);
  CHECK(tt_rangemap_runs(m) == 100);
  CHECK(tt_rangemap_set(m, 0, 100, 0) == 0 && tt_rangemap_runs(m) == 1);
  tt_rangemap_free(m);

  /* Everyone at the start, for a count that is not a multiple of 64. */
  m = tt_rangemap_new(10, 70, 1);
  CHECK(tt_rangemap_holds(m, 0, 10, 69) && !tt_rangemap_holds(m, 0, 10, 70));
  c.n = 0;
  tt_rangemap_walk(m, 0, 10, collect, &c);
  CHECK(c.n == 1 && !strncmp(c.s[0].h, "0,1,2,", 6));
  tt_rangemap_free(m);

  /* Dropping a holder (an eviction): only where another holds the bytes too. */
  m = tt_rangemap_new(100, 3, 0);
  CHECK(tt_rangemap_set(m, 0, 100, 0) == 0 && tt_rangemap_add(m, 20, 40, 1) == 0);
  CHECK(tt_rangemap_add(m, 50, 30, 2) == 0);
  uint64_t before = tt_rangemap_hash(m, 1);
  CHECK(tt_rangemap_drop(m, 10, 60, 0) == 0);
  CHECK(tt_rangemap_hash(m, 1) != before);
  c.n = 0;
  tt_rangemap_walk(m, 0, 100, collect, &c);
  CHECK(c.n == 6 && IS(c.s[0], 0, 20, "0") && IS(c.s[1], 20, 30, "1") && IS(c.s[2], 50, 10, "1,2") &&
        IS(c.s[3], 60, 10, "2") && IS(c.s[4], 70, 10, "0,2") && IS(c.s[5], 80, 20, "0"));
  CHECK(tt_rangemap_drop(m, 0, 100, 2) == 0 && tt_rangemap_drop(m, 0, 100, 1) == 0);
  c.n = 0;
  tt_rangemap_walk(m, 0, 100, collect, &c);
  CHECK(c.n == 4 && IS(c.s[0], 0, 20, "0") && IS(c.s[1], 20, 40, "1") && IS(c.s[2], 60, 10, "2") &&
        IS(c.s[3], 70, 30, "0"));
  CHECK(tt_rangemap_drop(m, 0, 100, 3) == 0 && tt_rangemap_runs(m) == 4);

  /* A walk whose callback merges runs behind it still visits every byte once. */
  CHECK(tt_rangemap_set(m, 0, 100, 0) == 0 && tt_rangemap_set(m, 25, 25, 1) == 0);
  CHECK(tt_rangemap_set(m, 75, 25, 1) == 0 && tt_rangemap_runs(m) == 4);
  struct merging mg = {m, 0, 0};
  tt_rangemap_walk(m, 0, 100, merge_behind, &mg);
  CHECK(mg.bytes == 100 && mg.calls == 4 && tt_rangemap_runs(m) == 2);
  tt_rangemap_free(m);

  against_model();
  printf("unit_rangemap: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
