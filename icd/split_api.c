/* cl_tutti_split's entry points (doc/split.md): kernel annotations and #pragma tutti, buffer
 * distributions, and the checks of a split launch (icd/split_impl.h). */
#include "config.h"

#include "icd/split_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotations/partition.h"
#include "runtime/command/plan.h"
#include "runtime/job/check.h"
#include "runtime/job/stats.h"
#include "runtime/memory/window.h"

/* --- annotations ---------------------------------------------------------------------------- */

cl_int CL_API_CALL tt_clSetKernelAnnotationTUTTI(cl_kernel kernel, const char *annotation)
{
  TT_CHECK(tt_check_id(kernel), tt_check_bytes(annotation, annotation ? strlen(annotation) : 0),
           annotation != NULL);
  /* CL_INVALID_KERNEL if kernel is not a valid kernel object. */
  TT_RETURN_IF(!tt_object_valid(kernel, TT_KERNEL), CL_INVALID_KERNEL);
  char *text = annotation ? strdup(annotation) : NULL;
  TT_RETURN_IF(annotation && !text, CL_OUT_OF_HOST_MEMORY);
  pthread_mutex_lock(&kernel->obj.lock);
  struct tt_ann *a = NULL;
  char err[256] = "";
  /* Without source (a program from binaries) the parameters are unknown: the text is kept,
   * and launches run whole. */
  if (annotation && kernel->nparams >= 0 && !(a = tt_split_kernel_parse(kernel, annotation, err, sizeof err))) {
    pthread_mutex_unlock(&kernel->obj.lock);
    free(text);
    TT_LOG(TT_LOG_ERR, "clSetKernelAnnotationTUTTI: kernel '%s', %s", kernel->name, err);
    /* CL_INVALID_VALUE for an annotation that does not parse (syntax, unknown parameter,
     * non-affine index). */
    return CL_INVALID_VALUE;
  }
  tt_split_memo_drop(kernel);
  tt_ann_free(kernel->ann);
  free(kernel->ann_text);
  kernel->ann = a;
  kernel->ann_text = text;
  pthread_mutex_unlock(&kernel->obj.lock);
  return CL_SUCCESS;
}

/* --- distributions -------------------------------------------------------------------------- */

cl_int CL_API_CALL tt_clSetBufferDistributionTUTTI(cl_mem buffer, const cl_tutti_distribution *d)
{
  TT_CHECK(tt_check_id(buffer), d ? d->kind : 0, d ? d->ndims : 0, d ? d->elem_size : 0,
           tt_check_bytes(d ? d->extents : NULL, d ? sizeof d->extents : 0),
           tt_check_bytes(d ? d->chunk : NULL, d ? sizeof d->chunk : 0),
           d ? tt_check_ids(d->devices, d->num_devices) : 0);
  /* CL_INVALID_MEM_OBJECT if buffer is not a valid buffer object, or is a sub-buffer. */
  TT_RETURN_IF(!tt_object_valid(buffer, TT_MEM) || buffer->parent, CL_INVALID_MEM_OBJECT);
  if (!d) {
    tt_plan_lock();
    tt_buffer_dist_free(buffer);
    tt_plan_unlock();
    return CL_SUCCESS;
  }
  /* CL_INVALID_VALUE for an unknown kind, ndims outside 1..3, a zero element size, extents
   * whose product times elem_size is not the buffer's size, a zero CYCLIC chunk, or devices
   * NULL with num_devices > 0. */
  TT_RETURN_IF(d->kind != CL_TUTTI_DIST_BLOCK && d->kind != CL_TUTTI_DIST_CYCLIC &&
                   d->kind != CL_TUTTI_DIST_REPLICATED,
               CL_INVALID_VALUE);
  TT_RETURN_IF(d->ndims < 1 || d->ndims > 3 || d->elem_size == 0, CL_INVALID_VALUE);
  size_t bytes = d->elem_size;
  for (cl_uint i = 0; i < d->ndims; i++) {
    TT_RETURN_IF(d->extents[i] == 0 || bytes > SIZE_MAX / d->extents[i], CL_INVALID_VALUE);
    bytes *= d->extents[i];
    TT_RETURN_IF(d->kind == CL_TUTTI_DIST_CYCLIC && d->chunk[i] == 0, CL_INVALID_VALUE);
  }
  TT_RETURN_IF(bytes != buffer->size, CL_INVALID_VALUE);
  TT_RETURN_IF(d->num_devices > 0 && d->devices == NULL, CL_INVALID_VALUE);
  /* CL_INVALID_DEVICE if a device is not a device of the buffer's context. */
  for (cl_uint i = 0; i < d->num_devices; i++)
    TT_RETURN_IF(!tt_object_valid(d->devices[i], TT_DEVICE) ||
                     !tt_context_has_device(buffer->context, d->devices[i]),
                 CL_INVALID_DEVICE);
  struct tt_distribution *t = calloc(1, sizeof *t);
  cl_uint n = d->num_devices ? d->num_devices : buffer->context->ndevices;
  cl_device_id *devs = malloc(n * sizeof *devs);
  if (!t || !devs) {
    free(t);
    free(devs);
    return CL_OUT_OF_HOST_MEMORY;
  }
  memcpy(devs, d->num_devices ? d->devices : buffer->context->devices, n * sizeof *devs);
  *t = (struct tt_distribution){d->kind, d->ndims, d->elem_size, {0}, {0}, n, devs};
  for (cl_uint i = 0; i < d->ndims; i++) {
    t->extents[i] = d->extents[i];
    t->chunk[i] = d->chunk[i];
  }
  tt_plan_lock();
  tt_buffer_dist_free(buffer);
  buffer->dist = t;
  /* A device then holds windows of it, not all of it (when it holds nothing yet). */
  tt_window_enable(buffer);
  tt_plan_unlock();
  return CL_SUCCESS;
}

/* --- parts ---------------------------------------------------------------------------------- */

/* The split entry point's own checks, before anything is planned. */
cl_int tt_split_check(cl_uint nq, const cl_command_queue *qs, cl_kernel kernel,
                          cl_uint nwait, const cl_event *wait)
{
  /* CL_INVALID_VALUE if num_queues is 0 or queues is NULL. */
  TT_RETURN_IF(nq == 0 || qs == NULL, CL_INVALID_VALUE);
  /* CL_INVALID_COMMAND_QUEUE if a queue is not a valid command-queue. */
  for (cl_uint i = 0; i < nq; i++)
    TT_RETURN_IF(!tt_object_valid(qs[i], TT_QUEUE), CL_INVALID_COMMAND_QUEUE);
  /* CL_INVALID_CONTEXT if the queues are not all of one context. */
  for (cl_uint i = 1; i < nq; i++)
    TT_RETURN_IF(qs[i]->context != qs[0]->context, CL_INVALID_CONTEXT);
  /* CL_INVALID_KERNEL if kernel is not a valid kernel object. */
  TT_RETURN_IF(!tt_object_valid(kernel, TT_KERNEL), CL_INVALID_KERNEL);
  /* The wait list, as clEnqueueNDRangeKernel checks it, before any part is planned. */
  return tt_order_check_wait_list(qs[0]->context, nwait, wait);
}

cl_int CL_API_CALL tt_clEnqueueSplitNDRangeKernelTUTTI(cl_uint num_queues,
                                                       const cl_command_queue *queues,
                                                       cl_kernel kernel, cl_uint work_dim,
                                                       const size_t *global_work_offset,
                                                       const size_t *global_work_size,
                                                       const size_t *local_work_size,
                                                       cl_uint num_events_in_wait_list,
                                                       const cl_event *event_wait_list,
                                                       cl_event *event)
{
  return tt_split_enqueue(num_queues, queues, kernel, work_dim, global_work_offset,
                          global_work_size, local_work_size, num_events_in_wait_list,
                          event_wait_list, event);
}

/* Exported for programs that link libtutti itself: the entry points under their names. */
TT_API __typeof__(tt_clSetKernelAnnotationTUTTI) clSetKernelAnnotationTUTTI
    __attribute__((alias("tt_clSetKernelAnnotationTUTTI")));
TT_API __typeof__(tt_clSetBufferDistributionTUTTI) clSetBufferDistributionTUTTI
    __attribute__((alias("tt_clSetBufferDistributionTUTTI")));
TT_API __typeof__(tt_clEnqueueSplitNDRangeKernelTUTTI) clEnqueueSplitNDRangeKernelTUTTI
    __attribute__((alias("tt_clEnqueueSplitNDRangeKernelTUTTI")));
