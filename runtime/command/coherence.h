/* The planner (runtime/command/): decisions taken at enqueue time, on the calling thread, in
 * program order.
 *
 * For each command it decides which native events the command must wait for (the user's
 * wait list, earlier conflicting commands on the same bytes, transfers) and which transfers
 * bring a buffer's newest bytes to the command's memory domain (SnuCL-D section 3.3, Table
 * 2). Afterwards it records what the command did: its access for conflict ordering and, for
 * writes, the new latest holder of the written bytes. One lock, tt_plan_lock, keeps these
 * decisions in one order across threads; never hold it while waiting for a command. */
#ifndef TUTTI_COHERENCE_H
#define TUTTI_COHERENCE_H

#include "runtime/memory/domain.h"
#include "runtime/memory/window.h"
#include "runtime/order/order.h"
#include "runtime/transfer/transfer.h"

/* A command on queue q (domain dom, native queue nq) uses [off, off+len) of m (a buffer or
 * sub-buffer; off is relative to m). reads: the command needs the current bytes (a transfer
 * is planned when the domain lacks them). writes: it changes them. Adds the events it must
 * wait for to d. Caller holds the plan lock. */
cl_int tt_coherence_use(struct tt_deps *d, cl_context ctx, cl_uint dom, struct tt_nqueue *nq,
                        cl_mem m, size_t off, size_t len, bool reads, bool writes);

/* A copy command (clEnqueueCopyBuffer) in domain dom from [so, so+len) of src to [dof,
 * dof+len) of dst: when the source bytes all sit in one other domain whose GPU shares a link
 * with dom's (tt_transfer_into_possible), the copy engines move them straight into dst
 * there, on whichever ranks hold the two ends, and *taken is set; the command then only
 * waits for that copy (its d), with no copy of src kept in dom. Every rank decides alike.
 * Otherwise nothing is done and the caller plans the usual uses. Plan lock held. */
cl_int tt_coherence_copy_into(struct tt_deps *d, cl_context ctx, cl_uint dom,
                              struct tt_nqueue *nq, cl_mem src, size_t so, cl_mem dst,
                              size_t dof, size_t len, bool *taken);

/* clAttachBufferToDevice (SnuCL-D 3.6): domain dom of root's context holds the newest bytes
 * from now on (copied there now, or zeros when nothing was ever written); no latest-holder
 * list is kept for the buffer any more: commands elsewhere fetch from dom before and write
 * back to it after. Caller holds the plan lock. */
cl_int tt_coherence_attach(cl_mem root, cl_uint dom);

/* After a command of domain dom wrote [off, off+len) of m: an attached buffer's bytes go
 * back to its domain. Caller holds the plan lock. */
cl_int tt_coherence_write_back(cl_mem m, size_t off, size_t len, cl_uint dom);

/* Releases the consistency state of a root buffer. */
void tt_coherence_forget(cl_mem root);

#endif
