/* Kernel launches: clEnqueueNDRangeKernel, clEnqueueTask and their checks, and the launches
 * of split-launch parts and of the aggregate device's members (tt_enqueue_launch), each one
 * command (runtime/command/command.h) whose buffer arguments are its uses. */
#include "config.h"

#include "icd/icd.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/command/command.h"
#include "runtime/command/plan.h"
#include "runtime/job/check.h"
#include "runtime/job/stats.h"
#include "runtime/job/trace.h"
#include "runtime/memory/window.h"
#include "runtime/order/event.h"

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

/* Whether argument i of k is a windowed buffer, and the bytes of it that a launch with these
 * uses takes a window of: all of them, or for a rebased argument, those uses name of it. */
static bool arg_window(cl_kernel k, cl_uint i, const struct tt_launch_use *uses, size_t nuses,
                       const struct tt_rebase *rebase, size_t *lo, size_t *hi)
{
  cl_mem m = k->args[i].kind == TT_ARG_MEM ? k->args[i].mem : NULL;
  if (!m || !tt_windowed(m))
    return false;
  *lo = 0;
  *hi = m->size;
  if (rebase && i < 64 && rebase[i].offset_arg) {
    *lo = SIZE_MAX;
    *hi = 0;
    for (size_t u = 0; u < nuses; u++)
      if (uses[u].mem == m) {
        *lo = uses[u].off < *lo ? uses[u].off : *lo;
        *hi = uses[u].off + uses[u].len > *hi ? uses[u].off + uses[u].len : *hi;
      }
    if (*lo >= *hi)
      *lo = 0, *hi = 1;
  }
  return true;
}

/* A launch's windowed buffer arguments, set on the native kernel: their window in the
 * command's domain (tt_enqueue_launch says which; placed by virtual launches too); a rebased
 * argument's offset argument gets the window's first element (caller holds the kernel's
 * lock). */
static cl_int window_args(struct tt_cmd *c, cl_kernel k, const struct tt_launch_use *uses,
                          size_t nuses, const struct tt_rebase *rebase)
{
  for (cl_uint i = 0; i < k->nargs; i++) {
    size_t lo, hi;
    if (!arg_window(k, i, uses, nuses, rebase, &lo, &hi))
      continue;
    cl_mem m = k->args[i].mem;
    bool rebased = rebase && i < 64 && rebase[i].offset_arg;
    struct tt_place p;
    cl_int err = tt_window_place(m, c->dom, lo, hi - lo, &p);
    if (!c->actual && err == CL_SUCCESS)
      continue; /* placed alike on every rank; set where it runs */
    if (err == CL_SUCCESS)
      err = c->d->clSetKernelArg(k->native[c->dom], i, sizeof p.native, &p.native);
    if (err == CL_SUCCESS && rebased) {
      cl_ulong first = p.window_lo / rebase[i].elem_size;
      err = c->d->clSetKernelArg(k->native[c->dom], rebase[i].offset_arg, sizeof first, &first);
    }
    if (err != CL_SUCCESS)
      return err;
  }
  return CL_SUCCESS;
}

/* Forgets a device's last part (after_last_part), if any. */
static void last_part_drop(struct tt_domain *dm, struct tt_last_part *lp)
{
  if (!lp->ev)
    return;
  dm->bp->d->clReleaseEvent(lp->ev);
  tt_nqueue_unref(lp->nq);
  *lp = (struct tt_last_part){NULL, NULL, false};
}

/* A part of a split launch on a device whose backend must not run two at once
 * (serial_parts, runtime/base/backend.h) waits for the last part issued there before it, when that
 * went to another native queue and may still run (plan lock). Parts never wait for later
 * ones, so the order adds no cycle. */
static cl_int after_last_part(struct tt_cmd *c)
{
  struct tt_domain *dm = &c->ctx->domains[c->dom];
  if (!c->part || !c->actual || !dm->bp->serial_parts)
    return CL_SUCCESS;
  if (!dm->last_part && !(dm->last_part = calloc(dm->bp->ndevices, sizeof *dm->last_part)))
    return CL_OUT_OF_HOST_MEMORY;
  struct tt_last_part *lp = &dm->last_part[c->q->device->native_index];
  if (!lp->ev || lp->nq == c->nq)
    return CL_SUCCESS;
  if (tt_native_status(lp->ev) == CL_COMPLETE) {
    last_part_drop(dm, lp);
    return CL_SUCCESS;
  }
  cl_event ev = lp->ev;
  if (lp->may_fail) {
    /* Ordering only: a failure of the part before is not this one's. */
    cl_int err = tt_order_bridge(c->ctx, c->dom, lp->ev, true, &ev);
    if (err != CL_SUCCESS)
      return err;
  } else {
    dm->bp->d->clRetainEvent(ev);
  }
  return tt_deps_take(&c->deps, ev);
}

/* The part just issued (native event ev) is its device's last (after_last_part). */
static void note_last_part(struct tt_cmd *c, cl_event ev)
{
  struct tt_domain *dm = &c->ctx->domains[c->dom];
  if (!c->part || !c->actual || !dm->bp->serial_parts || !dm->last_part || !ev)
    return;
  struct tt_last_part *lp = &dm->last_part[c->q->device->native_index];
  last_part_drop(dm, lp);
  dm->bp->d->clRetainEvent(ev);
  tt_nqueue_ref(c->nq);
  *lp = (struct tt_last_part){ev, c->nq, tt_order_may_fail(&c->deps, c->nq) || c->refused};
}

cl_int tt_enqueue_launch(cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
                         const size_t *global_work_offset, const size_t *global_work_size,
                         const size_t *local_work_size, const struct tt_launch_use *uses,
                         size_t nuses, bool part, const struct tt_rebase *rebase,
                         const struct tt_launch_use *next, size_t nnext,
                         cl_uint num_events_in_wait_list,
                         const cl_event *event_wait_list, cl_event *event)
{
  struct tt_cmd c;
  tt_cmd_init(&c, command_queue);
  c.label = kernel->name;
  c.part = part;
  pthread_mutex_lock(&kernel->obj.lock);
  /* The next part's windows, as it will take them with the same arguments. */
  size_t cap = sizeof c.ahead / sizeof c.ahead[0];
  for (cl_uint i = 0; next && i < kernel->nargs && c.nahead < cap; i++) {
    struct tt_window_range *r = &c.ahead[c.nahead];
    if (arg_window(kernel, i, next, nnext, rebase, &r->lo, &r->hi)) {
      r->root = kernel->args[i].mem;
      c.nahead++;
    }
  }
  if (!c.actual && num_events_in_wait_list == 0) {
    cl_mem stack[16] = {NULL};
    size_t most = uses ? nuses : kernel->nargs;
    cl_mem *mems = most <= 16 ? stack : malloc(most * sizeof *mems);
    if (mems) {
      cl_uint n = 0;
      for (size_t i = 0; uses && i < nuses; i++)
        mems[n++] = uses[i].mem;
      for (cl_uint i = 0; !uses && i < kernel->nargs; i++)
        if (kernel->args[i].kind == TT_ARG_MEM && kernel->args[i].mem)
          mems[n++] = kernel->args[i].mem;
      cl_int discarded;
      bool gone = tt_cmd_discard(&c, 0, event_wait_list, mems, n, CL_COMMAND_NDRANGE_KERNEL, event, &discarded);
      if (mems != stack)
        free(mems);
      if (gone) {
        pthread_mutex_unlock(&kernel->obj.lock);
        return discarded;
      }
    }
  }
  cl_int err = tt_cmd_begin(&c, num_events_in_wait_list, event_wait_list);
  for (size_t i = 0; uses && i < nuses && err == CL_SUCCESS; i++)
    err = tt_cmd_use(&c, uses[i].mem, uses[i].off, uses[i].len, uses[i].reads, uses[i].writes);
  for (cl_uint i = 0; !uses && i < kernel->nargs && err == CL_SUCCESS; i++) {
    struct tt_kernel_arg *a = &kernel->args[i];
    if (a->kind != TT_ARG_MEM || !a->mem)
      continue;
    /* A kernel only reads a const or __constant buffer, or a CL_MEM_READ_ONLY one; other
     * buffers are read and written whole. */
    bool writes = !a->is_const && !(a->mem->flags & CL_MEM_READ_ONLY);
    err = tt_cmd_use(&c, a->mem, 0, a->mem->size, true, writes);
  }
  cl_event ev = NULL;
  if (err == CL_SUCCESS)
    err = window_args(&c, kernel, uses, nuses, rebase);
  if (err == CL_SUCCESS)
    err = after_last_part(&c);
  if (err == CL_SUCCESS && c.actual) {
    err = TT_CMD_ISSUE(&c, &ev, c.d->clEnqueueNDRangeKernel(c.nq->native, kernel->native[c.dom], work_dim, global_work_offset,
                                      global_work_size, local_work_size, c.deps.n,
                                      tt_cmd_wait_list(&c), tt_cmd_want_event(&c, &ev, event, false)));
    if (err == CL_SUCCESS)
      note_last_part(&c, ev);
  }
  pthread_mutex_unlock(&kernel->obj.lock);
  return tt_cmd_end(&c, err, ev, CL_COMMAND_NDRANGE_KERNEL, event, false);
}

cl_int tt_enqueue_fetch(cl_command_queue q, const struct tt_launch_use *uses, size_t nuses)
{
  struct tt_cmd c;
  tt_cmd_init(&c, q);
  c.label = "split launch: fetch";
  c.part = true;
  c.brings = true;
  cl_int err = tt_cmd_begin(&c, 0, NULL);
  for (size_t i = 0; i < nuses && err == CL_SUCCESS; i++)
    if (uses[i].reads)
      err = tt_cmd_use(&c, uses[i].mem, uses[i].off, uses[i].len, true, false);
  if (err == CL_SUCCESS && c.actual && c.nq)
    c.d->clFlush(c.nq->native);
  return tt_cmd_end(&c, err, NULL, CL_COMMAND_MIGRATE_MEM_OBJECTS, NULL, false);
}

cl_int CL_API_CALL tt_clEnqueueNDRangeKernel(cl_command_queue command_queue, cl_kernel kernel,
                                             cl_uint work_dim, const size_t *global_work_offset,
                                             const size_t *global_work_size,
                                             const size_t *local_work_size,
                                             cl_uint num_events_in_wait_list,
                                             const cl_event *event_wait_list, cl_event *event)
{
  if (!(tt_object_valid(command_queue, TT_QUEUE) && command_queue->nmembers > 1))
    TT_CHECK(tt_check_id(command_queue), tt_check_id(kernel), work_dim, tt_check_bytes(global_work_size, work_dim <= 3 ? work_dim * sizeof(size_t) : 0), tt_check_bytes(global_work_offset, work_dim <= 3 ? work_dim * sizeof(size_t) : 0), tt_check_bytes(local_work_size, work_dim <= 3 ? work_dim * sizeof(size_t) : 0), num_events_in_wait_list, event != NULL);
  return tt_enqueue_ndrange(command_queue, kernel, work_dim, global_work_offset,
                            global_work_size, local_work_size, num_events_in_wait_list,
                            event_wait_list, event);
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
  return tt_enqueue_launch(command_queue, kernel, work_dim, global_work_offset, global_work_size,
                           local_work_size, NULL, 0, false, NULL, NULL, 0, num_events_in_wait_list,
                           event_wait_list, event);
}

cl_int CL_API_CALL tt_clEnqueueTask(cl_command_queue command_queue, cl_kernel kernel,
                                    cl_uint num_events_in_wait_list,
                                    const cl_event *event_wait_list, cl_event *event)
{
  TT_CHECK(tt_check_id(command_queue), tt_check_id(kernel), tt_check_ids(event_wait_list, num_events_in_wait_list), event != NULL);
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
