/* Kernel launches: clEnqueueNDRangeKernel, clEnqueueTask and their checks (the work sizes,
 * the arguments set, the work-group limits), then the launch as a command
 * (runtime/command/launch.h), or on the aggregate device's queue a split launch. */
#include "config.h"

#include "runtime/command/compound.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/command/launch.h"
#include "runtime/job/check.h"
#include "runtime/memory/window.h"

/* The work-group checks, from replicated facts only (the device's description and the
 * kernel's work-group facts its owner shared at clCreateKernel), so that every rank refuses
 * a launch alike instead of the owner's backend alone. Caller holds the kernel's lock. */
static cl_int check_work_groups(cl_device_id dev, cl_kernel k, cl_uint dim, const size_t *gws,
                                const size_t *lws)
{
  const struct tt_kernel_device *kd = &k->dev[dev->index];
  bool reqd = kd->known && (kd->compile_wg[0] || kd->compile_wg[1] || kd->compile_wg[2]);
  /* CL_INVALID_WORK_GROUP_SIZE if local_work_size is NULL and the
   * __attribute__((reqd_work_group_size(X, Y, Z))) qualifier is used to declare the
   * work-group size for kernel in the program source. */
  TT_RETURN_IF(!lws && reqd, CL_INVALID_WORK_GROUP_SIZE);
  if (!lws)
    return CL_SUCCESS;
  size_t max_items[3] = {0}, max_wg = 0;
  tt_cluster_device_query(dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof max_items, max_items, NULL);
  tt_cluster_device_query(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_wg, &max_wg, NULL);
  size_t total = 1;
  for (cl_uint i = 0; i < 3; i++) {
    size_t l = i < dim ? lws[i] : 1;
    /* CL_INVALID_WORK_GROUP_SIZE if local_work_size is specified and number of work-items
     * specified by global_work_size is not evenly divisible by size of work-group given by
     * local_work_size or does not match the work-group size specified for kernel using the
     * __attribute__((reqd_work_group_size(X, Y, Z))) qualifier in program source. */
    TT_RETURN_IF(l == 0 || (i < dim && gws[i] % l), CL_INVALID_WORK_GROUP_SIZE);
    TT_RETURN_IF(reqd && l != kd->compile_wg[i], CL_INVALID_WORK_GROUP_SIZE);
    /* CL_INVALID_WORK_ITEM_SIZE if the number of work-items specified in any of
     * local_work_size[0], ... local_work_size[work_dim - 1] is greater than the corresponding
     * values specified by CL_DEVICE_MAX_WORK_ITEM_SIZES[0], ...
     * CL_DEVICE_MAX_WORK_ITEM_SIZES[work_dim - 1]. */
    TT_RETURN_IF(i < dim && max_items[i] && l > max_items[i], CL_INVALID_WORK_ITEM_SIZE);
    total *= l;
  }
  /* CL_INVALID_WORK_GROUP_SIZE if local_work_size is specified and the total number of
   * work-items in the work-group is greater than the value specified by
   * CL_DEVICE_MAX_WORK_GROUP_SIZE in the table of OpenCL Device Queries (or, for this
   * kernel on this device, CL_KERNEL_WORK_GROUP_SIZE). */
  TT_RETURN_IF(max_wg && total > max_wg, CL_INVALID_WORK_GROUP_SIZE);
  TT_RETURN_IF(kd->known && kd->wg_size && total > kd->wg_size, CL_INVALID_WORK_GROUP_SIZE);
  /* CL_OUT_OF_RESOURCES if ... the explicitly specified local_work_size causes a failure to
   * execute the kernel because of insufficient resources such as ... local memory. */
  cl_ulong local = tt_kernel_local_bytes(k, kd), have = 0;
  tt_cluster_device_query(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof have, &have, NULL);
  TT_RETURN_IF(kd->known && have && local > have, CL_OUT_OF_RESOURCES);
  return CL_SUCCESS;
}

cl_int tt_enqueue_check_launch(cl_command_queue q, cl_kernel kernel, cl_uint work_dim,
                               const size_t *global_work_offset, const size_t *global_work_size,
                               const size_t *local_work_size)
{
  CHECK_QUEUE(q);
  /* CL_INVALID_KERNEL if kernel is not a valid kernel object. */
  TT_RETURN_IF(!tt_object_valid(kernel, TT_KERNEL), CL_INVALID_KERNEL);
  /* CL_INVALID_CONTEXT if context associated with command_queue and kernel are not the
   * same. */
  TT_RETURN_IF(kernel->context != q->context, CL_INVALID_CONTEXT);
  /* CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built program executable
   * available for device associated with command_queue. */
  TT_RETURN_IF((q->device->actual && !kernel->native[q->domain]) ||
                   !kernel->built_on[q->device->index],
               CL_INVALID_PROGRAM_EXECUTABLE);
  /* CL_INVALID_WORK_DIMENSION if work_dim is not a valid value (1 to 3). */
  TT_RETURN_IF(work_dim < 1 || work_dim > 3, CL_INVALID_WORK_DIMENSION);
  /* CL_INVALID_GLOBAL_WORK_SIZE if global_work_size is NULL, or if any of the values
   * specified in global_work_size[0..work_dim-1] are 0. */
  TT_RETURN_IF(global_work_size == NULL, CL_INVALID_GLOBAL_WORK_SIZE);
  for (cl_uint i = 0; i < work_dim; i++)
    TT_RETURN_IF(global_work_size[i] == 0, CL_INVALID_GLOBAL_WORK_SIZE);
  /* CL_INVALID_GLOBAL_OFFSET if global_work_offset[i] + global_work_size[i] exceeds the
   * range of size_t. */
  for (cl_uint i = 0; global_work_offset && i < work_dim; i++)
    TT_RETURN_IF(global_work_offset[i] > SIZE_MAX - global_work_size[i], CL_INVALID_GLOBAL_OFFSET);
  /* CL_INVALID_KERNEL_ARGS if the kernel argument values have not been specified (or a
   * buffer argument was released since). */
  pthread_mutex_lock(&kernel->obj.lock);
  cl_int argerr = CL_SUCCESS;
  for (cl_uint i = 0; i < kernel->nargs && argerr == CL_SUCCESS; i++) {
    struct tt_kernel_arg *a = &kernel->args[i];
    if (!a->set || (a->mem && (!tt_object_valid(a->mem, TT_MEM) || a->mem->obj.id != a->mem_id)))
      argerr = CL_INVALID_KERNEL_ARGS;
    else if (a->mem && q->device->actual && !a->mem->native[q->domain] && !tt_windowed(a->mem))
      argerr = CL_MISALIGNED_SUB_BUFFER_OFFSET;
  }
  if (argerr == CL_SUCCESS)
    argerr = check_work_groups(q->device, kernel, work_dim, global_work_size, local_work_size);
  pthread_mutex_unlock(&kernel->obj.lock);
  TT_RETURN_IF(argerr != CL_SUCCESS, argerr);
  return CL_SUCCESS;
}


cl_int tt_enqueue_ndrange(cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
                          const size_t *global_work_offset, const size_t *global_work_size,
                          const size_t *local_work_size, cl_uint num_events_in_wait_list,
                          const cl_event *event_wait_list, cl_event *event)
{
  if (tt_object_valid(command_queue, TT_QUEUE) && command_queue->nmembers > 1)
    return tt_aggregate_launch(command_queue, kernel, work_dim, global_work_offset,
                               global_work_size, local_work_size, num_events_in_wait_list,
                               event_wait_list, event);
  return tt_enqueue_kernel(command_queue, kernel, work_dim, global_work_offset, global_work_size,
                           local_work_size, num_events_in_wait_list, event_wait_list, event);
}

cl_int tt_enqueue_kernel(cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
                         const size_t *global_work_offset, const size_t *global_work_size,
                         const size_t *local_work_size, cl_uint num_events_in_wait_list,
                         const cl_event *event_wait_list, cl_event *event)
{
  cl_int err = tt_enqueue_check_launch(command_queue, kernel, work_dim, global_work_offset,
                                       global_work_size, local_work_size);
  if (err != CL_SUCCESS)
    return err;
  return tt_cmd_launch(command_queue, kernel, work_dim, global_work_offset, global_work_size,
                           local_work_size, NULL, 0, false, NULL, NULL, 0, num_events_in_wait_list,
                           event_wait_list, event);
}


