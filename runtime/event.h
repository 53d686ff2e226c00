/* Events: Tutti's event objects over native (backend) events, user events mirrored into
 * every domain that waits on them, and callbacks. */
#ifndef TUTTI_EVENT_H
#define TUTTI_EVENT_H

#include "runtime/tutti_internal.h"

/* A command's event. Takes over the reference of `native`. NULL when out of memory (the
 * native reference is then dropped). */
cl_event tt_event_new(cl_context ctx, cl_command_queue q, cl_command_type type, cl_uint dom,
                      cl_event native);

cl_event tt_event_new_user(cl_context ctx);

/* An event Tutti completes itself (tt_event_complete): a virtual command's (owner: another
 * rank), or a command whose end Tutti decides (a read whose bytes go on to other ranks). */
cl_event tt_event_new_managed(cl_context ctx, cl_command_queue q, cl_command_type type, int owner);

/* Sets a managed event's final status (once), its mirrors, waiters and callbacks. */
void tt_event_complete(cl_event e, cl_int status);

/* Called by every rank at the same program step: the owner of e will send its completion
 * to `rank`, which posts the receive for it; other ranks do nothing. Once per pair. */
void tt_event_share_with(cl_event e, int rank);
/* The same for every rank: before the host of each rank waits for e. */
void tt_event_share_with_all(cl_event e);

/* A native event of domain `dom` that completes with e; retained for the caller. */
cl_int tt_event_native_in(cl_event e, cl_uint dom, cl_event *out);

/* Current execution status (CL_QUEUED..CL_COMPLETE, or a negative error). */
cl_int tt_event_status(cl_event e);

/* Blocks until e completes; returns its final status. */
cl_int tt_event_wait(cl_event e);

cl_int tt_event_set_user_status(cl_event e, cl_int status);

cl_int tt_event_add_callback(cl_event e, cl_int type,
                             void (CL_CALLBACK *fn)(cl_event, cl_int, void *), void *data);

#endif
