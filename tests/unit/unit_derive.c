/* Annotations derived from kernels' code (annotations/derive.h), as a table: the six kernels
 * of apps/split with their pragmas removed give rules whose regions equal the written ones'
 * at several launches and cuts into parts (reads may only be wider), and kernels that must
 * fall to merged writes or run whole do, saying why. Needs libclang (no OpenCL, no MPI):
 * without it the test is skipped with a message. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotations/annotation.h"
#include "annotations/derive.h"
#include "apps/split_kernels.h"
#include "tests/unit/unit.h"

static const struct tt_clang *cx;

/* A launch of one kernel: its shape, scalar values and buffer sizes by parameter name. */
struct launch {
  const char *kernel;
  unsigned dim;
  size_t global[3], local[3];
  struct {
    const char *name;
    int64_t value; /* a scalar's value, or a buffer's bytes */
  } args[8];
};

static int64_t arg_of(const struct launch *l, const char *name, bool *found)
{
  for (int i = 0; i < 8 && l->args[i].name; i++)
    if (!strcmp(l->args[i].name, name)) {
      *found = true;
      return l->args[i].value;
    }
  *found = false;
  return 0;
}

/* Whether every byte of b is in a (sorted ranges). */
static bool covers(const struct tt_ann_ranges *a, const struct tt_ann_ranges *b)
{
  for (size_t j = 0; j < b->n; j++) {
    size_t at = b->r[j].off, end = b->r[j].off + b->r[j].len;
    for (size_t i = 0; i < a->n && at < end; i++)
      if (a->r[i].off <= at && a->r[i].off + a->r[i].len > at)
        at = a->r[i].off + a->r[i].len;
    if (at < end)
      return false;
  }
  return true;
}

static bool equal(const struct tt_ann_ranges *a, const struct tt_ann_ranges *b)
{
  return covers(a, b) && covers(b, a);
}

/* Compares written and derived rules of l's kernel for its buffers, over 1 to 4 parts. */
static void compare(const char *src, const struct tt_ann_pragma *pr, size_t npr,
                    const struct tt_derived *d, long nd, const struct launch *l)
{
  const char *written = NULL, *derived = NULL;
  for (size_t i = 0; i < npr; i++)
    if (pr[i].kernel && !strcmp(pr[i].kernel, l->kernel))
      written = pr[i].text;
  for (long i = 0; i < nd; i++)
    if (!strcmp(d[i].name, l->kernel)) {
      derived = d[i].text;
      CHECK(d[i].tier == TT_TIER_REGIONS);
    }
  CHECK(written && derived);
  if (!written || !derived)
    return;
  struct tt_ann_param *params;
  long np = tt_ann_kernel_params(src, l->kernel, &params);
  CHECK(np > 0);
  char err[256];
  struct tt_ann *w = tt_ann_parse(written, params, (size_t)np, NULL, 0, err, sizeof err);
  struct tt_ann *v = tt_ann_parse(derived, params, (size_t)np, NULL, 0, err, sizeof err);
  if (!v)
    fprintf(stderr, "%s: derived '%s' does not parse: %s\n", l->kernel, derived, err);
  CHECK(w && v);
  int64_t values[16] = {0};
  for (long i = 0; i < np; i++) {
    bool found;
    values[i] = arg_of(l, params[i].name, &found);
  }
  struct tt_ann_launch ln = {l->dim, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, values};
  for (unsigned k = 0; k < l->dim; k++) {
    ln.global[k] = l->global[k];
    ln.local[k] = l->local[k];
  }
  size_t G = l->global[l->dim - 1] / l->local[l->dim - 1];
  for (size_t nparts = 1; w && v && nparts <= 4; nparts++)
    for (size_t p = 0; p < nparts; p++) {
      struct tt_ann_part part;
      for (unsigned k = 0; k < 3; k++) {
        part.group_lo[k] = 0;
        part.group_hi[k] = k < l->dim ? l->global[k] / l->local[k] : 1;
      }
      part.group_lo[l->dim - 1] = G * p / nparts;
      part.group_hi[l->dim - 1] = G * (p + 1) / nparts;
      for (long i = 0; i < np; i++) {
        if (!params[i].pointer)
          continue;
        bool found;
        size_t bytes = (size_t)arg_of(l, params[i].name, &found);
        struct tt_ann_buffer b = {(unsigned)i, bytes, !params[i].is_const};
        struct tt_ann_ranges wr = {0}, ww = {0}, vr = {0}, vw = {0};
        struct tt_ann_ranges wred[16] = {{0}}, vred[16] = {{0}};
        bool named;
        int rc1 = tt_ann_part_uses(w, &ln, &part, &b, SIZE_MAX, &wr, &ww, wred, &named, err,
                                   sizeof err);
        int rc2 = tt_ann_part_uses(v, &ln, &part, &b, SIZE_MAX, &vr, &vw, vred, &named, err,
                                   sizeof err);
        CHECK(rc1 == 0 && rc2 == 0);
        bool ok = equal(&ww, &vw) && covers(&vr, &wr);
        /* The reduce regions: written rule r and derived rule s of this parameter. */
        size_t r = tt_ann_reduce_rule(w, (unsigned)i), s = tt_ann_reduce_rule(v, (unsigned)i);
        CHECK((r == SIZE_MAX) == (s == SIZE_MAX));
        if (r != SIZE_MAX && s != SIZE_MAX)
          ok = ok && equal(&wred[r], &vred[s]) && tt_ann_rule(w, r).op == tt_ann_rule(v, s).op;
        if (!ok)
          fprintf(stderr, "%s, parameter %s, part %zu of %zu: derived '%s' differs from "
                  "written '%s'\n", l->kernel, params[i].name, p, nparts, derived, written);
        CHECK(ok);
        tt_ann_ranges_free(&wr);
        tt_ann_ranges_free(&ww);
        tt_ann_ranges_free(&vr);
        tt_ann_ranges_free(&vw);
        for (int j = 0; j < 16; j++) {
          tt_ann_ranges_free(&wred[j]);
          tt_ann_ranges_free(&vred[j]);
        }
      }
    }
  tt_ann_free(w);
  tt_ann_free(v);
  free(params);
}

static void split_apps(void)
{
  struct tt_ann_pragma *pr;
  size_t npr;
  char *src = tt_ann_strip(split_source, &pr, &npr);
  CHECK(src && npr == 6);
  struct tt_derived *d;
  char why[256];
  long nd = tt_derive(cx, src, "", &d, why, sizeof why);
  if (nd < 0)
    fprintf(stderr, "apps/split does not derive: %s\n", why);
  CHECK(nd == 6);
  const int n = 1000, w = 64, h = 48, mn = 24, mk = 16, mm = 32, bins = 16, pts = 256, dd = 4,
            kk = 5;
  const struct launch launches[] = {
    {"vecadd", 1, {n}, {8}, {{"a", 4 * n}, {"b", 4 * n}, {"c", 4 * n}}},
    {"vecadd", 1, {n}, {1}, {{"a", 4 * n}, {"b", 4 * n}, {"c", 4 * n}}},
    {"jacobi", 2, {w, h}, {8, 1}, {{"in", 4 * w * h}, {"out", 4 * w * h}, {"w", w}, {"h", h}}},
    {"jacobi", 2, {w, h}, {16, 4}, {{"in", 4 * w * h}, {"out", 4 * w * h}, {"w", w}, {"h", h}}},
    {"matmul", 2, {mm, mn}, {8, 4},
     {{"A", 4 * mn * mk}, {"B", 4 * mk * mm}, {"C", 4 * mn * mm}, {"n", mn}, {"k", mk}, {"m", mm}}},
    {"histogram", 1, {1024}, {64}, {{"x", 4 * 1024}, {"hist", 4 * bins}, {"nbins", bins}}},
    {"kmeans", 1, {pts}, {64},
     {{"pts", 4 * pts * dd}, {"cent", 4 * kk * dd}, {"sums", 8 * kk * dd}, {"counts", 4 * kk},
      {"n", pts}, {"d", dd}, {"k", kk}}},
    {"nbody", 1, {pts}, {32},
     {{"pos", 16 * pts}, {"vel", 16 * pts}, {"npos", 16 * pts}, {"nvel", 16 * pts}, {"n", pts}}},
  };
  for (size_t i = 0; nd == 6 && i < sizeof launches / sizeof *launches; i++)
    compare(src, pr, npr, d, nd, &launches[i]);
  if (nd > 0)
    tt_derived_free(d, (size_t)nd);
  tt_ann_pragmas_free(pr, npr);
  free(src);
}

/* Kernels and what they must become: a tier, and words its annotation or its reason holds. */
static const char *const shapes =
    "float twice(float v) { return 2.0f * v; }\n"
    "int at(int row, int col, int width) { return row * width + col; }\n"
    "__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int n)\n"
    "{ int i = get_global_id(0); if (i < n) c[i] = a[i] + b[i]; }\n"
    "__kernel void helper(__global const float *in, __global float *out, int w)\n"
    "{ int x = get_global_id(0), y = get_global_id(1);\n"
    "  out[at(y, x, w)] = twice(in[at(y - 1, x, w)]); }\n"
    "__kernel void macro(__global const float4 *a, __global float4 *b)\n"
    "{ int i = get_global_id(0); for (int t = 0; t < K; t++) b[i * K + t] = a[i * K + t]; }\n"
    "__kernel void scatter(__global const float *src, __global const int *perm, __global float *dst)\n"
    "{ int i = get_global_id(0); dst[perm[i]] = src[i]; }\n"
    "__kernel void until(__global const int *len, __global float *y, int w)\n"
    "{ int i = get_global_id(0); for (int j = 0; j < len[0]; j++) y[i * w + j] = 1.0f; }\n"
    "__kernel void bounded(__global const int *len, __global const float *x, __global float *y)\n"
    "{ int i = get_global_id(0); float s = 0; for (int j = 0; j < len[i]; j++) s += x[j]; y[i] = s; }\n"
    "__kernel void ticket(__global int *count, __global int *out)\n"
    "{ int slot = atomic_inc(count); out[slot] = get_global_id(0); }\n"
    "__kernel void xchg(__global int *x) { atomic_xchg(&x[get_global_id(0) % 7], 1); }\n"
    "__kernel void hist(__global const uchar *x, __global uint *bins)\n"
    "{ atomic_inc(&bins[x[get_global_id(0)]]); }\n"
    "__kernel void neighbour(__global const int *perm, __global float *a)\n"
    "{ int i = get_global_id(0); a[perm[i]] = a[i + 1]; }\n"
    "__kernel void wgsum(__global const float *x, __global float *sums, __local float *tmp)\n"
    "{ int l = get_local_id(0); tmp[l] = x[get_global_id(0)]; barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (l == 0) sums[get_group_id(0)] = tmp[0] + tmp[1]; }\n"
    "__kernel void vec(__global const float *x, __global float *y)\n"
    "{ int i = get_global_id(0); vstore4(vload4(i, x) * 2.0f, i, y); }\n"
    "void setit(int *x, int v) { *x = v; }\n"
    "__kernel void escape(__global float *out)\n"
    "{ int j = get_global_id(0); setit(&j, 5); out[j] = 1.0f; }\n"
    "#define ROW(y) y * w\n"
    "__kernel void inmacro(__global const float *in, __global float *out, int w)\n"
    "{ int x = get_global_id(0), y = get_global_id(1); out[ROW(y) + x] = in[ROW(y) + x]; }\n";

static const struct {
  const char *kernel;
  enum tt_tier tier;
  const char *holds; /* in the annotation (tiers 1, 2) or the reason (whole) */
} expected[] = {
  {"vadd", TT_TIER_REGIONS, "read a[_g0], read b[_g0], readwrite c[_g0]"},
  /* Rows of a 2-D range may be narrower than w: the part's device first gets what it writes. */
  {"helper", TT_TIER_REGIONS, "read in[w*_g1 - w + _g0], readwrite out[w*_g1 + _g0]"},
  {"macro", TT_TIER_REGIONS, "_t0 in 0:4 => read a[4*_g0 + _t0], readwrite b[4*_g0 + _t0]"},
  {"scatter", TT_TIER_MERGED, "read src[_g0], read perm[_g0], merge dst[:]"},
  {"until", TT_TIER_MERGED, "read len[0], merge y[:]"},
  {"bounded", TT_TIER_REGIONS, "read len[_g0], read x[:], write y[_g0]"},
  {"ticket", TT_TIER_WHOLE, "global atomics on 'count' are not a reduction"},
  {"xchg", TT_TIER_WHOLE, "global atomics on 'x' are not a reduction"},
  {"hist", TT_TIER_REGIONS, "reduce(+) bins[:]"},
  {"neighbour", TT_TIER_WHOLE, "reads 'a' where other work-groups may write it"},
  {"wgsum", TT_TIER_REGIONS, "readwrite sums[_w0]"},
  {"vec", TT_TIER_REGIONS, "read x[4*_g0 : 4*_g0 + 4], write y[4*_g0 : 4*_g0 + 4]"},
  /* A variable whose address a helper writes through is unknown from there on. */
  {"escape", TT_TIER_MERGED, "merge out[:]"},
  /* An operator spelled inside a macro's expansion is not told apart: unknown, never wrong. */
  {"inmacro", TT_TIER_MERGED, "read in[:], merge out[:]"},
};

static void shapes_table(void)
{
  struct tt_derived *d;
  char why[256];
  long nd = tt_derive(cx, shapes, "-D K=4 -cl-fast-relaxed-math", &d, why, sizeof why);
  CHECK(nd == (long)(sizeof expected / sizeof *expected));
  for (size_t e = 0; nd > 0 && e < sizeof expected / sizeof *expected; e++) {
    const struct tt_derived *k = NULL;
    for (long i = 0; i < nd; i++)
      if (!strcmp(d[i].name, expected[e].kernel))
        k = &d[i];
    CHECK(k);
    if (!k)
      continue;
    const char *said = k->tier == TT_TIER_WHOLE ? k->why : k->text;
    bool ok = k->tier == expected[e].tier && said && strstr(said, expected[e].holds);
    if (!ok)
      fprintf(stderr, "%s: %s '%s', expected %s '%s'\n", k->name, tt_tier_name(k->tier),
              said ? said : "", tt_tier_name(expected[e].tier), expected[e].holds);
    CHECK(ok);
    /* What was derived parses, and a tier-1 kernel that writes has its merged alternative. */
    struct tt_ann_param *params;
    long np = tt_ann_kernel_params(shapes, k->name, &params);
    struct tt_ann_macro macro = {"K", 4};
    char err[256];
    for (int alt = 0; alt < 2 && np >= 0; alt++) {
      const char *text = alt ? k->merged : k->text;
      if (!text)
        continue;
      struct tt_ann *a = tt_ann_parse(text, params, (size_t)np, &macro, 1, err, sizeof err);
      if (!a)
        fprintf(stderr, "%s: '%s' does not parse: %s\n", k->name, text, err);
      CHECK(a);
      tt_ann_free(a);
    }
    free(params);
  }
  const struct tt_derived *v = NULL;
  for (long i = 0; i < nd; i++)
    v = strcmp(d[i].name, "vadd") ? v : &d[i];
  CHECK(v && v->merged && strstr(v->merged, "merge c[:]"));
  if (nd > 0)
    tt_derived_free(d, (size_t)nd);
  /* A source clang cannot parse says so. */
  CHECK(tt_derive(cx, "__kernel void k(__global float *a) { a[0] = undefined_name; }", "", &d,
                  why, sizeof why) == -1 &&
        strstr(why, "undefined_name"));
}

/* The language's loop ranges: `_t in lo:hi` over a part gives the hull. */
static void loop_ranges(void)
{
  struct tt_ann_param params[2] = {{"a", "float", true, true, 4, false, true, true},
                                   {"k", "int", false, false, 4, true, true, false}};
  char err[256];
  struct tt_ann *a = tt_ann_parse("global i, t in 0:k => read a[i * k + t]", params, 2, NULL, 0,
                                  err, sizeof err);
  CHECK(a);
  int64_t values[2] = {0, 5};
  struct tt_ann_launch l = {1, {0}, {8, 1, 1}, {4, 1, 1}, values};
  struct tt_ann_part p = {{1, 0, 0}, {2, 1, 1}}; /* group 1: items 4..7 */
  struct tt_ann_ranges r = {0};
  CHECK(a && tt_ann_region(a, 0, &l, &p, 4 * 40, &r, err, sizeof err) == 0);
  CHECK(r.n == 1 && r.r[0].off == 4 * 20 && r.r[0].len == 4 * 20);
  tt_ann_ranges_free(&r);
  tt_ann_free(a);
  a = tt_ann_parse("global i => read a[i * get_local_size(0) + t]", params, 2, NULL, 0, err,
                   sizeof err);
  CHECK(!a && strstr(err, "unknown name 't'"));
}

int main(void)
{
  char why[256];
  cx = tt_clang_open(getenv("TUTTI_LIBCLANG"), why, sizeof why);
  loop_ranges();
  if (!cx) {
    printf("unit_derive: skipped: %s\n", why);
    return failures ? 1 : 77;
  }
  split_apps();
  shapes_table();
  printf("unit_derive: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
