/* Command queues. Every native queue is in order: an out-of-order queue may legally run its
 * commands in order, and the plan then knows that a queue's commands are already ordered. */
#include "config.h"

#include "runtime/command/compound.h"

#include "runtime/job/trace.h"

#include "runtime/job/check.h"
#include "runtime/job/turns.h"

#include <stdlib.h>

#include "runtime/order/event.h"
#include "runtime/command/coherence.h"
#include "runtime/job/stats.h"

static void destroy_queue(struct tt_object *o)
{
  cl_command_queue q = (cl_command_queue)o;
  /* The native queue goes with the last access record that names it (runtime/order/order.h). */
  tt_event_forget_queue(q);
  tt_aggregate_queue_free(q);
  if (q->nq)
    tt_nqueue_unref(q->nq);
  else if (q->native)
    q->device->bp->d->clReleaseCommandQueue(q->native);
  TT_RELEASE(q->context);
  free(q);
}


cl_command_queue tt_queue_new(cl_context context, cl_device_id device, cl_device_id agg,
                              cl_command_queue_properties properties, cl_int *errcode_ret)
{
  cl_int err = CL_SUCCESS;
  cl_command_queue q = NULL;
  cl_command_queue_properties supported = 0;
  tt_cluster_device_query(device, CL_DEVICE_QUEUE_PROPERTIES, sizeof supported, &supported, NULL);
  /* Out-of-order queues run in order (allowed), so only profiling depends on the device.
   * CL_INVALID_QUEUE_PROPERTIES if values specified in properties are valid but are not
   * supported by the device. */
  TT_GOTO_IF((properties & CL_QUEUE_PROFILING_ENABLE) && !(supported & CL_QUEUE_PROFILING_ENABLE),
             CL_INVALID_QUEUE_PROPERTIES);
  q = calloc(1, sizeof *q);
  TT_GOTO_IF(!q, CL_OUT_OF_HOST_MEMORY);
  tt_object_init(&q->obj, TT_QUEUE, destroy_queue);
  atomic_init(&q->program_refs, 1);
  q->context = context;
  TT_RETAIN(context);
  q->device = device;
  q->props = properties;
  q->domain = tt_context_domain_of(context, device);
  /* A queue of another rank's device is virtual: its commands are planned here and run
   * there. */
  if (!device->actual)
    goto out;
  q->native = device->bp->d->clCreateCommandQueue(context->domains[q->domain].native,
                                                  device->native,
                                                  (properties & CL_QUEUE_PROFILING_ENABLE) |
                                                      (tt_trace_on || tt_balance_on(context)
                                                           ? CL_QUEUE_PROFILING_ENABLE
                                                           : 0),
                                                  &err);
  if (!q->native && err == CL_SUCCESS)
    err = CL_OUT_OF_RESOURCES;
  if (q->native && !(q->nq = tt_nqueue_new(device->bp->d, q->native)))
    err = CL_OUT_OF_HOST_MEMORY;
out:
  if (err == CL_SUCCESS && agg)
    err = tt_aggregate_queue_init(q, agg, properties);
  tt_set_err(errcode_ret, err);
  if (err != CL_SUCCESS && q) {
    TT_RELEASE(q);
    q = NULL;
  }
  return q;
}


void tt_queue_release(cl_command_queue command_queue)
{
  /* Events the queue still lists hold it: their statuses go out now (every rank makes this
   * call alike), and reads under way let go of it once done. */
  if (tt_cluster_distributed())
    tt_event_release_queue(command_queue);
  /* The program's last release of an aggregate queue releases its members' queues here, at
   * the same program step on every rank, whether or not events still hold the queue (their
   * last release comes at a different time on each rank, maybe after the transport left). */
  if (atomic_fetch_sub(&command_queue->program_refs, 1) == 1 && command_queue->nmembers > 1)
    tt_aggregate_queue_free(command_queue);
  TT_RELEASE(command_queue);
}


/* A queue's flush: an aggregate queue's members first. */
static cl_int flush(cl_command_queue command_queue)
{
  for (cl_uint i = 1; i < command_queue->nmembers; i++)
    flush(command_queue->members[i]);
  if (!command_queue->native)
    return CL_SUCCESS;
  return command_queue->device->bp->d->clFlush(command_queue->native);
}

cl_int tt_queue_flush(cl_command_queue command_queue)
{
  /* CL_INVALID_COMMAND_QUEUE if command_queue is not a valid command-queue. */
  TT_RETURN_IF(!tt_object_valid(command_queue, TT_QUEUE), CL_INVALID_COMMAND_QUEUE);
  return flush(command_queue);
}

static cl_int finish(cl_command_queue command_queue);

/* A clFinish of nq that began with `issued` commands issued there ended well: raises
 * nq->drained to it. Never lowers it: two threads finishing one queue may end out of order,
 * and runtime/order/order.c takes what a count covered as complete for good. */
static void drained_to(struct tt_nqueue *nq, uint_fast64_t issued)
{
  uint_fast64_t was = atomic_load_explicit(&nq->drained, memory_order_relaxed);
  while (was < issued && !atomic_compare_exchange_weak_explicit(
                             &nq->drained, &was, issued, memory_order_release, memory_order_relaxed))
    ;
}

cl_int tt_queue_finish(cl_command_queue command_queue)
{
  /* CL_INVALID_COMMAND_QUEUE if command_queue is not a valid command-queue. */
  TT_RETURN_IF(!tt_object_valid(command_queue, TT_QUEUE), CL_INVALID_COMMAND_QUEUE);
  return finish(command_queue);
}

/* A queue's finish: an aggregate queue's members first. */
static cl_int finish(cl_command_queue command_queue)
{
  for (cl_uint i = 1; i < command_queue->nmembers; i++) {
    cl_int err = finish(command_queue->members[i]);
    if (err != CL_SUCCESS)
      return err;
  }
  if (tt_cluster_distributed()) {
    /* Every rank waits for a marker at the queue's end (SnuCL-D 3.5). Its owner tells the
     * others when it is reached, with the final status of every event of the queue handed
     * out since the last batch (runtime/order/event.h), so that they all read CL_COMPLETE (or
     * their error) afterwards; then every rank waits until the bytes of the queue's reads
     * are in its host memory (and sent, on the owner). */
    cl_event m = NULL;
    cl_int err = tt_cmd_finish_marker(command_queue, &m);
    if (err != CL_SUCCESS)
      return err;
    /* Once the marker is reached, everything issued up to it is done (runtime/command/buffer.c
     * reads from host memory on an empty queue). */
    uint_fast64_t issued = command_queue->device->actual
                               ? atomic_load_explicit(&command_queue->nq->issued, memory_order_acquire)
                               : 0;
    struct tt_batch *b = tt_event_batch(command_queue);
    cl_int status = tt_event_wait(m); /* gives the turn (runtime/job/turns.h) */
    tt_event_batch_waited(b, m, status);
    if (command_queue->device->actual && status == CL_COMPLETE)
      drained_to(command_queue->nq, issued);
    tt_event_wait_broadcasts(command_queue, UINT64_MAX);
    tt_turn_resume(); /* every rank: balancing decides */
    if (status == CL_COMPLETE)
      tt_balance_finished(command_queue, m->seq);
    TT_RELEASE(m);
    return CL_SUCCESS;
  }
  /* Commands done without the backend (runtime/command/buffer.c, order_in_place) end with
   * the queue's lazy event; once both are done, the queue holds nothing issued so far. */
  struct tt_nqueue *nq = command_queue->nq;
  uint_fast64_t issued = atomic_load_explicit(&nq->issued, memory_order_acquire);
  uint64_t t0 = tt_stats_now_ns();
  cl_int err = command_queue->device->bp->d->clFinish(command_queue->native);
  tt_nqueue_wait_lazy(nq);
  atomic_fetch_add_explicit(&tt_stats.wait_ns, tt_stats_now_ns() - t0, memory_order_relaxed);
  if (err == CL_SUCCESS)
    drained_to(nq, issued);
  /* Some backends (NVIDIA) report a failed command here; the specification lists only queue
   * and resource errors, and failed commands show in their events. */
  if (err != CL_SUCCESS && err != CL_OUT_OF_RESOURCES && err != CL_OUT_OF_HOST_MEMORY) {
    TT_LOG(TT_LOG_WARN, "clFinish: the %s backend answered %s for a failed command",
           command_queue->device->bp->short_name, tt_error_name(err));
    err = CL_SUCCESS;
  }
  if (err == CL_SUCCESS)
    tt_balance_finished(command_queue, UINT64_MAX);
  return err;
}
