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

/* The pragma annotation of kernel `name` in program p, or NULL. */
static const struct tt_ann_pragma *pragma_of(cl_program p, const char *name)
{
  for (size_t i = 0; i < p->npragmas; i++)
    if (p->pragmas[i].kernel && !strcmp(p->pragmas[i].kernel, name))
      return &p->pragmas[i];
  return NULL;
}

cl_int tt_split_check_pragmas(cl_program p, const char *options, char **error)
{
  *error = NULL;
  if (!p->npragmas)
    return CL_SUCCESS;
  struct tt_ann_macro *macros;
  size_t nmacros = tt_ann_macros(options, &macros);
  char msg[512] = "";
  for (size_t i = 0; i < p->npragmas && !msg[0]; i++) {
    const struct tt_ann_pragma *pr = &p->pragmas[i];
    if (!pr->kernel) {
      snprintf(msg, sizeof msg, "line %d: #pragma tutti names no kernel and no kernel follows it",
               pr->line);
      break;
    }
    if (pragma_of(p, pr->kernel) != pr) {
      snprintf(msg, sizeof msg, "#pragma tutti of kernel '%s', line %d: the kernel's second "
               "annotation (the first is on line %d)", pr->kernel, pr->line,
               pragma_of(p, pr->kernel)->line);
      break;
    }
    struct tt_ann_param *params;
    long n = tt_ann_kernel_params(p->stripped, pr->kernel, &params);
    if (n < 0) {
      snprintf(msg, sizeof msg, "#pragma tutti of kernel '%s', line %d: the source defines no "
               "such kernel", pr->kernel, pr->line);
      break;
    }
    char err[256];
    struct tt_ann *a = tt_ann_parse(pr->text, params, (size_t)n, macros, nmacros, err, sizeof err);
    if (!a) {
      /* "column N: ..." of the annotation, made a column of the source line. */
      int col = 0;
      const char *rest = err;
      if (sscanf(err, "column %d:", &col) == 1 && (rest = strchr(err, ':')))
        rest += 2;
      snprintf(msg, sizeof msg, "#pragma tutti of kernel '%s', line %d, column %d: %s",
               pr->kernel, pr->line, pr->column + (col > 0 ? col - 1 : 0), rest);
    }
    tt_ann_free(a);
    free(params);
  }
  free(macros);
  if (msg[0]) {
    size_t len = strlen(msg);
    *error = malloc(len + 2);
    if (!*error)
      return CL_OUT_OF_HOST_MEMORY;
    snprintf(*error, len + 2, "%s\n", msg);
  }
  return CL_SUCCESS;
}

/* Parses text for kernel k (caller holds k's lock). */
static struct tt_ann *parse_for(cl_kernel k, const char *text, char *err, size_t errlen)
{
  struct tt_ann_macro *macros;
  size_t nmacros = tt_ann_macros(k->program->options, &macros);
  struct tt_ann *a = tt_ann_parse(text, k->params, (size_t)k->nparams, macros, nmacros, err, errlen);
  free(macros);
  return a;
}

void tt_split_kernel_init(cl_kernel k)
{
  cl_program p = k->program;
  k->nparams = -1;
  if (!p->stripped)
    return;
  k->nparams = tt_ann_kernel_params(p->stripped, k->name, &k->params);
  /* A signature the scan reads otherwise than the backend (macros in it): no annotations. */
  if (k->nparams >= 0 && (cl_uint)k->nparams != k->nargs) {
    free(k->params);
    k->params = NULL;
    k->nparams = -1;
  }
  const struct tt_ann_pragma *pr = pragma_of(p, k->name);
  if (!pr || k->nparams < 0)
    return;
  char err[256];
  k->ann = parse_for(k, pr->text, err, sizeof err);
  k->ann_text = k->ann ? strdup(pr->text) : NULL;
}


void tt_split_variants_free(struct tt_variant *v)
{
  while (v) {
    struct tt_variant *next = v->next;
    if (v->kernel)
      TT_RELEASE(v->kernel);
    if (v->program)
      TT_RELEASE(v->program);
    free(v);
    v = next;
  }
}

void tt_split_kernel_free(cl_kernel k)
{
  tt_split_memo_drop(k);
  tt_balance_kernel_free(k);
  tt_split_variants_free(k->variants);
  tt_ann_free(k->ann);
  free(k->ann_text);
  free(k->params);
}

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
  if (annotation && kernel->nparams >= 0 && !(a = parse_for(kernel, annotation, err, sizeof err))) {
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
