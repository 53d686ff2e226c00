/* Reductions and merges of split launches (runtime/command/split_impl.h): the private copies
 * of reduced and merged parameters, merged parameters' twins, and the kernels combining the
 * copies into the buffers in part order (doc/split.md, "reduce" and "Automatic splitting"). */
#include "config.h"

#include "runtime/command/split_impl.h"

#include <stdio.h>
#include <stdlib.h>

#include "runtime/base/log.h"
#include "runtime/command/coherence.h"
#include "runtime/job/cluster.h"
#include "runtime/job/stats.h"
#include "runtime/memory/window.h"

/* A buffer of `end` bytes private to a part (or a twin): windowed, so that it lives on its
 * part's device only, within that device's budget. */
cl_mem tt_split_private_copy(cl_context ctx, size_t end, cl_int *err)
{
  cl_mem m = tt_buffer_new(ctx, CL_MEM_READ_WRITE, end ? end : 1, NULL, false, err);
  if (m) {
    m->transient = true;
    tt_plan_lock();
    tt_window_enable(m);
    tt_plan_unlock();
  }
  return m;
}

/* The ranges of rule r over every part, sorted and merged (what its twin must hold). */
static int rule_union(const struct split *s, size_t r, struct tt_ann_ranges *out)
{
  for (size_t p = 0; p < s->nparts; p++) {
    const struct tt_ann_ranges *rg = &s->reduce[p * s->nrules + r];
    for (size_t j = 0; j < rg->n; j++)
      if (tt_ann_ranges_add(out, rg->r[j].off, rg->r[j].len))
        return -1;
  }
  tt_ann_ranges_normalize(out);
  return 0;
}

/* Merge rule r's twin: the buffer's bytes of every part's region, copied on q0's device. The
 * parts' copies are made from it, so that they start byte for byte alike even where nothing
 * ever wrote the buffer (OpenCL leaves those bytes undefined, and each device's memory holds
 * its own). */
cl_int tt_split_merge_twin(struct split *s, size_t r, cl_command_queue q0, cl_mem own, cl_mem *twin)
{
  struct tt_ann_ranges u = {0};
  if (rule_union(s, r, &u)) {
    tt_ann_ranges_free(&u);
    return CL_OUT_OF_HOST_MEMORY;
  }
  cl_int err = CL_SUCCESS;
  size_t end = u.n ? u.r[u.n - 1].off + u.r[u.n - 1].len : 0;
  *twin = tt_split_private_copy(s->k->context, end, &err);
  for (size_t j = 0; j < u.n && err == CL_SUCCESS; j++)
    err = tt_cmd_copy(q0, own, *twin, u.r[j].off, u.r[j].off, u.r[j].len, 0, NULL, NULL);
  tt_ann_ranges_free(&u);
  return err;
}

/* Combines rule r's part copies into the buffer dst on q0, in part order: reduce, dst =
 * op(dst, part); merge, the bytes where the part's copy differs from the twin. Two parts that
 * changed one byte differently raced (OpenCL leaves the result undefined): the later part's
 * byte is kept, the same on every rank. */
cl_int tt_split_combine(struct split *s, size_t r, cl_command_queue q0, cl_mem dst, cl_mem twin,
                      cl_mem *partials, cl_event *evs, size_t *nevs)
{
  cl_kernel k = s->k;
  struct tt_ann_rule_info ri = tt_ann_rule(s->ann, r);
  bool merge = ri.mode == TT_ANN_MERGE;
  size_t es = merge ? 1 : k->params[ri.param].size;
  cl_int err = CL_SUCCESS;
  /* TUTTI_DEBUG=warn: a flag the merges set when two parts changed a byte differently, read
   * after them (the launch then waits for its merges). */
  cl_mem raced = NULL;
  cl_uint flag = 0;
  if (merge && (tt_env()->debug & TT_LOG_WARN)) {
    raced = tt_buffer_new(k->context, CL_MEM_READ_WRITE, sizeof flag, NULL, false, &err);
    if (raced)
      err = tt_cmd_fill(q0, raced, &flag, sizeof flag, 0, sizeof flag, 0, NULL, NULL);
  }
  for (size_t p = 0; p < s->nparts && err == CL_SUCCESS; p++) {
    const struct tt_ann_ranges *rg = &s->reduce[p * s->nrules + r];
    cl_mem src = partials[p * s->nrules + r];
    for (size_t j = 0; j < rg->n && err == CL_SUCCESS; j++) {
      size_t o = rg->r[j].off, len = rg->r[j].len;
      /* Merges by 32-bit words where the range allows, else by bytes. */
      size_t unit = merge ? (o % 4 == 0 && len % 4 == 0 ? 4 : 1) : es;
      cl_kernel ck = NULL;
      err = tt_split_combine_kernel(k, ri, unit, &ck);
      cl_ulong first = o / unit;
      size_t n = len / unit;
      struct tt_launch_use u[4] = {{dst, o, len, true, true},
                                   {src, o, len, true, false},
                                   {twin, o, len, true, false},
                                   {raced, 0, sizeof flag, true, true}};
      if (err == CL_SUCCESS)
        err = tt_kernel_arg_set(ck, 0, sizeof dst, &dst);
      if (err == CL_SUCCESS)
        err = tt_kernel_arg_set(ck, 1, sizeof src, &src);
      if (err == CL_SUCCESS)
        err = tt_kernel_arg_set(ck, 2, sizeof first, &first);
      if (err == CL_SUCCESS && merge)
        err = tt_kernel_arg_set(ck, 3, sizeof twin, &twin);
      if (err == CL_SUCCESS && merge)
        err = tt_kernel_arg_set(ck, 4, sizeof raced, &raced);
      if (err == CL_SUCCESS && q0->device->actual)
        atomic_fetch_add_explicit(&tt_stats_device(q0->device->index)->reduce_bytes, len,
                                  memory_order_relaxed);
      if (err == CL_SUCCESS)
        err = tt_cmd_launch(q0, ck, 1, NULL, &n, NULL, u, merge ? (raced ? 4 : 3) : 2, false,
                            NULL, NULL, 0, 0, NULL, evs ? &evs[(*nevs)++] : NULL);
    }
  }
  if (raced) {
    if (err == CL_SUCCESS)
      err = tt_cmd_read(q0, raced, CL_TRUE, 0, sizeof flag, &flag, 0, NULL, NULL);
    if (err == CL_SUCCESS && flag && tt_cluster_rank() == 0)
      TT_LOG(TT_LOG_WARN, "kernel '%s': parts of one launch wrote different values to one "
             "byte of parameter %u (a race in the program): the later part's byte is kept",
             k->name, ri.param);
    TT_RELEASE(raced);
  }
  return err;
}
