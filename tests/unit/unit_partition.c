/* Unit test of the partitioning of split launches (annotations/partition.h): tables of
 * equal and weighted shares, parts from bounds, parts that follow block and cyclic
 * distributions (extents that do not divide included), edges first (edge widths, edges
 * before interiors, parts too thin to split), the bytes neighbours both read, whether
 * parts' writes overlap, balancing's new weights, and parts compared field by field. No
 * OpenCL, no MPI. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotations/partition.h"
#include "tests/unit/unit.h"

/* Parts written as "queue:g0-g1 ...", for comparisons. */
static const char *show(const struct tt_part *p, size_t n, char *buf, size_t cap)
{
  size_t at = 0;
  buf[0] = 0;
  for (size_t i = 0; i < n && at + 40 < cap; i++)
    at += (size_t)snprintf(buf + at, cap - at, "%s%u:%zu-%zu", i ? " " : "", p[i].queue,
                           p[i].g0, p[i].g1);
  return buf;
}

static const char *show_bounds(const size_t *b, unsigned nq, char *buf, size_t cap)
{
  size_t at = 0;
  buf[0] = 0;
  for (unsigned q = 0; q <= nq && at + 24 < cap; q++)
    at += (size_t)snprintf(buf + at, cap - at, "%s%zu", q ? "," : "", b[q]);
  return buf;
}

static void equal_shares(void)
{
  static const struct {
    unsigned nq;
    size_t G;
    const char *want;
  } t[] = {
      {1, 7, "0,7"},          {2, 8, "0,4,8"},         {3, 10, "0,3,6,10"},
      {4, 2, "0,0,1,1,2"},    {3, 0, "0,0,0,0"},       {5, 1000003, "0,200000,400001,600001,800002,1000003"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    size_t b[8];
    char buf[256];
    tt_part_equal_bounds(t[i].nq, t[i].G, b);
    if (strcmp(show_bounds(b, t[i].nq, buf, sizeof buf), t[i].want)) {
      fprintf(stderr, "equal %u x %zu: %s, want %s\n", t[i].nq, t[i].G, buf, t[i].want);
      failures++;
    }
  }
}

static void weighted_shares(void)
{
  const uint64_t one = (uint64_t)1 << 32;
  static const struct {
    unsigned nq;
    uint64_t w[4]; /* in 1/8ths of one */
    size_t G;
    const char *want;
  } t[] = {
      {2, {4, 4}, 8, "0,4,8"},
      {2, {2, 6}, 8, "0,2,8"},       /* a quarter and three quarters */
      {2, {0, 8}, 4, "0,1,4"},       /* a device weighted nothing still gets one group */
      {2, {8, 0}, 4, "0,3,4"},       /* and so does the last */
      {3, {1, 6, 1}, 3, "0,1,2,3"},  /* as many groups as queues: one each */
      {4, {1, 1, 3, 3}, 16, "0,2,4,10,16"},
      {3, {3, 3, 2}, 10, "0,3,7,10"}, /* rounding down, the last one up to G */
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    uint64_t w[4];
    size_t b[8];
    char buf[256];
    for (unsigned q = 0; q < t[i].nq; q++)
      w[q] = t[i].w[q] * (one / 8);
    tt_part_weighted_bounds(t[i].nq, w, one, t[i].G, b);
    if (strcmp(show_bounds(b, t[i].nq, buf, sizeof buf), t[i].want)) {
      fprintf(stderr, "weighted case %zu: %s, want %s\n", i, buf, t[i].want);
      failures++;
    }
    /* Every share at least one group, in order, ending at G. */
    for (unsigned q = 0; q < t[i].nq; q++)
      CHECK(b[q + 1] > b[q]);
    CHECK(b[0] == 0 && b[t[i].nq] == t[i].G);
  }
}

static void parts_of_bounds(void)
{
  size_t b[] = {0, 3, 3, 7, 7};
  struct tt_part p[4];
  char buf[256];
  size_t n = tt_part_from_bounds(4, b, p);
  CHECK(n == 2);
  CHECK(!strcmp(show(p, n, buf, sizeof buf), "0:0-3 2:3-7"));
}

static void distributions(void)
{
  static const struct {
    bool block;
    size_t E, chunk;
    unsigned ndev;
    int queue_of[4];
    size_t G;
    const char *want; /* NULL: no parts */
  } t[] = {
      /* block: ceil(10 / 3) = 4 elements a chunk, the last one short */
      {true, 10, 0, 3, {0, 1, 2}, 10, "0:0-4 1:4-8 2:8-10"},
      /* fewer groups than elements: proportional, rounded alike at both ends */
      {true, 10, 0, 3, {0, 1, 2}, 5, "0:0-2 1:2-4 2:4-5"},
      /* devices listed in another order than the queues */
      {true, 8, 0, 2, {1, 0}, 8, "1:0-4 0:4-8"},
      /* cyclic chunks of 2 over 2 devices */
      {false, 8, 2, 2, {0, 1}, 8, "0:0-2 1:2-4 0:4-6 1:6-8"},
      /* cyclic with a short last chunk */
      {false, 7, 3, 2, {0, 1}, 7, "0:0-3 1:3-6 0:6-7"},
      /* more chunks than groups: empty ranges left out */
      {false, 8, 1, 2, {0, 1}, 2, "1:0-1 1:1-2"},
      /* a device without a queue: no parts */
      {true, 8, 0, 2, {0, -1}, 8, NULL},
      /* nothing to split */
      {true, 0, 0, 2, {0, 1}, 8, NULL},
      {false, 8, 0, 2, {0, 1}, 8, NULL},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    struct tt_part *p = NULL;
    char buf[256];
    size_t n = tt_part_distribution(t[i].block, t[i].E, t[i].chunk, t[i].ndev, t[i].queue_of,
                                    t[i].G, &p);
    const char *got = n ? show(p, n, buf, sizeof buf) : NULL;
    if (t[i].want ? !got || strcmp(got, t[i].want) : got != NULL) {
      fprintf(stderr, "distribution case %zu: %s, want %s\n", i, got ? got : "(none)",
              t[i].want ? t[i].want : "(none)");
      failures++;
    }
    /* Parts never overlap and cover [0, G) in order when chunks are contiguous blocks. */
    for (size_t k = 1; n && k < n; k++)
      CHECK(p[k].g0 >= p[k - 1].g1);
    free(p);
  }
}

static void edges(void)
{
  /* Widths: half the shared bytes in the part's groups of reading, rounded up, at least 1. */
  CHECK(tt_part_edge_width(0, 4096, 8) == 0);
  CHECK(tt_part_edge_width(1024, 0, 8) == 0);
  CHECK(tt_part_edge_width(2048, 8192, 8) == 1);  /* 1024 bytes a group, 1024 shared each way */
  CHECK(tt_part_edge_width(4096, 8192, 8) == 2);
  CHECK(tt_part_edge_width(4098, 8192, 8) == 3);  /* rounded up */
  CHECK(tt_part_edge_width(1, 8192, 8) == 1);     /* a single shared byte still makes an edge */

  static const struct {
    size_t n;
    struct tt_part in[4];
    size_t edge[4];
    const char *want; /* NULL: unchanged (no edge) */
  } t[] = {
      /* two parts, an edge of 2 each side: both edges first, then the interiors */
      {2, {{0, 0, 10}, {1, 10, 20}}, {2}, "0:8-10 1:10-12 0:0-8 1:12-20"},
      /* three parts: the middle one has two edges */
      {3, {{0, 0, 10}, {1, 10, 20}, {2, 20, 30}}, {1, 1},
       "0:9-10 1:10-11 1:19-20 2:20-21 0:0-9 1:11-19 2:21-30"},
      /* an edge not narrower than a part: none there */
      {2, {{0, 0, 2}, {1, 2, 20}}, {2}, NULL},
      /* the middle part too thin for both its edges goes whole among the edges */
      {3, {{0, 0, 10}, {1, 10, 13}, {2, 13, 30}}, {2, 2},
       "0:8-10 1:10-13 2:13-15 0:0-8 2:15-30"},
      /* no edges at all */
      {2, {{0, 0, 10}, {1, 10, 20}}, {0}, NULL},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    struct tt_part out[12];
    char buf[256];
    size_t m = tt_part_edges_first(t[i].in, t[i].n, t[i].edge, out);
    const char *got = m ? show(out, m, buf, sizeof buf) : NULL;
    if (t[i].want ? !got || strcmp(got, t[i].want) : got != NULL) {
      fprintf(stderr, "edges case %zu: %s, want %s\n", i, got ? got : "(none)",
              t[i].want ? t[i].want : "(none)");
      failures++;
    }
  }
}

static void shared_reads(void)
{
  static const struct {
    size_t na, nb;
    struct tt_part_range a[3], b[3];
    size_t size, want_both, want_len;
  } t[] = {
      /* a stencil's rows: each part reads one row beyond its own on either side */
      {1, 1, {{0, 110}}, {{90, 110}}, 200, 20, 110},
      /* nothing shared */
      {1, 1, {{0, 100}}, {{100, 100}}, 200, 0, 100},
      /* a replicated input, read whole by either: no halo */
      {1, 1, {{0, 200}}, {{50, 10}}, 200, 0, 0},
      {1, 1, {{0, 100}}, {{0, 200}}, 200, 0, 0},
      /* several ranges (a 2D halo as rows): counted pair by pair */
      {2, 2, {{0, 50}, {100, 50}}, {{40, 20}, {140, 20}}, 400, 20, 100},
      /* b reads nothing */
      {1, 0, {{0, 10}}, {{0, 0}}, 100, 0, 10},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    size_t len = 99;
    size_t both = tt_part_shared_reads(t[i].a, t[i].na, t[i].b, t[i].nb, t[i].size, &len);
    if (both != t[i].want_both || (both && len != t[i].want_len)) {
      fprintf(stderr, "shared reads case %zu: %zu of %zu, want %zu of %zu\n", i, both, len,
              t[i].want_both, t[i].want_len);
      failures++;
    }
  }
}

static void writes_overlap(void)
{
  static const struct {
    size_t n;
    struct tt_part_write w[5];
    bool want;
  } t[] = {
      /* parts side by side, in any order */
      {3, {{1, 20, 30, 2}, {1, 0, 10, 0}, {1, 10, 20, 1}}, false},
      /* one byte shared */
      {2, {{1, 0, 11, 0}, {1, 10, 20, 1}}, true},
      /* the same bytes of two buffers: no overlap */
      {2, {{1, 0, 10, 0}, {2, 0, 10, 1}}, false},
      /* one part's writes may overlap each other */
      {2, {{1, 0, 10, 0}, {1, 5, 15, 0}}, false},
      /* a long write of part 0 covers part 1's, after a part-0 write that ends first */
      {3, {{1, 0, 100, 0}, {1, 10, 20, 0}, {1, 50, 60, 1}}, true},
      /* the second furthest end belongs to another part than the furthest */
      {4, {{1, 0, 30, 0}, {1, 0, 50, 1}, {1, 40, 45, 1}, {1, 60, 70, 2}}, true},
      {0, {{0, 0, 0, 0}}, false},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    struct tt_part_write w[5];
    memcpy(w, t[i].w, sizeof w);
    if (tt_part_writes_overlap(w, t[i].n) != t[i].want) {
      fprintf(stderr, "writes case %zu: overlap %d, want %d\n", i, !t[i].want, t[i].want);
      failures++;
    }
  }
}

static void reweigh(void)
{
  static const struct {
    unsigned n;
    size_t groups[3];
    uint64_t ns[3], old[3]; /* old[0] == 0: equal shares */
    uint64_t one;
    bool moves;
    uint64_t want[3];
  } t[] = {
      /* one part three times slower: three quarters of the way to 3:1 from 1:1 */
      {2, {10, 10}, {100, 300}, {0}, 1000, true, {686, 314}},
      /* the same again from those weights */
      {2, {10, 10}, {100, 300}, {686, 314}, 1000, true, {732, 268}},
      /* speeds 0.1, 0.1, 0.05 groups a nanosecond: shares 2:2:1 */
      {3, {30, 10, 20}, {300, 100, 400}, {0}, 1200, true, {460, 460, 280}},
      /* within 5% of each other: the weights stay */
      {2, {5, 5}, {100, 104}, {0}, 1000, false, {0}},
      {2, {5, 5}, {100, 106}, {0}, 1000, true, {509, 491}},
      /* a time unknown (0): the weights stay */
      {2, {5, 5}, {0, 100}, {0}, 1000, false, {0}},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    uint64_t out[3] = {7, 7, 7};
    bool moved = tt_part_reweigh(t[i].n, t[i].groups, t[i].ns, t[i].old[0] ? t[i].old : NULL,
                                 t[i].one, out);
    bool same = moved == t[i].moves;
    uint64_t sum = 0;
    for (unsigned p = 0; p < t[i].n; p++) {
      same = same && out[p] == (moved ? t[i].want[p] : 7);
      sum += out[p];
    }
    if (!same || (moved && sum != t[i].one)) {
      fprintf(stderr, "reweigh case %zu: moved %d, %llu %llu %llu\n", i, moved,
              (unsigned long long)out[0], (unsigned long long)out[1], (unsigned long long)out[2]);
      failures++;
    }
  }
}

static void parts_equal(void)
{
  struct tt_part a[2], b[2];
  /* Padding of other bytes: only the fields count. */
  memset(a, 0x11, sizeof a);
  memset(b, 0x22, sizeof b);
  tt_part_set(&a[0], 0, 0, 10);
  tt_part_set(&a[1], 1, 10, 20);
  tt_part_set(&b[0], 0, 0, 10);
  tt_part_set(&b[1], 1, 10, 20);
  bool eq = tt_part_equal(a, b, 2);
  b[1].queue = 0;
  bool queue_differs = !tt_part_equal(a, b, 2);
  b[1].queue = 1;
  b[0].g1 = 11;
  bool bound_differs = !tt_part_equal(a, b, 2) && tt_part_equal(a + 1, b + 1, 1);
  if (!eq || !queue_differs || !bound_differs) {
    fprintf(stderr, "parts equal: %d %d %d\n", eq, queue_differs, bound_differs);
    failures++;
  }
}

int main(void)
{
  parts_equal();
  reweigh();
  shared_reads();
  writes_overlap();
  edges();
  equal_shares();
  weighted_shares();
  parts_of_bounds();
  distributions();
  printf(failures ? "unit_partition: FAILED\n" : "unit_partition: passed\n");
  return failures != 0;
}
