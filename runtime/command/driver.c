/* The one command driver (runtime/command/driver.h): the steps every buffer command takes,
 * once, and each kind's native work on the owner. */
#include "config.h"

#include "runtime/command/driver.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/base/cuda.h"
#include "runtime/base/log.h"
#include "runtime/command/coherence.h"
#include "runtime/job/callback.h"
#include "runtime/job/cluster_share.h"
#include "runtime/job/trace.h"
#include "runtime/memory/image.h"
#include "runtime/memory/window.h"
#include "runtime/order/event.h"

/* Whether a blocking read or write goes to the backend blocking: when it waits for nothing
 * and its bytes stay on this rank, the backend's own blocking copy (NVIDIA copies pageable
 * memory faster so) is the whole command; the plan lock is held meanwhile, but nothing
 * this command waits for needs it. Else it is issued non-blocking and waited for after the
 * lock is dropped. */
static cl_bool native_blocking(const struct tt_cmd *c, cl_bool blocking)
{
  return blocking && !c->broadcast && c->deps.n == 0 ? CL_TRUE : CL_FALSE;
}

/* Whether actual command c may be done without a command of the backend as far as its queue
 * goes: nothing issued there since the queue's last clFinish (an in-order queue then asks no
 * more order of it), no gate, and no profiling (whose times come from the backend's commands).
 * read_from_host and migrate_in_place. */
static bool queue_through(const struct tt_cmd *c)
{
  return c->actual && !c->deps.gate && !(c->q->props & CL_QUEUE_PROFILING_ENABLE) &&
         atomic_load_explicit(&c->nq->issued, memory_order_acquire) ==
             atomic_load_explicit(&c->nq->drained, memory_order_acquire);
}

/* How many of c's dependencies have not completed (running, or failed); *last (unless NULL):
 * the last of them. */
static cl_uint deps_pending(const struct tt_cmd *c, cl_event *last)
{
  cl_uint n = 0;
  for (cl_uint i = 0; i < c->deps.n; i++)
    if (tt_native_status(c->deps.ev[i]) != CL_COMPLETE) {
      n++;
      if (last)
        *last = c->deps.ev[i];
    }
  return n;
}

/* A command that only orders (a migration of bytes already in place, the arrival of bytes a
 * copy engine wrote) asks nothing of the backend when its queue is empty (everything issued
 * on it was finished by a clFinish, so the order of an in-order queue asks for nothing more)
 * and at most one of its dependencies is still running: that dependency's event is the
 * command's own (else a user event set at once, where an event is wanted), and the queue's
 * later commands and clFinish wait for it (tt_nqueue_set_lazy). A command of the backend in
 * its place costs the receiving rank of a copy the wake-up of a PoCL worker thread as the
 * received bytes' user event is set, which the program's clFinish then waits for
 * (doc/testing.md, "Figures behind the code"); on NVIDIA a marker waiting for the copy
 * engines' user event made a copy command between GPUs several times slower than the copy
 * (the same table). Not with profiling or traces, whose times come from the backend's
 * command. */
static bool order_in_place(struct tt_cmd *c, cl_event *user, cl_event *ev)
{
  cl_event running = NULL;
  if (!queue_through(c) || c->windowed || tt_trace_on || tt_cmd_refuse_now(c) ||
      deps_pending(c, &running) > 1)
    return false;
  if (running) {
    c->d->clRetainEvent(running);
    *ev = running;
  } else if (tt_cmd_want_event(c, ev, user, false)) {
    cl_int err = CL_SUCCESS;
    if (!(*ev = c->d->clCreateUserEvent(c->ctx->domains[c->dom].native, &err)))
      return false;
    c->d->clSetUserEventStatus(*ev, CL_COMPLETE);
  }
  tt_nqueue_set_lazy(c->nq, *ev);
  c->on_host = true; /* nothing reached the queue */
  return true;
}

/* A read of up to a piece of a buffer that lives in host memory of Tutti's
 * (tt_domain_direct_memory), on a queue with nothing issued since it was last empty and with
 * nothing left to wait for, is a copy: no command of the backend (whose blocking read of a
 * few bytes costs more than the whole read reaching every rank otherwise). Its event is a
 * user event, complete; not on queues that profile.
 *
 * A larger blocking read that the owner sends to every rank itself (no chain), of a buffer
 * without windows, sends from that memory at once while the owner copies its own bytes
 * (tt_cmd_end): through the backend each piece was read into the program's memory first and
 * sent from there, slower. A marker on the queue, held until the sends are done, keeps the
 * queue's later commands off the bytes meanwhile. Other large reads keep their pieces
 * (read_in_pieces): along a chain, every piece sent at once moves at once, and the first
 * reaches the next rank late. On 2 cores the copy beside the sends costs a little, where the
 * owner's copy and MPI share a core (doc/testing.md, "Figures behind the code"). */
static bool read_from_host(struct tt_cmd *c, cl_mem m, size_t off, size_t size, void *ptr,
                           bool blocking, cl_event *ev)
{
  struct tt_place at;
  bool large = size > TT_BROADCAST_PIECE;
  if (!queue_through(c) ||
      (large && (!c->broadcast || !blocking || tt_broadcast_chains(size) || tt_windowed(m->root))) ||
      tt_window_place(m, c->dom, off, size, &at) != CL_SUCCESS || !at.host ||
      deps_pending(c, NULL))
    return false;
  cl_int err = CL_SUCCESS;
  cl_event done = c->d->clCreateUserEvent(c->ctx->domains[c->dom].native, &err);
  if (!done)
    return false;
  if (large) {
    err = TT_CMD_ISSUE(c, ev, c->d->clEnqueueMarkerWithWaitList(c->nq->native, 1, &done, ev));
    if (err != CL_SUCCESS) {
      c->d->clReleaseEvent(done);
      return false;
    }
    if (c->refused) {
      c->d->clReleaseEvent(done); /* the host memory goes as it was (tt_cmd_issued()) */
    } else {
      c->d->clFlush(c->nq->native);
      c->send_from = at.host;
      c->sent = done;
    }
    return true;
  }
  memcpy(ptr, at.host, size);
  c->d->clSetUserEventStatus(done, CL_COMPLETE);
  *ev = done;
  c->on_host = true; /* the queue stays empty */
  return true;
}

static void CL_CALLBACK list_done(cl_event ev, cl_int status, void *list)
{
  free(list);
}

/* NVIDIA reads the list of buffers of clEnqueueMigrateMemObjects on a thread of its own after
 * the call returned, and treats what it finds there as buffers: with the list on Tutti's stack
 * it decremented a 32-bit value in whatever that memory then held (a program's variable, a
 * canary: "stack smashing detected"), and crashed inside libnvidia-opencl.so.1.
 * So the list lives on the heap until the backend itself calls back for the command
 * (tt_native_free_after): the poller (TUTTI_EVENT_POLL) sees the command complete before
 * NVIDIA's thread is done with the list, and freed then, NVIDIA's thread crashed there now
 * and then (bench/transfer --peer). Returns what the caller still frees (NULL: the callback
 * frees it). */
static cl_mem *list_kept(cl_mem *list, cl_event command)
{
  if (tt_native_free_after(command, list_done, list) == CL_SUCCESS)
    return NULL;
  TT_NATIVE_DISPATCH(command)->clWaitForEvents(1, &command);
  return list;
}

/* Whether the n native buffers nm of c's domain all live in CUDA memory of its one GPU
 * (runtime/base/cuda.h), where the copy engines put the bytes. */
static bool in_cuda_memory(const struct tt_cmd *c, cl_mem *const nm, cl_uint n)
{
  if (c->ctx->domains[c->dom].cuda < 0)
    return false;
  for (cl_uint i = 0; i < n; i++)
    if (!tt_cuda_address(nm[i], 0))
      return false;
  return true;
}

/* A migration of buffers in Tutti's memory (uses_direct) or in CUDA memory of one GPU asks
 * nothing of the backend: the bytes are in the buffers' own memory once what it waits for is
 * done (a receive from another rank, an earlier write, a copy between GPUs). */
static bool migrate_in_place(struct tt_cmd *c, cl_mem *const nm, cl_uint n, cl_event *user,
                             cl_event *ev)
{
  return (tt_cmd_uses_direct(c) || in_cuda_memory(c, nm, n)) && order_in_place(c, user, ev);
}

/* The owner's part of a large read reaching every rank: one native read per piece (in order
 * on the command's queue), so that each piece leaves for the other ranks as soon as it is
 * read. *ev: the last piece's event, which completes last. */
static cl_int read_in_pieces(struct tt_cmd *c, cl_mem native, size_t offset, size_t size,
                             void *ptr, cl_event *ev)
{
  size_t n = tt_broadcast_pieces(size);
  c->piece_ev = calloc(n, sizeof *c->piece_ev);
  if (!c->piece_ev)
    return CL_OUT_OF_HOST_MEMORY;
  cl_int err = CL_SUCCESS;
  for (size_t i = 0; i < n && err == CL_SUCCESS; i++) {
    size_t at, len;
    tt_broadcast_piece(size, i, &at, &len);
    /* The first read waits for the command's dependencies; the queue orders the rest. */
    err = TT_CMD_ISSUE(c, &c->piece_ev[i],
                c->d->clEnqueueReadBuffer(c->nq->native, native, CL_FALSE, offset + at, len,
                                          (char *)ptr + at, i ? 0 : c->deps.n,
                                          i ? NULL : tt_cmd_wait_list(c), &c->piece_ev[i]));
    if (err == CL_SUCCESS)
      c->npiece_ev = i + 1;
  }
  if (err == CL_SUCCESS) {
    c->d->clFlush(c->nq->native);
    c->d->clRetainEvent(c->piece_ev[n - 1]);
    *ev = c->piece_ev[n - 1];
  }
  return err;
}

/* Where the native command puts its event, asked as the command is issued. */
#define WANT tt_cmd_want_event(c, ev, event, w->blocking)

static cl_int issue_copy(struct tt_cmd *c, struct tt_cmd_work *w, bool into, cl_event *ev,
                         cl_event *event)
{
  cl_int err = CL_SUCCESS;
  size_t at = w->off[0], to = w->off[1];
  cl_mem sn = into ? NULL : tt_cmd_native_at(c, w->use[0].mem, &at, w->size, &err);
  cl_mem dn = err == CL_SUCCESS ? tt_cmd_native_at(c, w->use[1].mem, &to, w->size, &err) : NULL;
  /* Source bytes another GPU's copy engine wrote into dst: the command marks their arrival. */
  if (into && dn && !order_in_place(c, event, ev))
    return TT_CMD_ISSUE(c, ev, c->d->clEnqueueMarkerWithWaitList(
        c->nq->native, c->deps.n, tt_cmd_wait_list(c), tt_cmd_want_event(c, ev, event, false)));
  if (!sn || !dn)
    return err;
  return TT_CMD_ISSUE(c, ev, c->d->clEnqueueCopyBuffer(c->nq->native, sn, dn, at, to, w->size,
                                                       c->deps.n, tt_cmd_wait_list(c), WANT));
}

/* A map shows the bytes on every rank: the owner maps, the others get a copy (the buffer's
 * own host memory when it has one) that the owner's bytes fill. */
static cl_int issue_map(struct tt_cmd *c, struct tt_cmd_work *w, cl_event *ev, cl_event *event)
{
  cl_int err = CL_SUCCESS;
  cl_mem m = w->use[0].mem, nat = tt_cmd_native_whole(c, m, &err);
  if (nat) {
    w->ptr = c->d->clEnqueueMapBuffer(c->nq->native, nat, CL_FALSE, w->map_flags, w->off[0],
                                      w->size, c->deps.n, tt_cmd_wait_list(c), WANT, &err);
  } else if (err == CL_SUCCESS) {
    w->ptr = m->host_ptr ? (char *)m->host_ptr + w->off[0] : malloc(w->size);
    w->owned = !m->host_ptr;
    if (!w->ptr)
      err = CL_OUT_OF_HOST_MEMORY;
  }
  c->host_ptr = w->ptr;
  return err;
}

/* A marker or barrier; one that only tells when the queue reaches it is a user event. */
static cl_int issue_marker(struct tt_cmd *c, struct tt_cmd_work *w, cl_event *ev,
                           cl_event *event)
{
  cl_int err = CL_SUCCESS;
  if (!c->actual)
    return CL_SUCCESS;
  if (w->reached) {
    if ((*ev = c->d->clCreateUserEvent(c->ctx->domains[c->dom].native, &err))) {
      c->d->clRetainEvent(*ev);
      *w->reached = *ev;
    }
    return err;
  }
  if (w->op == TT_OP_BARRIER)
    return TT_CMD_ISSUE(c, ev, c->d->clEnqueueBarrierWithWaitList(
        c->nq->native, c->deps.n, tt_cmd_wait_list(c), event ? ev : NULL));
  return TT_CMD_ISSUE(c, ev, c->d->clEnqueueMarkerWithWaitList(
      c->nq->native, c->deps.n, tt_cmd_wait_list(c), event ? ev : NULL));
}

/* The native work of an image command (TT_OP_READ_IMAGE and after) on c's owner. */
static cl_int issue_image(struct tt_cmd *c, struct tt_cmd_work *w, cl_event *ev, cl_event *event)
{
  cl_int err = CL_SUCCESS;
  cl_mem m = w->use[0].mem, other = w->nuse > 1 ? w->use[1].mem : NULL;
  cl_mem nat = tt_cmd_native_whole(c, m, &err), nother = NULL;
  size_t at = w->off[0];
  if (nat && other)
    nother = w->op == TT_OP_IMAGE_TO_BUFFER ? tt_cmd_native_at(c, other, &at, w->size, &err)
                                            : tt_cmd_native_whole(c, other, &err);
  if (!nat || (other && !nother))
    return err; /* virtual */
  size_t row = w->region[0] * m->image->pixel,
         slice = tt_image_slice_pitch(m->image, row * w->region[1]);
  cl_uint nw = c->deps.n;
  const cl_event *wl = tt_cmd_wait_list(c);
  switch (w->op) {
  case TT_OP_READ_IMAGE:
    return TT_CMD_ISSUE(c, ev, c->d->clEnqueueReadImage(c->nq->native, nat, CL_FALSE,
                                                        w->origin[0], w->region, w->pitch[0],
                                                        w->pitch[1], w->ptr, nw, wl, WANT));
  case TT_OP_WRITE_IMAGE:
    return TT_CMD_ISSUE(c, ev, c->d->clEnqueueWriteImage(c->nq->native, nat, CL_FALSE,
                                                         w->origin[0], w->region, w->pitch[0],
                                                         w->pitch[1], w->cptr, nw, wl, WANT));
  case TT_OP_COPY_IMAGE:
    return TT_CMD_ISSUE(c, ev, c->d->clEnqueueCopyImage(c->nq->native, nat, nother, w->origin[0],
                                                        w->origin[1], w->region, nw, wl, WANT));
  case TT_OP_FILL_IMAGE:
    return TT_CMD_ISSUE(c, ev, c->d->clEnqueueFillImage(c->nq->native, nat, w->cptr,
                                                        w->origin[0], w->region, nw, wl, WANT));
  case TT_OP_IMAGE_TO_BUFFER:
    return TT_CMD_ISSUE(c, ev, c->d->clEnqueueCopyImageToBuffer(
        c->nq->native, nat, nother, w->origin[0], w->region, at, nw, wl, WANT));
  case TT_OP_BUFFER_TO_IMAGE:
    /* use[0] is the image, use[1] the buffer, read from at w->off[1]. */
    return TT_CMD_ISSUE(c, ev, c->d->clEnqueueCopyBufferToImage(
        c->nq->native, nother, nat, w->off[1], w->origin[0], w->region, nw, wl, WANT));
  case TT_OP_MAP_IMAGE:
    if (w->map_flags & CL_MAP_WRITE_INVALIDATE_REGION)
      return TT_CMD_ISSUE(c, ev, c->d->clEnqueueMarkerWithWaitList(c->nq->native, nw, wl, WANT));
    return TT_CMD_ISSUE(c, ev, c->d->clEnqueueReadImage(c->nq->native, nat, CL_FALSE,
                                                        w->origin[0], w->region, row, slice,
                                                        w->ptr, nw, wl, WANT));
  default: /* TT_OP_UNMAP_IMAGE */
    if (w->map_flags == CL_MAP_READ) /* nothing goes back */
      return TT_CMD_ISSUE(c, ev, c->d->clEnqueueMarkerWithWaitList(c->nq->native, nw, wl, WANT));
    /* Its event always: Tutti's copy goes once the write has read it (buffer.c). */
    return TT_CMD_ISSUE(c, ev, c->d->clEnqueueWriteImage(c->nq->native, nat, CL_FALSE,
                                                         w->origin[0], w->region, row, slice,
                                                         w->ptr, nw, wl, ev));
  }
}

/* A native kernel on c's owner: the native memory objects written into Tutti's copy of the
 * arguments at their places (the backend puts pointers to their memory there). */
static cl_int issue_native_kernel(struct tt_cmd *c, struct tt_cmd_work *w, cl_event *ev,
                                  cl_event *event)
{
  if (!c->actual)
    return CL_SUCCESS;
  cl_int err = CL_SUCCESS;
  cl_mem stack[8], *nm = w->nmems <= 8 ? stack : malloc(w->nmems * sizeof *nm);
  const void *lstack[8], **loc = w->nmems <= 8 ? lstack : malloc(w->nmems * sizeof *loc);
  if (!nm || !loc)
    err = CL_OUT_OF_HOST_MEMORY;
  for (cl_uint i = 0; i < w->nmems && err == CL_SUCCESS; i++) {
    nm[i] = tt_cmd_native_whole(c, w->mems[i], &err);
    loc[i] = (char *)w->ptr + w->arg_offsets[i];
    if (nm[i])
      memcpy((char *)w->ptr + w->arg_offsets[i], &nm[i], sizeof nm[i]);
  }
  if (err == CL_SUCCESS)
    err = TT_CMD_ISSUE(c, ev, c->d->clEnqueueNativeKernel(
        c->nq->native, w->func, w->ptr, w->size, w->nmems, w->nmems ? nm : NULL,
        w->nmems ? loc : NULL, c->deps.n, tt_cmd_wait_list(c), WANT));
  if (nm != stack)
    free(nm);
  if (loc != lstack)
    free(loc);
  return err;
}

/* The native work of w on c's owner (or nothing, for a command planned for another rank):
 * its native event in *ev. */
static cl_int issue(struct tt_cmd *c, struct tt_cmd_work *w, bool into, cl_mem *nm, cl_event *ev,
                    cl_event *event)
{
  cl_int err = CL_SUCCESS;
  size_t at = w->off[0];
  cl_mem m = w->use[0].mem, nat = NULL, sn = NULL, dn = NULL;
  switch (w->op) {
  case TT_OP_READ:
    if (read_from_host(c, m, w->off[0], w->size, w->ptr, w->blocking, ev))
      return CL_SUCCESS; /* done: the bytes were in host memory already */
    if (!(nat = tt_cmd_native_at(c, m, &at, w->size, &err)))
      return err; /* virtual, or no window */
    if (c->broadcast && w->size > TT_BROADCAST_PIECE)
      return read_in_pieces(c, nat, at, w->size, w->ptr, ev);
    return TT_CMD_ISSUE(c, ev, c->d->clEnqueueReadBuffer(
        c->nq->native, nat, native_blocking(c, w->blocking), at, w->size, w->ptr, c->deps.n,
        tt_cmd_wait_list(c), WANT));
  case TT_OP_WRITE:
    if (!(nat = tt_cmd_native_at(c, m, &at, w->size, &err)))
      return err;
    return TT_CMD_ISSUE(c, ev, c->d->clEnqueueWriteBuffer(
        c->nq->native, nat, native_blocking(c, w->blocking), at, w->size, w->cptr, c->deps.n,
        tt_cmd_wait_list(c), WANT));
  case TT_OP_COPY:
    return issue_copy(c, w, into, ev, event);
  case TT_OP_READ_RECT:
  case TT_OP_WRITE_RECT:
    if (!(nat = tt_cmd_native_whole(c, m, &err)))
      return err;
    if (w->op == TT_OP_READ_RECT)
      return TT_CMD_ISSUE(c, ev, c->d->clEnqueueReadBufferRect(
          c->nq->native, nat, CL_FALSE, w->origin[0], w->origin[1], w->region, w->pitch[0],
          w->pitch[1], w->pitch[2], w->pitch[3], w->ptr, c->deps.n, tt_cmd_wait_list(c), WANT));
    return TT_CMD_ISSUE(c, ev, c->d->clEnqueueWriteBufferRect(
        c->nq->native, nat, CL_FALSE, w->origin[0], w->origin[1], w->region, w->pitch[0],
        w->pitch[1], w->pitch[2], w->pitch[3], w->cptr, c->deps.n, tt_cmd_wait_list(c), WANT));
  case TT_OP_COPY_RECT:
    sn = tt_cmd_native_whole(c, w->use[0].mem, &err);
    dn = err == CL_SUCCESS ? tt_cmd_native_whole(c, w->use[1].mem, &err) : NULL;
    if (!sn || !dn)
      return err;
    return TT_CMD_ISSUE(c, ev, c->d->clEnqueueCopyBufferRect(
        c->nq->native, sn, dn, w->origin[0], w->origin[1], w->region, w->pitch[0], w->pitch[1],
        w->pitch[2], w->pitch[3], c->deps.n, tt_cmd_wait_list(c), WANT));
  case TT_OP_FILL:
    if (!(nat = tt_cmd_native_at(c, m, &at, w->size, &err)))
      return err;
    return TT_CMD_ISSUE(c, ev, c->d->clEnqueueFillBuffer(c->nq->native, nat, w->cptr,
                                                         w->pattern_size, at, w->size, c->deps.n,
                                                         tt_cmd_wait_list(c), WANT));
  case TT_OP_MIGRATE:
    if (!c->actual || migrate_in_place(c, nm, w->nmems, event, ev))
      return CL_SUCCESS;
    err = TT_CMD_ISSUE(c, ev, c->d->clEnqueueMigrateMemObjects(
        c->nq->native, w->nmems, nm, w->flags, c->deps.n, tt_cmd_wait_list(c), ev));
    return err;
  case TT_OP_LAUNCH:
    if (!c->actual)
      return CL_SUCCESS;
    return TT_CMD_ISSUE(c, ev, c->d->clEnqueueNDRangeKernel(
        c->nq->native, w->kernel->native[c->dom], w->dim, w->range[0], w->range[1], w->range[2],
        c->deps.n, tt_cmd_wait_list(c), WANT));
  case TT_OP_FETCH:
    /* The transfers the uses planned are the work: they start now. */
    if (c->actual && c->nq)
      c->d->clFlush(c->nq->native);
    return CL_SUCCESS;
  case TT_OP_MAP:
    return issue_map(c, w, ev, event);
  case TT_OP_UNMAP:
    if (!(nat = tt_cmd_native_whole(c, m, &err)))
      return err;
    return c->d->clEnqueueUnmapMemObject(c->nq->native, nat, w->ptr, c->deps.n,
                                         tt_cmd_wait_list(c), WANT);
  case TT_OP_MARKER:
  case TT_OP_BARRIER:
    return issue_marker(c, w, ev, event);
  case TT_OP_NATIVE_KERNEL:
    return issue_native_kernel(c, w, ev, event);
  default:
    return issue_image(c, w, ev, event);
  }
}

/* The queueing optimization (tt_cmd_discard) over the buffers w uses (a migration's list): true
 * when the command is dropped, or with *err set when the list cannot be made. */
static bool discarded(struct tt_cmd *c, const struct tt_cmd_work *w, cl_uint nwait,
                      const cl_event *wait, cl_event *event, cl_int *err)
{
  if (w->op == TT_OP_MIGRATE)
    return tt_cmd_discard(c, nwait, wait, w->mems, w->nmems, w->type, event, err);
  const struct tt_cmd_use *uses = w->uses ? w->uses : w->use;
  cl_mem stack[16], *mems = w->nuse <= 16 ? stack : malloc(w->nuse * sizeof *mems);
  if (!mems) {
    *err = CL_OUT_OF_HOST_MEMORY;
    return true;
  }
  for (cl_uint i = 0; i < w->nuse; i++)
    mems[i] = uses[i].mem;
  bool gone = tt_cmd_discard(c, nwait, wait, mems, w->nuse, w->type, event, err);
  if (mems != stack)
    free(mems);
  return gone;
}

static cl_int drive(cl_command_queue q, struct tt_cmd_work *w, cl_uint nwait,
                    const cl_event *wait, cl_event *event)
{
  /* A migration's list of native buffers stays until the backend's command completes
   * (list_kept). */
  cl_mem *nm = NULL;
  if (w->op == TT_OP_MIGRATE)
    TT_RETURN_IF(!(nm = malloc((w->nmems ? w->nmems : 1) * sizeof *nm)), CL_OUT_OF_HOST_MEMORY);
  struct tt_cmd c;
  tt_cmd_init_at(&c, q, w->entry);
  cl_int err = w->setup ? w->setup(&c, w) : CL_SUCCESS;
  if (err != CL_SUCCESS) {
    free(nm);
    return err;
  }
  if (w->host_len)
    tt_cmd_broadcast(&c, w->host, w->host_len);
  if (w->discardable && discarded(&c, w, nwait, wait, event, &err)) {
    if (w->issued)
      w->issued(&c, w, err, NULL);
    free(nm);
    return err;
  }
  err = tt_cmd_begin(&c, nwait, wait);
  bool into = false;
  if (err == CL_SUCCESS && w->op == TT_OP_COPY)
    err = tt_cmd_copy_into(&c, w->use[0].mem, w->off[0], w->use[1].mem, w->off[1], w->size,
                           &into);
  const struct tt_cmd_use *uses = w->uses ? w->uses : w->use;
  for (cl_uint i = into ? 1 : 0; i < w->nuse && err == CL_SUCCESS; i++)
    err = tt_cmd_use(&c, uses[i].mem, uses[i].off, uses[i].len, uses[i].reads, uses[i].writes);
  if (w->op == TT_OP_MIGRATE) {
    /* To the host: host data is always at hand, so only the order matters. To the device:
     * the newest bytes come here now (or nothing comes, when the content may be undefined). */
    bool undefined = w->flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED;
    bool to_device = !(w->flags & CL_MIGRATE_MEM_OBJECT_HOST);
    for (cl_uint i = 0; i < w->nmems && err == CL_SUCCESS; i++) {
      err = tt_cmd_use(&c, w->mems[i], 0, w->mems[i]->size, to_device && !undefined, undefined);
      if (err == CL_SUCCESS)
        nm[i] = tt_cmd_native_whole(&c, w->mems[i], &err);
    }
  }
  if (err == CL_SUCCESS && w->prepare)
    err = w->prepare(&c, w);
  cl_event ev = NULL;
  if (err == CL_SUCCESS)
    err = issue(&c, w, into, nm, &ev, event);
  if (w->issued)
    w->issued(&c, w, err, ev);
  if (nm && ev && err == CL_SUCCESS && !c.refused && !c.on_host)
    nm = list_kept(nm, ev);
  free(nm);
  err = tt_cmd_end(&c, err, ev, w->type, w->end_event ? w->end_event : event, w->blocking);
  for (size_t i = 0; i < c.npiece_ev; i++)
    c.d->clReleaseEvent(c.piece_ev[i]);
  free(c.piece_ev);
  return err;
}

cl_int tt_cmd_drive(cl_command_queue q, struct tt_cmd_work *w, cl_uint nwait,
                    const cl_event *wait, cl_event *event)
{
  /* Once commands may fail through a user event set to an error, a blocking command returns
   * its owner's result on every rank, however it ended here (dropped, done without the
   * backend): found by tests/api/api_fuzz.c, a blocking map after a marker whose wait list
   * failed failed on its owner (PoCL failed it through the queue's order) and succeeded
   * elsewhere. */
  bool agree = w->blocking && tt_cluster_distributed() && atomic_load(&q->context->may_fail);
  cl_int err = drive(q, w, nwait, wait, event);
  size_t none = 0;
  if (agree && tt_cluster_share_answer(q->device->rank, &err, NULL, &none, 0) != 0)
    err = CL_OUT_OF_RESOURCES;
  return err;
}
