/* The body of a kernel launch (runtime/command/launch.h): one command whose buffer arguments
 * are its uses, for clEnqueueNDRangeKernel behind its checks (icd/launch.c), a split
 * launch's parts and their fetches (runtime/command/split.c), the aggregate device's members. */
#include "config.h"

#include "runtime/command/launch.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/command/command.h"
#include "runtime/command/plan.h"
#include "runtime/memory/window.h"
#include "runtime/order/order.h"

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
 * command's domain (tt_cmd_launch says which; placed by virtual launches too); a rebased
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

cl_int tt_cmd_launch(cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
                     const size_t *global_work_offset, const size_t *global_work_size,
                     const size_t *local_work_size, const struct tt_launch_use *uses,
                     size_t nuses, bool part, const struct tt_rebase *rebase,
                     const struct tt_launch_use *next, size_t nnext,
                     cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                     cl_event *event)
{
  struct tt_cmd c;
  tt_cmd_init_at(&c, command_queue, "tt_enqueue_launch");
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

cl_int tt_cmd_fetch(cl_command_queue q, const struct tt_launch_use *uses, size_t nuses)
{
  struct tt_cmd c;
  tt_cmd_init_at(&c, q, "tt_enqueue_fetch");
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
