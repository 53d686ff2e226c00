/* Markers and barriers as commands (runtime/command/launch.h): commands that only order (on
 * the aggregate device's queue, one per member queue, joined), and clFinish's marker. */
#include "config.h"

#include "runtime/command/launch.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/base/log.h"
#include "runtime/command/command.h"
#include "runtime/command/driver.h"
#include "runtime/job/check.h"
#include "runtime/job/turns.h"
#include "runtime/job/stats.h"
#include "runtime/order/order.h"

/* Markers and barriers: on an in-order native queue both wait for everything before them. */

/* reached: for clFinish's marker (tt_cmd_finish_marker), whose native event on its owner
 * is a user event handed back there (retained), set once the native queue is finished,
 * rather than a command of the backend after the queue's last one (PoCL runs that some 37
 * us later on a 16-core host). */
static cl_int marker_one(cl_command_queue q, cl_uint n, const cl_event *list, cl_event *event,
                         cl_command_type type, cl_event *reached)
{
  /* No buffers: the queueing optimization drops it when it has nothing to wait for here. */
  struct tt_cmd_work w = {.op = type == CL_COMMAND_BARRIER ? TT_OP_BARRIER : TT_OP_MARKER,
                          .entry = type == CL_COMMAND_MARKER ? "tt_clEnqueueMarker"
                                                             : "tt_clEnqueueBarrier",
                          .type = type, .discardable = true, .reached = reached};
  return tt_cmd_drive(q, &w, n, list, event);
}

/* A marker or barrier; on a queue of the aggregate device one on every member, then the
 * queue's own after them all (runtime/command/aggregate.c). */
static cl_int marker(cl_command_queue q, cl_uint n, const cl_event *list, cl_event *event,
                     cl_command_type type)
{
  if (q->nmembers < 2)
    return marker_one(q, n, list, event, type, NULL);
  cl_uint total = q->nmembers - 1 + n;
  cl_event *all = calloc(total, sizeof *all);
  TT_RETURN_IF(!all, CL_OUT_OF_HOST_MEMORY);
  cl_int err = CL_SUCCESS;
  for (cl_uint i = 1; i < q->nmembers && err == CL_SUCCESS; i++)
    err = marker_one(q->members[i], n, list, &all[i - 1], type, NULL);
  if (err == CL_SUCCESS) {
    if (n)
      memcpy(all + q->nmembers - 1, list, n * sizeof *all);
    err = marker_one(q, total, all, event, type, NULL);
  }
  for (cl_uint i = 0; i + 1 < q->nmembers; i++)
    if (all[i])
      TT_RELEASE(all[i]);
  free(all);
  return err;
}

cl_int tt_cmd_finish_marker(cl_command_queue q, cl_event *event)
{
  cl_event reached = NULL;
  /* An aggregate queue's marker follows its members' (marker()). */
  cl_int err = q->nmembers < 2 ? marker_one(q, 0, NULL, event, CL_COMMAND_MARKER, &reached)
                               : marker(q, 0, NULL, event, CL_COMMAND_MARKER);
  /* Every rank comes here: the turn goes while the owner waits, and is taken again by every
   * rank (runtime/job/turns.h). */
  tt_turn_give();
  if (reached) {
    /* Everything before the marker is done when the native queue is. Bytes still to come
     * from other ranks first: the backend's wait then finds no command held by a user event
     * (runtime/order/order.h, tt_nqueue_gate). */
    const cl_icd_dispatch *d = TT_NATIVE_DISPATCH(reached);
    tt_check_sync(); /* a host wait: rank 0 hears of this rank's calls first */
    uint64_t t0 = tt_stats_now_ns();
    tt_nqueue_wait_gates(q->nq);
    cl_int fin = q->nq->d->clFinish(q->nq->native);
    tt_nqueue_wait_lazy(q->nq);
    atomic_fetch_add_explicit(&tt_stats.wait_ns, tt_stats_now_ns() - t0, memory_order_relaxed);
    d->clSetUserEventStatus(reached, fin == CL_SUCCESS ? CL_COMPLETE : fin);
    d->clReleaseEvent(reached);
  }
  tt_turn_resume();
  return err;
}

cl_int tt_cmd_marker(cl_command_queue q, cl_uint n, const cl_event *list, cl_event *event)
{
  return marker(q, n, list, event, CL_COMMAND_MARKER);
}

cl_int tt_cmd_barrier(cl_command_queue q, cl_uint n, const cl_event *list, cl_event *event)
{
  return marker(q, n, list, event, CL_COMMAND_BARRIER);
}
