/* Kernel launches and markers as commands (runtime/command/launch.c, marker.c): the bodies
 * behind clEnqueueNDRangeKernel (icd/launch.c, once its checks passed), the markers and
 * barriers (icd/marker.c), clFinish's marker, and what split launches and the aggregate
 * device issue (runtime/command/split.c, runtime/command/aggregate.c). */
#ifndef TUTTI_COMMAND_LAUNCH_H
#define TUTTI_COMMAND_LAUNCH_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/base/tutti_internal.h"

/* A buffer range a launch uses. */
struct tt_launch_use {
  cl_mem mem;
  size_t off, len; /* in mem */
  bool reads, writes;
};

/* Brings the bytes of the reading uses to q's device, as a command of their own (the reads
 * of every part of a split launch are planned before any part's kernel is queued, so that
 * a device sends what others need before it starts its own part). */
cl_int tt_cmd_fetch(cl_command_queue q, const struct tt_launch_use *uses, size_t nuses);

/* A kernel parameter taking a window of a windowed buffer (runtime/memory/window.h): the
 * argument that gets the window's first element index, and the element's size. */
struct tt_rebase {
  cl_uint offset_arg; /* 0: not rebased */
  uint32_t elem_size;
};
/* A launch whose buffers are exactly uses (NULL: the kernel's arguments, whole); part: a part
 * of a split launch (the bytes it fetches count as halo bytes, TUTTI_STATS). Windowed
 * buffers among its arguments get a window over all their bytes in the queue's domain, or,
 * for arguments i with rebase[i].offset_arg, the window over what uses name of them. next
 * (NULL: none known): the uses of the next launch of the kernel on the queue's domain (a
 * split launch's next part there), whose windows come back ahead once this one is planned. */
cl_int tt_cmd_launch(cl_command_queue q, cl_kernel kernel, cl_uint work_dim,
                     const size_t *global_work_offset, const size_t *global_work_size,
                     const size_t *local_work_size, const struct tt_launch_use *uses,
                     size_t nuses, bool part, const struct tt_rebase *rebase,
                     const struct tt_launch_use *next, size_t nnext,
                     cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                     cl_event *event);

/* A marker on q after the n events of list (clEnqueueMarkerWithWaitList once its queue was
 * checked; Tutti's own markers, runtime/command/split.c and icd/collective.c). */
cl_int tt_cmd_marker(cl_command_queue q, cl_uint n, const cl_event *list, cl_event *event);
/* A barrier on q after the n events of list (clEnqueueBarrierWithWaitList, clEnqueueBarrier,
 * clEnqueueWaitForEvents once checked). */
cl_int tt_cmd_barrier(cl_command_queue q, cl_uint n, const cl_event *list, cl_event *event);
/* clFinish's marker on q (runtime/command/queue.c; a job of several ranks):
 * clEnqueueMarkerWithWaitList on every rank alike; on the owner, when it returns, the native queue
 * is finished and the marker complete. */
cl_int tt_cmd_finish_marker(cl_command_queue q, cl_event *event);

/* clEnqueueNativeKernel once checked (icd/launch.c): func runs on the owner of q's device with
 * a copy of args (cb_args bytes) where each of mems has its memory's address at offsets[i]. */
cl_int tt_cmd_native_kernel(cl_command_queue q, void (CL_CALLBACK *func)(void *),
                            const void *args, size_t cb_args, cl_uint nmems, const cl_mem *mems,
                            const size_t *offsets, cl_uint nwait, const cl_event *wait,
                            cl_event *event);

#endif
