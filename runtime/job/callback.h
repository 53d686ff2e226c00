/* Callbacks on native events for Tutti's own use. Some backends never call the callbacks of
 * a command that failed because its wait list failed (PoCL 3.1, for the command and every
 * later one of its in-order queue): once any command failed, the sweep (on the transport's
 * progress thread in a job of several ranks, else on a thread of its own, every
 * millisecond) runs those of native events whose command ended in an error, once. Some
 * backends call callbacks late (NVIDIA: 10-80 ms after the command ended, while no thread
 * waits in the driver): for those (TUTTI_EVENT_POLL), a poller thread also asks each
 * event's status, from every microsecond up to every 32 us while any is due, and runs the
 * callback itself once the status is reached; whoever comes first runs it, once. */
#ifndef TUTTI_JOB_CALLBACK_H
#define TUTTI_JOB_CALLBACK_H

#include <stdbool.h>

#include "runtime/base/cl.h"

/* clSetEventCallback on a native event, with the sweep behind it. */
cl_int tt_native_callback(cl_event native, cl_int type,
                          void (CL_CALLBACK *fn)(cl_event, cl_int, void *), void *data);

/* A callback that only gives back host memory the native command used (a list of buffers,
 * a staging copy), once the backend itself says the command is over: the backend's own
 * clSetEventCallback, neither polled nor swept. A backend's threads may still touch such
 * memory after the command's status reads complete (NVIDIA's read a migration's list of
 * buffers then: freed by the poller's early callback, its thread crashed), and a late free
 * costs nothing. A failed command whose backend never calls back keeps its memory. */
cl_int tt_native_free_after(cl_event native, void (CL_CALLBACK *fn)(cl_event, cl_int, void *),
                            void *data);

/* Whether the calling thread is one of Tutti's that run callbacks (the sweeper, the poller):
 * a callback there may call other libraries (CUDA), which it must not on a backend's own
 * thread. */
bool tt_native_callback_on_own_thread(void);

/* A command failed (a status below zero was seen): the sweeps begin. */
void tt_native_note_failure(void);

#endif
