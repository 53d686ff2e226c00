/* The bodies of the buffer commands (runtime/command/buffer.h): what each enqueue entry point
 * of icd/enqueue.c calls once its arguments are checked and hashed for the divergence check.
 * Each drives one command (runtime/command/command.h): under the plan lock and in program
 * order it adds the wait list, lets the plan add transfers and conflict dependencies for
 * every buffer range it touches, issues the native command, and records the accesses.
 * Blocking commands are issued non-blocking and waited for after the lock is dropped. */
#include "config.h"

#include "runtime/command/buffer.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/base/cuda.h"
#include "runtime/base/log.h"
#include "runtime/command/command.h"
#include "runtime/command/plan.h"
#include "runtime/job/callback.h"
#include "runtime/job/trace.h"
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
 * (tt_cmd_read_in_pieces): along a chain, every piece sent at once moves at once, and the first
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

cl_int tt_cmd_read(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read,
                   size_t offset, size_t size, void *ptr, cl_uint num_events_in_wait_list,
                   const cl_event *event_wait_list, cl_event *event)
{
  struct tt_cmd c;
  /* Named after its entry point: messages, traces and TUTTI_REFUSE say it so. */
  tt_cmd_init_at(&c, command_queue, "tt_clEnqueueReadBuffer");
  tt_cmd_broadcast(&c, ptr, size);
  TT_CMD_TRY(&c, tt_cmd_begin(&c, num_events_in_wait_list, event_wait_list));
  TT_CMD_TRY(&c, tt_cmd_use(&c, buffer, offset, size, true, false));
  cl_event ev = NULL;
  cl_int err = CL_SUCCESS;
  size_t at = offset;
  cl_mem nat = NULL;
  if (read_from_host(&c, buffer, offset, size, ptr, blocking_read, &ev))
    ; /* done: the bytes were in host memory already */
  else if (!(nat = tt_cmd_native_at(&c, buffer, &at, size, &err)))
    ; /* virtual, or no window */
  else if (c.broadcast && size > TT_BROADCAST_PIECE)
    err = tt_cmd_read_in_pieces(&c, nat, at, size, ptr, &ev);
  else
    err = TT_CMD_ISSUE(&c, &ev, c.d->clEnqueueReadBuffer(c.nq->native, nat, native_blocking(&c, blocking_read), at, size, ptr,
                                   c.deps.n, tt_cmd_wait_list(&c), tt_cmd_want_event(&c, &ev, event, blocking_read)));
  err = tt_cmd_end(&c, err, ev, CL_COMMAND_READ_BUFFER, event, blocking_read);
  for (size_t i = 0; i < c.npiece_ev; i++)
    c.d->clReleaseEvent(c.piece_ev[i]);
  free(c.piece_ev);
  return err;
}

cl_int tt_cmd_write(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write,
                    size_t offset, size_t size, const void *ptr, cl_uint num_events_in_wait_list,
                    const cl_event *event_wait_list, cl_event *event)
{
  struct tt_cmd c;
  tt_cmd_init_at(&c, command_queue, "tt_clEnqueueWriteBuffer");
  cl_int discarded;
  if (tt_cmd_discard(&c, num_events_in_wait_list, event_wait_list, &buffer, 1, CL_COMMAND_WRITE_BUFFER, event, &discarded))
    return discarded;
  TT_CMD_TRY(&c, tt_cmd_begin(&c, num_events_in_wait_list, event_wait_list));
  TT_CMD_TRY(&c, tt_cmd_use(&c, buffer, offset, size, false, true));
  cl_event ev = NULL;
  cl_int err = CL_SUCCESS;
  cl_mem nat = tt_cmd_native_at(&c, buffer, &offset, size, &err);
  if (nat)
    err = TT_CMD_ISSUE(&c, &ev, c.d->clEnqueueWriteBuffer(c.nq->native, nat, native_blocking(&c, blocking_write), offset, size,
                                         ptr, c.deps.n, tt_cmd_wait_list(&c), tt_cmd_want_event(&c, &ev, event, blocking_write)));
  return tt_cmd_end(&c, err, ev, CL_COMMAND_WRITE_BUFFER, event, blocking_write);
}

cl_int tt_cmd_copy(cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer,
                   size_t src_offset, size_t dst_offset, size_t size,
                   cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                   cl_event *event)
{
  struct tt_cmd c;
  tt_cmd_init_at(&c, command_queue, "tt_clEnqueueCopyBuffer");
  cl_int discarded;
  if (tt_cmd_discard(&c, num_events_in_wait_list, event_wait_list, (cl_mem[]){src_buffer, dst_buffer}, 2, CL_COMMAND_COPY_BUFFER, event, &discarded))
    return discarded;
  TT_CMD_TRY(&c, tt_cmd_begin(&c, num_events_in_wait_list, event_wait_list));
  /* Source bytes on another GPU of the host: its copy engine writes them into dst (no copy
   * of src made here, none on this device after); the command marks their arrival. */
  bool into = false;
  TT_CMD_TRY(&c, tt_cmd_copy_into(&c, src_buffer, src_offset, dst_buffer, dst_offset, size, &into));
  if (!into)
    TT_CMD_TRY(&c, tt_cmd_use(&c, src_buffer, src_offset, size, true, false));
  TT_CMD_TRY(&c, tt_cmd_use(&c, dst_buffer, dst_offset, size, false, true));
  cl_event ev = NULL;
  cl_int err = CL_SUCCESS;
  cl_mem sn = into ? NULL : tt_cmd_native_at(&c, src_buffer, &src_offset, size, &err);
  cl_mem dn = err == CL_SUCCESS ? tt_cmd_native_at(&c, dst_buffer, &dst_offset, size, &err) : NULL;
  if (into && dn && !order_in_place(&c, event, &ev))
    err = TT_CMD_ISSUE(&c, &ev, c.d->clEnqueueMarkerWithWaitList(c.nq->native, c.deps.n, tt_cmd_wait_list(&c),
                                        tt_cmd_want_event(&c, &ev, event, false)));
  else if (sn && dn)
    err = TT_CMD_ISSUE(&c, &ev, c.d->clEnqueueCopyBuffer(c.nq->native, sn, dn, src_offset, dst_offset, size,
                                        c.deps.n, tt_cmd_wait_list(&c), tt_cmd_want_event(&c, &ev, event, false)));
  return tt_cmd_end(&c, err, ev, CL_COMMAND_COPY_BUFFER, event, false);
}

static size_t host_span_off(const size_t *o, size_t row, size_t slice, const size_t *region)
{
  row = row ? row : region[0];
  slice = slice ? slice : region[1] * row;
  return o[2] * slice + o[1] * row + o[0];
}

static size_t host_span_len(const size_t *region, size_t row, size_t slice)
{
  row = row ? row : region[0];
  slice = slice ? slice : region[1] * row;
  return (region[2] - 1) * slice + (region[1] - 1) * row + region[0];
}

cl_int tt_cmd_read_rect(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read,
                        const size_t *buffer_origin, const size_t *host_origin,
                        const size_t *region, size_t buffer_row_pitch,
                        size_t buffer_slice_pitch, size_t host_row_pitch,
                        size_t host_slice_pitch, void *ptr, size_t off, size_t len,
                        cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                        cl_event *event)
{
  struct tt_cmd c;
  tt_cmd_init_at(&c, command_queue, "tt_clEnqueueReadBufferRect");
  /* The rectangle's span of host memory goes to the other ranks (its gaps hold the same
   * bytes everywhere: host memory is replicated). */
  tt_cmd_broadcast(&c, (char *)ptr + host_span_off(host_origin, host_row_pitch, host_slice_pitch, region),
             host_span_len(region, host_row_pitch, host_slice_pitch));
  TT_CMD_TRY(&c, tt_cmd_begin(&c, num_events_in_wait_list, event_wait_list));
  TT_CMD_TRY(&c, tt_cmd_use(&c, buffer, off, len, true, false));
  cl_event ev = NULL;
  cl_int err = CL_SUCCESS;
  cl_mem nat = tt_cmd_native_whole(&c, buffer, &err);
  if (nat)
    err = TT_CMD_ISSUE(&c, &ev, c.d->clEnqueueReadBufferRect(c.nq->native, nat, CL_FALSE, buffer_origin, host_origin, region, buffer_row_pitch,
      buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, c.deps.n, tt_cmd_wait_list(&c), tt_cmd_want_event(&c, &ev, event, blocking_read)));
  return tt_cmd_end(&c, err, ev, CL_COMMAND_READ_BUFFER_RECT, event, blocking_read);
}

cl_int tt_cmd_write_rect(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write,
                         const size_t *buffer_origin, const size_t *host_origin,
                         const size_t *region, size_t buffer_row_pitch,
                         size_t buffer_slice_pitch, size_t host_row_pitch,
                         size_t host_slice_pitch, const void *ptr, size_t off, size_t len,
                         cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                         cl_event *event)
{
  struct tt_cmd c;
  tt_cmd_init_at(&c, command_queue, "tt_clEnqueueWriteBufferRect");
  cl_int discarded;
  if (tt_cmd_discard(&c, num_events_in_wait_list, event_wait_list, &buffer, 1, CL_COMMAND_WRITE_BUFFER_RECT, event, &discarded))
    return discarded;
  TT_CMD_TRY(&c, tt_cmd_begin(&c, num_events_in_wait_list, event_wait_list));
  /* The rectangle may leave gaps inside its span: those bytes must arrive too. */
  TT_CMD_TRY(&c, tt_cmd_use(&c, buffer, off, len, true, true));
  cl_event ev = NULL;
  cl_int err = CL_SUCCESS;
  cl_mem nat = tt_cmd_native_whole(&c, buffer, &err);
  if (nat)
    err = TT_CMD_ISSUE(&c, &ev, c.d->clEnqueueWriteBufferRect(c.nq->native, nat, CL_FALSE, buffer_origin, host_origin, region, buffer_row_pitch,
      buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, c.deps.n, tt_cmd_wait_list(&c), tt_cmd_want_event(&c, &ev, event, blocking_write)));
  return tt_cmd_end(&c, err, ev, CL_COMMAND_WRITE_BUFFER_RECT, event, blocking_write);
}

cl_int tt_cmd_copy_rect(cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer,
                        const size_t *src_origin, const size_t *dst_origin,
                        const size_t *region, size_t src_row_pitch, size_t src_slice_pitch,
                        size_t dst_row_pitch, size_t dst_slice_pitch, size_t soff, size_t slen,
                        size_t doff, size_t dlen, cl_uint num_events_in_wait_list,
                        const cl_event *event_wait_list, cl_event *event)
{
  struct tt_cmd c;
  tt_cmd_init_at(&c, command_queue, "tt_clEnqueueCopyBufferRect");
  cl_int discarded;
  if (tt_cmd_discard(&c, num_events_in_wait_list, event_wait_list, (cl_mem[]){src_buffer, dst_buffer}, 2, CL_COMMAND_COPY_BUFFER_RECT, event, &discarded))
    return discarded;
  TT_CMD_TRY(&c, tt_cmd_begin(&c, num_events_in_wait_list, event_wait_list));
  TT_CMD_TRY(&c, tt_cmd_use(&c, src_buffer, soff, slen, true, false));
  TT_CMD_TRY(&c, tt_cmd_use(&c, dst_buffer, doff, dlen, true, true));
  cl_event ev = NULL;
  cl_int err = CL_SUCCESS;
  cl_mem sn = tt_cmd_native_whole(&c, src_buffer, &err);
  cl_mem dn = err == CL_SUCCESS ? tt_cmd_native_whole(&c, dst_buffer, &err) : NULL;
  if (sn && dn)
    err = TT_CMD_ISSUE(&c, &ev, c.d->clEnqueueCopyBufferRect(c.nq->native, sn, dn, src_origin, dst_origin, region,
      src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch, c.deps.n, tt_cmd_wait_list(&c),
      tt_cmd_want_event(&c, &ev, event, false)));
  return tt_cmd_end(&c, err, ev, CL_COMMAND_COPY_BUFFER_RECT, event, false);
}

cl_int tt_cmd_fill(cl_command_queue command_queue, cl_mem buffer, const void *pattern,
                   size_t pattern_size, size_t offset, size_t size,
                   cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                   cl_event *event)
{
  struct tt_cmd c;
  tt_cmd_init_at(&c, command_queue, "tt_clEnqueueFillBuffer");
  cl_int discarded;
  if (tt_cmd_discard(&c, num_events_in_wait_list, event_wait_list, &buffer, 1, CL_COMMAND_FILL_BUFFER, event, &discarded))
    return discarded;
  TT_CMD_TRY(&c, tt_cmd_begin(&c, num_events_in_wait_list, event_wait_list));
  TT_CMD_TRY(&c, tt_cmd_use(&c, buffer, offset, size, false, true));
  cl_event ev = NULL;
  cl_int err = CL_SUCCESS;
  cl_mem nat = tt_cmd_native_at(&c, buffer, &offset, size, &err);
  if (nat)
    err = TT_CMD_ISSUE(&c, &ev, c.d->clEnqueueFillBuffer(c.nq->native, nat, pattern, pattern_size, offset,
                                        size, c.deps.n, tt_cmd_wait_list(&c), tt_cmd_want_event(&c, &ev, event, false)));
  return tt_cmd_end(&c, err, ev, CL_COMMAND_FILL_BUFFER, event, false);
}

/* Records a live mapping of m (or puts one back when its unmap failed). */
static void keep_map(cl_mem m, struct tt_map_record *rec)
{
  pthread_mutex_lock(&m->obj.lock);
  rec->next = m->maps;
  m->maps = rec;
  pthread_mutex_unlock(&m->obj.lock);
}

void *tt_cmd_map(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_map,
                 cl_map_flags map_flags, size_t offset, size_t size,
                 cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                 cl_event *event, cl_int *errcode)
{
  struct tt_map_record *rec = calloc(1, sizeof *rec);
  if (!rec) {
    *errcode = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  struct tt_cmd c;
  cl_int err;
  void *p = NULL;
  tt_cmd_init_at(&c, command_queue, "tt_clEnqueueMapBuffer");
  bool invalidate = map_flags & CL_MAP_WRITE_INVALIDATE_REGION;
  /* A map shows the bytes on every rank: the owner maps, the others get a copy (the
   * buffer's own host memory when it has one) that the owner's bytes fill. */
  if (!invalidate)
    tt_cmd_broadcast(&c, NULL, size);
  err = tt_cmd_begin(&c, num_events_in_wait_list, event_wait_list);
  if (err == CL_SUCCESS)
    err = tt_cmd_use(&c, buffer, offset, size, !invalidate, false);
  cl_event ev = NULL;
  bool owned = false;
  cl_mem nat = err == CL_SUCCESS ? tt_cmd_native_whole(&c, buffer, &err) : NULL;
  if (nat) {
    p = c.d->clEnqueueMapBuffer(c.nq->native, nat, CL_FALSE, map_flags, offset,
                                size, c.deps.n, tt_cmd_wait_list(&c),
                                tt_cmd_want_event(&c, &ev, event, blocking_map), &err);
  } else if (err == CL_SUCCESS) {
    p = buffer->host_ptr ? (char *)buffer->host_ptr + offset : malloc(size);
    owned = !buffer->host_ptr;
    if (!p)
      err = CL_OUT_OF_HOST_MEMORY;
  }
  c.host_ptr = p;
  if (err == CL_SUCCESS) {
    *rec = (struct tt_map_record){p, c.dom, map_flags != CL_MAP_READ, offset, size, owned, NULL,
                                  NULL};
    keep_map(buffer, rec);
    atomic_fetch_add(&buffer->map_count, 1);
  } else {
    free(rec);
    rec = NULL;
    p = NULL;
  }
  /* Tutti's copy must outlive the bytes arriving into it: keep the map's event. */
  cl_event done = NULL;
  if (rec && owned && c.broadcast && !event) {
    event = &done;
    c.own_event = true; /* only ranks that copy have it */
  }
  err = tt_cmd_end(&c, err, ev, CL_COMMAND_MAP_BUFFER, event, blocking_map);
  if (rec && owned && c.broadcast && err == CL_SUCCESS) {
    rec->done = *event;
    if (event != &done)
      TT_RETAIN(rec->done);
  }
  *errcode = err;
  return err == CL_SUCCESS ? p : NULL;
}

cl_int tt_cmd_unmap(cl_command_queue command_queue, cl_mem memobj, void *mapped_ptr,
                    struct tt_map_record *rec, cl_uint num_events_in_wait_list,
                    const cl_event *event_wait_list, cl_event *event)
{
  struct tt_cmd c;
  tt_cmd_init_at(&c, command_queue, "tt_clEnqueueUnmapMemObject");
  /* The unmap runs where the map ran; on the user's queue when that is the same domain. */
  if (rec->domain != c.dom) {
    c.dom = rec->domain;
    c.actual = c.ctx->domains[c.dom].local;
    c.rank = c.ctx->domains[c.dom].rank;
    c.d = c.actual ? c.ctx->domains[c.dom].bp->d : NULL;
    c.nq = NULL;
    cl_int e = c.actual ? tt_order_internal_queue(c.ctx, c.dom, &c.nq) : CL_SUCCESS;
    if (e != CL_SUCCESS) {
      keep_map(memobj, rec);
      return e;
    }
  }
  cl_int err = tt_cmd_begin(&c, num_events_in_wait_list, event_wait_list);
  if (err == CL_SUCCESS)
    err = tt_cmd_use(&c, memobj, rec->offset, rec->size, false, rec->writes);
  cl_event ev = NULL;
  cl_mem nat = err == CL_SUCCESS ? tt_cmd_native_whole(&c, memobj, &err) : NULL;
  if (nat)
    err = c.d->clEnqueueUnmapMemObject(c.nq->native, nat, mapped_ptr, c.deps.n,
                                       tt_cmd_wait_list(&c), tt_cmd_want_event(&c, &ev, event, false));
  if (err == CL_SUCCESS) {
    atomic_fetch_sub(&memobj->map_count, 1);
    if (c.actual && c.nq != command_queue->nq)
      c.d->clFlush(c.nq->native);
    if (rec->done) {
      tt_event_wait(rec->done);
      TT_RELEASE(rec->done);
    }
    if (rec->owned)
      free(rec->ptr);
    free(rec);
  } else {
    keep_map(memobj, rec); /* still mapped */
  }
  return tt_cmd_end(&c, err, ev, CL_COMMAND_UNMAP_MEM_OBJECT, event, false);
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

cl_int tt_cmd_migrate(cl_command_queue command_queue, cl_uint num_mem_objects,
                     const cl_mem *mem_objects, cl_mem_migration_flags flags,
                     cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                     cl_event *event)
{
  /* The backend's list of native buffers stays until its command completes (list_done). */
  cl_mem *nm = malloc(num_mem_objects * sizeof *nm);
  TT_RETURN_IF(!nm, CL_OUT_OF_HOST_MEMORY);
  struct tt_cmd c;
  tt_cmd_init_at(&c, command_queue, "tt_clEnqueueMigrateMemObjects");
  cl_int discarded;
  if (tt_cmd_discard(&c, num_events_in_wait_list, event_wait_list, mem_objects, num_mem_objects, CL_COMMAND_MIGRATE_MEM_OBJECTS, event, &discarded)) {
    free(nm);
    return discarded;
  }
  cl_int err = tt_cmd_begin(&c, num_events_in_wait_list, event_wait_list);
  bool undefined = flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED;
  /* To the host: host data is always at hand, so only the order matters. To the device: the
   * newest bytes come here now (or nothing comes, when the content may be undefined). */
  bool to_device = !(flags & CL_MIGRATE_MEM_OBJECT_HOST);
  for (cl_uint i = 0; i < num_mem_objects && err == CL_SUCCESS; i++) {
    err = tt_cmd_use(&c, mem_objects[i], 0, mem_objects[i]->size, to_device && !undefined,
                  undefined);
    if (err == CL_SUCCESS)
      nm[i] = tt_cmd_native_whole(&c, mem_objects[i], &err);
  }
  cl_event ev = NULL;
  if (err == CL_SUCCESS && c.actual && !migrate_in_place(&c, nm, num_mem_objects, event, &ev)) {
    err = TT_CMD_ISSUE(&c, &ev, c.d->clEnqueueMigrateMemObjects(c.nq->native, num_mem_objects, nm, flags, c.deps.n,
                                          tt_cmd_wait_list(&c), &ev));
    if (err == CL_SUCCESS && !c.refused)
      nm = list_kept(nm, ev);
  }
  free(nm);
  return tt_cmd_end(&c, err, ev, CL_COMMAND_MIGRATE_MEM_OBJECTS, event, false);
}
