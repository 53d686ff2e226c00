/* Moving bytes between memory domains (runtime/transfer/): within a rank, between ranks in
 * pieces, through pinned staging, by the GPUs' copy engines. On ordering (runtime/order/)
 * and memory (runtime/memory/); the planner (runtime/command/) calls it. Under the plan
 * lock. */
#ifndef TUTTI_TRANSFER_H
#define TUTTI_TRANSFER_H

#include "runtime/order/order.h"
#include "runtime/transfer/route.h"

/* Bytes one command's domain needs: for a command, its dependencies, domain and queue; the
 * first failure stops the walk over the runs it lacks. */
struct fetch {
  struct tt_deps *deps;
  cl_context ctx;
  cl_uint dom;
  struct tt_nqueue *nq; /* its native queue (actual commands) */
  cl_mem root;
  cl_int err;
  /* A copy command's destination (tt_route_copy_into): the bytes of root land in this buffer
   * (a root) at off + into_delta in f->dom, not in root's own copy there. NULL: root's. */
  cl_mem into;
  ptrdiff_t into_delta;
};

/* runtime/transfer/execute.c: runs one step of the transfer planner (runtime/transfer/route.h)
 * for f's command: within this rank (between GPUs by CUDA where it can, else through host
 * memory), or between this rank and s->peer. Nonzero with f->err set on failure. */
int tt_transfer_run(struct fetch *f, const struct tt_step *s);
/* The planner's questions of this rank's memory (struct tt_route_view): staging slots
 * reserved for npieces pieces of domain dom; whether [off, off+len) of f's buffer lives in
 * Tutti's host memory there. */
int tt_transfer_stage(struct fetch *f, cl_uint dom, uint64_t npieces, void **reserved);
bool tt_transfer_direct(struct fetch *f, cl_uint dom, size_t off, size_t len);

/* A copy command (clEnqueueCopyBuffer) whose source bytes [so, so+len) of sroot all sit in
 * domain src, another than the command's domain dom: whether the GPUs' copy engines can move
 * them straight into droot's bytes at dof in dom (both domains CUDA's on one host, both
 * buffers in CUDA memory there), so that no copy of the source is made in dom and no copy
 * runs on the device afterwards. Every rank alike. */
bool tt_transfer_into_possible(cl_context ctx, cl_uint src, cl_mem sroot, size_t so, cl_uint dom,
                               cl_mem droot, size_t dof);
/* Releases what a context's domain holds for transfers (before its native context goes). */
void tt_transfer_domain_release(struct tt_domain *dm);

#endif
