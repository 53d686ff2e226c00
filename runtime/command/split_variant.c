/* Programs built for split launches (runtime/command/split_impl.h): variants whose prelude
 * answers the whole launch's builtins, and the kernels that combine reduce rules' partial
 * results. */
#include "config.h"

#include "runtime/command/split_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotations/partition.h"
#include "runtime/command/coherence.h"
#include "runtime/job/check.h"
#include "runtime/job/stats.h"
#include "runtime/memory/window.h"

/* --- programs built for split launches ------------------------------------------------------ */

bool tt_split_whole_builtins(const char *src)
{
  return strstr(src, "get_group_id") || strstr(src, "get_global_size") ||
         strstr(src, "get_num_groups") || strstr(src, "get_global_offset");
}

/* Builds a program from src for the kernel's program devices and makes kernel `name`. */
static cl_int build_variant(cl_kernel k, const char *src, const char *options, const char *name,
                            struct tt_variant *v)
{
  cl_int err = CL_SUCCESS;
  cl_program orig = k->program;
  v->program = tt_program_with_source(k->context, 1, &src, NULL, &err);
  if (v->program)
    err = tt_program_build(v->program, orig->ndevices, orig->devices, options, NULL, NULL);
  if (err == CL_SUCCESS)
    v->kernel = tt_kernel_new(v->program, name, &err);
  if (err != CL_SUCCESS)
    TT_WARN("building the split-launch %s of kernel '%s' failed (%s)",
            v->kind == VARIANT_SHAPE ? "variant" : "combining kernel", k->name, tt_error_name(err));
  return err;
}

/* The kernel's variant for its parts: with prelude, the program with a prelude that
 * answers get_global_offset, get_global_size, get_num_groups and get_group_id for the whole
 * launch of this shape (a part runs with the global offset of its first work-group, so
 * get_global_id is right natively); with *rebase, its parameters flagged there take windows
 * (tt_ann_rebase; *rebase becomes 0, for this and later launches, when the source cannot be
 * edited so); k itself when neither is left. Built once per shape and parameters; every rank
 * builds it at the same step. */
cl_int tt_split_variant(cl_kernel k, cl_uint dim, const size_t *off, const size_t *gws,
                      const size_t *lws, bool prelude, uint64_t *rebase, cl_kernel *out)
{
  static const size_t none[3] = {0, 0, 0};
  if (k->rebase_refused)
    *rebase = 0;
  if (!prelude && !*rebase) {
    *out = k;
    return CL_SUCCESS;
  }
  if (!prelude) {
    dim = 0;
    off = gws = lws = none;
  }
  for (struct tt_variant *v = k->variants; v; v = v->next)
    if (v->kind == VARIANT_SHAPE && v->prelude == prelude && v->rebase == *rebase &&
        v->work_dim == dim && !memcmp(v->off, off, sizeof v->off) &&
        !memcmp(v->gws, gws, sizeof v->gws) && !memcmp(v->lws, lws, sizeof v->lws)) {
      *out = v->kernel;
      return CL_SUCCESS;
    }
  const char *src = k->program->stripped;
  char *edited = NULL;
  if (*rebase) {
    bool flags[64] = {false};
    for (cl_uint i = 0; i < k->nargs && i < 64; i++)
      flags[i] = *rebase >> i & 1;
    edited = tt_ann_rebase(src, k->name, flags, k->nargs);
    if (!edited) {
      TT_LOG(TT_LOG_PLAN, "kernel '%s': its parameters cannot take windows (the source's "
             "parameter list is not plain): its parts use whole buffers", k->name);
      k->rebase_refused = true;
      return tt_split_variant(k, dim, off, gws, lws, prelude, rebase, out);
    }
    src = edited;
  }
  struct tt_variant *v = calloc(1, sizeof *v);
  size_t len = strlen(src) + 2048;
  char *text = malloc(len);
  if (!v || !text) {
    free(v);
    free(text);
    free(edited);
    return CL_OUT_OF_HOST_MEMORY;
  }
  *v = (struct tt_variant){.kind = VARIANT_SHAPE, .work_dim = dim, .prelude = prelude,
                           .rebase = *rebase};
  memcpy(v->off, off, sizeof v->off);
  memcpy(v->gws, gws, sizeof v->gws);
  memcpy(v->lws, lws, sizeof v->lws);
  if (!prelude)
    snprintf(text, len, "%s", src);
  else
    snprintf(text, len,
           "size_t __tutti_global_offset(uint d) { return d == 0 ? %zuUL : d == 1 ? %zuUL : "
           "d == 2 ? %zuUL : 0; }\n"
           "size_t __tutti_global_size(uint d) { return d == 0 ? %zuUL : d == 1 ? %zuUL : "
           "d == 2 ? %zuUL : 1; }\n"
           "size_t __tutti_num_groups(uint d) { return __tutti_global_size(d) / "
           "get_local_size(d); }\n"
           "size_t __tutti_group_id(uint d) { return (get_global_id(d) - get_local_id(d) - "
           "__tutti_global_offset(d)) / get_local_size(d); }\n"
           "#define get_global_offset(d) __tutti_global_offset(d)\n"
           "#define get_global_size(d) __tutti_global_size(d)\n"
           "#define get_num_groups(d) __tutti_num_groups(d)\n"
           "#define get_group_id(d) __tutti_group_id(d)\n"
           "#line 1\n%s",
           off[0], off[1], off[2], gws[0], gws[1], gws[2], src);
  free(edited);
  cl_int err = build_variant(k, text, k->program->options, k->name, v);
  free(text);
  v->next = k->variants;
  k->variants = v;
  *out = v->kernel;
  return err;
}

static const char *op_expr(enum tt_ann_op op, bool floating)
{
  switch (op) {
  case TT_ANN_ADD:
    return "a + b";
  case TT_ANN_MIN:
    return floating ? "fmin(a, b)" : "min(a, b)";
  case TT_ANN_MAX:
    return floating ? "fmax(a, b)" : "max(a, b)";
  case TT_ANN_AND:
    return "a & b";
  case TT_ANN_OR:
    return "a | b";
  case TT_ANN_XOR:
    return "a ^ b";
  }
  return "a";
}

/* The kernel combining a part's copy into the buffer for rule ri: reduce, dst[i] =
 * op(dst[i], src[i]) over the parameter's elements; merge, by `unit` (1 or 4) bytes, the bytes
 * where src differs from twin. Built once per kernel and kind. */
cl_int tt_split_combine_kernel(cl_kernel k, struct tt_ann_rule_info ri, size_t unit,
                               cl_kernel *out)
{
  bool merge = ri.mode == TT_ANN_MERGE;
  /* Reductions differ by operator and parameter, merges by unit only. */
  size_t key = merge ? ((size_t)1 << 40) | unit : ((size_t)ri.op << 32) | ri.param;
  for (struct tt_variant *v = k->variants; v; v = v->next)
    if (v->kind == VARIANT_COMBINE && v->rule == key) {
      *out = v->kernel;
      return CL_SUCCESS;
    }
  const struct tt_ann_param *prm = &k->params[ri.param];
  struct tt_variant *v = calloc(1, sizeof *v);
  TT_RETURN_IF(!v, CL_OUT_OF_HOST_MEMORY);
  *v = (struct tt_variant){.kind = VARIANT_COMBINE, .rule = key};
  char text[1024];
  if (merge && unit == 4)
    /* Each byte of a word that the part changed: a mask of the bytes differing. A byte an
     * earlier part changed otherwise is a race, flagged in raced[0]. */
    snprintf(text, sizeof text,
             "__kernel void tutti_combine(__global uint *dst, __global const uint *src, ulong first,\n"
             "                            __global const uint *twin, __global uint *raced)\n"
             "{ size_t i = first + get_global_id(0); uint s = src[i], t = twin[i], d = s ^ t;\n"
             "  if (!d) return;\n"
             "  uint m = ((d & 0xffu) ? 0xffu : 0u) | ((d & 0xff00u) ? 0xff00u : 0u) |\n"
             "           ((d & 0xff0000u) ? 0xff0000u : 0u) | ((d & 0xff000000u) ? 0xff000000u : 0u);\n"
             "  uint o = dst[i];\n"
             "  if (raced && ((o ^ t) & (o ^ s) & m)) raced[0] = 1u;\n"
             "  dst[i] = (o & ~m) | (s & m); }\n");
  else if (merge)
    snprintf(text, sizeof text,
             "__kernel void tutti_combine(__global uchar *dst, __global const uchar *src, ulong first,\n"
             "                            __global const uchar *twin, __global uint *raced)\n"
             "{ size_t i = first + get_global_id(0); uchar s = src[i], t = twin[i], o = dst[i];\n"
             "  if (s == t) return;\n"
             "  if (raced && o != t && o != s) raced[0] = 1u;\n"
             "  dst[i] = s; }\n");
  else
    snprintf(text, sizeof text,
             "%s#define OP(a, b) (%s)\n"
             "__kernel void tutti_combine(__global %s *dst, __global const %s *src, ulong first)\n"
             "{ size_t i = first + get_global_id(0); %s a = dst[i], b = src[i]; dst[i] = OP(a, b); }\n",
             strcmp(prm->type, "double") ? "" : "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
             op_expr(ri.op, prm->floating), prm->type, prm->type, prm->type);
  cl_int err = build_variant(k, text, "", "tutti_combine", v);
  v->next = k->variants;
  k->variants = v;
  *out = v->kernel;
  return err;
}

/* op's identity for the parameter's type, as a fill pattern of prm->size bytes. */
void tt_split_identity(const struct tt_ann_param *prm, enum tt_ann_op op, unsigned char *out)
{
  bool is64 = prm->size == 8;
  union {
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f;
    double d;
  } v = {.u64 = 0};
  if (op == TT_ANN_AND) {
    v.u64 = UINT64_MAX;
  } else if (op == TT_ANN_MIN || op == TT_ANN_MAX) {
    bool lo = op == TT_ANN_MAX; /* max starts from the lowest value */
    if (prm->floating && is64)
      v.d = lo ? -INFINITY : INFINITY;
    else if (prm->floating)
      v.f = lo ? -INFINITY : INFINITY;
    else if (prm->is_signed && is64)
      v.i64 = lo ? INT64_MIN : INT64_MAX;
    else if (prm->is_signed)
      v.i32 = lo ? INT32_MIN : INT32_MAX;
    else if (is64)
      v.u64 = lo ? 0 : UINT64_MAX;
    else
      v.u32 = lo ? 0 : UINT32_MAX;
  }
  memcpy(out, &v, prm->size);
}
