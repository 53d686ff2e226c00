/* Events: Tutti's event objects over native (backend) events, user events mirrored into
 * every domain that waits on them, and callbacks. */
#ifndef TUTTI_EVENT_H
#define TUTTI_EVENT_H

#include "runtime/base/tutti_internal.h"
#include "runtime/job/callback.h"

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

/* A broadcast read's bytes are all in this rank's host memory and, along a chain, sent on:
 * its event completes now, with the owner's error if the owner's word came first and said
 * one. Until then the owner's word does not complete it. */
void tt_event_bytes_here(cl_event e, cl_int status);

/* Called by every rank at the same program step: the owner of e will send its completion
 * to `rank`, which posts the receive for it; other ranks do nothing. Once per pair. */
void tt_event_share_with(cl_event e, int rank);
/* The same for every rank: before the host of each rank waits for e. */
void tt_event_share_with_all(cl_event e);

/* A native event of domain `dom` that completes with e; retained for the caller. */
cl_int tt_event_native_in(cl_event e, cl_uint dom, cl_event *out);

/* Current execution status (CL_QUEUED..CL_COMPLETE, or a negative error). */
cl_int tt_event_status(cl_event e);

/* The status clGetEventInfo answers, alike on every rank (all of them ask at the same program
 * step): the owner's status, shared by one broadcast, since a program may steer by it; once
 * the answer is final this rank's own event has caught up (a read's bytes are here) and
 * later queries answer it without a message. User events answer their own status: every
 * rank's program sets it alike. */
cl_int tt_event_agreed_status(cl_event e);

/* Blocks until e completes; returns its final status. */
cl_int tt_event_wait(cl_event e);

cl_int tt_event_set_user_status(cl_event e, cl_int status);

/* The status of e's command as its executing rank knows it: a native event's, a managed
 * event's own native command's (e->prof), else the managed status. */
cl_int tt_event_command_status(cl_event e);
/* On the command's owner: its time on the device from the backend's profiling (end - start),
 * 0 when its queue does not profile. The status batches carry it to the other ranks
 * (e->ns). */
uint64_t tt_event_native_ns(cl_event e);

/* Queues of jobs of several ranks. Every host wait must end with the statuses the
 * specification promises on every rank, also for the events of commands that ran on other
 * ranks, and with the bytes of every earlier read in this rank's host memory:
 * - tt_event_track(e): e (a command's event, handed to the program) joins its queue's list,
 *   on every rank alike. The list goes out as a batch: when it is long, and at clFinish.
 * - tt_event_batch(q): every rank at the same program step. The owner of q's device sends,
 *   once the last event of the list completed (its queue is in order, so all of them had),
 *   the final status of each to every other rank in one message; they set their events
 *   from it. Nothing is waited for here.
 * - tt_event_broadcast_pending(e): a read whose bytes are still on their way (this rank's).
 * - tt_event_wait_broadcasts(q, seq): waits until the reads of q up to command seq are done
 *   here (bytes arrived; on the owner, sent). */
void tt_event_track(cl_event e);
/* On the owner it returns the batch, held for the caller, who must hand it to
 * tt_event_batch_waited (NULL elsewhere, and when there was nothing to send). */
struct tt_batch;
struct tt_batch *tt_event_batch(cl_command_queue q);
/* Before every rank's host waits for e (at the same program step): e's final status, and
 * those of the commands before it on its in-order queue, reach every rank in one batch, so
 * that what completed before e reads complete wherever e does (a command's event alone would
 * leave the earlier ones pending on other ranks until the next batch); an event no longer
 * tracked, or of an out-of-order queue, is shared by itself (tt_event_share_with_all).
 * Returns what tt_event_batch returns. */
struct tt_batch *tt_event_share_in_order(cl_event e);
/* Drops the caller's hold; when the caller's own wait on the batch's last event ended
 * (waited, with its status), the statuses go out now rather than at the backend's callback. */
void tt_event_batch_waited(struct tt_batch *b, cl_event waited, cl_int status);
void tt_event_broadcast_pending(cl_event e);
void tt_event_wait_broadcasts(cl_command_queue q, uint64_t seq);
/* At the program's clReleaseCommandQueue (every rank alike): the tracked events go out as
 * a batch and reads under way stop holding the queue, so that nothing keeps it alive. */
void tt_event_release_queue(cl_command_queue q);
/* Releases what a queue's lists hold (the queue is going away). */
void tt_event_forget_queue(cl_command_queue q);

/* A command of queue q with wait list `wait`, enqueued on a rank that does not run it (e:
 * its event, or NULL). Its owner runs it once the owner's host set the user events it waits
 * for; this rank's host may set them later. So that no rank sees a command done before its
 * own host set what it waits for, e completes here only once the user events it waits on,
 * directly or through earlier commands of its in-order queue, are set here too. */
void tt_event_gate(cl_command_queue q, cl_uint nwait, const cl_event *wait, cl_event e);

cl_int tt_event_add_callback(cl_event e, cl_int type,
                             void (CL_CALLBACK *fn)(cl_event, cl_int, void *), void *data);

#endif
