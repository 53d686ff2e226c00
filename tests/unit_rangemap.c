/* Unit test of the interval map of latest holders (no OpenCL, no MPI). */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/rangemap.h"

static int failures;
#define CHECK(c)                                                                                  \
  do {                                                                                            \
    if (!(c)) {                                                                                   \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                      \
      failures++;                                                                                 \
    }                                                                                             \
  } while (0)

struct seg {
  size_t off, len;
  tt_holders h;
};
struct collect {
  struct seg s[64];
  int n;
};

static int collect(void *arg, size_t off, size_t len, tt_holders h)
{
  struct collect *c = arg;
  c->s[c->n++] = (struct seg){off, len, h};
  return 0;
}

static int stop_at_second(void *arg, size_t off, size_t len, tt_holders h)
{
  int *n = arg;
  return ++*n == 2 ? 7 : 0;
}

int main(void)
{
  struct tt_rangemap *m = tt_rangemap_new(100, 0x3);
  CHECK(tt_rangemap_runs(m) == 1);
  CHECK(tt_rangemap_common(m, 0, 100) == 0x3);

  /* A write in the middle splits into three runs. */
  CHECK(tt_rangemap_set(m, 40, 20, 0x4) == 0);
  CHECK(tt_rangemap_runs(m) == 3);
  struct collect c = {.n = 0};
  tt_rangemap_walk(m, 0, 100, collect, &c);
  CHECK(c.n == 3);
  CHECK(c.s[0].off == 0 && c.s[0].len == 40 && c.s[0].h == 0x3);
  CHECK(c.s[1].off == 40 && c.s[1].len == 20 && c.s[1].h == 0x4);
  CHECK(c.s[2].off == 60 && c.s[2].len == 40 && c.s[2].h == 0x3);
  CHECK(tt_rangemap_common(m, 30, 20) == 0);
  CHECK(tt_rangemap_common(m, 45, 10) == 0x4);

  /* A walk clips to the asked range. */
  c.n = 0;
  tt_rangemap_walk(m, 50, 20, collect, &c);
  CHECK(c.n == 2 && c.s[0].off == 50 && c.s[0].len == 10 && c.s[1].off == 60 && c.s[1].len == 10);

  /* Adding a holder to part of a run. */
  CHECK(tt_rangemap_add(m, 50, 30, 0x1) == 0);
  c.n = 0;
  tt_rangemap_walk(m, 0, 100, collect, &c);
  CHECK(c.n == 4 && c.s[1].h == 0x4 && c.s[1].len == 10 && c.s[2].h == 0x5 && c.s[2].len == 10 &&
        c.s[3].off == 60 && c.s[3].h == 0x3);

  /* A write covering everything merges back into one run. */
  CHECK(tt_rangemap_set(m, 0, 100, 0x2) == 0);
  CHECK(tt_rangemap_runs(m) == 1 && tt_rangemap_common(m, 0, 100) == 0x2);

  /* Edges: ranges at both ends, past the end, empty. */
  CHECK(tt_rangemap_set(m, 0, 1, 0x8) == 0);
  CHECK(tt_rangemap_set(m, 99, 5, 0x8) == 0);
  CHECK(tt_rangemap_runs(m) == 3);
  CHECK(tt_rangemap_common(m, 99, 1) == 0x8 && tt_rangemap_common(m, 1, 98) == 0x2);
  CHECK(tt_rangemap_set(m, 100, 10, 0x1) == 0 && tt_rangemap_runs(m) == 3);
  CHECK(tt_rangemap_set(m, 10, 0, 0x1) == 0 && tt_rangemap_runs(m) == 3);
  int seen = 0;
  CHECK(tt_rangemap_walk(m, 0, 100, stop_at_second, &seen) == 7 && seen == 2);

  /* Many small writes: every other byte. */
  for (size_t i = 0; i < 100; i += 2)
    CHECK(tt_rangemap_set(m, i, 1, 0x10) == 0);
  CHECK(tt_rangemap_runs(m) == 100);
  CHECK(tt_rangemap_set(m, 0, 100, 0x1) == 0 && tt_rangemap_runs(m) == 1);
  tt_rangemap_free(m);

  printf("unit_rangemap: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
