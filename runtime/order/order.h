/* Ordering (runtime/order/): the plan lock and the command being planned, each command's
 * dependencies (the user's wait list, earlier conflicting commands on the same bytes, the
 * transfers it waits for), native queue holders and their gates, and the events built on
 * them (runtime/order/event.h). Decided at enqueue time, on the calling thread, in program
 * order; one lock, tt_plan_lock, keeps these decisions in one order across threads: never
 * hold it while waiting for a command. */
#ifndef TUTTI_ORDER_H
#define TUTTI_ORDER_H

#include <assert.h>

#include "runtime/base/tutti_internal.h"
#include "runtime/order/bridge.h"

/* Native events a command waits for; each one is owned (retained) by the list.
 *
 * Failures: a command whose wait list holds an event that can end in an error (a user
 * event, an event of another rank's command, or one that may fail itself) may fail, and
 * so may every later command of its native queue (PoCL fails them too). Backends differ in
 * what becomes of a command waiting on a failed one of another queue (PoCL leaves it queued
 * forever), so Tutti's own ordering never passes such an event on: it waits for it through
 * a user event that completes however the command ended. The user's own wait lists pass
 * failures on, as the specification says. */
struct tt_gate;
struct tt_deps {
  cl_event *ev;
  cl_uint n, cap;
  bool may_fail;
  /* Once may_fail: every dependency goes through one gate, a user event the command alone
   * waits on (PoCL 3.1 frees a command that failed through one dependency while another
   * still lists it, and crashes when that one completes). Completed at tt_deps_release,
   * after the command was issued, once every dependency ended. */
  struct tt_gate *gate;
  cl_event inline_ev[8];
};

void tt_deps_init(struct tt_deps *d);
/* Adds a native event, taking ownership of one reference. */
cl_int tt_deps_take(struct tt_deps *d, cl_event native);
void tt_deps_release(struct tt_deps *d);
/* The native event of the command issued with d: a gate holds it until it is set. */
void tt_deps_hold(struct tt_deps *d, cl_event command);
/* The failure cell of d's gate (a reference of the caller's), or NULL without a gate. */
struct tt_fail *tt_deps_fail(struct tt_deps *d);

/* Native queue holders. */
struct tt_nqueue *tt_nqueue_new(const cl_icd_dispatch *d, cl_command_queue native);
void tt_nqueue_ref(struct tt_nqueue *q);
/* A gate of q (a user event of Tutti's that a command there waits for, set once bytes from
 * another rank are in) is made (+1) or set (-1). A host wait on q first waits until none is
 * left (tt_nqueue_wait_gates): NVIDIA's own wait, entered while a command of its queue is
 * held by a user event that another thread sets, returns later than once nothing is held
 * (doc/testing.md, "Figures behind the code"). */
void tt_nqueue_gate(struct tt_nqueue *q, int delta);
void tt_nqueue_wait_gates(struct tt_nqueue *q);
void tt_nqueue_unref(struct tt_nqueue *q);
/* A command done without a command of the backend on q (runtime/command/buffer.c) stands in q's order
 * by its native event ev (retained while not complete; NULL: none). Later commands on q add
 * it to their dependencies (tt_nqueue_after_lazy, under the plan lock), and a host wait for
 * the whole queue waits for it after the backend's (tt_nqueue_wait_lazy, without it). */
void tt_nqueue_set_lazy(struct tt_nqueue *q, cl_event ev);
cl_int tt_nqueue_after_lazy(struct tt_deps *d, struct tt_nqueue *q);
void tt_nqueue_wait_lazy(struct tt_nqueue *q);

void tt_plan_lock(void);
/* Names the command being planned (under the lock), for messages about its transfers; part:
 * it is a part of a split launch (the bytes it fetches count as halo bytes). */
void tt_order_command(uint64_t seq, const char *name, cl_device_id device, bool part);
void tt_plan_unlock(void);
/* Whether the calling thread holds the plan lock: what needs it asserts it
 * (TT_ASSERT_PLAN_HELD). */
bool tt_plan_held(void);
#define TT_ASSERT_PLAN_HELD() assert(tt_plan_held())
/* Counts tt_order_command calls: what was used since the last one belongs to the command
 * being planned (its windows stay on the device until it is issued). Plan lock. */
extern uint64_t tt_plan_epoch;
/* Traces a command Tutti issued on dom's internal queue for the command being planned. */
void tt_order_trace(struct tt_domain *dm, const char *what, cl_event ev);

/* Adds the user's wait list of a command of domain `domain` (owned by that domain's rank),
 * translated into native events when the command is actual; the owners of the events that
 * are elsewhere will send it their completion. Checks each event (valid, same context):
 * CL_INVALID_EVENT_WAIT_LIST or CL_INVALID_CONTEXT. */
cl_int tt_order_wait_list(struct tt_deps *d, cl_context ctx, cl_uint domain, cl_uint n,
                         const cl_event *list);
/* Those checks alone (commands made of several, checked before any is planned). */
cl_int tt_order_check_wait_list(cl_context ctx, cl_uint n, const cl_event *list);

/* Adds to d the events of earlier accesses to [off, off+len) of root that conflict with a
 * command of queue nq in domain dom (reading, or writing when writes). Plan lock held.
 * dom TT_HOST_WAITS (nq NULL): for a wait of the host's (tt_transfer_wait_for), the accesses'
 * own native events of whatever domain, no bridge made (a bridge costs a user event and a
 * callback, and the host only needs to know they are complete). */
#define TT_HOST_WAITS ((cl_uint)-2)
cl_int tt_order_after(struct tt_deps *d, cl_context ctx, cl_uint dom, struct tt_nqueue *nq,
                           cl_mem root, size_t off, size_t len, bool writes);
/* The host waits (as TT_HOST_WAITS) for the conflicting accesses of domain `of` alone (of
 * every domain for a buffer of CL_MEM_USE_HOST_PTR): one side of a copy between two domains'
 * memories, which another domain's accesses of its own copy do not touch. */
cl_int tt_order_after_host(struct tt_deps *d, cl_context ctx, cl_uint of, cl_mem root,
                           size_t off, size_t len, bool writes);

/* Records a command of Tutti's that rewrote [off, off+len) of root in domain dom without
 * changing the bytes (a window widened): later commands on them wait for it, the latest
 * holders stay. Plan lock held. */
void tt_order_record(cl_mem root, size_t off, size_t len, cl_uint dom,
                          struct tt_nqueue *nq, cl_event ev);

/* After an actual command with dependencies d was issued on nq: whether it may fail (and
 * its queue is marked so). */
bool tt_order_may_fail(const struct tt_deps *d, struct tt_nqueue *nq);

/* The native queue used for Tutti's own commands in a domain (made on first use). */
cl_int tt_order_internal_queue(cl_context ctx, cl_uint dom, struct tt_nqueue **out);


/* The command being planned (runtime/order/order.c; set by tt_order_command): named in
 * messages about its transfers, its device's track in traces, its halo bytes counted when it
 * is a part. */
struct tt_plan_current {
  uint64_t cmd;
  const char *name;
  cl_device_id device;
  bool part;
};
extern struct tt_plan_current tt_plan_cur;

/* Traces: a command Tutti issued to move bytes, on the device of its queue (the internal
 * queue's, or the command's own when own_queue). */
void tt_order_trace_internal(struct tt_domain *dm, bool own_queue, const char *what, cl_event ev,
                            uint64_t cmd);

/* runtime/order/order.c: keeps an access for ordering later commands after it (without touching
 * the newest holders); drops every access of a buffer. */
void tt_order_access_record(cl_mem root, size_t off, size_t len, bool writes, cl_uint dom,
                           struct tt_nqueue *nq, cl_event ev, bool may_fail);
void tt_order_accesses_free(cl_mem root);
/* Makes *slot, a queue of Tutti's own on the domain's first device, unless made already. */
cl_int tt_order_queue_make(struct tt_domain *dm, struct tt_nqueue **slot);

#endif
