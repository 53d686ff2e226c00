/* Unit test of planning a split launch's parts (annotations/parts.h): tables of annotations,
 * launch shapes, parts and buffer arguments against the uses each part gets (halos of a
 * stencil, a buffer no rule names, a replicated input), the regions of reduce rules, and the
 * launches that must run whole (writes of two parts sharing a byte, also through buffers of
 * one root). No OpenCL, no MPI. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotations/parts.h"
#include "tests/unit/unit.h"

/* in, out, sum, all, pos: the buffer parameters; w, h: sizes. */
static const char *const kernel_src =
    "__kernel void k(__global const float *in, __global float *out, __global int *sum,\n"
    "                __global float *all, __global const float *pos, int w, int h) { }\n";

/* Uses as "b<buffer> r|w|rw off+len, ...", parts separated by " | ". */
static const char *show(struct tt_part_use **u, const size_t *n, size_t nparts, char *buf,
                        size_t cap)
{
  size_t at = 0;
  buf[0] = 0;
  for (size_t p = 0; p < nparts; p++)
    for (size_t j = 0; j < n[p] && at + 48 < cap; j++) {
      const struct tt_part_use *x = &u[p][j];
      at += (size_t)snprintf(buf + at, cap - at, "%s%sb%zu %s %zu+%zu", p && !j ? " | " : "",
                             j ? ", " : "", x->buffer,
                             x->reads && x->writes ? "rw" : x->reads ? "r" : "w", x->off, x->len);
    }
  return buf;
}

static void plans(void)
{
  struct tt_ann_param *params;
  long np = tt_ann_kernel_params(kernel_src, "k", &params);
  CHECK(np == 7);
  if (np != 7)
    return;
  /* w = 8 columns, h = 8 rows of floats: 32 bytes a row, 256 a grid. */
  static const int64_t values[7] = {0, 0, 0, 0, 0, 8, 8};
  static const struct {
    const char *ann;
    unsigned dim;
    size_t global[2], local[2];
    size_t nparts;
    size_t g[4][2];  /* each part's groups along the last dimension */
    size_t nb;
    struct tt_part_buffer b[3];
    int rc;
    const char *want; /* the uses, or the reason the launch runs whole */
    const char *reduce; /* "off+len" of rule 1's region in each part, when it has one */
  } t[] = {
      /* A stencil over two parts of 4 rows: each reads its rows and one more on each side
       * (clamped at the grid's edges), writes its own. */
      {"global [x, y] => read in(h, w)[y-1:y+2, x-1:x+2], write out(h, w)[y, x]", 2, {8, 8},
       {8, 1}, 2, {{0, 4}, {4, 8}}, 2, {{0, 256, false, 1, 0}, {1, 256, true, 2, 0}}, 0,
       "b0 r 0+160, b1 w 0+128 | b0 r 96+160, b1 w 128+128", NULL},
      /* Three parts: the middle one reads a row above and below its own. */
      {"global [x, y] => read in(h, w)[y-1:y+2, x-1:x+2], write out(h, w)[y, x]", 2, {8, 8},
       {8, 1}, 3, {{0, 2}, {2, 5}, {5, 8}}, 2, {{0, 256, false, 1, 0}, {1, 256, true, 2, 0}},
       0, "b0 r 0+96, b1 w 0+64 | b0 r 32+160, b1 w 64+96 | b0 r 128+128, b1 w 160+96", NULL},
      /* A buffer no rule names: read whole by every part when it may not be written... */
      {"global i => read in[i], write out[i]", 1, {64, 1}, {16, 1}, 2, {{0, 2}, {2, 4}}, 3,
       {{0, 256, false, 1, 0}, {1, 256, true, 2, 0}, {4, 256, false, 3, 0}}, 0,
       "b0 r 0+128, b1 w 0+128, b2 r 0+256 | b0 r 128+128, b1 w 128+128, b2 r 0+256", NULL},
      /* ... and written whole by each when it may: the parts' writes meet, the launch runs
       * whole. */
      {"global i => read in[i], write out[i]", 1, {64, 1}, {16, 1}, 2, {{0, 2}, {2, 4}}, 3,
       {{0, 256, false, 1, 0}, {1, 256, true, 2, 0}, {3, 256, true, 3, 0}}, -1, "overlap",
       NULL},
      /* One part alone: that buffer read and written whole. */
      {"global i => read in[i], write out[i]", 1, {64, 1}, {16, 1}, 1, {{0, 4}}, 3,
       {{0, 256, false, 1, 0}, {1, 256, true, 2, 0}, {3, 256, true, 3, 0}}, 0,
       "b0 r 0+256, b1 w 0+256, b2 rw 0+256", NULL},
      /* A replicated input: every part reads all of it. */
      {"global i => read pos[:], write out[i]", 1, {64, 1}, {16, 1}, 2, {{0, 1}, {1, 4}}, 2,
       {{4, 256, false, 4, 0}, {1, 256, true, 2, 0}}, 0,
       "b0 r 0+256, b1 w 0+64 | b0 r 0+256, b1 w 64+192", NULL},
      /* A reduced buffer is no use of the parts: its region goes to the rule. */
      {"global i => read in[i], reduce(+) sum[0:4]", 1, {64, 1}, {16, 1}, 2, {{0, 3}, {3, 4}},
       2, {{0, 256, false, 1, 0}, {2, 16, true, 5, 0}}, 0, "b0 r 0+192 | b0 r 192+64",
       "0+16"},
      /* Every part writing the same bytes: the launch runs whole. */
      {"global i => read in[i], write out[0:4]", 1, {64, 1}, {16, 1}, 2, {{0, 2}, {2, 4}}, 2,
       {{0, 256, false, 1, 0}, {1, 256, true, 2, 0}}, -1, "overlap", NULL},
      /* One part alone may write what it likes. */
      {"global i => read in[i], write out[0:4]", 1, {64, 1}, {16, 1}, 1, {{0, 4}}, 2,
       {{0, 256, false, 1, 0}, {1, 256, true, 2, 0}}, 0, "b0 r 0+256, b1 w 0+16", NULL},
      /* Two buffers of one root at its start: part 0 writes bytes 0-64 of the first, part 1
       * bytes 0-64 of the second (its index clamped below), the same bytes of the root. */
      {"global i => write out[i], write all[i - 16]", 1, {32, 1}, {16, 1}, 2, {{0, 1}, {1, 2}},
       2, {{1, 128, true, 7, 0}, {3, 128, true, 7, 0}}, -1, "overlap", NULL},
      /* The second 64 bytes into the root: part 1's two writes meet, part 0's stays apart. */
      {"global i => write out[i], write all[i - 16]", 1, {32, 1}, {16, 1}, 2, {{0, 1}, {1, 2}},
       2, {{1, 128, true, 7, 0}, {3, 128, true, 7, 64}}, 0,
       "b0 w 0+64 | b0 w 64+64, b1 w 0+64", NULL},
      /* The same bytes of two roots do not overlap. */
      {"global i => write out[i], write all[i - 16]", 1, {32, 1}, {16, 1}, 2, {{0, 1}, {1, 2}},
       2, {{1, 128, true, 7, 0}, {3, 128, true, 8, 0}}, 0,
       "b0 w 0+64 | b0 w 64+64, b1 w 0+64", NULL},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    char err[256] = "", got[512], why[256] = "";
    struct tt_ann *a = tt_ann_parse(t[i].ann, params, (size_t)np, NULL, 0, err, sizeof err);
    if (!a) {
      fprintf(stderr, "plan case %zu: \"%s\" does not parse: %s\n", i, t[i].ann, err);
      failures++;
      continue;
    }
    struct tt_ann_launch l = {t[i].dim, {0, 0, 0}, {t[i].global[0], t[i].global[1], 1},
                              {t[i].local[0], t[i].local[1], 1}, values};
    struct tt_part parts[4];
    for (size_t p = 0; p < t[i].nparts; p++)
      parts[p] = (struct tt_part){(unsigned)p, t[i].g[p][0], t[i].g[p][1]};
    size_t nrules = tt_ann_nrules(a);
    struct tt_part_use *u[4];
    size_t n[4];
    struct tt_ann_ranges *reduce = calloc(t[i].nparts * nrules + 1, sizeof *reduce);
    int rc = tt_parts_uses(a, &l, parts, t[i].nparts, t[i].b, t[i].nb, 8, u, n, reduce, why,
                           sizeof why);
    const char *shown = rc ? why : show(u, n, t[i].nparts, got, sizeof got);
    if (rc != t[i].rc || (rc ? !strstr(why, t[i].want) : strcmp(shown, t[i].want) != 0)) {
      fprintf(stderr, "plan case %zu: %d \"%s\", want %d \"%s\"\n", i, rc, shown, t[i].rc,
              t[i].want);
      failures++;
    }
    for (size_t p = 0; t[i].reduce && !rc && p < t[i].nparts; p++) {
      const struct tt_ann_ranges *r = &reduce[p * nrules + 1];
      char have[64] = "";
      if (r->n == 1)
        snprintf(have, sizeof have, "%zu+%zu", r->r[0].off, r->r[0].len);
      if (strcmp(have, t[i].reduce)) {
        fprintf(stderr, "plan case %zu, part %zu: reduce region \"%s\", want \"%s\"\n", i, p,
                have, t[i].reduce);
        failures++;
      }
    }
    for (size_t p = 0; !rc && p < t[i].nparts; p++)
      free(u[p]);
    for (size_t r = 0; r < t[i].nparts * nrules; r++)
      tt_ann_ranges_free(&reduce[r]);
    free(reduce);
    tt_ann_free(a);
  }
  free(params);
}

int main(void)
{
  plans();
  printf("unit_parts: %s\n", failures ? "FAILED" : "passed");
  return failures != 0;
}
