/* cl_tutti_collective: SnuCL's collective buffer commands, built from Tutti's own commands
 * (doc/extensions.md). Every block moves by a copy on the destination's queue, so bytes go
 * point to point between the ranks that own the source and the destination, pipelined in
 * pieces, never through one rank's host; reductions add blocks on the destination's device.
 * Every rank calls them at the same program step. */
#include "config.h"

#include "runtime/command/compound.h"

#include "runtime/job/check.h"

#include <stdlib.h>

#include "runtime/order/event.h"

static const char *reduce_source =
    "__kernel void acc_int(__global int *d, ulong o, __global const int *s, ulong n)\n"
    "{ size_t i = get_global_id(0); if (i < n) d[o + i] += s[i]; }\n"
    "__kernel void acc_uint(__global uint *d, ulong o, __global const uint *s, ulong n)\n"
    "{ size_t i = get_global_id(0); if (i < n) d[o + i] += s[i]; }\n"
    "__kernel void acc_float(__global float *d, ulong o, __global const float *s, ulong n)\n"
    "{ size_t i = get_global_id(0); if (i < n) d[o + i] += s[i]; }\n"
    "#ifdef cl_khr_fp64\n"
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "__kernel void acc_double(__global double *d, ulong o, __global const double *s, ulong n)\n"
    "{ size_t i = get_global_id(0); if (i < n) d[o + i] += s[i]; }\n"
    "#endif\n";

/* Element size and kernel of a datatype, or 0. */
static size_t element(cl_channel_type t, const char **kernel)
{
  switch (t) {
  case CL_SIGNED_INT32:
    *kernel = "acc_int";
    return 4;
  case CL_UNSIGNED_INT32:
    *kernel = "acc_uint";
    return 4;
  case CL_FLOAT:
    *kernel = "acc_float";
    return 4;
  case CL_DOUBLE:
    *kernel = "acc_double";
    return 8;
  default:
    return 0;
  }
}

/* The queues: valid, of one context. */
static cl_int check_queues(cl_command_queue *qs, cl_uint n, cl_context *ctx)
{
  /* CL_INVALID_VALUE if the queue list is NULL or empty. */
  TT_RETURN_IF(!qs || n == 0, CL_INVALID_VALUE);
  for (cl_uint i = 0; i < n; i++)
    TT_RETURN_IF(!tt_object_valid(qs[i], TT_QUEUE), CL_INVALID_COMMAND_QUEUE);
  for (cl_uint i = 1; i < n; i++)
    TT_RETURN_IF(qs[i]->context != qs[0]->context, CL_INVALID_CONTEXT);
  *ctx = qs[0]->context;
  return CL_SUCCESS;
}

/* A buffer and the bytes [off, off+len) of it that a collective touches. */
static cl_int check_range(cl_context ctx, cl_mem m, size_t off, size_t len)
{
  /* CL_INVALID_MEM_OBJECT if a buffer is not valid; CL_INVALID_CONTEXT if it belongs to
   * another context than the queues; CL_INVALID_VALUE if a range goes past its end. */
  TT_RETURN_IF(!tt_object_valid(m, TT_MEM), CL_INVALID_MEM_OBJECT);
  TT_RETURN_IF(m->context != ctx, CL_INVALID_CONTEXT);
  TT_RETURN_IF(off > m->size || len > m->size - off, CL_INVALID_VALUE);
  return CL_SUCCESS;
}

static cl_int check_list(cl_context ctx, cl_mem *ms, cl_uint n, const size_t *offs, size_t len)
{
  /* CL_INVALID_VALUE if a buffer list is NULL. */
  TT_RETURN_IF(!ms, CL_INVALID_VALUE);
  for (cl_uint i = 0; i < n; i++) {
    cl_int err = check_range(ctx, ms[i], offs ? offs[i] : 0, len);
    if (err != CL_SUCCESS)
      return err;
  }
  return CL_SUCCESS;
}

static size_t at(const size_t *offs, cl_uint i)
{
  return offs ? offs[i] : 0;
}

/* The wait list holds every queue of the collective back (in-order queues: what follows
 * on each waits too). */
static cl_int begin(cl_command_queue *qs, cl_uint n, cl_uint nwait, const cl_event *wait)
{
  /* CL_INVALID_EVENT_WAIT_LIST if the list and its length disagree. */
  TT_RETURN_IF((wait == NULL) != (nwait == 0), CL_INVALID_EVENT_WAIT_LIST);
  for (cl_uint i = 0; i < n && nwait; i++) {
    bool seen = false;
    for (cl_uint j = 0; j < i; j++)
      seen |= qs[j] == qs[i];
    if (seen)
      continue;
    cl_int err = tt_cmd_marker(qs[i], nwait, wait, NULL);
    if (err != CL_SUCCESS)
      return err;
  }
  return CL_SUCCESS;
}

/* events[j]: complete once queue j's part is done. */
static cl_int end(cl_command_queue *qs, cl_uint n, cl_event *events, cl_command_type type)
{
  for (cl_uint j = 0; events && j < n; j++) {
    cl_int err = tt_cmd_marker(qs[j], 0, NULL, &events[j]);
    if (err != CL_SUCCESS)
      return err;
    events[j]->type = type;
  }
  return CL_SUCCESS;
}

static cl_int copy(cl_command_queue q, cl_mem src, size_t soff, cl_mem dst, size_t doff, size_t cb)
{
  if (src == dst && soff == doff)
    return CL_SUCCESS;
  return tt_cmd_copy(q, src, dst, soff, doff, cb, 0, NULL, NULL);
}

/* The context's adding kernels, built once: a build per reduction cost each a backend build
 * (NVIDIA's from its cache still takes milliseconds), while the reduction's own copies ran
 * beside it. The program holds no reference on the context, which releases it (weak). */
static cl_program reduce_program(cl_context ctx, cl_int *err)
{
  cl_program p = atomic_load(&ctx->reduce);
  if (p)
    return p;
  p = tt_program_with_source(ctx, 1, &reduce_source, NULL, err);
  if (!p)
    return NULL;
  *err = tt_program_build(p, 0, NULL, NULL, NULL, NULL);
  if (*err != CL_SUCCESS) {
    TT_RELEASE(p);
    return NULL;
  }
  p->weak = true;
  TT_RELEASE(ctx); /* the program's reference: it is the context's own now */
  cl_program none = NULL;
  if (!atomic_compare_exchange_strong(&ctx->reduce, &none, p)) {
    TT_RELEASE(p);
    p = none;
  }
  return p;
}

/* dst[doff..+cb] = sum over i < n of src[i][soff[i] + block..+cb], on q's device: the first
 * block is copied in place, the others through a temporary buffer and an adding kernel. */
static cl_int reduce_into(cl_command_queue q, cl_mem *src, const size_t *soff, size_t block,
                          cl_uint n, cl_mem dst, size_t doff, size_t cb, cl_channel_type type)
{
  const char *name = NULL;
  size_t esize = element(type, &name);
  cl_context ctx = q->context;
  cl_int err = copy(q, src[0], at(soff, 0) + block, dst, doff, cb);
  if (err != CL_SUCCESS || n == 1)
    return err;
  cl_mem tmp = tt_buffer_new(ctx, CL_MEM_READ_WRITE, cb, NULL, false, &err);
  if (!tmp)
    return err;
  cl_program prog = reduce_program(ctx, &err);
  cl_kernel k = NULL;
  if (prog)
    k = tt_kernel_new(prog, name, &err);
  /* CL_INVALID_VALUE if the device cannot add this datatype (double without cl_khr_fp64). */
  if (err == CL_INVALID_KERNEL_NAME)
    err = CL_INVALID_VALUE;
  cl_ulong o = doff / esize, count = cb / esize;
  size_t gws = (size_t)count;
  for (cl_uint i = 1; i < n && err == CL_SUCCESS; i++) {
    err = copy(q, src[i], at(soff, i) + block, tmp, 0, cb);
    if (err == CL_SUCCESS)
      err = tt_kernel_arg_set(k, 0, sizeof dst, &dst);
    if (err == CL_SUCCESS)
      err = tt_kernel_arg_set(k, 1, sizeof o, &o);
    if (err == CL_SUCCESS)
      err = tt_kernel_arg_set(k, 2, sizeof tmp, &tmp);
    if (err == CL_SUCCESS)
      err = tt_kernel_arg_set(k, 3, sizeof count, &count);
    if (err == CL_SUCCESS)
      err = tt_enqueue_ndrange(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL);
  }
  /* The commands keep what they use. */
  if (k)
    TT_RELEASE(k);
  TT_RELEASE(tmp);
  return err;
}

/* Checks shared by the reductions: a known datatype, whole elements. */
static cl_int check_reduction(cl_channel_type type, size_t cb, const size_t *doff, cl_uint n)
{
  const char *name;
  size_t esize = element(type, &name);
  /* CL_INVALID_VALUE if datatype is not one of CL_SIGNED_INT32, CL_UNSIGNED_INT32, CL_FLOAT,
   * CL_DOUBLE, or cb or a destination offset is not a whole number of elements. */
  TT_RETURN_IF(esize == 0, CL_INVALID_VALUE);
  TT_RETURN_IF(cb % esize != 0, CL_INVALID_VALUE);
  for (cl_uint i = 0; i < n; i++)
    TT_RETURN_IF(at(doff, i) % esize != 0, CL_INVALID_VALUE);
  return CL_SUCCESS;
}

/* Every source to every destination: block i of destination j comes from source i, its
 * block j (AlltoAll) or its only block (AllGather). */
static cl_int many_to_many(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst,
                           size_t *src_off, size_t *dst_off, size_t cb, cl_uint nwait,
                           const cl_event *wait, cl_event *events, bool alltoall)
{
  cl_context ctx;
  TT_TRY(check_queues(qs, n, &ctx));
  TT_RETURN_IF(cb == 0, CL_INVALID_VALUE);
  TT_TRY(check_list(ctx, src, n, src_off, alltoall ? n * cb : cb));
  TT_TRY(check_list(ctx, dst, n, dst_off, n * cb));
  TT_TRY(begin(qs, n, nwait, wait));
  for (cl_uint j = 0; j < n; j++)
    for (cl_uint i = 0; i < n; i++)
      TT_TRY(copy(qs[j], src[i], at(src_off, i) + (alltoall ? j * cb : 0), dst[j],
                  at(dst_off, j) + i * cb, cb));
  return end(qs, n, events, alltoall ? CL_COMMAND_ALLTOALL_BUFFER : CL_COMMAND_ALLGATHER_BUFFER);
}

cl_int tt_coll_alltoall(cl_command_queue *qs, cl_uint n, cl_mem *src,
                        cl_mem *dst, size_t *src_off, size_t *dst_off,
                        size_t cb, cl_uint nwait, const cl_event *wait,
                        cl_event *events)
{
  return many_to_many(qs, n, src, dst, src_off, dst_off, cb, nwait, wait, events, true);
}

static cl_int one_to_many(cl_command_queue *qs, cl_mem src, cl_uint n, cl_mem *dst,
                          size_t src_off, size_t *dst_off, size_t cb, cl_uint nwait,
                          const cl_event *wait, cl_event *events, bool scatter)
{
  cl_context ctx;
  TT_TRY(check_queues(qs, n, &ctx));
  TT_RETURN_IF(cb == 0, CL_INVALID_VALUE);
  TT_TRY(check_range(ctx, src, src_off, scatter ? n * cb : cb));
  TT_TRY(check_list(ctx, dst, n, dst_off, cb));
  TT_TRY(begin(qs, n, nwait, wait));
  for (cl_uint j = 0; j < n; j++)
    TT_TRY(copy(qs[j], src, src_off + (scatter ? j * cb : 0), dst[j], at(dst_off, j), cb));
  return end(qs, n, events, scatter ? CL_COMMAND_SCATTER_BUFFER : CL_COMMAND_BROADCAST_BUFFER);
}

cl_int tt_coll_broadcast(cl_command_queue *qs, cl_mem src, cl_uint n_dst,
                         cl_mem *dst, size_t src_off, size_t *dst_off,
                         size_t cb, cl_uint nwait, const cl_event *wait,
                         cl_event *events)
{
  return one_to_many(qs, src, n_dst, dst, src_off, dst_off, cb, nwait, wait, events, false);
}

cl_int tt_coll_scatter(cl_command_queue *qs, cl_mem src, cl_uint n_dst,
                       cl_mem *dst, size_t src_off, size_t *dst_off,
                       size_t cb, cl_uint nwait, const cl_event *wait,
                       cl_event *events)
{
  return one_to_many(qs, src, n_dst, dst, src_off, dst_off, cb, nwait, wait, events, true);
}

cl_int tt_coll_gather(cl_command_queue q, cl_uint n_src, cl_mem *src,
                      cl_mem dst, size_t *src_off, size_t dst_off,
                      size_t cb, cl_uint nwait, const cl_event *wait,
                      cl_event *event)
{
  cl_context ctx;
  TT_TRY(check_queues(&q, 1, &ctx));
  TT_RETURN_IF(cb == 0 || n_src == 0, CL_INVALID_VALUE);
  TT_TRY(check_list(ctx, src, n_src, src_off, cb));
  TT_TRY(check_range(ctx, dst, dst_off, n_src * cb));
  TT_TRY(begin(&q, 1, nwait, wait));
  for (cl_uint i = 0; i < n_src; i++)
    TT_TRY(copy(q, src[i], at(src_off, i), dst, dst_off + i * cb, cb));
  return end(&q, 1, event, CL_COMMAND_GATHER_BUFFER);
}

cl_int tt_coll_allgather(cl_command_queue *qs, cl_uint n, cl_mem *src,
                         cl_mem *dst, size_t *src_off, size_t *dst_off,
                         size_t cb, cl_uint nwait, const cl_event *wait,
                         cl_event *events)
{
  return many_to_many(qs, n, src, dst, src_off, dst_off, cb, nwait, wait, events, false);
}

cl_int tt_coll_reduce(cl_command_queue q, cl_uint n_src, cl_mem *src,
                      cl_mem dst, size_t *src_off, size_t dst_off,
                      size_t cb, cl_channel_type datatype, cl_uint nwait,
                      const cl_event *wait, cl_event *event)
{
  cl_context ctx;
  TT_TRY(check_queues(&q, 1, &ctx));
  TT_RETURN_IF(cb == 0 || n_src == 0, CL_INVALID_VALUE);
  TT_TRY(check_reduction(datatype, cb, &dst_off, 1));
  TT_TRY(check_list(ctx, src, n_src, src_off, cb));
  TT_TRY(check_range(ctx, dst, dst_off, cb));
  TT_TRY(begin(&q, 1, nwait, wait));
  TT_TRY(reduce_into(q, src, src_off, 0, n_src, dst, dst_off, cb, datatype));
  return end(&q, 1, event, CL_COMMAND_REDUCE_BUFFER);
}

/* The three all-to-all reductions. */
enum all_reduce { ALL_REDUCE, REDUCE_SCATTER, SCAN };

static cl_int all_reduce(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst,
                         size_t *src_off, size_t *dst_off, size_t cb, cl_channel_type datatype,
                         cl_uint nwait, const cl_event *wait, cl_event *events,
                         enum all_reduce kind)
{
  static const cl_command_type types[] = {CL_COMMAND_ALLREDUCE_BUFFER,
                                          CL_COMMAND_REDUCESCATTER_BUFFER, CL_COMMAND_SCAN_BUFFER};
  cl_context ctx;
  TT_TRY(check_queues(qs, n, &ctx));
  TT_RETURN_IF(cb == 0, CL_INVALID_VALUE);
  TT_TRY(check_reduction(datatype, cb, dst_off, n));
  TT_TRY(check_list(ctx, src, n, src_off, kind == REDUCE_SCATTER ? n * cb : cb));
  TT_TRY(check_list(ctx, dst, n, dst_off, cb));
  TT_TRY(begin(qs, n, nwait, wait));
  if (kind == ALL_REDUCE) {
    /* The sum on destination 0, then from there to every other destination. */
    TT_TRY(reduce_into(qs[0], src, src_off, 0, n, dst[0], at(dst_off, 0), cb, datatype));
    for (cl_uint j = 1; j < n; j++)
      TT_TRY(copy(qs[j], dst[0], at(dst_off, 0), dst[j], at(dst_off, j), cb));
  } else {
    /* ReduceScatter: block j of the sum in destination j; Scan: the sum of sources 0..j. */
    for (cl_uint j = 0; j < n; j++)
      TT_TRY(reduce_into(qs[j], src, src_off, kind == REDUCE_SCATTER ? j * cb : 0,
                      kind == SCAN ? j + 1 : n, dst[j], at(dst_off, j), cb, datatype));
  }
  return end(qs, n, events, types[kind]);
}

cl_int tt_coll_allreduce(cl_command_queue *qs, cl_uint n, cl_mem *src,
                         cl_mem *dst, size_t *src_off, size_t *dst_off,
                         size_t cb, cl_channel_type datatype,
                         cl_uint nwait, const cl_event *wait,
                         cl_event *events)
{
  return all_reduce(qs, n, src, dst, src_off, dst_off, cb, datatype, nwait, wait, events,
                    ALL_REDUCE);
}

cl_int tt_coll_reduce_scatter(cl_command_queue *qs, cl_uint n, cl_mem *src,
                              cl_mem *dst, size_t *src_off,
                              size_t *dst_off, size_t cb,
                              cl_channel_type datatype, cl_uint nwait,
                              const cl_event *wait, cl_event *events)
{
  return all_reduce(qs, n, src, dst, src_off, dst_off, cb, datatype, nwait, wait, events,
                    REDUCE_SCATTER);
}

cl_int tt_coll_scan(cl_command_queue *qs, cl_uint n, cl_mem *src,
                    cl_mem *dst, size_t *src_off, size_t *dst_off,
                    size_t cb, cl_channel_type datatype, cl_uint nwait,
                    const cl_event *wait, cl_event *events)
{
  return all_reduce(qs, n, src, dst, src_off, dst_off, cb, datatype, nwait, wait, events, SCAN);
}
