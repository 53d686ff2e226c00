/* cl_tutti_collective's entry points (SnuCL's collective buffer commands): the divergence check,
 * then the bodies (runtime/command/compound.h), which check the arguments as the specification says. */
#include "config.h"

#include "icd/icd.h"

#include "runtime/job/check.h"
#include "runtime/job/turns.h"

cl_int CL_API_CALL tt_clEnqueueAlltoAllBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src,
                                              cl_mem *dst, size_t *src_off, size_t *dst_off,
                                              size_t cb, cl_uint nwait, const cl_event *wait,
                                              cl_event *events)
{
  TT_TURN_CHECK(tt_check_ids(qs, n), tt_check_ids(src, n), tt_check_ids(dst, n), cb, nwait);
  return tt_coll_alltoall(qs, n, src, dst, src_off, dst_off, cb, nwait, wait, events);
}

cl_int CL_API_CALL tt_clEnqueueBroadcastBuffer(cl_command_queue *qs, cl_mem src, cl_uint n_dst,
                                               cl_mem *dst, size_t src_off, size_t *dst_off,
                                               size_t cb, cl_uint nwait, const cl_event *wait,
                                               cl_event *events)
{
  TT_TURN_CHECK(tt_check_ids(qs, n_dst), tt_check_id(src), tt_check_ids(dst, n_dst), cb, nwait);
  return tt_coll_broadcast(qs, src, n_dst, dst, src_off, dst_off, cb, nwait, wait, events);
}

cl_int CL_API_CALL tt_clEnqueueScatterBuffer(cl_command_queue *qs, cl_mem src, cl_uint n_dst,
                                             cl_mem *dst, size_t src_off, size_t *dst_off,
                                             size_t cb, cl_uint nwait, const cl_event *wait,
                                             cl_event *events)
{
  TT_TURN_CHECK(tt_check_ids(qs, n_dst), tt_check_id(src), tt_check_ids(dst, n_dst), cb, nwait);
  return tt_coll_scatter(qs, src, n_dst, dst, src_off, dst_off, cb, nwait, wait, events);
}

cl_int CL_API_CALL tt_clEnqueueGatherBuffer(cl_command_queue q, cl_uint n_src, cl_mem *src,
                                            cl_mem dst, size_t *src_off, size_t dst_off,
                                            size_t cb, cl_uint nwait, const cl_event *wait,
                                            cl_event *event)
{
  TT_TURN_CHECK(tt_check_id(q), tt_check_ids(src, n_src), tt_check_id(dst), cb, nwait);
  return tt_coll_gather(q, n_src, src, dst, src_off, dst_off, cb, nwait, wait, event);
}

cl_int CL_API_CALL tt_clEnqueueAllGatherBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src,
                                               cl_mem *dst, size_t *src_off, size_t *dst_off,
                                               size_t cb, cl_uint nwait, const cl_event *wait,
                                               cl_event *events)
{
  TT_TURN_CHECK(tt_check_ids(qs, n), tt_check_ids(src, n), tt_check_ids(dst, n), cb, nwait);
  return tt_coll_allgather(qs, n, src, dst, src_off, dst_off, cb, nwait, wait, events);
}

cl_int CL_API_CALL tt_clEnqueueReduceBuffer(cl_command_queue q, cl_uint n_src, cl_mem *src,
                                            cl_mem dst, size_t *src_off, size_t dst_off,
                                            size_t cb, cl_channel_type datatype, cl_uint nwait,
                                            const cl_event *wait, cl_event *event)
{
  TT_TURN_CHECK(tt_check_id(q), tt_check_ids(src, n_src), tt_check_id(dst), cb, datatype, nwait);
  return tt_coll_reduce(q, n_src, src, dst, src_off, dst_off, cb, datatype, nwait, wait, event);
}

cl_int CL_API_CALL tt_clEnqueueAllReduceBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src,
                                               cl_mem *dst, size_t *src_off, size_t *dst_off,
                                               size_t cb, cl_channel_type datatype,
                                               cl_uint nwait, const cl_event *wait,
                                               cl_event *events)
{
  TT_TURN_CHECK(tt_check_ids(qs, n), tt_check_ids(src, n), tt_check_ids(dst, n), cb, datatype, nwait);
  return tt_coll_allreduce(qs, n, src, dst, src_off, dst_off, cb, datatype, nwait, wait, events);
}

cl_int CL_API_CALL tt_clEnqueueReduceScatterBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src,
                                                   cl_mem *dst, size_t *src_off,
                                                   size_t *dst_off, size_t cb,
                                                   cl_channel_type datatype, cl_uint nwait,
                                                   const cl_event *wait, cl_event *events)
{
  TT_TURN_CHECK(tt_check_ids(qs, n), tt_check_ids(src, n), tt_check_ids(dst, n), cb, datatype, nwait);
  return tt_coll_reduce_scatter(qs, n, src, dst, src_off, dst_off, cb, datatype, nwait, wait, events);
}

cl_int CL_API_CALL tt_clEnqueueScanBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src,
                                          cl_mem *dst, size_t *src_off, size_t *dst_off,
                                          size_t cb, cl_channel_type datatype, cl_uint nwait,
                                          const cl_event *wait, cl_event *events)
{
  TT_TURN_CHECK(tt_check_ids(qs, n), tt_check_ids(src, n), tt_check_ids(dst, n), cb, nwait);
  return tt_coll_scan(qs, n, src, dst, src_off, dst_off, cb, datatype, nwait, wait, events);
}

/* Exported for programs that link libtutti directly (doc/extensions.md). */
#define EXPORT(ret, name, params, args)                                                          \
  TT_API ret CL_API_CALL name params { return tt_##name args; }
EXPORT(cl_int, clEnqueueAlltoAllBuffer, (cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *so, size_t *d, size_t cb, cl_uint nw, const cl_event *w, cl_event *e), (qs, n, src, dst, so, d, cb, nw, w, e))
EXPORT(cl_int, clEnqueueBroadcastBuffer, (cl_command_queue *qs, cl_mem src, cl_uint n, cl_mem *dst, size_t so, size_t *d, size_t cb, cl_uint nw, const cl_event *w, cl_event *e), (qs, src, n, dst, so, d, cb, nw, w, e))
EXPORT(cl_int, clEnqueueScatterBuffer, (cl_command_queue *qs, cl_mem src, cl_uint n, cl_mem *dst, size_t so, size_t *d, size_t cb, cl_uint nw, const cl_event *w, cl_event *e), (qs, src, n, dst, so, d, cb, nw, w, e))
EXPORT(cl_int, clEnqueueGatherBuffer, (cl_command_queue q, cl_uint n, cl_mem *src, cl_mem dst, size_t *so, size_t d, size_t cb, cl_uint nw, const cl_event *w, cl_event *e), (q, n, src, dst, so, d, cb, nw, w, e))
EXPORT(cl_int, clEnqueueAllGatherBuffer, (cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *so, size_t *d, size_t cb, cl_uint nw, const cl_event *w, cl_event *e), (qs, n, src, dst, so, d, cb, nw, w, e))
EXPORT(cl_int, clEnqueueReduceBuffer, (cl_command_queue q, cl_uint n, cl_mem *src, cl_mem dst, size_t *so, size_t d, size_t cb, cl_channel_type t, cl_uint nw, const cl_event *w, cl_event *e), (q, n, src, dst, so, d, cb, t, nw, w, e))
EXPORT(cl_int, clEnqueueAllReduceBuffer, (cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *so, size_t *d, size_t cb, cl_channel_type t, cl_uint nw, const cl_event *w, cl_event *e), (qs, n, src, dst, so, d, cb, t, nw, w, e))
EXPORT(cl_int, clEnqueueReduceScatterBuffer, (cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *so, size_t *d, size_t cb, cl_channel_type t, cl_uint nw, const cl_event *w, cl_event *e), (qs, n, src, dst, so, d, cb, t, nw, w, e))
EXPORT(cl_int, clEnqueueScanBuffer, (cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *so, size_t *d, size_t cb, cl_channel_type t, cl_uint nw, const cl_event *w, cl_event *e), (qs, n, src, dst, so, d, cb, t, nw, w, e))
