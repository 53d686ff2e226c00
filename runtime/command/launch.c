/* The body of a kernel launch (runtime/command/launch.h): one command whose buffer arguments
 * are its uses, for clEnqueueNDRangeKernel behind its checks (icd/launch.c), a split
 * launch's parts and their fetches (runtime/command/split.c), the aggregate device's members. */
#include "config.h"

#include "runtime/command/launch.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/base/log.h"
#include "runtime/command/command.h"
#include "runtime/command/driver.h"
#include "runtime/command/coherence.h"
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
/* A split launch's fetch: a part's, bringing bytes only. */
static cl_int fetch_setup(struct tt_cmd *c, struct tt_cmd_work *w)
{
  (void)w;
  c->label = "split launch: fetch";
  c->part = true;
  c->brings = true;
  return CL_SUCCESS;
}

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

/* A launch's own state and steps around the driver's (runtime/command/driver.h). */
struct launch {
  bool part;
  const struct tt_launch_use *uses;
  size_t nuses;
  const struct tt_rebase *rebase;
  const struct tt_launch_use *next;
  size_t nnext;
};

/* The command made: its label, whether it is a split launch's part, and the next part's
 * windows as it will take them with the same arguments (the kernel's lock is held). */
static cl_int launch_setup(struct tt_cmd *c, struct tt_cmd_work *w)
{
  const struct launch *l = w->state;
  cl_kernel kernel = w->kernel;
  c->label = kernel->name;
  c->part = l->part;
  size_t cap = sizeof c->ahead / sizeof c->ahead[0];
  for (cl_uint i = 0; l->next && i < kernel->nargs && c->nahead < cap; i++) {
    struct tt_window_range *r = &c->ahead[c->nahead];
    if (arg_window(kernel, i, l->next, l->nnext, l->rebase, &r->lo, &r->hi)) {
      r->root = kernel->args[i].mem;
      c->nahead++;
    }
  }
  return CL_SUCCESS;
}

/* The uses planned: the arguments' windows, and the order after the device's last part. */
static cl_int launch_prepare(struct tt_cmd *c, struct tt_cmd_work *w)
{
  const struct launch *l = w->state;
  cl_int err = window_args(c, w->kernel, l->uses, l->nuses, l->rebase);
  return err == CL_SUCCESS ? after_last_part(c) : err;
}

/* Issued (or not): the part is its device's last; the kernel's lock goes. */
static void launch_issued(struct tt_cmd *c, struct tt_cmd_work *w, cl_int err, cl_event ev)
{
  if (err == CL_SUCCESS && c->actual)
    note_last_part(c, ev);
  pthread_mutex_unlock(&w->kernel->obj.lock);
}

cl_int tt_cmd_launch(cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
                     const size_t *global_work_offset, const size_t *global_work_size,
                     const size_t *local_work_size, const struct tt_launch_use *uses,
                     size_t nuses, bool part, const struct tt_rebase *rebase,
                     const struct tt_launch_use *next, size_t nnext,
                     cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                     cl_event *event)
{
  struct launch l = {part, uses, nuses, rebase, next, nnext};
  pthread_mutex_lock(&kernel->obj.lock);
  /* Its uses: the ranges given (a split launch's part), else every buffer argument whole: a
   * kernel only reads a const or __constant buffer, or a CL_MEM_READ_ONLY one, and reads and
   * writes other buffers. The same buffers are what the queueing optimization looks at. */
  size_t most = uses ? nuses : kernel->nargs;
  struct tt_cmd_use stack[16], *u = most <= 16 ? stack : malloc(most * sizeof *u);
  if (!u) {
    pthread_mutex_unlock(&kernel->obj.lock);
    TT_RETURN_IF(1, CL_OUT_OF_HOST_MEMORY);
  }
  cl_uint n = 0;
  for (size_t i = 0; uses && i < nuses; i++)
    u[n++] = (struct tt_cmd_use){uses[i].mem, uses[i].off, uses[i].len, uses[i].reads,
                                 uses[i].writes};
  for (cl_uint i = 0; !uses && i < kernel->nargs; i++) {
    const struct tt_kernel_arg *a = &kernel->args[i];
    /* A buffer or an image, read and (unless only read) written whole. */
    if ((a->kind == TT_ARG_MEM || a->kind == TT_ARG_IMAGE) && a->mem)
      u[n++] = (struct tt_cmd_use){a->mem, 0, a->mem->size, true,
                                   !a->is_const && !(a->mem->flags & CL_MEM_READ_ONLY)};
  }
  struct tt_cmd_work w = {.op = TT_OP_LAUNCH, .entry = "tt_enqueue_launch",
                          .type = CL_COMMAND_NDRANGE_KERNEL, .discardable = true,
                          .uses = u, .nuse = n, .kernel = kernel, .dim = work_dim,
                          .range = {global_work_offset, global_work_size, local_work_size},
                          .setup = launch_setup, .prepare = launch_prepare,
                          .issued = launch_issued, .state = &l};
  /* The driver's steps; launch_issued unlocks the kernel. */
  cl_int err = tt_cmd_drive(command_queue, &w, num_events_in_wait_list, event_wait_list, event);
  if (u != stack)
    free(u);
  return err;
}

cl_int tt_cmd_fetch(cl_command_queue q, const struct tt_launch_use *uses, size_t nuses)
{
  struct tt_cmd_use stack[16], *u = nuses <= 16 ? stack : malloc(nuses * sizeof *u);
  TT_RETURN_IF(!u, CL_OUT_OF_HOST_MEMORY);
  cl_uint n = 0;
  for (size_t i = 0; i < nuses; i++)
    if (uses[i].reads)
      u[n++] = (struct tt_cmd_use){uses[i].mem, uses[i].off, uses[i].len, true, false};
  struct tt_cmd_work w = {.op = TT_OP_FETCH, .entry = "tt_enqueue_fetch",
                          .type = CL_COMMAND_MIGRATE_MEM_OBJECTS, .uses = u, .nuse = n,
                          .setup = fetch_setup};
  cl_int err = tt_cmd_drive(q, &w, 0, NULL, NULL);
  if (u != stack)
    free(u);
  return err;
}

cl_int tt_cmd_native_kernel(cl_command_queue q, void (CL_CALLBACK *func)(void *),
                            const void *args, size_t cb_args, cl_uint nmems, const cl_mem *mems,
                            const size_t *offsets, cl_uint nwait, const cl_event *wait,
                            cl_event *event)
{
  /* Tutti's copy of the arguments: the backend takes it at the enqueue (it copies it again),
   * and each memory object is read and written whole. */
  void *copy = malloc(cb_args ? cb_args : 1);
  struct tt_cmd_use stack[8], *u = nmems <= 8 ? stack : malloc(nmems * sizeof *u);
  cl_int err = copy && u ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
  if (err == CL_SUCCESS) {
    if (cb_args)
      memcpy(copy, args, cb_args);
    for (cl_uint i = 0; i < nmems; i++)
      u[i] = (struct tt_cmd_use){mems[i], 0, mems[i]->size, true, true};
    struct tt_cmd_work w = {.op = TT_OP_NATIVE_KERNEL, .entry = "tt_clEnqueueNativeKernel",
                            .type = CL_COMMAND_NATIVE_KERNEL, .discardable = true,
                            .uses = u, .nuse = nmems, .mems = mems, .nmems = nmems,
                            .ptr = cb_args ? copy : NULL, .size = cb_args, .func = func,
                            .arg_offsets = offsets};
    err = tt_cmd_drive(q, &w, nwait, wait, event);
  }
  if (u != stack)
    free(u);
  free(copy);
  return err;
}
