/* Kernel launch entry points: the divergence check, then the bodies (runtime/command/compound.h),
 * which check the arguments as the specification says. */
#include "config.h"

#include "icd/icd.h"

#include "runtime/job/check.h"
#include "runtime/job/turns.h"

#include <stdlib.h>

cl_int CL_API_CALL tt_clEnqueueNDRangeKernel(cl_command_queue command_queue, cl_kernel kernel,
                                             cl_uint work_dim, const size_t *global_work_offset,
                                             const size_t *global_work_size,
                                             const size_t *local_work_size,
                                             cl_uint num_events_in_wait_list,
                                             const cl_event *event_wait_list, cl_event *event)
{
  TT_TURN_CHECK_IF(!(tt_object_valid(command_queue, TT_QUEUE) && command_queue->nmembers > 1), tt_check_id(command_queue), tt_check_id(kernel), work_dim, tt_check_bytes(global_work_size, work_dim <= 3 ? work_dim * sizeof(size_t) : 0), tt_check_bytes(global_work_offset, work_dim <= 3 ? work_dim * sizeof(size_t) : 0), tt_check_bytes(local_work_size, work_dim <= 3 ? work_dim * sizeof(size_t) : 0), num_events_in_wait_list, event != NULL);
  return tt_enqueue_ndrange(command_queue, kernel, work_dim, global_work_offset,
                            global_work_size, local_work_size, num_events_in_wait_list,
                            event_wait_list, event);
}

cl_int CL_API_CALL tt_clEnqueueTask(cl_command_queue command_queue, cl_kernel kernel,
                                    cl_uint num_events_in_wait_list,
                                    const cl_event *event_wait_list, cl_event *event)
{
  TT_TURN_CHECK(tt_check_id(command_queue), tt_check_id(kernel), tt_check_ids(event_wait_list, num_events_in_wait_list), event != NULL);
  size_t one = 1;
  cl_int err = tt_enqueue_ndrange(command_queue, kernel, 1, NULL, &one, &one,
                                  num_events_in_wait_list, event_wait_list, event);
  if (err == CL_SUCCESS && event)
    (*event)->type = CL_COMMAND_TASK;
  return err;
}

/* clEnqueueNativeKernel's checks; the places of the memory objects' handles in args as
 * offsets (CL_INVALID_VALUE for one outside it). */
static cl_int check_native(cl_command_queue q, void (CL_CALLBACK *user_func)(void *),
                           const void *args, size_t cb_args, cl_uint n, const cl_mem *mem_list,
                           const void **args_mem_loc, size_t *offsets)
{
  CHECK_QUEUE(q);
  /* CL_INVALID_VALUE if user_func is NULL; if args is NULL and cb_args > 0, or args is not
   * NULL and cb_args is 0; if num_mem_objects > 0 and mem_list or args_mem_loc are NULL, or
   * num_mem_objects is 0 and they are not. */
  TT_RETURN_IF(!user_func, CL_INVALID_VALUE);
  TT_RETURN_IF((!args && cb_args) || (args && !cb_args), CL_INVALID_VALUE);
  TT_RETURN_IF(n && (!mem_list || !args_mem_loc), CL_INVALID_VALUE);
  TT_RETURN_IF(!n && (mem_list || args_mem_loc), CL_INVALID_VALUE);
  for (cl_uint i = 0; i < n; i++) {
    /* CL_INVALID_MEM_OBJECT if one or more memory objects in mem_list are not valid or are
     * not buffer objects. */
    TT_RETURN_IF(!tt_object_valid(mem_list[i], TT_MEM) || mem_list[i]->image ||
                     mem_list[i]->context != q->context,
                 CL_INVALID_MEM_OBJECT);
    const char *at = args_mem_loc[i];
    TT_RETURN_IF(!at || at < (const char *)args ||
                     at + sizeof(cl_mem) > (const char *)args + cb_args,
                 CL_INVALID_VALUE);
    offsets[i] = (size_t)(at - (const char *)args);
  }
  /* CL_INVALID_OPERATION if the device associated with command_queue cannot execute the
   * native kernel (the aggregate device's queue, one of several members, cannot). */
  cl_device_exec_capabilities caps = 0;
  tt_device_info(q->device, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL);
  TT_RETURN_IF(q->aggregate || !(caps & CL_EXEC_NATIVE_KERNEL), CL_INVALID_OPERATION);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clEnqueueNativeKernel(cl_command_queue command_queue,
                                            void (CL_CALLBACK *user_func)(void *), void *args,
                                            size_t cb_args, cl_uint num_mem_objects,
                                            const cl_mem *mem_list, const void **args_mem_loc,
                                            cl_uint num_events_in_wait_list,
                                            const cl_event *event_wait_list, cl_event *event)
{
  size_t stack[16], *offsets = num_mem_objects <= 16 ? stack
                                                      : malloc(num_mem_objects * sizeof *offsets);
  TT_RETURN_IF(!offsets, CL_OUT_OF_HOST_MEMORY);
  cl_int err = check_native(command_queue, user_func, args, cb_args, num_mem_objects, mem_list,
                            args_mem_loc, offsets);
  if (err == CL_SUCCESS) {
    /* The function and the arguments' bytes are this process's own: not hashed. */
    TT_TURN_CHECK(command_queue->obj.id, cb_args, tt_check_ids(mem_list, num_mem_objects),
                  tt_check_bytes(offsets, num_mem_objects * sizeof *offsets),
                  num_events_in_wait_list, event != NULL);
    err = tt_cmd_native_kernel(command_queue, user_func, args, cb_args, num_mem_objects,
                               mem_list, offsets, num_events_in_wait_list, event_wait_list,
                               event);
  }
  if (offsets != stack)
    free(offsets);
  return err;
}
