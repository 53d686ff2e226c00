/* Unit tests of the annotation language (annotations/): every grammar form, every rejection,
 * regions clamped at the edges, Lightning's own cases, pragmas, kernel signatures and -D
 * macros. TAP output; needs neither OpenCL nor MPI. */
#include "config.h"

#include "annotations/annotation.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, count;

static void ok(int cond, const char *what)
{
  count++;
  printf("%s %d - %s\n", cond ? "ok" : "not ok", count, what);
  if (!cond)
    failures++;
}

/* A kernel: float *a, float *b, float *c (written), int n, int w, int h, const float *in,
 * float *out, int *total, uint *bits, char *bytes, struct s *st. */
static const char *const kernel_src =
    "typedef struct { int x; } s;\n"
    "// __kernel void not_this(int x) {}\n"
    "__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void k(__global const float *a,\n"
    "    __global float *restrict b, global float* c, int n, const int w, unsigned int h,\n"
    "    __global const float *in, __global float *out, __global int *total,\n"
    "    __global uint *bits, __global char *bytes, __global s *st, __constant int *cst)\n"
    "{ }\n";

static struct tt_ann_param *params;
static long nparams;

static int param(const char *name)
{
  for (long i = 0; i < nparams; i++)
    if (!strcmp(params[i].name, name))
      return (int)i;
  return -1;
}

/* Parses `text`; expects failure when `error` is not NULL (its words in the message). */
static struct tt_ann *parse(const char *text, const char *error)
{
  char err[256] = "";
  struct tt_ann_macro macros[] = {{"TILE", 16}, {"NEG", -2}};
  struct tt_ann *a = tt_ann_parse(text, params, (size_t)nparams, macros, 2, err, sizeof err);
  char what[512];
  if (error) {
    snprintf(what, sizeof what, "rejects \"%s\" (%s; got \"%s\")", text, error, err);
    ok(!a && strstr(err, error) != NULL, what);
    tt_ann_free(a);
    return NULL;
  }
  snprintf(what, sizeof what, "parses \"%s\" %s", text, err);
  ok(a != NULL, what);
  return a;
}

/* Byte ranges of rule `rule` for groups [g0, g1) of the last dimension of a launch; compares
 * with "off+len off+len ...". */
static void region(struct tt_ann *a, size_t rule, unsigned dim, const size_t *gws,
                   const size_t *lws, const size_t *off, size_t g0, size_t g1, size_t bytes,
                   const char *want, const char *what)
{
  if (!a) {
    ok(0, what);
    return;
  }
  int64_t values[32] = {0};
  values[param("n")] = 10;
  values[param("w")] = 8;
  values[param("h")] = 6;
  struct tt_ann_launch l = {dim, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, values};
  struct tt_ann_part p;
  for (unsigned d = 0; d < 3; d++) {
    if (d < dim) {
      l.global[d] = gws[d];
      l.local[d] = lws[d];
      l.offset[d] = off ? off[d] : 0;
    }
    p.group_lo[d] = 0;
    p.group_hi[d] = l.global[d] / l.local[d];
  }
  p.group_lo[dim - 1] = g0;
  p.group_hi[dim - 1] = g1;
  struct tt_ann_ranges r = {0};
  char err[256] = "", got[1024] = "";
  int rc = tt_ann_region(a, rule, &l, &p, bytes, &r, err, sizeof err);
  for (size_t i = 0; i < r.n; i++)
    snprintf(got + strlen(got), sizeof got - strlen(got), "%s%zu+%zu", i ? " " : "", r.r[i].off,
             r.r[i].len);
  if (rc)
    snprintf(got, sizeof got, "error: %s", err);
  char msg[2048];
  snprintf(msg, sizeof msg, "%s: want \"%s\", got \"%s\"", what, want, got);
  ok(!strcmp(got, want), msg);
  tt_ann_ranges_free(&r);
}

/* Launches alike or not: the memo of split launches takes a plan again only for the same
 * shape and parameter values. */
static void launches_alike(void)
{
  int64_t v1[3] = {1, 2, 3}, v2[3] = {1, 2, 4};
  struct tt_ann_launch a = {2, {0, 0, 0}, {64, 32, 1}, {8, 8, 1}, v1}, b = a;
  ok(tt_ann_launch_equal(&a, &b, 3), "launches alike: same shape and values");
  b.values = v2;
  ok(!tt_ann_launch_equal(&a, &b, 3) && tt_ann_launch_equal(&a, &b, 2),
     "launches alike: a value differs (only the values compared count)");
  b = a;
  b.global[1] = 16;
  ok(!tt_ann_launch_equal(&a, &b, 0), "launches alike: another global size");
  b = a;
  b.offset[0] = 8;
  ok(!tt_ann_launch_equal(&a, &b, 0), "launches alike: another offset");
  b = a;
  b.work_dim = 3;
  ok(!tt_ann_launch_equal(&a, &b, 0), "launches alike: another dimension count");
  b = a;
  b.local[0] = 4;
  ok(!tt_ann_launch_equal(&a, &b, 0), "launches alike: another local size");
}

/* "off+len ..." of a range list. */
static void ranges_str(const struct tt_ann_ranges *r, char *out, size_t cap)
{
  out[0] = 0;
  for (size_t i = 0; i < r->n; i++)
    snprintf(out + strlen(out), cap - strlen(out), "%s%zu+%zu", i ? " " : "", r->r[i].off,
             r->r[i].len);
}

/* What a part of a launch reads and writes of each buffer argument (tt_ann_part_uses): a
 * table of annotations, parameters and parts against the ranges wanted ("reads | writes |
 * reduce of rule 0", "whole" when no rule names the parameter, "error: ..." when none). */
static void part_uses(void)
{
  static const struct {
    const char *ann, *param;
    size_t size, g0, g1, max_reads;
    bool writable;
    const char *want;
  } cases[] = {
      {"global i => read a[i], write c[i]", "a", 64, 1, 3, 64, false, "4+8 | "},
      {"global i => read a[i], write c[i]", "c", 64, 1, 3, 64, true, " | 4+8"},
      {"global i => read a[i], write c[i]", "b", 64, 1, 3, 64, true, "whole 0+64 | 0+64"},
      {"global i => read a[i], write c[i]", "in", 64, 1, 3, 64, false, "whole 0+64 | "},
      {"global i => readwrite b[i]", "b", 64, 0, 2, 64, true, "0+8 | 0+8"},
      {"global i => read a[i - 1 : i + 2]", "a", 64, 1, 2, 64, false, "0+12 | "},
      {"global i => read a(h, w)[i, 0:2]", "a", 256, 0, 3, 64, false, "0+8 32+8 64+8 | "},
      {"global i => read a(h, w)[i, 0:2]", "a", 256, 0, 3, 2, false, "0+72 | "},
      {"global i => write c(h, w)[i, 0:2]", "c", 256, 0, 3, 2, true, " | 0+8 32+8 64+8"},
      {"global i => reduce(+) total[0], read a[i]", "total", 64, 0, 4, 64, true,
       " |  | 0+4"},
      {"global i => read a(w, h)[i, 0]", "a", 64, 0, 1, 64, false,
       "error: the shape of parameter 0 holds 192 bytes, its buffer 64"},
  };
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
    struct tt_ann *a = parse(cases[t].ann, NULL);
    if (!a)
      continue;
    int64_t v[32] = {0};
    v[param("w")] = 8;
    v[param("h")] = 6;
    struct tt_ann_launch l = {1, {0, 0, 0}, {16, 1, 1}, {1, 1, 1}, v};
    struct tt_ann_part p = {{cases[t].g0, 0, 0}, {cases[t].g1, 1, 1}};
    struct tt_ann_buffer b = {(unsigned)param(cases[t].param), cases[t].size, cases[t].writable};
    struct tt_ann_ranges reads = {0}, writes = {0}, reduce[8] = {{0}};
    bool named = true;
    char err[256] = "", r[256], w[256], x[256], got[1024];
    int rc = tt_ann_part_uses(a, &l, &p, &b, cases[t].max_reads, &reads, &writes, reduce,
                              &named, err, sizeof err);
    ranges_str(&reads, r, sizeof r);
    ranges_str(&writes, w, sizeof w);
    ranges_str(&reduce[0], x, sizeof x);
    if (rc)
      snprintf(got, sizeof got, "error: %s", err);
    else
      snprintf(got, sizeof got, "%s%s | %s%s%s", named ? "" : "whole ", r, w,
               reduce[0].n ? " | " : "", x);
    char msg[2048];
    snprintf(msg, sizeof msg, "uses of %s under \"%s\", groups %zu..%zu: want \"%s\", got \"%s\"",
             cases[t].param, cases[t].ann, cases[t].g0, cases[t].g1, cases[t].want, got);
    ok(!strcmp(got, cases[t].want), msg);
    tt_ann_ranges_free(&reads);
    tt_ann_ranges_free(&writes);
    for (size_t i = 0; i < 8; i++)
      tt_ann_ranges_free(&reduce[i]);
    tt_ann_free(a);
  }
}

int main(void)
{
  printf("TAP version 13\n");
  launches_alike();
  nparams = tt_ann_kernel_params(kernel_src, "k", &params);
  ok(nparams == 13, "kernel signature: 13 parameters (attribute and comment skipped)");
  ok(param("a") == 0 && params[0].pointer && params[0].is_const && params[0].size == 4,
     "a: const float pointer");
  ok(params[param("b")].pointer && !params[param("b")].is_const, "b: restrict float pointer");
  ok(params[param("c")].pointer && params[param("c")].size == 4, "c: global float* (no __)");
  ok(!params[param("n")].pointer && params[param("n")].integer && params[param("n")].size == 4,
     "n: int scalar");
  ok(params[param("h")].integer && !params[param("h")].is_signed && !strcmp(params[param("h")].type, "uint"),
     "h: unsigned int is uint");
  ok(params[param("st")].pointer && params[param("st")].size == 0, "st: struct pointer, size unknown");
  ok(params[param("cst")].pointer && params[param("cst")].is_const, "cst: __constant is const");
  struct tt_ann_param *none;
  ok(tt_ann_kernel_params(kernel_src, "not_this", &none) == -1, "kernels in comments are not kernels");

  /* Rebasing parameters onto windows: renamed, an offset appended, the declaration first in
   * the body, lines kept. */
  const char *rsrc = "__kernel void other(__global int *x) { }\n"
                     "__kernel void r(__global const float *restrict a,\n"
                     "                int n, __global int *b)\n"
                     "{\n  b[0] = a[n];\n}\n";
  bool flags[3] = {true, false, true};
  char *rb = tt_ann_rebase(rsrc, "r", flags, 3);
  ok(rb && strstr(rb, "__kernel void r(__global const float *restrict __tutti_w0,\n"
                      "                int n, __global int *__tutti_w2, ulong __tutti_o0, ulong __tutti_o2)\n"
                      "{__global const float *restrict a = __tutti_w0 - __tutti_o0; __global int *b = "
                      "__tutti_w2 - __tutti_o2;\n  b[0] = a[n];\n}\n") &&
         !strncmp(rb, "__kernel void other(__global int *x) { }\n", 40),
     "rebase: parameters renamed, offsets appended, declarations first, lines kept");
  free(rb);
  ok(!tt_ann_rebase(rsrc, "r", flags, 2), "rebase: a parameter count that differs is refused");
  struct tt_ann_param *cp;
  ok(tt_ann_kernel_params("__kernel void r(__global int *a /* the input */, int n) { }", "r", &cp) == 2 &&
         !strcmp(cp[0].name, "a") && cp[0].pointer && !strcmp(cp[1].name, "n"),
     "kernel signature: a comment after a parameter's name is no part of it");
  free(cp);
  ok(!tt_ann_rebase("__kernel void r(__global int *a /* x */) { }", "r", flags, 1),
     "rebase: comments in the parameter list are refused");
  ok(!tt_ann_rebase(rsrc, "missing", flags, 3), "rebase: an unknown kernel");

  size_t g1[] = {16}, l1[] = {4}, l1one[] = {1};
  size_t g2[] = {8, 6}, l2[] = {2, 2}, l2one[] = {1, 1};
  struct tt_ann *a;

  /* Lightning's cases, 1-D, 16 floats, groups of 4: the part runs groups [1, 3). */
  a = parse("global i => read a[i], write c[i]", NULL);
  region(a, 0, 1, g1, l1, NULL, 1, 3, 64, "16+32", "A[i] over items 4..11");
  region(a, 1, 1, g1, l1, NULL, 1, 3, 64, "16+32", "write c[i]");
  tt_ann_free(a);
  a = parse("global i => read a[n-i-1]", NULL); /* n = 10 */
  region(a, 0, 1, g1, l1, NULL, 0, 1, 64, "24+16", "A[n-i-1], i in 0..3: 6..9");
  region(a, 0, 1, g1, l1, NULL, 3, 4, 64, "", "A[n-i-1] entirely below 0: empty");
  tt_ann_free(a);
  a = parse("global i => read a[i-1:i+2]", NULL);
  region(a, 0, 1, g1, l1, NULL, 0, 1, 64, "0+20", "A[i-1:i+2] clamped at 0: 0..4");
  region(a, 0, 1, g1, l1, NULL, 3, 4, 64, "44+20", "A[i-1:i+2] clamped at 16: 11..15");
  tt_ann_free(a);
  a = parse("global i => read a[i/16:i/16+2]", NULL);
  region(a, 0, 1, (size_t[]){64}, (size_t[]){16}, NULL, 1, 3, 64, "4+12", "A[i/16:i/16+2], i in 16..47: 1..3");
  tt_ann_free(a);
  a = parse("global i => read a[:], read b[2:], read a[:3]", NULL);
  region(a, 0, 1, g1, l1one, NULL, 5, 6, 64, "0+64", "a[:] is the whole buffer");
  region(a, 1, 1, g1, l1one, NULL, 5, 6, 64, "8+56", "b[2:] to the end");
  region(a, 2, 1, g1, l1one, NULL, 5, 6, 64, "0+12", "a[:3] from the start");
  tt_ann_free(a);

  /* Global offset: variables are absolute ids. */
  a = parse("global i => write c[i]", NULL);
  region(a, 0, 1, (size_t[]){8}, l1, (size_t[]){4}, 0, 1, 64, "16+16", "offset 4: items 4..7");
  tt_ann_free(a);

  /* 2-D: shapes, rows, whole rows merged. in(h, w) with h = 6, w = 8; launch [x, y] = 8 x 6. */
  a = parse("global [x, y] => read in(h, w)[y-1:y+2, x-1:x+2], write out(h, w)[y, x]", NULL);
  region(a, 1, 2, g2, l2, NULL, 1, 2, 192, "64+64", "out rows 2..3 whole: one range");
  region(a, 0, 2, g2, l2, NULL, 1, 2, 192, "32+128", "in rows 1..4 (halo), whole rows");
  region(a, 0, 2, g2, l2, NULL, 0, 1, 192, "0+96", "in rows 0..2, clamped at the top");
  region(a, 0, 2, g2, l2, NULL, 2, 3, 192, "96+96", "in rows 3..5, clamped at the bottom");
  tt_ann_free(a);
  a = parse("group [gx, gy] => read in(h, w)[gy*2:gy*2+2, gx*2:gx*2+2]", NULL);
  region(a, 0, 2, (size_t[]){4, 6}, l2, NULL, 1, 2, 192, "64+16 96+16",
         "partial rows: one range per row");
  tt_ann_free(a);
  a = parse("local [lx, ly], group [gx, gy] => read a(h, w)[gy, lx]", NULL);
  region(a, 0, 2, g2, l2, NULL, 2, 3, 192, "64+8", "local and group variables");
  tt_ann_free(a);
  /* Matrix multiply: B(k, m)[:, j] is a column band: one range per row. */
  a = parse("global [j, i] => read a(n, w)[i, :], read b(w, n)[:, j], write c(n, n)[i, j]", NULL);
  region(a, 0, 2, (size_t[]){10, 10}, l2one, NULL, 3, 5, 320, "96+64", "A rows 3..4");
  region(a, 2, 2, (size_t[]){10, 10}, l2one, NULL, 3, 5, 400, "120+80", "C rows 3..4");
  tt_ann_free(a);
  a = parse("global [j, i] => read b(w, n)[:, j/5:j/5+1]", NULL);
  region(a, 0, 2, (size_t[]){5, 2}, l2one, NULL, 0, 2, 320, "0+4 40+4 80+4 120+4 160+4 200+4 240+4 280+4",
         "one column of 8 rows");
  tt_ann_free(a);
  /* 3-D. */
  a = parse("global [x, y, z] => write b(2, 3, 4)[z, y, x]", NULL);
  region(a, 0, 3, (size_t[]){4, 3, 2}, (size_t[]){1, 1, 1}, NULL, 1, 2, 96, "48+48",
         "3-D: plane 1 whole");
  region(a, 0, 3, (size_t[]){2, 3, 2}, (size_t[]){1, 1, 1}, NULL, 0, 1, 96, "0+8 16+8 32+8",
         "3-D: half rows of plane 0");
  tt_ann_free(a);

  /* Macros, literals with suffixes, parentheses, unary minus, multiplication. */
  a = parse("global i => read a[(i + TILE) * 2 - 3u:(i + TILE) * 2 + 1]", NULL);
  region(a, 0, 1, (size_t[]){4}, (size_t[]){4}, NULL, 0, 1, 4096, "116+40", "macro TILE: 29..38");
  tt_ann_free(a);
  a = parse("global i => read a[-i + 15], reduce(+) total[0:1], reduce(min) c[1], "
            "reduce(max) a2[0], reduce(&) bits[0]", "unknown parameter 'a2'");
  a = parse("global i => read a[-i + 15], reduce(+) total[0:1], reduce(min) c[1], "
            "reduce(max) b[0], reduce(&) bits[0]", NULL);
  region(a, 0, 1, g1, l1, NULL, 0, 1, 64, "48+16", "-i + 15 over 0..3: 12..15");
  ok(a && tt_ann_nrules(a) == 5 && tt_ann_rule(a, 1).mode == TT_ANN_REDUCE &&
     tt_ann_rule(a, 1).op == TT_ANN_ADD && tt_ann_rule(a, 2).op == TT_ANN_MIN &&
     tt_ann_rule(a, 4).op == TT_ANN_AND && tt_ann_rule(a, 3).op == TT_ANN_MAX &&
     tt_ann_rule(a, 4).param == (unsigned)param("bits"), "reduce operators");
  ok(a && tt_ann_reduce_rule(a, (unsigned)param("total")) == 1 &&
     tt_ann_reduce_rule(a, (unsigned)param("bits")) == 4 &&
     tt_ann_reduce_rule(a, (unsigned)param("a")) == SIZE_MAX, "the rule reducing a parameter");
  tt_ann_free(a);
  a = parse("global i => reduce(|) bits[1]", NULL);
  ok(a && tt_ann_rule(a, 0).op == TT_ANN_OR, "reduce(|)");
  tt_ann_free(a);
  a = parse("global i => reduce(^) bits[2]", NULL);
  ok(a && tt_ann_rule(a, 0).op == TT_ANN_XOR, "reduce(^)");
  tt_ann_free(a);
  a = parse("global i => readwrite b[i * w : i * w + w]", NULL);
  region(a, 0, 1, (size_t[]){2}, l1one, NULL, 1, 2, 64, "32+32", "a row of width w");
  tt_ann_free(a);
  a = parse("global i => read a[i], write c[i]", NULL);
  {
    struct tt_ann_ranges x = {0}, y = {0};
    char err[64];
    int64_t v[32] = {0};
    struct tt_ann_launch l = {1, {0}, {16, 1, 1}, {4, 1, 1}, v};
    tt_ann_region(a, 1, &l, &(struct tt_ann_part){{0, 0, 0}, {2, 1, 1}}, 64, &x, err, sizeof err);
    tt_ann_region(a, 1, &l, &(struct tt_ann_part){{2, 0, 0}, {4, 1, 1}}, 64, &y, err, sizeof err);
    ok(!tt_ann_ranges_overlap(&x, &y), "writes of two parts are disjoint");
    tt_ann_ranges_free(&y);
    tt_ann_region(a, 1, &l, &(struct tt_ann_part){{1, 0, 0}, {3, 1, 1}}, 64, &y, err, sizeof err);
    ok(tt_ann_ranges_overlap(&x, &y), "overlapping parts overlap");
    tt_ann_ranges_free(&x);
    tt_ann_ranges_free(&y);
  }
  tt_ann_free(a);
  part_uses();
  /* A divisor that is a parameter, zero at this launch. */
  a = parse("global i => read a[i / (n - 10)]", NULL);
  region(a, 0, 1, g1, l1, NULL, 0, 1, 64, "error: column 22: the divisor is not positive for this launch",
         "divisor zero at launch");
  tt_ann_free(a);
  a = parse("global i => read a(w, h)[i, 0]", NULL);
  region(a, 0, 1, g1, l1, NULL, 0, 1, 64, "error: the shape of parameter 0 holds 192 bytes, its buffer 64",
         "shape larger than the buffer");
  tt_ann_free(a);

  /* Rejections: syntax, names, affinity, types. */
  parse("", "column 1: expected 'global', 'group' or 'local'");
  parse("global i read a[i]", "column 10: expected '=>' or ','");
  parse("global i => read a[i", "column 21: expected ',' or ']'");
  parse("global i => read a[i]]", "column 22: expected ',' or the end");
  parse("global i => fetch a[i]", "column 13: expected 'read', 'write'");
  parse("global i => read q[i]", "column 18: unknown parameter 'q'");
  parse("global i => read a[j]", "column 20: unknown name 'j'");
  parse("global i => read n[i]", "'n' is not a __global or __constant pointer");
  parse("global i => read a[a]", "'a' is not an integer scalar parameter");
  parse("global i => read a[i * i]", "column 22: not affine: both sides of '*'");
  parse("global i => read a[n / i]", "not affine: the divisor uses a bound variable");
  parse("global i => read a[i / 0]", "column 24: the divisor must be positive");
  parse("global i => read a[i / NEG]", "the divisor must be positive");
  parse("global i => read a[i:2*i]", "not affine: the width of a slice");
  parse("global i => read a[i/2:i]", "not affine: the width of a slice");
  parse("global i => read a(i)[0]", "a shape must not use bound variables");
  parse("global i => read a(4, 4)[i]", "expected 2 indices for 'a', found 1");
  parse("global i => read a[i, i]", "expected 1 index for 'a', found 2");
  parse("global i => write a[i]", "'a' points to constant data");
  parse("global i => write cst[i]", "'cst' points to constant data");
  parse("global i => reduce(&) b[0]", "cannot reduce 'b' of type 'float'");
  parse("global i => reduce(+) bytes[0]", "cannot reduce 'bytes' of type 'char'");
  parse("global i => reduce(*) total[0]", "expected one of + min max & | ^");
  parse("global i => read st[i]", "cannot tell the element size of 'st'");
  parse("global i, local i => read a[i]", "variable 'i' bound twice");
  parse("global n => read a[n]", "hides the kernel parameter");
  parse("global [x, y, z, t] => read a[x]", "at most 3 variables");
  parse("global i => read a[1.5]", "expected an integer");
  parse("global i => read a[i], ", "expected 'read', 'write'");
  parse("global i => reduce(+) total[0], read total[0]", "column 33: 'total' is reduced");
  parse("global i => write total[i], reduce(+) total[0]", "'total' is reduced");

  /* Pragmas: stripped, line numbers kept, kernels named or next. */
  const char *src = "#define X 1\n"
                    "  #  pragma   tutti global i => read a[i], \\\n"
                    "    write c[i]\n"
                    "__kernel void first(__global const float *a, __global float *c) {}\n"
                    "#pragma tutti kernel second global i => write c[i]\n"
                    "#pragma tuttifrutti not ours\n"
                    "kernel void second(global float *c) {}\n"
                    "#pragma tutti global i => write c[i]\n";
  struct tt_ann_pragma *pr;
  size_t npr;
  char *out = tt_ann_strip(src, &pr, &npr);
  ok(out && npr == 3, "three pragmas found");
  int lines = 0;
  for (const char *s = out; s && *s; s++)
    lines += *s == '\n';
  ok(lines == 8 && strlen(out) == strlen(src), "line count and length kept");
  ok(out && !strstr(out, "tutti global") && strstr(out, "tuttifrutti"), "only tutti pragmas stripped");
  ok(npr == 3 && !strcmp(pr[0].kernel, "first") && pr[0].line == 2 &&
     !strcmp(pr[0].text, "global i => read a[i],      write c[i]") && pr[0].column == 21,
     "continued pragma belongs to the next kernel");
  ok(npr == 3 && !strcmp(pr[1].kernel, "second") && !strcmp(pr[1].text, "global i => write c[i]") &&
     pr[1].line == 5 && pr[1].column == 29, "named kernel, column after the name");
  ok(npr == 3 && pr[2].kernel == NULL, "a pragma after the last kernel names none");
  tt_ann_pragmas_free(pr, npr);
  free(out);

  /* -D macros. */
  struct tt_ann_macro *m;
  size_t nm = tt_ann_macros("-cl-fast-relaxed-math -DN=64 -D TILE=0x10 -DFLAG -DF=1.5 -I x", &m);
  ok(nm == 3 && !strcmp(m[0].name, "N") && m[0].value == 64 && !strcmp(m[1].name, "TILE") &&
     m[1].value == 16 && !strcmp(m[2].name, "FLAG") && m[2].value == 1,
     "integer -D macros (a float one left out)");
  free(m);
  ok(tt_ann_type_size("float4") == 16 && tt_ann_type_size("double3") == 32 &&
     tt_ann_type_size("unsigned int") == 4 && tt_ann_type_size("mystruct") == 0, "type sizes");

  free(params);
  printf("1..%d\n", count);
  return failures ? 1 : 0;
}
