/* One command's life (runtime/command/command.h). */
#include "config.h"

#include "runtime/command/command.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/base/log.h"
#include "runtime/command/coherence.h"
#include "runtime/job/check.h"
#include "runtime/job/turns.h"
#include "runtime/job/cluster.h"
#include "runtime/job/stats.h"
#include "runtime/job/trace.h"
#include "runtime/job/transport.h"
#include "runtime/order/event.h"
#include "runtime/transfer/broadcast.h"

static atomic_uint_fast64_t cmd_seq; /* host threads enqueue at once (one rank: no turns) */

void tt_cmd_init_at(struct tt_cmd *c, cl_command_queue q, const char *entry)
{
  memset(c, 0, sizeof *c);
  c->label = entry + 3; /* tt_clX */
  c->q = q;
  c->ctx = q->context;
  c->dom = q->domain;
  c->actual = q->device->actual;
  c->rank = q->device->rank;
  c->seq = atomic_fetch_add_explicit(&cmd_seq, 1, memory_order_relaxed) + 1;
  c->d = c->actual ? q->device->bp->d : NULL;
  c->nq = q->nq;
  atomic_fetch_add_explicit(&tt_stats.commands, 1, memory_order_relaxed);
  if (!c->actual)
    atomic_fetch_add_explicit(&tt_stats.virtual_cmds, 1, memory_order_relaxed);
  tt_deps_init(&c->deps);
  c->uses = c->inline_uses;
  c->capuses = sizeof c->inline_uses / sizeof c->inline_uses[0];
}

/* Takes the plan lock and adds the user's wait list. */
cl_int tt_cmd_begin(struct tt_cmd *c, cl_uint nwait, const cl_event *wait)
{
  if (c->broadcast)
    atomic_fetch_add_explicit(&tt_stats.host_reads, 1, memory_order_relaxed);
  else if (!c->actual)
    atomic_fetch_add_explicit(&tt_stats.virtual_kept, 1, memory_order_relaxed);
  tt_plan_lock();
  c->locked = true;
  c->nwait = nwait;
  c->wait = wait;
  tt_order_command(c->seq, c->label, c->q->device, c->part);
  cl_int err = tt_order_wait_list(&c->deps, c->ctx, c->dom, nwait, wait);
  /* A command before it on the queue that the backend never saw (migrate_in_place). */
  return err == CL_SUCCESS && c->actual ? tt_nqueue_after_lazy(&c->deps, c->nq) : err;
}

cl_int tt_cmd_use(struct tt_cmd *c, cl_mem m, size_t off, size_t len, bool reads, bool writes)
{
  if (c->nuses == c->capuses) {
    cl_uint cap = c->capuses * 2;
    struct tt_cmd_use *u = malloc(cap * sizeof *u);
    if (!u)
      return CL_OUT_OF_HOST_MEMORY;
    memcpy(u, c->uses, c->nuses * sizeof *u);
    if (c->uses != c->inline_uses)
      free(c->uses);
    c->uses = u;
    c->capuses = cap;
  }
  c->uses[c->nuses++] = (struct tt_cmd_use){m, off, len, reads, writes};
  c->windowed = c->windowed || tt_windowed(m->root);
  return tt_coherence_use(&c->deps, c->ctx, c->dom, c->nq, m, off, len, reads, writes);
}

cl_int tt_cmd_copy_into(struct tt_cmd *c, cl_mem src, size_t so, cl_mem dst, size_t dof,
                        size_t len, bool *taken)
{
  return tt_coherence_copy_into(&c->deps, c->ctx, c->dom, c->nq, src, so, dst, dof, len, taken);
}

/* The native buffer holding m's bytes [*off, *off+len) in the command's domain, once its
 * uses are planned; *off becomes their offset in it (runtime/memory/window.h). NULL for a virtual
 * command (*err CL_SUCCESS) or when no window could be made (*err says why). Virtual
 * commands place their windows too: every rank keeps every domain's. */
cl_mem tt_cmd_native_at(struct tt_cmd *c, cl_mem m, size_t *off, size_t len, cl_int *err)
{
  struct tt_place p;
  if ((*err = tt_window_place(m, c->dom, *off, len, &p)) != CL_SUCCESS || !c->actual)
    return NULL;
  *off = p.off;
  return p.native;
}

/* The same for a command that addresses m otherwise than by one byte range (rectangles,
 * maps, migrations): a windowed buffer gets one window over all its bytes, offsets stay. */
cl_mem tt_cmd_native_whole(struct tt_cmd *c, cl_mem m, cl_int *err)
{
  size_t off = 0;
  return tt_cmd_native_at(c, m, &off, m->size, err);
}

/* The command leaves [ptr, ptr+len) of host memory filled on its owner: every rank must end
 * with those bytes (runtime/transfer/broadcast.h). Call before tt_cmd_begin; every rank draws
 * the broadcast's ids. */
void tt_cmd_broadcast(struct tt_cmd *c, void *ptr, size_t len)
{
  if (!tt_cluster_distributed())
    return;
  c->broadcast = true;
  c->host_ptr = ptr;
  c->host_len = len;
  c->broadcast_id = tt_broadcast_ids(len);
}

/* Whether c uses a buffer in host memory of Tutti's in a job of several ranks
 * (tt_domain_direct_memory): bytes leave from that memory, or arrive there, once the commands
 * they must follow are complete, which their own events tell at once. A marker enqueued
 * behind such a command only when a transfer needs it is reached tens of microseconds later,
 * even after the program's clFinish covered the command (PoCL: the marker waits for a worker
 * thread), and the send or the receive waits for it (doc/testing.md, "Figures behind the
 * code"). */
bool tt_cmd_uses_direct(const struct tt_cmd *c)
{
  return c->actual && c->nuses && tt_cluster_distributed() &&
         tt_domain_direct_memory(c->ctx, c->dom);
}

/* Where the native command puts its event: only asked for when the user wants one, the
 * call blocks, the bytes go on to other ranks, windows are used, it is a split launch's
 * part or it uses bytes that may move between ranks (uses_direct); the plan makes markers for
 * the rest when needed (runtime/order/order.h: a marker follows every command of its queue so far,
 * so an eviction, or a halo received into bytes a part read, ordered by one would wait for
 * the kernels queued since, not overlap them). */
cl_event *tt_cmd_want_event(const struct tt_cmd *c, cl_event *slot, cl_event *user, bool blocking)
{
  /* A gated command's event is held by its gate (runtime/order/order.h). */
  return user || blocking || c->broadcast || tt_trace_on || c->deps.gate || c->windowed || c->part ||
                 tt_cmd_uses_direct(c)
             ? slot
             : NULL;
}

/* The native command the backend refused on the device's rank after every rank had planned
 * it (the launch and argument checks, decided alike everywhere, let it through): the other
 * ranks hold it as enqueued, so here too it is, and it fails through its event with the
 * backend's error on every rank (its bytes stay as they were); a read reaching every rank
 * sends this rank's host memory as it was and completes (its failure is not passed on).
 * With one rank the backend's error is the call's. */
cl_int tt_cmd_issued(struct tt_cmd *c, cl_int err, cl_event *ev)
{
  if (err == CL_SUCCESS || !tt_cluster_distributed())
    return err;
  cl_int e = CL_SUCCESS;
  cl_event failed = c->d->clCreateUserEvent(c->ctx->domains[c->dom].native, &e);
  if (!failed)
    return err;
  TT_WARN("%s refused command #%llu (%s) on device %u: %s; %s", c->q->device->backend,
          (unsigned long long)c->seq, c->label, c->q->device->index, tt_error_name(err),
          c->broadcast ? "every rank receives this rank's host memory as it was"
                    : "it fails through its event on every rank");
  c->d->clSetUserEventStatus(failed, err < 0 ? err : CL_OUT_OF_RESOURCES);
  *ev = failed;
  c->refused = true;
  c->on_host = true; /* nothing reached the queue */
  return CL_SUCCESS;
}

/* TUTTI_REFUSE: commands of that name are refused as their backend could refuse them. */
bool tt_cmd_refuse_now(const struct tt_cmd *c)
{
  return tt_env()->refuse && !strcmp(c->label, tt_env()->refuse);
}

/* Issues a native command through tt_cmd_issued(). */

/* What became of a command (TUTTI_DEBUG=sched) and, in traces, the enqueue on the host track
 * and the native command on its device's track. */
static void note_cmd(const struct tt_cmd *c, cl_event native, cl_command_type type, bool dropped)
{
  if (c->actual && c->on_host && !c->refused)
    TT_LOG(TT_LOG_SCHED, "command #%llu (%s) done by Tutti for device %u (%s), nothing issued",
           (unsigned long long)c->seq, c->label, c->q->device->index, c->q->device->backend);
  else if (c->actual)
    TT_LOG(TT_LOG_SCHED, "command #%llu (%s) issued on device %u (%s)", (unsigned long long)c->seq,
           c->label, c->q->device->index, c->q->device->backend);
  else
    TT_LOG(TT_LOG_SCHED, "command #%llu (%s) %s device %u of rank %d", (unsigned long long)c->seq,
           c->label, dropped ? "dropped (queueing optimization) for" : "planned for",
           c->q->device->index, c->rank);
  if (!tt_trace_on)
    return;
  bool kernel = type == CL_COMMAND_NDRANGE_KERNEL || type == CL_COMMAND_TASK;
  tt_trace_enqueue(c->q->device, c->label, c->seq, c->actual, dropped);
  if (c->actual && native)
    tt_trace_command(c->q->device, c->label, kernel ? TT_TRACE_KERNEL : TT_TRACE_COMMAND, c->seq,
                     native, c->d);
}

/* The event of a command whose bytes are broadcast to every rank: the owner sends them once
 * its native command (or each piece's read) is done, the others receive them. Takes over
 * `native` and c->sent; the piece events of c stay the caller's. */
static cl_event broadcast_event(struct tt_cmd *c, cl_event native, cl_command_type type)
{
  cl_event e = tt_event_new_managed(c->ctx, c->q, type, c->rank);
  if (!e) {
    if (native)
      c->d->clReleaseEvent(native);
    return NULL;
  }
  e->broadcast = true;
  e->seq = c->seq;
  /* Every later host wait on the queue waits for these bytes too (runtime/order/event.h). */
  tt_event_broadcast_pending(e);
  if (c->actual)
    e->prof = native; /* its status and profiling times answer for every rank */
  /* Where commands may fail (a user event set to an error), it completes with its owner's
   * status on every rank (found by tests/api/api_fuzz.c: bytes that came before the owner's
   * failure made the others succeed). */
  if (atomic_load(&c->ctx->may_fail))
    tt_event_share_with_all(e);
  cl_event ready = native;
  struct tt_broadcast b = {.done = e, .ptr = c->host_ptr, .len = c->host_len,
                           .id = c->broadcast_id, .owner = c->rank, .from = c->send_from,
                           .sent = c->sent, .ready = c->npiece_ev ? c->piece_ev : &ready,
                           .nready = c->npiece_ev ? c->npiece_ev : 1};
  c->sent = NULL;
  tt_broadcast_start(&b);
  return e;
}

const cl_event *tt_cmd_wait_list(struct tt_cmd *c)
{
  return c->deps.n ? c->deps.ev : NULL;
}

/* The event handed to the program for command c: it joins its queue's status batches. */
cl_event tt_cmd_handed(const struct tt_cmd *c, cl_event e)
{
  if (e) {
    e->seq = c->seq;
    if (!c->actual)
      tt_event_gate(c->q, c->nwait, c->wait, e);
    /* Every rank tracks the same events: those the program asked for on each of them. */
    if (!c->own_event)
      tt_event_track(e);
  }
  return e;
}

/* After a blocking command of a job of several ranks: the reads before it on its queue
 * have their bytes here, and the events of its wait list are complete on every rank (each
 * rank learns their statuses from their owners). */
static cl_int blocking_done(const struct tt_cmd *c, cl_int err)
{
  if (!tt_cluster_distributed())
    return err;
  for (cl_uint i = 0; i < c->nwait; i++)
    tt_event_share_with_all(c->wait[i]);
  tt_event_wait_broadcasts(c->q, c->seq);
  for (cl_uint i = 0; i < c->nwait; i++)
    /* CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the operation is blocking and the
     * execution status of any of the events in event_wait_list is a negative integer. */
    if (tt_event_wait(c->wait[i]) < 0)
      err = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  return err;
}

/* Records the accesses (when the native command was issued), drops the lock, makes the
 * user's event, and for blocking commands waits. Returns the command's result. */
/* The command's accesses recorded (for what comes after it), and written bytes sent back to a
 * buffer's attached domain. A command done on the host without an event of its own is
 * complete: its accesses order nothing after them (recorded without an event they would: by a
 * marker on the queue). */
static void record_uses(struct tt_cmd *c, cl_event native, bool may_fail)
{
  struct tt_nqueue *record_on = c->on_host && !native ? NULL : c->nq;
  for (cl_uint i = 0; i < c->nuses && !c->brings; i++) {
    tt_window_record(c->uses[i].mem, c->uses[i].off, c->uses[i].len, c->uses[i].writes, c->dom,
                     record_on, native, may_fail);
    if (c->uses[i].writes)
      tt_coherence_write_back(c->uses[i].mem, c->uses[i].off, c->uses[i].len, c->dom);
  }
}

/* The end of a command whose bytes reach every rank: its event (the owner's command and the
 * pieces' arrivals), the owner's own copy beside its sends, and the wait of a blocking one. */
static cl_int end_broadcast(struct tt_cmd *c, cl_event native, cl_command_type type,
                            cl_event *event, bool blocking)
{
  cl_int err = CL_SUCCESS;
  cl_event e = broadcast_event(c, native, type);
  if (c->sent)
    tt_user_event_end(c->sent, true); /* not taken (out of memory): the queue goes on */
  if (!e)
    return CL_OUT_OF_HOST_MEMORY;
  if (c->send_from) {
    /* The owner's own bytes, while the sends move the same ones. */
    uint64_t t0 = tt_stats_now_ns();
    memcpy(c->host_ptr, c->send_from, c->host_len);
    atomic_fetch_add_explicit(&tt_stats.wait_ns, tt_stats_now_ns() - t0, memory_order_relaxed);
  }
  /* Handed out before any wait: the rest of a call that waited decides nothing that has to
   * agree (runtime/job/turns.h). */
  if (event)
    *event = tt_cmd_handed(c, e);
  if (blocking && tt_event_wait(e) < 0)
    err = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  if (blocking)
    err = blocking_done(c, err);
  if (!event)
    TT_RELEASE(e);
  return err;
}

cl_int tt_cmd_end(struct tt_cmd *c, cl_int err, cl_event native, cl_command_type type,
                      cl_event *event, bool blocking)
{
  bool may_fail = c->locked && c->actual && err == CL_SUCCESS ? tt_order_may_fail(&c->deps, c->nq)
                                                                : c->deps.may_fail;
  may_fail |= c->refused;
  if (err == CL_SUCCESS)
    record_uses(c, native, may_fail);
  /* What followed this command's windows last time comes back while it runs. */
  if (c->locked && err == CL_SUCCESS && c->ctx->nwindowed)
    tt_window_prefetch(c->ctx, c->dom, c->ahead, c->nahead);
  if (c->locked)
    tt_plan_unlock();
  struct tt_fail *fail = NULL;
  if (err == CL_SUCCESS) {
    tt_deps_hold(&c->deps, native);
    fail = tt_deps_fail(&c->deps);
  }
  tt_deps_release(&c->deps);
  if (c->uses != c->inline_uses)
    free(c->uses);
  if (err != CL_SUCCESS) {
    if (native)
      c->d->clReleaseEvent(native);
    return err;
  }
  if (!native || !c->actual || c->broadcast) {
    tt_fail_put(fail);
    fail = NULL;
  }
  if (c->actual && !c->on_host)
    atomic_fetch_add_explicit(&c->nq->issued, 1, memory_order_release);
  note_cmd(c, native, type, false);
  if (c->broadcast)
    return end_broadcast(c, native, type, event, blocking);
  if (!c->actual) {
    /* A virtual command: its owner runs it; the event completes when the owner says so. */
    if (event && !(*event = tt_cmd_handed(c, tt_event_new_managed(c->ctx, c->q, type, c->rank))))
      return CL_OUT_OF_HOST_MEMORY;
    if (!event)
      tt_event_gate(c->q, c->nwait, c->wait, NULL); /* later commands of its queue */
    return blocking ? blocking_done(c, err) : err;
  }
  if (!native)
    return blocking ? blocking_done(c, err) : err;
  /* The event is made before any wait (as above); it takes fail. */
  if (event) {
    *event = tt_cmd_handed(c, tt_event_new(c->ctx, c->q, type, c->dom, native));
    if (!*event) {
      tt_fail_put(fail);
      return CL_OUT_OF_HOST_MEMORY;
    }
    (*event)->may_fail = may_fail;
    (*event)->fail = fail;
  }
  if (blocking) {
    tt_turn_give();
    tt_check_sync();
    uint64_t t0 = tt_stats_now_ns();
    c->d->clWaitForEvents(1, &native);
    atomic_fetch_add_explicit(&tt_stats.wait_ns, tt_stats_now_ns() - t0, memory_order_relaxed);
    cl_int st = CL_COMPLETE;
    c->d->clGetEventInfo(native, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    /* CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the operation is blocking and the
     * execution status of any of the events in event_wait_list is a negative integer. */
    if ((st < 0 && !c->refused) || (fail && atomic_load(&fail->status) < 0))
      err = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    err = blocking_done(c, err);
  }
  if (!event) {
    c->d->clReleaseEvent(native);
    tt_fail_put(fail);
  }
  return err;
}

/* The queueing optimization (SnuCL-D 3.7): a virtual command with no wait list whose
 * buffers are all attached to devices of other ranks changes nothing here, so it is
 * discarded in its clEnqueue call (reads to host memory never are: their bytes come here).
 * Its event, if asked for, still exists and completes when its owner says so. */
bool tt_cmd_discard(struct tt_cmd *c, cl_uint nwait, const cl_event *wait, const cl_mem *mems,
                        cl_uint n, cl_command_type type, cl_event *event, cl_int *err)
{
  /* A wait list, even a malformed one, is the plan's to check: every rank answers alike. */
  if (c->actual || nwait || wait || c->broadcast)
    return false;
  for (cl_uint i = 0; i < n; i++) {
    cl_mem r = mems[i] ? mems[i]->root : NULL;
    if (r && (r->attached == TT_NOT_ATTACHED || c->ctx->domains[r->attached].actual))
      return false;
  }
  *err = CL_SUCCESS;
  note_cmd(c, NULL, type, true);
  if (event && !(*event = tt_cmd_handed(c, tt_event_new_managed(c->ctx, c->q, type, c->rank))))
    *err = CL_OUT_OF_HOST_MEMORY;
  return true;
}
