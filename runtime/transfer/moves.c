/* What runtime/transfer/'s routes share (runtime/transfer/moves.h). */
#include "config.h"

#include "runtime/transfer/moves.h"

#include <stdio.h>

#include "runtime/base/backend.h"
#include "runtime/job/transport.h"
#include "runtime/memory/image.h"
#include "runtime/memory/window.h"
#include "runtime/order/event.h"

struct transfer_desc tt_transfer_of(const struct fetch *f, int src, int dst, size_t off,
                                    size_t len, uint64_t id)
{
  struct transfer_desc x = {src, dst, f->root->obj.id, off, len, tt_plan_cur.cmd, "", id};
  snprintf(x.cmd_name, sizeof x.cmd_name, "%s", tt_plan_cur.name);
  return x;
}

/* "buffer #12 bytes 0+4194304 from rank 0 to rank 1 (message 3) for command #7 (vec_add)" */
const char *tt_transfer_str(const struct transfer_desc *x, char *buf, size_t cap)
{
  snprintf(buf, cap, "buffer #%llu bytes %zu+%zu from rank %d to rank %d (message %llu) for "
           "command #%llu (%s)", (unsigned long long)x->mem, x->off, x->len, x->src, x->dst,
           (unsigned long long)x->id, (unsigned long long)x->cmd, x->cmd_name);
  return buf;
}

/* The transport's operations of buffer bytes carry a piece or a staged piece, both starting
 * with their description (struct transfer_desc). */
static void describe_transfer(void *arg, char *buf, size_t cap)
{
  tt_transfer_str(arg, buf, cap);
}

/* The native buffer holding the root's bytes [off, off+len) in actual domain dom (its window,
 * runtime/memory/window.h); *at (unless NULL): their offset in it, *host (unless NULL): their
 * address when it lives in Tutti's memory. NULL with f->err set when no window could be
 * made. */
cl_mem tt_transfer_placed(struct fetch *f, cl_uint dom, size_t off, size_t len, size_t *at,
                          unsigned char **host)
{
  return tt_transfer_placed_in(f, f->root, dom, off, len, at, host);
}

cl_mem tt_transfer_placed_in(struct fetch *f, cl_mem root, cl_uint dom, size_t off,
                             size_t len, size_t *at, unsigned char **host)
{
  struct tt_place p;
  f->err = tt_window_place(root, dom, off, len, &p);
  if (f->err != CL_SUCCESS)
    return NULL;
  if (at)
    *at = p.off;
  if (host)
    *host = p.host;
  return p.native;
}


/* Counts in *waiting each event of deps not complete yet and has ready(arg) called as each
 * completes (the caller holds one more count while setting up, and acts when the count ends).
 * An event that takes no callback is waited for here. */
void tt_transfer_wait_for(struct tt_deps *deps, atomic_int *waiting,
                          void (CL_CALLBACK *ready)(cl_event, cl_int, void *), void *arg)
{
  for (size_t i = 0; i < deps->n; i++) {
    if (tt_native_status(deps->ev[i]) <= CL_COMPLETE)
      continue;
    atomic_fetch_add(waiting, 1);
    if (tt_native_callback(deps->ev[i], CL_COMPLETE, ready, arg) != CL_SUCCESS) {
      TT_NATIVE_DISPATCH(deps->ev[i])->clWaitForEvents(1, &deps->ev[i]);
      atomic_fetch_sub(waiting, 1);
    }
  }
}

void tt_transfer_describe_once(void)
{
  static bool described;
  if (described)
    return;
  tt_transport_describe_with(TT_CH_DATA, describe_transfer);
  tt_transport_describe_with(TT_CH_PEER, describe_transfer);
  tt_transport_describe_with(TT_CH_ANSWER, describe_transfer);
  described = true;
}

cl_int tt_transfer_io(const struct fetch *f, const cl_icd_dispatch *d, cl_command_queue q,
                      cl_mem native, bool write, size_t at, size_t n, void *host, cl_uint nwait,
                      const cl_event *wait, cl_event *ev)
{
  if (f->root->image)
    return tt_image_rows_io(d, q, f->root->image, native, write, at, n, host, nwait, wait, ev);
  return write ? d->clEnqueueWriteBuffer(q, native, CL_FALSE, at, n, host, nwait, wait, ev)
               : d->clEnqueueReadBuffer(q, native, CL_FALSE, at, n, host, nwait, wait, ev);
}
