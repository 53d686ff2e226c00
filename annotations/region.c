/* Rules evaluated for one part of a launch: the byte ranges it reads or writes
 * (tt_ann_region), by interval arithmetic over the part's variable ranges (exact for affine
 * expressions that name each variable once, and for floor division by a positive constant,
 * both monotone). */
#include "config.h"

#include "annotations/annotation_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- evaluation ---------------------------------------------------------------------------- */

struct interval {
  int64_t lo, hi; /* inclusive */
};

static int64_t floor_div(int64_t a, int64_t c)
{
  int64_t q = a / c;
  if (a % c != 0 && (a < 0) != (c < 0))
    q--;
  return q;
}

static int64_t min4(int64_t a, int64_t b, int64_t c, int64_t d)
{
  int64_t m = a < b ? a : b;
  m = m < c ? m : c;
  return m < d ? m : d;
}

static int64_t max4(int64_t a, int64_t b, int64_t c, int64_t d)
{
  int64_t m = a > b ? a : b;
  m = m > c ? m : c;
  return m > d ? m : d;
}

/* The hull of e over the variables' ranges. Returns false for a divisor that is not
 * positive (*bad names it). */
static bool eval(const struct expr *e, const struct interval *vars, const struct eval_ctx *c,
                 struct interval *out, const struct expr **bad)
{
  struct interval a, b;
  switch (e->kind) {
  case E_NUM:
    *out = (struct interval){e->num, e->num};
    return true;
  case E_VAR:
    *out = vars[e->index];
    return true;
  case E_PARAM:
    *out = (struct interval){c->values[e->index], c->values[e->index]};
    return true;
  case E_LAUNCH:
    *out = (struct interval){c->launch[e->index], c->launch[e->index]};
    return true;
  case E_NEG:
    if (!eval(e->a, vars, c, &a, bad))
      return false;
    *out = (struct interval){-a.hi, -a.lo};
    return true;
  default:
    break;
  }
  if (!eval(e->a, vars, c, &a, bad) || !eval(e->b, vars, c, &b, bad))
    return false;
  switch (e->kind) {
  case E_ADD:
    *out = (struct interval){a.lo + b.lo, a.hi + b.hi};
    return true;
  case E_SUB:
    *out = (struct interval){a.lo - b.hi, a.hi - b.lo};
    return true;
  case E_MUL:
    *out = (struct interval){min4(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi),
                             max4(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi)};
    return true;
  case E_DIV:
    /* The divisor is free of variables: one value. */
    if (b.lo <= 0) {
      *bad = e;
      return false;
    }
    *out = (struct interval){floor_div(a.lo, b.lo), floor_div(a.hi, b.lo)};
    return true;
  default:
    return false;
  }
}

/* `a:b` needs b - a independent of the variables. Checked by evaluating both ends at fixed
 * pseudo-random points (the same on every rank): parameters take several values, and for
 * each the width must not change with the variables. */
bool tt_ann_width_constant(const struct expr *lo, const struct expr *hi, size_t nparams)
{
  if (!lo || !hi || (!lo->has_var && !hi->has_var))
    return true;
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  int64_t *values = calloc(nparams ? nparams : 1, sizeof *values);
  if (!values)
    return true;
  struct eval_ctx c = {values, {0}};
  bool ok = true;
  for (int round = 0; round < 6 && ok; round++) {
    for (size_t i = 0; i < nparams; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      values[i] = 1 + (int64_t)((seed >> 33) % 997);
    }
    for (size_t i = 0; i < L_COUNT * 3; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      c.launch[i] = 1 + (int64_t)((seed >> 33) % 997);
    }
    bool have = false;
    int64_t width = 0;
    for (int sample = 0; sample < 8 && ok; sample++) {
      struct interval vars[MAX_VARS];
      for (unsigned v = 0; v < MAX_VARS; v++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        int64_t x = (int64_t)((seed >> 33) % 4093);
        vars[v] = (struct interval){x, x};
      }
      struct interval a, b;
      const struct expr *bad;
      if (!eval(lo, vars, &c, &a, &bad) || !eval(hi, vars, &c, &b, &bad))
        continue;
      if (have && b.lo - a.lo != width)
        ok = false;
      width = b.lo - a.lo;
      have = true;
    }
  }
  free(values);
  return ok;
}

/* --- regions ------------------------------------------------------------------------------- */

void tt_ann_ranges_free(struct tt_ann_ranges *r)
{
  free(r->r);
  r->r = NULL;
  r->n = r->cap = 0;
}

int tt_ann_ranges_add(struct tt_ann_ranges *out, size_t off, size_t len)
{
  if (!len)
    return 0;
  if (out->n && out->r[out->n - 1].off + out->r[out->n - 1].len == off) {
    out->r[out->n - 1].len += len;
    return 0;
  }
  if (out->n == out->cap) {
    size_t cap = out->cap ? out->cap * 2 : 8;
    struct tt_ann_range *r = realloc(out->r, cap * sizeof *r);
    if (!r)
      return -1;
    out->r = r;
    out->cap = cap;
  }
  out->r[out->n++] = (struct tt_ann_range){off, len};
  return 0;
}

static int oom(char *err, size_t errlen)
{
  snprintf(err, errlen, "out of memory");
  return -1;
}

void tt_ann_eval_ctx(const struct tt_ann_launch *l, struct eval_ctx *c)
{
  c->values = l->values;
  for (unsigned d = 0; d < 3; d++) {
    bool in = d < l->work_dim;
    size_t g = in ? l->global[d] : 1, ls = in && l->local[d] ? l->local[d] : 1;
    c->launch[L_GLOBAL_SIZE * 3 + d] = (int64_t)g;
    c->launch[L_LOCAL_SIZE * 3 + d] = (int64_t)ls;
    c->launch[L_NUM_GROUPS * 3 + d] = (int64_t)(g / ls);
    c->launch[L_GLOBAL_OFFSET * 3 + d] = in ? (int64_t)l->offset[d] : 0;
  }
}

static struct interval var_range(const struct var *v, const struct tt_ann_launch *l,
                                 const struct tt_ann_part *p, const struct eval_ctx *c)
{
  if (v->space == TT_ANN_RANGE) {
    /* A loop's counter: [lo, hi); an empty loop counts as its first value (a wider region,
     * never a narrower one). */
    struct interval lo, hi;
    const struct expr *bad;
    if (!eval(v->lo, NULL, c, &lo, &bad) || !eval(v->hi, NULL, c, &hi, &bad))
      return (struct interval){0, 0};
    return (struct interval){lo.lo, hi.hi - 1 < lo.lo ? lo.lo : hi.hi - 1};
  }
  unsigned d = v->axis;
  if (d >= l->work_dim)
    return (struct interval){0, 0};
  int64_t lo = (int64_t)p->group_lo[d], hi = (int64_t)p->group_hi[d] - 1;
  int64_t ls = (int64_t)l->local[d];
  switch (v->space) {
  case TT_ANN_GLOBAL:
    return (struct interval){(int64_t)l->offset[d] + lo * ls, (int64_t)l->offset[d] + (hi + 1) * ls - 1};
  case TT_ANN_GROUP:
    return (struct interval){lo, hi};
  case TT_ANN_LOCAL:
    return (struct interval){0, ls - 1};
  default:
    break;
  }
  return (struct interval){0, 0};
}

int tt_ann_region(const struct tt_ann *a, size_t rule, const struct tt_ann_launch *l,
                  const struct tt_ann_part *p, size_t buffer_bytes, struct tt_ann_ranges *out,
                  char *err, size_t errlen)
{
  const struct rule *r = &a->rules[rule];
  struct eval_ctx c;
  tt_ann_eval_ctx(l, &c);
  struct interval vars[MAX_VARS];
  for (unsigned i = 0; i < a->nvars; i++)
    vars[i] = var_range(&a->vars[i], l, p, &c);
  const struct expr *bad = NULL;
  /* The shape: extents per axis, row-major; without one, the buffer's elements. */
  int64_t extent[3] = {1, 1, 1};
  uint64_t elements = 1;
  for (unsigned d = 0; d < r->ndims; d++) {
    if (r->shape[d]) {
      struct interval v;
      if (!eval(r->shape[d], vars, &c, &v, &bad))
        goto divisor;
      extent[d] = v.lo < 0 ? 0 : v.lo;
    } else {
      extent[d] = (int64_t)(buffer_bytes / r->elem);
    }
    elements *= (uint64_t)extent[d];
  }
  if (elements * r->elem > buffer_bytes) {
    snprintf(err, errlen, "the shape of parameter %u holds %llu bytes, its buffer %zu", r->param,
             (unsigned long long)(elements * r->elem), buffer_bytes);
    return -1;
  }
  /* The hull per axis, [lo, hi), clamped to the extent. */
  int64_t lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
  for (unsigned d = 0; d < r->ndims; d++) {
    const struct slice *s = &r->index[d];
    struct interval v;
    if (s->lo) {
      if (!eval(s->lo, vars, &c, &v, &bad))
        goto divisor;
      lo[d] = v.lo;
      hi[d] = v.hi + 1;
    } else {
      lo[d] = 0;
    }
    if (s->range) {
      if (s->hi) {
        if (!eval(s->hi, vars, &c, &v, &bad))
          goto divisor;
        hi[d] = v.hi;
      } else {
        hi[d] = extent[d];
      }
    }
    lo[d] = lo[d] < 0 ? 0 : lo[d] > extent[d] ? extent[d] : lo[d];
    hi[d] = hi[d] < lo[d] ? lo[d] : hi[d] > extent[d] ? extent[d] : hi[d];
    if (lo[d] == hi[d])
      return 0;
  }
  /* One range per row of the rectangle; whole rows (and whole planes) in one. */
  size_t es = r->elem;
  size_t e1 = (size_t)extent[1], e2 = (size_t)extent[2];
  if (r->ndims == 1)
    return tt_ann_ranges_add(out, (size_t)lo[0] * es, (size_t)(hi[0] - lo[0]) * es)
               ? oom(err, errlen) : 0;
  bool whole2 = lo[r->ndims - 1] == 0 && hi[r->ndims - 1] == extent[r->ndims - 1];
  if (r->ndims == 2) {
    if (whole2)
      return tt_ann_ranges_add(out, (size_t)lo[0] * e1 * es, (size_t)(hi[0] - lo[0]) * e1 * es)
                 ? oom(err, errlen) : 0;
    for (int64_t y = lo[0]; y < hi[0]; y++)
      if (tt_ann_ranges_add(out, ((size_t)y * e1 + (size_t)lo[1]) * es, (size_t)(hi[1] - lo[1]) * es))
        return oom(err, errlen);
    return 0;
  }
  bool whole1 = whole2 && lo[1] == 0 && hi[1] == extent[1];
  for (int64_t z = lo[0]; z < hi[0]; z++) {
    if (whole1) {
      if (tt_ann_ranges_add(out, (size_t)z * e1 * e2 * es, (size_t)(hi[0] - lo[0]) * e1 * e2 * es))
        return oom(err, errlen);
      break;
    }
    for (int64_t y = lo[1]; y < hi[1]; y++) {
      size_t row = ((size_t)z * e1 + (size_t)y) * e2;
      if (whole2) {
        if (tt_ann_ranges_add(out, row * es, (size_t)(hi[1] - lo[1]) * e2 * es))
          return oom(err, errlen);
        break;
      }
      if (tt_ann_ranges_add(out, (row + (size_t)lo[2]) * es, (size_t)(hi[2] - lo[2]) * es))
        return oom(err, errlen);
    }
  }
  return 0;
divisor:
  snprintf(err, errlen, "column %d: the divisor is not positive for this launch", bad->column);
  return -1;
}

/* One range into r (whose list is empty). */
static int only_range(struct tt_ann_ranges *r, size_t off, size_t len)
{
  if (!(r->r = malloc(sizeof *r->r)))
    return -2;
  r->r[0] = (struct tt_ann_range){off, len};
  r->n = r->cap = 1;
  return 0;
}

static int by_offset(const void *x, const void *y)
{
  const struct tt_ann_range *a = x, *b = y;
  return a->off < b->off ? -1 : a->off > b->off;
}

void tt_ann_ranges_normalize(struct tt_ann_ranges *r)
{
  if (r->n < 2)
    return;
  qsort(r->r, r->n, sizeof *r->r, by_offset);
  size_t n = 1;
  for (size_t i = 1; i < r->n; i++) {
    struct tt_ann_range *last = &r->r[n - 1];
    if (r->r[i].off <= last->off + last->len) {
      size_t end = r->r[i].off + r->r[i].len;
      if (end > last->off + last->len)
        last->len = end - last->off;
    } else {
      r->r[n++] = r->r[i];
    }
  }
  r->n = n;
}

int tt_ann_part_uses(const struct tt_ann *a, const struct tt_ann_launch *l,
                     const struct tt_ann_part *p, const struct tt_ann_buffer *b, size_t max_reads,
                     struct tt_ann_ranges *reads, struct tt_ann_ranges *writes,
                     struct tt_ann_ranges *reduce, bool *named, char *err, size_t errlen)
{
  *named = false;
  size_t nrules = tt_ann_nrules(a);
  for (size_t r = 0; r < nrules; r++) {
    struct tt_ann_rule_info ri = tt_ann_rule(a, r);
    if (ri.param != b->param)
      continue;
    *named = true;
    struct tt_ann_ranges *to = ri.mode == TT_ANN_REDUCE || ri.mode == TT_ANN_MERGE ? &reduce[r]
                               : ri.mode == TT_ANN_READ ? reads : writes;
    int rc = tt_ann_region(a, r, l, p, b->size, to, err, errlen);
    if (!rc && ri.mode == TT_ANN_READWRITE)
      rc = tt_ann_region(a, r, l, p, b->size, reads, err, errlen);
    if (rc)
      return rc;
  }
  if (!*named) {
    if (only_range(reads, 0, b->size) || (b->writable && only_range(writes, 0, b->size))) {
      oom(err, errlen);
      return -2;
    }
    return 0;
  }
  /* Several rules may name one buffer. */
  tt_ann_ranges_normalize(reads);
  tt_ann_ranges_normalize(writes);
  if (reads->n > max_reads) {
    size_t lo = reads->r[0].off, hi = 0;
    for (size_t j = 0; j < reads->n; j++) {
      lo = reads->r[j].off < lo ? reads->r[j].off : lo;
      hi = reads->r[j].off + reads->r[j].len > hi ? reads->r[j].off + reads->r[j].len : hi;
    }
    reads->r[0] = (struct tt_ann_range){lo, hi - lo};
    reads->n = 1;
  }
  return 0;
}

bool tt_ann_ranges_overlap(const struct tt_ann_ranges *a, const struct tt_ann_ranges *b)
{
  size_t i = 0, j = 0;
  while (i < a->n && j < b->n) {
    const struct tt_ann_range *x = &a->r[i], *y = &b->r[j];
    if (x->off < y->off + y->len && y->off < x->off + x->len)
      return true;
    if (x->off + x->len <= y->off + y->len)
      i++;
    else
      j++;
  }
  return false;
}
