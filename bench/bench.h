/* Shared by the benchmarks that time things (bench/cluster.c, bench/transfer.c). */
#ifndef TUTTI_BENCH_H
#define TUTTI_BENCH_H

#include <stdlib.h>
#include <time.h>

static inline double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* For qsort of doubles. */
static inline int cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#endif
