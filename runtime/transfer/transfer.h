/* Moving bytes between memory domains (runtime/transfer/): within a rank, between ranks in
 * pieces, through pinned staging, by the GPUs' copy engines. On ordering (runtime/order/)
 * and memory (runtime/memory/); the planner (runtime/command/) calls it. Under the plan
 * lock. */
#ifndef TUTTI_TRANSFER_H
#define TUTTI_TRANSFER_H

#include "runtime/order/order.h"

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
  /* A copy command's destination (tt_transfer_into): the bytes of root land in this buffer
   * (a root) at off + into_delta in f->dom, not in root's own copy there. NULL: root's. */
  cl_mem into;
  ptrdiff_t into_delta;
};

/* runtime/transfer/transfer.c: one run of bytes from holder domain src into f's domain. Within this rank
 * (between GPUs by CUDA where it can, else through host memory), or between this rank and rank
 * peer (send: from here; else to here) with the transfer's first message id
 * (tt_transfer_pieces ids in all). Each returns nonzero with f->err set on failure. */
int tt_transfer_local(struct fetch *f, cl_uint src, size_t off, size_t len);
int tt_transfer_remote(struct fetch *f, cl_uint src, size_t off, size_t len, int peer,
                       uint64_t id, bool send);
uint64_t tt_transfer_pieces(size_t len);

/* A copy command (clEnqueueCopyBuffer) whose source bytes [so, so+len) of sroot all sit in
 * domain src, another than the command's domain dom: whether the GPUs' copy engines can move
 * them straight into droot's bytes at dof in dom (both domains CUDA's on one host, both
 * buffers in CUDA memory there), so that no copy of the source is made in dom and no copy
 * runs on the device afterwards. Every rank alike. */
bool tt_transfer_into_possible(cl_context ctx, cl_uint src, cl_mem sroot, size_t so, cl_uint dom,
                               cl_mem droot, size_t dof);
/* That copy, f->into set: within this rank (peer < 0) or between this rank and rank peer
 * (send: from here), with the transfer's first message id. Nonzero with f->err set on
 * failure. */
int tt_transfer_into(struct fetch *f, cl_uint src, size_t off, size_t len, int peer, uint64_t id,
                     bool send);

/* Releases what a context's domain holds for transfers (before its native context goes). */
void tt_transfer_domain_release(struct tt_domain *dm);

#endif
