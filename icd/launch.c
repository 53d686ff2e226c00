/* Kernel launch entry points: the divergence check, then the bodies (runtime/command/compound.h),
 * which check the arguments as the specification says. */
#include "config.h"

#include "icd/icd.h"

#include "runtime/job/check.h"
#include "runtime/job/turns.h"

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

cl_int CL_API_CALL tt_clEnqueueNativeKernel(cl_command_queue command_queue,
                                            void (CL_CALLBACK *user_func)(void *), void *args,
                                            size_t cb_args, cl_uint num_mem_objects,
                                            const cl_mem *mem_list, const void **args_mem_loc,
                                            cl_uint num_events_in_wait_list,
                                            const cl_event *event_wait_list, cl_event *event)
{
  CHECK_QUEUE(command_queue);
  /* CL_INVALID_OPERATION if the device associated with command_queue cannot execute the
   * native kernel (Tutti's devices report CL_EXEC_KERNEL only). */
  TT_RETURN_IF(1, CL_INVALID_OPERATION);
}
