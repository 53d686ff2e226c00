/* Command queue entry points: the divergence check, then the bodies (runtime/command/compound.h),
 * which check the arguments as the specification says. */
#include "config.h"

#include "icd/icd.h"

#include "runtime/job/check.h"
#include "runtime/job/turns.h"

cl_command_queue CL_API_CALL tt_clCreateCommandQueue(cl_context context, cl_device_id device,
                                                     cl_command_queue_properties properties,
                                                     cl_int *errcode_ret)
{
  TT_TURN_CHECK(tt_check_id(context), tt_check_id(device), properties);
  cl_int err = CL_SUCCESS;
  /* CL_INVALID_CONTEXT if context is not a valid context. */
  TT_GOTO_IF(!tt_object_valid(context, TT_CONTEXT), CL_INVALID_CONTEXT);
  /* CL_INVALID_DEVICE if device is not a valid device or is not associated with context. */
  TT_GOTO_IF(!tt_object_valid(device, TT_DEVICE) ||
                 !(tt_context_has_device(context, device) || device == context->aggregate),
             CL_INVALID_DEVICE);
  /* The aggregate device's queue is its first member's, with the others' beside it. */
  cl_device_id agg = device->members ? device : NULL;
  device = tt_device_resolve(device);
  /* CL_INVALID_VALUE if values specified in properties are not valid. */
  TT_GOTO_IF(properties & ~(cl_command_queue_properties)(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE |
                                                         CL_QUEUE_PROFILING_ENABLE),
             CL_INVALID_VALUE);
  return tt_queue_new(context, device, agg, properties, errcode_ret);
out:
  tt_set_err(errcode_ret, err);
  return NULL;
}

cl_int CL_API_CALL tt_clRetainCommandQueue(cl_command_queue command_queue)
{
  /* CL_INVALID_COMMAND_QUEUE if command_queue is not a valid command-queue. */
  TT_RETURN_IF(!tt_object_valid(command_queue, TT_QUEUE), CL_INVALID_COMMAND_QUEUE);
  atomic_fetch_add(&command_queue->program_refs, 1);
  TT_RETAIN(command_queue);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clReleaseCommandQueue(cl_command_queue command_queue)
{
  TT_TURN();
  /* CL_INVALID_COMMAND_QUEUE if command_queue is not a valid command-queue. */
  TT_RETURN_IF(!tt_object_valid(command_queue, TT_QUEUE), CL_INVALID_COMMAND_QUEUE);
  tt_queue_release(command_queue);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clGetCommandQueueInfo(cl_command_queue command_queue,
                                            cl_command_queue_info param_name,
                                            size_t param_value_size, void *param_value,
                                            size_t *param_value_size_ret)
{
  /* CL_INVALID_COMMAND_QUEUE if command_queue is not a valid command-queue. */
  TT_RETURN_IF(!tt_object_valid(command_queue, TT_QUEUE), CL_INVALID_COMMAND_QUEUE);
  cl_uint u;
  switch (param_name) {
  case CL_QUEUE_CONTEXT:
    return TT_INFO(command_queue->context);
  case CL_QUEUE_DEVICE: {
    cl_device_id d = command_queue->aggregate ? command_queue->aggregate : command_queue->device;
    return TT_INFO(d);
  }
  case CL_QUEUE_REFERENCE_COUNT:
    u = (cl_uint)atomic_load(&command_queue->obj.refcount);
    return TT_INFO(u);
  case CL_QUEUE_PROPERTIES:
    return TT_INFO(command_queue->props);
  default:
    /* CL_INVALID_VALUE if param_name is not one of the supported values. */
    TT_RETURN_IF(1, CL_INVALID_VALUE);
  }
}

cl_int CL_API_CALL tt_clSetCommandQueueProperty(cl_command_queue command_queue,
                                                cl_command_queue_properties properties,
                                                cl_bool enable,
                                                cl_command_queue_properties *old_properties)
{
  /* OpenCL 1.0 only; deprecated since 1.1. */
  TT_RETURN_IF(!tt_object_valid(command_queue, TT_QUEUE), CL_INVALID_COMMAND_QUEUE);
  TT_RETURN_IF(1, CL_INVALID_OPERATION);
}

cl_int CL_API_CALL tt_clFlush(cl_command_queue command_queue)
{
  TT_TURN_CHECK(tt_check_id(command_queue));
  return tt_queue_flush(command_queue);
}

cl_int CL_API_CALL tt_clFinish(cl_command_queue command_queue)
{
  TT_TURN_CHECK(tt_check_id(command_queue));
  return tt_queue_finish(command_queue);
}
