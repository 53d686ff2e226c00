/* Within runtime/transfer/ only: what the routes share (runtime/transfer/moves.c): the
 * executor with its mapped and direct pieces (execute.c), pinned staging and host copies
 * (staging.c) and copies by the GPUs' copy engines (gpu.c). */
#ifndef TUTTI_TRANSFER_MOVES_H
#define TUTTI_TRANSFER_MOVES_H

#include <stdatomic.h>

#include "runtime/transfer/transfer.h"

/* What a piece of a transfer between ranks carries, for messages: both ranks, the buffer,
 * its bytes and the command that needed them. */
struct transfer_desc {
  int src, dst;
  uint64_t mem;
  size_t off, len;
  uint64_t cmd;
  char cmd_name[48]; /* a copy: the kernel that named the command may be gone by then */
  uint64_t id;
};

struct transfer_desc tt_transfer_of(const struct fetch *f, int src, int dst, size_t off,
                                    size_t len, uint64_t id);
/* "buffer #12 bytes 0+4194304 from rank 0 to rank 1 (message 3) for command #7 (vec_add)" */
const char *tt_transfer_str(const struct transfer_desc *x, char *buf, size_t cap);

/* The native buffer holding the root's bytes [off, off+len) in actual domain dom (its window,
 * runtime/memory/window.h); *at (unless NULL): their offset in it, *host (unless NULL): their
 * address when it lives in Tutti's memory. NULL with f->err set when no window could be
 * made. */
cl_mem tt_transfer_placed(struct fetch *f, cl_uint dom, size_t off, size_t len, size_t *at,
                          unsigned char **host);
/* The same for another root's bytes (a copy command's destination, f->into). */
cl_mem tt_transfer_placed_in(struct fetch *f, cl_mem root, cl_uint dom, size_t off,
                             size_t len, size_t *at, unsigned char **host);

/* Counts in *waiting each event of deps not complete yet and has ready(arg) called as each
 * completes (the caller holds one more count while setting up, and acts when the count ends).
 * An event that takes no callback is waited for here. */
void tt_transfer_wait_for(struct tt_deps *deps, atomic_int *waiting,
                          void (CL_CALLBACK *ready)(cl_event, cl_int, void *), void *arg);

/* Transfers between ranks travel in pieces (TUTTI_PIECE bytes, 4 MiB by default), so that
 * the source, the network and the destination overlap. */
#define PIECE_BYTES (tt_env()->piece)

/* Reads (write: writes) bytes [at, at + n) of f's buffer held by native (a buffer, or an
 * image: whole rows, runtime/memory/image.h) from (into) host memory on native queue q after
 * wait, its event in *ev: the one operation that differs by kind of memory. */
cl_int tt_transfer_io(const struct fetch *f, const cl_icd_dispatch *d, cl_command_queue q,
                      cl_mem native, bool write, size_t at, size_t n, void *host, cl_uint nwait,
                      const cl_event *wait, cl_event *ev);

/* The transport names operations on buffer bytes by their struct transfer_desc (once). */
void tt_transfer_describe_once(void);

#endif
