/* cl_tutti_split's entry points (doc/split.md): kernel annotations and #pragma tutti, buffer
 * distributions, and the checks of a split launch (runtime/command/split_impl.h). */
#include "config.h"

#include "icd/icd.h"

#include "annotations/annotation.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotations/partition.h"
#include "runtime/command/coherence.h"
#include "runtime/job/check.h"
#include "runtime/job/turns.h"
#include "runtime/job/stats.h"
#include "runtime/memory/window.h"

/* --- annotations ---------------------------------------------------------------------------- */

cl_int CL_API_CALL tt_clSetKernelAnnotationTUTTI(cl_kernel kernel, const char *annotation)
{
  TT_TURN_CHECK(tt_check_id(kernel), tt_check_bytes(annotation, annotation ? strlen(annotation) : 0),
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
  tt_ann_free(kernel->ann_merged);
  free(kernel->ann_text);
  kernel->ann = a;
  kernel->ann_text = text;
  /* Written, or removed: no annotation is derived in its place. */
  kernel->ann_merged = NULL;
  kernel->derived = false;
  kernel->auto_tried = true;
  kernel->accumulated = 0;
  pthread_mutex_unlock(&kernel->obj.lock);
  return CL_SUCCESS;
}

/* --- distributions -------------------------------------------------------------------------- */

cl_int CL_API_CALL tt_clSetBufferDistributionTUTTI(cl_mem buffer, const cl_tutti_distribution *d)
{
  TT_TURN_CHECK(tt_check_id(buffer), d ? d->kind : 0, d ? d->ndims : 0, d ? d->elem_size : 0,
           tt_check_bytes(d ? d->extents : NULL, d ? sizeof d->extents : 0),
           tt_check_bytes(d ? d->chunk : NULL, d ? sizeof d->chunk : 0),
           d ? tt_check_ids(d->devices, d->num_devices) : 0);
  return tt_buffer_distribute(buffer, d);
}

/* --- parts ---------------------------------------------------------------------------------- */

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
  TT_TURN();
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
