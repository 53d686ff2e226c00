/* Native events of one memory domain standing for those of another (runtime/order/bridge.c):
 * the bottom of runtime/order/, used by its events (event.c) and its ordering (order.c). */
#ifndef TUTTI_ORDER_BRIDGE_H
#define TUTTI_ORDER_BRIDGE_H

#include "runtime/base/tutti_internal.h"

/* A native event of domain `dom` that completes when `src` (a native event of another
 * domain) completes: a user event of dom set by a callback on src. Returns it retained.
 * With absorb, it completes also when src failed (Tutti's own ordering); else it takes
 * src's error. */
cl_int tt_order_bridge(cl_context ctx, cl_uint dom, cl_event src, bool absorb, cl_event *out);

#endif
