/* Windows (doc/split.md, "Windows"; Lightning section 3.4): where a buffer's bytes
 * live in a domain of this rank.
 *
 * An ordinary buffer has one native buffer of its full size in every actual domain, made at
 * clCreateBuffer. A distributed buffer (clSetBufferDistributionTUTTI before it held anything)
 * is windowed instead: a domain holds native buffers covering only the ranges its commands
 * used, made when a command first needs them. Windows of one domain never overlap (they
 * may touch: parts of one domain keep their own chunks): a use reaching into windows replaces
 * them by one covering them all, their bytes copied over (ordered like any command on those
 * bytes). Every byte a domain holds newest (runtime/command/coherence.h) lies in one of its windows, and a
 * transfer out of a domain places its range first, so it reads one window. All of it under
 * the plan lock.
 *
 * Spilling (doc/spill.md; Lightning section 3.4): windows of a domain hold at most
 * its budget (TUTTI_DEVICE_MEM). Making room evicts the least recently used windows that no
 * command being planned uses (nor mappings, attachments, sub-buffers: pinned): a window
 * whose newest bytes the domain does not hold goes; otherwise those bytes are read into this
 * rank's memory (or a file past TUTTI_HOST_MEM) and written back when a command needs them
 * again (only the part it needs: the rest stays evicted, sharing the host copy); bytes another domain holds too are dropped instead (the domain stops being
 * their holder, and fetches them from there when needed again). After each command, the
 * windows its domain's next command will use (a split launch's next part there), or else
 * those its domain's commands used next the previous time round, come back ahead of use
 * (prefetch, TUTTI_LOOKAHEAD bytes of them).
 *
 * Every rank keeps the windows of every domain and places and evicts them alike, in program
 * order, from replicated facts only (command order, sizes, budgets, holders): virtual
 * commands place their windows too, so holder lists stay equal everywhere. Only the domain's
 * own rank has native buffers and host copies and moves bytes. Each eviction goes into the
 * divergence check (runtime/job/check.h) and a digest that TUTTI_STATS prints. */
#ifndef TUTTI_WINDOW_H
#define TUTTI_WINDOW_H

#include "runtime/base/tutti_internal.h"
#include "runtime/order/order.h"

/* Where bytes of a buffer are in one domain. */
struct tt_place {
  cl_mem native;        /* the native buffer holding them */
  size_t off;           /* their offset in it */
  unsigned char *host;  /* their address when the native buffer lives in Tutti's memory
                         * (tt_domain_direct_memory), else NULL */
  size_t window_lo;     /* windowed roots: where the window starts in the buffer, else 0 */
};

/* Whether root is windowed. */
static inline bool tt_windowed(cl_mem m)
{
  return m->root == m && m->windows != NULL;
}

/* [off, off+len) of m (a buffer or sub-buffer; off relative to m) in domain dom: for a
 * windowed root, made or widened first (out->native NULL in another rank's domain). Caller
 * holds the plan lock. */
cl_int tt_window_place(cl_mem m, cl_uint dom, size_t off, size_t len, struct tt_place *out);

/* The size of root's window in domain dom holding byte `at` (0: none), as every rank
 * places it. Caller holds the plan lock. */
size_t tt_window_size_at(cl_mem root, cl_uint dom, size_t at);

/* A command wrote [off, off+len) of root in domain dom (plan lock): the windows there that
 * came back from a host copy drop it (the copy no longer holds their newest bytes). */
void tt_window_written(cl_mem root, cl_uint dom, size_t off, size_t len);

/* A native buffer for bytes of root in actual domain dom: in memory of Tutti's when the
 * domain's buffers live there (*host then gives it; freed with the native buffer), in CUDA
 * memory on a CUDA domain (runtime/base/cuda.h), else the backend's. flags and host_ptr as the
 * program gave them. */
cl_mem tt_window_native_new(cl_context ctx, cl_uint dom, cl_mem root, cl_mem_flags flags,
                            size_t size, void *host_ptr, void **host, cl_int *err);

/* Makes root windowed, if nothing was ever written to it and nothing depends on its native
 * buffers (sub-buffers, maps, an attachment): its native buffers go. Caller holds the plan
 * lock. */
void tt_window_enable(cl_mem root);

/* Whether a new buffer with root's flags is windowed from the start so that it can leave the
 * device (TUTTI_DEVICE_MEM given, not CL_MEM_USE_HOST_PTR). */
bool tt_window_spill_new(cl_mem root);

/* Whether a new buffer is windowed from the start because its domains' native buffers could
 * not be CUDA memory: larger than TT_CUDA_MAX (runtime/base/cuda.h), not CL_MEM_USE_HOST_PTR,
 * in a context of two or more domains on the CUDA path. Split launches then give each GPU
 * windows of its parts, in CUDA memory where they fit, so that halos and gathers go by the
 * copy engines rather than through the host (doc/cluster.md). */
bool tt_window_cuda_new(cl_mem root);

/* Makes a new buffer windowed whose bytes the program gave (CL_MEM_COPY_HOST_PTR): every
 * actual domain holds them as an evicted window over the whole buffer, in this rank's memory
 * until a command needs them. Plan lock. */
cl_int tt_window_enable_copy(cl_mem root, const void *bytes);

/* Bytes [lo, hi) of a buffer. */
struct tt_window_range {
  cl_mem root;
  size_t lo, hi;
};

/* After planning a command on domain dom (plan lock held; every rank alike): brings back
 * ahead of use, on Tutti's queue of the domain, up to TUTTI_LOOKAHEAD bytes of windows,
 * evicting others as a command would (never the command's own): the evicted windows among
 * next[0 .. nnext) (what the caller knows the next command on dom will use: a split launch's
 * next part there; by default up to the whole budget), or with none told, the evicted
 * windows that followed the one used last the previous time round (by default a quarter of
 * the budget). */
void tt_window_prefetch(cl_context ctx, cl_uint dom, const struct tt_window_range *next,
                        size_t nnext);

/* Hands the native buffers of root's windows to the caller (destroy), leaving none: *out is
 * malloc'ed, *n of them. */
void tt_window_take_all(cl_mem root, cl_mem **out, size_t *n);

/* Frees the host copies a domain keeps for evictions (before its internal queue goes;
 * runtime/memory/spill.c). */
void tt_window_domain_release(struct tt_domain *dm);

/* Records the access after the native command was issued on nq. ev is its native event, or
 * NULL when nobody asked for one: a later command on another queue that must wait for it
 * then gets a marker enqueued on nq (commands of an in-order queue finish in order), so the
 * common case of one queue creates no event at all. ev is not taken over: the plan retains
 * what it keeps. Caller holds the plan lock. */
void tt_window_record(cl_mem m, size_t off, size_t len, bool writes, cl_uint dom,
                    struct tt_nqueue *nq, cl_event ev, bool may_fail);

#endif
