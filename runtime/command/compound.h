/* What runs on top of single commands (runtime/command/command.h): kernel launches through
 * their checks, split launches planned from annotations and their balancing, the aggregate
 * device's queues and launches, SnuCL's collectives built from copies and reductions, and
 * command queues with their flush and finish. The entry points of icd/ feed the divergence
 * check and call these. */
#ifndef TUTTI_COMMAND_COMPOUND_H
#define TUTTI_COMMAND_COMPOUND_H

#include "runtime/base/backend.h"
#include "runtime/base/log.h"
#include "runtime/command/buffer.h"
#include "runtime/command/launch.h"
#include "runtime/command/memobj.h"
#include "runtime/command/coherence.h"
#include "runtime/job/cluster.h"
#include "runtime/job/cluster_share.h"
#include "runtime/job/cluster_start.h"
#include "runtime/job/devices.h"
#include "runtime/program/program.h"

#include "CL/tutti.h"

/* CL_INVALID_COMMAND_QUEUE if command_queue is not a valid command-queue (the enqueue entry
 * points: icd/enqueue.c, icd/launch.c, icd/marker.c; the launches' checks). */
#define CHECK_QUEUE(q) TT_RETURN_IF(!tt_object_valid((q), TT_QUEUE), CL_INVALID_COMMAND_QUEUE)

/* Balancing split launches (runtime/command/balance.c). Whether launches in ctx are balanced
 * (TUTTI_BALANCE, more than one device; their native queues then profile). The group ranges
 * of a launch of k over qs with G groups when k's measured weights apply: bounds[0..nq],
 * true; else false (equal ranges). Whether the launch of k over qs about to run is one to
 * measure (asked once per launch, in program order: it counts the launches); if so, and it
 * ran, its groups and events, one part per queue. clFinish(q) covered every command of q up
 * to seq: parts measured there count. */
bool tt_balance_on(cl_context ctx);
bool tt_balance_bounds(cl_kernel k, cl_uint nq, const cl_command_queue *qs, size_t G,
                       size_t *bounds);
bool tt_balance_wants(cl_kernel k, cl_uint nq, const cl_command_queue *qs);
void tt_balance_measure(cl_kernel k, const size_t *groups, cl_event *ev);
void tt_balance_finished(cl_command_queue q, uint64_t seq);
void tt_balance_kernel_free(cl_kernel k);

/* The aggregate device (runtime/command/aggregate.c; the device itself: runtime/job/devices.h): its
 * answers to device queries; its queues; a kernel launched on one. */
cl_int tt_aggregate_queue_init(cl_command_queue q, cl_device_id agg,
                               cl_command_queue_properties props);
void tt_aggregate_queue_free(cl_command_queue q);
cl_int tt_aggregate_launch(cl_command_queue q, cl_kernel kernel, cl_uint work_dim,
                           const size_t *offset, const size_t *gws, const size_t *lws,
                           cl_uint nwait, const cl_event *wait, cl_event *event);

/* Kernel launches (runtime/command/ndrange.c): the checks of clEnqueueNDRangeKernel for one queue;
 * the launch itself once they passed is runtime/command/launch.h's. */
cl_int tt_enqueue_check_launch(cl_command_queue q, cl_kernel kernel, cl_uint work_dim,
                               const size_t *global_work_offset, const size_t *global_work_size,
                               const size_t *local_work_size);
/* clEnqueueNDRangeKernel on the queue itself (an aggregate queue's first member). */
cl_int tt_enqueue_kernel(cl_command_queue q, cl_kernel kernel, cl_uint work_dim,
                         const size_t *global_work_offset, const size_t *global_work_size,
                         const size_t *local_work_size, cl_uint num_events_in_wait_list,
                         const cl_event *event_wait_list, cl_event *event);

/* A queue of context on device (resolved: not the aggregate) whose properties were checked (agg:
 * the aggregate device it stands for, or NULL), and the program's release of a valid queue:
 * clCreateCommandQueue and clReleaseCommandQueue behind their checks (runtime/command/queue.c); the
 * aggregate device's member queues come and go here. */
cl_command_queue tt_queue_new(cl_context context, cl_device_id device, cl_device_id agg,
                              cl_command_queue_properties properties, cl_int *errcode_ret);
void tt_queue_release(cl_command_queue command_queue);

/* clEnqueueNDRangeKernel (on the aggregate device's queue too) once its arguments were checked
 * (runtime/command/ndrange.c): the collectives' reductions, the split launches' partial results.
 * The copies and fills of Tutti's own code go to their bodies (runtime/command/buffer.h). */
cl_int tt_enqueue_ndrange(cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
                          const size_t *global_work_offset, const size_t *global_work_size,
                          const size_t *local_work_size, cl_uint num_events_in_wait_list,
                          const cl_event *event_wait_list, cl_event *event);

/* A split launch (clEnqueueSplitNDRangeKernelTUTTI, runtime/command/split.c): its checks, its entry
 * in the divergence check and the launch; the aggregate device's queue launches here too. */
cl_int tt_split_enqueue(cl_uint num_queues, const cl_command_queue *queues, cl_kernel kernel,
                        cl_uint work_dim, const size_t *global_work_offset,
                        const size_t *global_work_size, const size_t *local_work_size,
                        cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                        cl_event *event);

/* clFlush and clFinish of a queue (an aggregate queue's members first), with their checks. */
cl_int tt_queue_flush(cl_command_queue command_queue);
cl_int tt_queue_finish(cl_command_queue command_queue);

/* The checks of a split launch's queues, kernel and wait list, before anything is planned;
 * a kernel's kept plan let go (its annotation changed, it is released; the kernel's lock). */
cl_int tt_split_check(cl_uint nq, const cl_command_queue *qs, cl_kernel kernel, cl_uint nwait,
                      const cl_event *wait);
void tt_split_memo_drop(cl_kernel k);

/* SnuCL's collective buffer commands (runtime/command/collective.c), with their checks:
 * clEnqueueAlltoAllBuffer, ...Broadcast..., ...Scatter..., ...Gather..., ...AllGather...,
 * ...Reduce..., ...AllReduce..., ...ReduceScatter..., ...ScanBuffer. */
cl_int tt_coll_alltoall(cl_command_queue *qs, cl_uint n, cl_mem *src,
                        cl_mem *dst, size_t *src_off, size_t *dst_off,
                        size_t cb, cl_uint nwait, const cl_event *wait,
                        cl_event *events);
cl_int tt_coll_broadcast(cl_command_queue *qs, cl_mem src, cl_uint n_dst,
                         cl_mem *dst, size_t src_off, size_t *dst_off,
                         size_t cb, cl_uint nwait, const cl_event *wait,
                         cl_event *events);
cl_int tt_coll_scatter(cl_command_queue *qs, cl_mem src, cl_uint n_dst,
                       cl_mem *dst, size_t src_off, size_t *dst_off,
                       size_t cb, cl_uint nwait, const cl_event *wait,
                       cl_event *events);
cl_int tt_coll_gather(cl_command_queue q, cl_uint n_src, cl_mem *src,
                      cl_mem dst, size_t *src_off, size_t dst_off,
                      size_t cb, cl_uint nwait, const cl_event *wait,
                      cl_event *event);
cl_int tt_coll_allgather(cl_command_queue *qs, cl_uint n, cl_mem *src,
                         cl_mem *dst, size_t *src_off, size_t *dst_off,
                         size_t cb, cl_uint nwait, const cl_event *wait,
                         cl_event *events);
cl_int tt_coll_reduce(cl_command_queue q, cl_uint n_src, cl_mem *src,
                      cl_mem dst, size_t *src_off, size_t dst_off,
                      size_t cb, cl_channel_type datatype, cl_uint nwait,
                      const cl_event *wait, cl_event *event);
cl_int tt_coll_allreduce(cl_command_queue *qs, cl_uint n, cl_mem *src,
                         cl_mem *dst, size_t *src_off, size_t *dst_off,
                         size_t cb, cl_channel_type datatype,
                         cl_uint nwait, const cl_event *wait,
                         cl_event *events);
cl_int tt_coll_reduce_scatter(cl_command_queue *qs, cl_uint n, cl_mem *src,
                              cl_mem *dst, size_t *src_off,
                              size_t *dst_off, size_t cb,
                              cl_channel_type datatype, cl_uint nwait,
                              const cl_event *wait, cl_event *events);
cl_int tt_coll_scan(cl_command_queue *qs, cl_uint n, cl_mem *src,
                    cl_mem *dst, size_t *src_off, size_t *dst_off,
                    size_t cb, cl_channel_type datatype, cl_uint nwait,
                    const cl_event *wait, cl_event *events);

#endif
