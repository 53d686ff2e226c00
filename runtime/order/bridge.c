/* Native events of one domain standing for those of another (runtime/order/bridge.h). */
#include "config.h"

#include "runtime/order/bridge.h"

#include "runtime/base/backend.h"
#include "runtime/job/callback.h"

static void CL_CALLBACK bridge_fire(cl_event src, cl_int status, void *data)
{
  cl_event mirror = data;
  const cl_icd_dispatch *d = TT_NATIVE_DISPATCH(mirror);
  d->clSetUserEventStatus(mirror, status < 0 ? status : CL_COMPLETE);
  d->clReleaseEvent(mirror);
}

static void CL_CALLBACK bridge_absorb(cl_event src, cl_int status, void *data)
{
  bridge_fire(src, CL_COMPLETE, data);
}

cl_int tt_order_bridge(cl_context ctx, cl_uint dom, cl_event src, bool absorb, cl_event *out)
{
  struct tt_backend_platform *bp = ctx->domains[dom].bp;
  cl_int err = CL_SUCCESS;
  cl_event mirror = bp->d->clCreateUserEvent(ctx->domains[dom].native, &err);
  if (!mirror)
    return err ? err : CL_OUT_OF_RESOURCES;
  bp->d->clRetainEvent(mirror); /* one reference for the callback */
  err = tt_native_callback(src, CL_COMPLETE, absorb ? bridge_absorb : bridge_fire, mirror);
  if (err != CL_SUCCESS) {
    bp->d->clReleaseEvent(mirror);
    bp->d->clReleaseEvent(mirror);
    return err;
  }
  *out = mirror;
  return CL_SUCCESS;
}
