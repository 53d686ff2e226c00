/* Event entry points. */
#include "config.h"

#include "icd/icd.h"

#include "runtime/job/check.h"
#include "runtime/job/turns.h"

#include "runtime/order/event.h"

cl_int CL_API_CALL tt_clWaitForEvents(cl_uint num_events, const cl_event *event_list)
{
  TT_TURN_CHECK(tt_check_ids(event_list, num_events));
  /* CL_INVALID_VALUE if num_events is zero or event_list is NULL. */
  TT_RETURN_IF(num_events == 0 || event_list == NULL, CL_INVALID_VALUE);
  /* CL_INVALID_EVENT if event objects specified in event_list are not valid event objects. */
  for (cl_uint i = 0; i < num_events; i++)
    TT_RETURN_IF(!tt_object_valid(event_list[i], TT_EVENT), CL_INVALID_EVENT);
  /* CL_INVALID_CONTEXT if events specified in event_list do not belong to the same context. */
  for (cl_uint i = 1; i < num_events; i++)
    TT_RETURN_IF(event_list[i]->context != event_list[0]->context, CL_INVALID_CONTEXT);
  /* The owner of each event tells every rank when it completes (SnuCL-D 3.5), with the
   * statuses of the commands before it on its queue; the wait flushes the queues of the
   * events, as the specification asks. */
  struct tt_batch *stack[8], **held = num_events <= 8 ? stack : calloc(num_events, sizeof *held);
  TT_RETURN_IF(!held, CL_OUT_OF_HOST_MEMORY);
  for (cl_uint i = 0; i < num_events; i++) {
    held[i] = tt_event_share_in_order(event_list[i]);
    if (event_list[i]->queue && event_list[i]->queue->native)
      event_list[i]->queue->device->bp->d->clFlush(event_list[i]->queue->native);
  }
  cl_int err = CL_SUCCESS;
  for (cl_uint i = 0; i < num_events; i++) {
    /* CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the execution status of any of the
     * events in event_list is a negative integer value. */
    cl_int status = tt_event_wait(event_list[i]);
    tt_event_batch_waited(held[i], event_list[i], status);
    if (status < 0)
      err = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    /* Queues are in order: the reads before the event are done too, bytes included. */
    if (event_list[i]->queue && tt_cluster_distributed())
      tt_event_wait_broadcasts(event_list[i]->queue, event_list[i]->seq);
  }
  if (held != stack)
    free(held);
  return err;
}

cl_int CL_API_CALL tt_clGetEventInfo(cl_event event, cl_event_info param_name,
                                     size_t param_value_size, void *param_value,
                                     size_t *param_value_size_ret)
{
  /* CL_INVALID_EVENT if event is not a valid event object. */
  TT_RETURN_IF(!tt_object_valid(event, TT_EVENT), CL_INVALID_EVENT);
  cl_uint u;
  cl_int status;
  switch (param_name) {
  case CL_EVENT_COMMAND_QUEUE:
    return TT_INFO(event->queue);
  case CL_EVENT_CONTEXT:
    return TT_INFO(event->context);
  case CL_EVENT_COMMAND_TYPE:
    return TT_INFO(event->type);
  case CL_EVENT_COMMAND_EXECUTION_STATUS:
  {
    /* A program may steer by the answer: every rank asks, and hears the same. */
    TT_TURN_CHECK(event->obj.id, param_name);
    status = tt_event_agreed_status(event);
    return TT_INFO(status);
  }
  case CL_EVENT_REFERENCE_COUNT:
    u = (cl_uint)atomic_load(&event->obj.refcount);
    return TT_INFO(u);
  default:
    /* CL_INVALID_VALUE if param_name is not valid. */
    TT_RETURN_IF(1, CL_INVALID_VALUE);
  }
}

cl_int CL_API_CALL tt_clRetainEvent(cl_event event)
{
  /* CL_INVALID_EVENT if event is not a valid event object. */
  TT_RETURN_IF(!tt_object_valid(event, TT_EVENT), CL_INVALID_EVENT);
  TT_RETAIN(event);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clReleaseEvent(cl_event event)
{
  TT_TURN();
  /* CL_INVALID_EVENT if event is not a valid event object. */
  TT_RETURN_IF(!tt_object_valid(event, TT_EVENT), CL_INVALID_EVENT);
  TT_RELEASE(event);
  return CL_SUCCESS;
}

static cl_int profiling_time(cl_event event, cl_profiling_info param_name, cl_ulong *out);

cl_int CL_API_CALL tt_clGetEventProfilingInfo(cl_event event, cl_profiling_info param_name,
                                              size_t param_value_size, void *param_value,
                                              size_t *param_value_size_ret)
{
  /* CL_INVALID_EVENT if event is not a valid event object. */
  TT_RETURN_IF(!tt_object_valid(event, TT_EVENT), CL_INVALID_EVENT);
  /* CL_INVALID_VALUE if param_name is not valid. */
  TT_RETURN_IF(param_name < CL_PROFILING_COMMAND_QUEUED || param_name > CL_PROFILING_COMMAND_END,
               CL_INVALID_VALUE);
  cl_ulong t = 0;
  cl_int err = profiling_time(event, param_name, &t);
  if (err != CL_SUCCESS)
    return err;
  return TT_INFO(t);
}

/* One profiling time of a command's event (a split launch's, or one of its parts'). */
static cl_int profiling_time(cl_event event, cl_profiling_info param_name, cl_ulong *out)
{
  /* CL_PROFILING_INFO_NOT_AVAILABLE if the CL_QUEUE_PROFILING_ENABLE flag is not set for the
   * command-queue, if the execution status of the command identified by event is not
   * CL_COMPLETE or if event is a user event object. */
  TT_RETURN_IF(!event->queue || !(event->queue->props & CL_QUEUE_PROFILING_ENABLE),
               CL_PROFILING_INFO_NOT_AVAILABLE);
  /* A split launch: from its first part's queuing, submission and start to its last part's
   * end (each part answered by its owner, on every rank alike). */
  if (event->nspan) {
    cl_ulong span = 0;
    for (cl_uint i = 0; i < event->nspan; i++) {
      cl_ulong t = 0;
      cl_int err = profiling_time(event->span[i], param_name, &t);
      if (err != CL_SUCCESS)
        return err;
      if (i == 0 || (param_name == CL_PROFILING_COMMAND_END ? t > span : t < span))
        span = t;
    }
    *out = span;
    return CL_SUCCESS;
  }
  /* The owner answers for every rank (times of its clock). */
  cl_ulong t = 0;
  size_t len = sizeof t;
  cl_int err = CL_PROFILING_INFO_NOT_AVAILABLE;
  if (event->owner == tt_cluster_rank()) {
    /* A read whose bytes went on to other ranks: the times of its native command. */
    cl_event native = event->native ? event->native : event->prof;
    if (native && tt_event_command_status(event) == CL_COMPLETE)
      err = TT_NATIVE_DISPATCH(native)->clGetEventProfilingInfo(native, param_name, sizeof t,
                                                                &t, NULL);
  }
  if (tt_cluster_distributed() && tt_cluster_share_answer(event->owner, &err, &t, &len, sizeof t))
    err = CL_OUT_OF_RESOURCES;
  if (err != CL_SUCCESS) {
    TT_LOG(TT_LOG_ERR, "clGetEventProfilingInfo: %s", tt_error_name(err));
    return err;
  }
  *out = t;
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clSetEventCallback(cl_event event, cl_int command_exec_callback_type,
                                         void (CL_CALLBACK *pfn_notify)(cl_event, cl_int, void *),
                                         void *user_data)
{
  /* CL_INVALID_EVENT if event is not a valid event object. */
  TT_RETURN_IF(!tt_object_valid(event, TT_EVENT), CL_INVALID_EVENT);
  /* CL_INVALID_VALUE if pfn_event_notify is NULL or if command_exec_callback_type is not
   * CL_SUBMITTED, CL_RUNNING or CL_COMPLETE. */
  TT_RETURN_IF(pfn_notify == NULL, CL_INVALID_VALUE);
  TT_RETURN_IF(command_exec_callback_type != CL_SUBMITTED &&
                   command_exec_callback_type != CL_RUNNING &&
                   command_exec_callback_type != CL_COMPLETE,
               CL_INVALID_VALUE);
  tt_event_share_with_all(event);
  return tt_event_add_callback(event, command_exec_callback_type, pfn_notify, user_data);
}

cl_event CL_API_CALL tt_clCreateUserEvent(cl_context context, cl_int *errcode_ret)
{
  TT_TURN_CHECK(tt_check_id(context));
  cl_int err = CL_SUCCESS;
  cl_event e = NULL;
  /* CL_INVALID_CONTEXT if context is not a valid context. */
  TT_GOTO_IF(!tt_object_valid(context, TT_CONTEXT), CL_INVALID_CONTEXT);
  e = tt_event_new_user(context);
  TT_GOTO_IF(!e, CL_OUT_OF_HOST_MEMORY);
out:
  tt_set_err(errcode_ret, err);
  return e;
}

cl_int CL_API_CALL tt_clSetUserEventStatus(cl_event event, cl_int execution_status)
{
  TT_TURN_CHECK(tt_check_id(event), (uint64_t)execution_status);
  /* CL_INVALID_EVENT if event is not a valid user event object. */
  TT_RETURN_IF(!tt_object_valid(event, TT_EVENT) || event->type != CL_COMMAND_USER ||
                   event->queue, CL_INVALID_EVENT);
  /* CL_INVALID_VALUE if the execution_status is not CL_COMPLETE or a negative integer. */
  TT_RETURN_IF(execution_status != CL_COMPLETE && execution_status >= 0, CL_INVALID_VALUE);
  if (execution_status < 0)
    atomic_store(&event->context->may_fail, true);
  return tt_event_set_user_status(event, execution_status);
}
