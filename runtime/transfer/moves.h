/* Within runtime/transfer/ only: what transfer.c (moves through host memory, pieces between
 * ranks), staging.c (pinned staging and host copies) and gpu.c (copies by the GPUs' copy
 * engines) share. */
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

struct transfer_desc tt_transfer_of(const struct fetch *f, int src, int dst, size_t off, size_t len,
                       uint64_t id);
/* "buffer #12 bytes 0+4194304 from rank 0 to rank 1 (message 3) for command #7 (vec_add)" */
const char *tt_transfer_str(const struct transfer_desc *x, char *buf, size_t cap);

/* The native buffer holding the root's bytes [off, off+len) in local domain dom (its window,
 * runtime/memory/window.h); *at (unless NULL): their offset in it, *host (unless NULL): their
 * address when it lives in Tutti's memory. NULL with f->err set when no window could be
 * made. */
cl_mem tt_transfer_placed(struct fetch *f, cl_uint dom, size_t off, size_t len, size_t *at,
                      unsigned char **host);
/* The same for another root's bytes (a copy command's destination, f->into). */
cl_mem tt_transfer_placed_in(struct fetch *f, cl_mem root, cl_uint dom, size_t off, size_t len,
                         size_t *at, unsigned char **host);

/* Counts in *waiting each event of deps not complete yet and has ready(arg) called as each
 * completes (the caller holds one more count while setting up, and acts when the count ends).
 * An event that takes no callback is waited for here. */
void tt_transfer_wait_for(struct tt_deps *deps, atomic_int *waiting,
                      void (CL_CALLBACK *ready)(cl_event, cl_int, void *), void *arg);

/* gpu.c: whether bytes of root move between domains a and b by the GPUs' copy engines (both
 * CUDA domains of one host, the native buffers holding byte `at` of root CUDA's at both ends;
 * every rank alike), and such a copy:
 * LOCAL from domain src of this rank into f->dom, SEND from src here to rank peer, RECV from
 * rank peer into f->dom (into f->into's bytes there when set). tt_gpu_run returns -1 when a
 * LOCAL copy cannot take this path (the caller copies through the host), else whether
 * planning must stop. */
enum gpu_role { GPU_LOCAL, GPU_SEND, GPU_RECV };
bool tt_gpu_pair(cl_context ctx, cl_uint a, cl_uint b, cl_mem root, size_t at);
/* The same with the bytes in root ra at byte ata in a and in root rb at byte atb in b. */
bool tt_gpu_pair_of(cl_context ctx, cl_uint a, cl_mem ra, size_t ata, cl_uint b, cl_mem rb,
                    size_t atb);
int tt_gpu_run(struct fetch *f, enum gpu_role role, cl_uint src, size_t off, size_t len,
               int peer, uint64_t id);

/* Transfers between ranks travel in pieces (TUTTI_PIECE bytes, 4 MiB by default), so that
 * the source, the network and the destination overlap. */
#define PIECE_BYTES (tt_env()->piece)

/* --- moves through pinned staging (runtime/transfer/staging.c) ------------------------------ */

/* The slots of one transfer's pieces in a domain's pinned staging. */
struct chains;

/* Slots for a transfer of npieces pieces of domain dom's staging (those free now), or NULL:
 * none free (the pieces are mapped instead). */
struct chains *tt_stage_chains_new(cl_context ctx, cl_uint dom, size_t npieces);
/* Its slots, m: piece i takes slot i % m. */
int tt_stage_chain_slots(const struct chains *ch);
/* How many of the first n pieces take slot k of m. */
size_t tt_stage_pieces_in_slot(size_t n, int k, int m);
/* The planning loop's reference dropped; n pieces of slot k that will never be made. */
void tt_stage_chains_put(struct chains *ch);
void tt_stage_chain_leave(struct chains *ch, int k, int n);
/* One piece of a transfer between ranks through slot k of ch (after: its turn there comes
 * after the transfer's piece before it in the slot; before: a piece follows it there), or
 * with host memory of its own (ch NULL): sent or received. 0, 1 (failed, f->err), 2 (nothing
 * issued). */
int tt_stage_piece(struct fetch *f, cl_uint dom, size_t off, size_t n, bool send, int peer,
                   uint64_t id, struct chains *ch, int k, bool after, bool before);
/* Bytes [off, off+len) from this rank's domain src into the command's, through the host
 * (staging slots, or memory of the copy's own). 0, or nonzero with f->err. */
int tt_stage_copy_local(struct fetch *f, cl_uint src, size_t off, size_t len);
/* The domain's pinned staging given back. */
void tt_stage_release(struct tt_domain *dm);

#endif
