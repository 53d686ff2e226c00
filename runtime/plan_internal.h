/* Shared by the planner's files only, layered: runtime/order.c (ordering: queues,
 * dependencies, access records, the command being planned), runtime/transfer.c on it
 * (moving bytes between domains), runtime/plan.c on both (coherence: who holds which bytes,
 * what a command fetches). Nothing points back up. The rest of Tutti uses runtime/plan.h.
 * Under the plan lock. */
#ifndef TUTTI_PLAN_INTERNAL_H
#define TUTTI_PLAN_INTERNAL_H

#include "runtime/plan.h"

/* Bytes one command's domain needs: for a command, its dependencies, domain and queue; the
 * first failure stops the walk over the runs it lacks. */
struct fetch {
  struct tt_deps *deps;
  cl_context ctx;
  cl_uint dom;
  bool actual;          /* the command executes on this rank */
  struct tt_nqueue *nq; /* its native queue (actual commands) */
  cl_mem root;
  cl_int err;
  int forced_src;       /* attached buffers: the domain to fetch from, whatever it holds */
};

/* The command being planned (runtime/order.c; set by tt_plan_command): named in messages about its
 * transfers, its device's track in traces, its halo bytes counted when it is a part. */
struct tt_plan_current {
  uint64_t cmd;
  const char *name;
  cl_device_id device;
  bool part;
};
extern struct tt_plan_current tt_plan_cur;

/* Traces: a command Tutti issued to move bytes, on the device of its queue (the internal
 * queue's, or the command's own when own_queue). */
void tt_plan_trace_internal(struct tt_domain *dm, bool own_queue, const char *what, cl_event ev,
                            uint64_t cmd);

/* runtime/order.c: keeps an access for ordering later commands after it (without touching
 * the newest holders); drops every access of a buffer. */
void tt_plan_access_record(cl_mem root, size_t off, size_t len, bool writes, cl_uint dom,
                           struct tt_nqueue *nq, cl_event ev, bool may_fail);
void tt_plan_accesses_free(cl_mem root);
/* Makes *slot, a queue of Tutti's own on the domain's first device, unless made already. */
cl_int tt_plan_queue_make(struct tt_domain *dm, struct tt_nqueue **slot);

/* runtime/transfer.c: one run of bytes from holder domain src into f's domain. Within this rank
 * (between GPUs by CUDA where it can, else through host memory), or between this rank and rank
 * peer (send: from here; else to here) with the transfer's first message id
 * (tt_transfer_pieces ids in all). Each returns nonzero with f->err set on failure. */
int tt_transfer_local(struct fetch *f, cl_uint src, size_t off, size_t len);
int tt_transfer_remote(struct fetch *f, cl_uint src, size_t off, size_t len, int peer,
                       uint64_t id, bool send);
uint64_t tt_transfer_pieces(size_t len);

#endif
