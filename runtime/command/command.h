/* One command's life, from its entry point to its end (runtime/command/command.c): numbered
 * alike on every rank, planned under the plan lock (its wait list, the bytes each buffer use
 * needs, the dependencies), issued natively on its owner, recorded, and its event handed to
 * the program. Reads whose bytes reach every rank travel in pieces from the owner (SnuCL-D
 * 3.1). The one command driver (runtime/command/driver.h) takes every command through these
 * steps: tt_cmd_init, tt_cmd_discard (the queueing optimization), tt_cmd_begin, tt_cmd_use for
 * each buffer range, the native call through TT_CMD_ISSUE, tt_cmd_end; the bodies of the
 * entry points (runtime/command/buffer.c, launch.c, marker.c) only describe their commands. */
#ifndef TUTTI_COMMAND_H
#define TUTTI_COMMAND_H

#include "runtime/base/env.h"
#include "runtime/base/tutti_internal.h"
#include "runtime/memory/window.h"
#include "runtime/order/order.h"
#include "runtime/transfer/broadcast.h"

struct tt_cmd_use {
  cl_mem mem;
  size_t off, len;
  bool reads, writes;
};

struct tt_cmd {
  cl_command_queue q;
  cl_context ctx;
  cl_uint dom;
  const cl_icd_dispatch *d;
  struct tt_nqueue *nq;
  struct tt_deps deps;
  struct tt_cmd_use *uses;
  cl_uint nuses, capuses;
  struct tt_cmd_use inline_uses[4];
  bool locked;
  bool actual; /* the queue's device is this rank's */
  int rank;    /* the rank that executes the command */
  /* Commands that leave bytes in host memory (reads, maps): in a job of several ranks the
   * owner sends them to every other rank (SnuCL-D 3.1). */
  void *host_ptr;
  size_t host_len;
  bool broadcast;        /* runtime/transfer/broadcast.h */
  uint64_t broadcast_id; /* the first of one id per piece (tt_broadcast_pieces) */
  /* Owner of a blocking read of bytes in Tutti's memory (read_from_host): the sends leave
   * from there at once, the copy into host_ptr runs beside them, and `sent` (a native user
   * event, which a marker on the queue waits for) is set once they are done. */
  unsigned char *send_from;
  cl_event sent;
  /* Owner of a read issued in pieces: each piece's native read, retained (else the whole
   * command's native event readies every piece). */
  cl_event *piece_ev;
  size_t npiece_ev;
  uint64_t seq;      /* the command's number, alike on every rank (traces, messages) */
  cl_uint nwait;     /* the user's wait list */
  const cl_event *wait;
  const char *label; /* the kernel's name, else the entry point's (traces, messages) */
  bool part;         /* a part of a split launch (runtime/command/split.c) */
  bool own_event;    /* the event is Tutti's, not the program's: it joins no status batch */
  bool on_host;      /* done by Tutti on the host, nothing issued on the queue (read_from_host) */
  bool windowed;     /* uses a windowed buffer: Tutti's own copies of its windows (evictions,
                      * carry-overs) wait for this very command, not a marker after later ones */
  bool refused;      /* its backend refused it after every rank planned it (tt_cmd_issued()) */
  bool brings;       /* only brings its uses' bytes (a split launch's fetch): nothing on the
                      * device reads them, so no access is kept for later writes to wait for
                      * (its event completes only when its queue reaches it) */
  /* Windows the next command on the domain will use (a split launch's next part there):
   * prefetched once this one is planned (tt_window_prefetch). */
  struct tt_window_range ahead[8];
  size_t nahead;
};

/* A command of q, named by the entry point that makes it (its name less "tt_"). */
#define tt_cmd_init(c, q) tt_cmd_init_at((c), (q), __func__)
void tt_cmd_init_at(struct tt_cmd *c, cl_command_queue q, const char *entry);

/* The queueing optimization (SnuCL-D 3.7): whether c, a virtual command with nothing to do
 * here, is dropped at once (*err: what its entry point returns; *event made if asked). */
bool tt_cmd_discard(struct tt_cmd *c, cl_uint nwait, const cl_event *wait, const cl_mem *mems,
                    cl_uint n, cl_command_type type, cl_event *event, cl_int *err);

/* Takes the plan lock and adds the user's wait list. */
cl_int tt_cmd_begin(struct tt_cmd *c, cl_uint nwait, const cl_event *wait);

/* A buffer range the command reads or writes: its bytes brought, its dependencies added. */
cl_int tt_cmd_use(struct tt_cmd *c, cl_mem m, size_t off, size_t len, bool reads, bool writes);

/* A copy command from src to dst: whether the GPUs copied the source straight into dst
 * (tt_coherence_copy_into; then only dst is a use of the command, written). */
cl_int tt_cmd_copy_into(struct tt_cmd *c, cl_mem src, size_t so, cl_mem dst, size_t dof,
                        size_t len, bool *taken);

/* The native buffer holding m's bytes [*off, *off+len) in the command's domain (*off becomes
 * their offset there), or over all of m's bytes; NULL for a virtual command. */
cl_mem tt_cmd_native_at(struct tt_cmd *c, cl_mem m, size_t *off, size_t len, cl_int *err);
cl_mem tt_cmd_native_whole(struct tt_cmd *c, cl_mem m, cl_int *err);

/* A command that leaves ptr's len bytes in host memory on every rank (reads, maps). */
void tt_cmd_broadcast(struct tt_cmd *c, void *ptr, size_t len);

/* Whether c uses a buffer in Tutti's own host memory in a job of several ranks (its bytes
 * leave or arrive once the commands they follow are complete, told by their own events). */
bool tt_cmd_uses_direct(const struct tt_cmd *c);

/* Where the native command puts its event: slot when something needs it (the program's
 * event, a blocking call, a broadcast, a gate, windows, a split launch's part, Tutti's host
 * memory, traces), else NULL. */
cl_event *tt_cmd_want_event(const struct tt_cmd *c, cl_event *slot, cl_event *user,
                            bool blocking);

/* The native call's result (TT_CMD_ISSUE): a call the backend refused after every rank
 * planned the command fails through its event on every rank. */
cl_int tt_cmd_issued(struct tt_cmd *c, cl_int err, cl_event *ev);
bool tt_cmd_refuse_now(const struct tt_cmd *c);
#define TT_CMD_ISSUE(c, ev, call)                                                                 \
  tt_cmd_issued((c), tt_cmd_refuse_now(c) ? CL_OUT_OF_RESOURCES : (call), (ev))

/* The dependencies as a native wait list (NULL when none). */
const cl_event *tt_cmd_wait_list(struct tt_cmd *c);

/* The event handed to the program for c: numbered as the command, it joins its queue's
 * status batches. */
cl_event tt_cmd_handed(const struct tt_cmd *c, cl_event e);

/* Ends the command: records its accesses, drops the plan lock, makes the program's event
 * and waits for a blocking command. */
cl_int tt_cmd_end(struct tt_cmd *c, cl_int err, cl_event native, cl_command_type type,
                  cl_event *event, bool blocking);

/* Ends c with e_ when x failed. */
#define TT_CMD_TRY(c, x)                                                                          \
  do {                                                                                            \
    cl_int e_ = (x);                                                                              \
    if (e_ != CL_SUCCESS)                                                                         \
      return tt_cmd_end((c), e_, NULL, 0, NULL, false);                                           \
  } while (0)

#endif
