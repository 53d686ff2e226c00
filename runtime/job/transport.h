/* All MPI traffic between ranks goes through here.
 *
 * Messages are matched by ids that every rank computes alike (program order: doc/architecture.md),
 * never by arrival order. Each kind of message has its own communicator, so the ids of one
 * kind never meet those of another:
 *   TT_CH_DATA   buffer bytes between devices of different ranks (id: the pair's transfer
 *                count, tt_cluster_pair_ids: only the two ranks involved count it)
 *   TT_CH_HOST   bytes of reads to host memory, sent by the owner to every other rank (id:
 *                drawn by every rank)
 *   TT_CH_EVENT  completions of commands, from their owner to the ranks waiting on them
 *                (payload: the final status, a cl_int; id: the event's id)
 *   TT_CH_BATCH  the final statuses of a queue's events since its last batch, from the
 *                queue's owner to every other rank (payload: one cl_int per event; id: the
 *                last event's id; runtime/order/event.h)
 *   TT_CH_PEER   copies between GPUs of ranks of one host (runtime/base/cuda.h): the sender's
 *                description of its bytes (id: the transfer's TT_CH_DATA id)
 *   TT_CH_ANSWER the receiver's answer once it copied them (id: the same; its own channel,
 *                since ids of transfers the other way may be equal)
 *   TT_CH_CTRL   a rank leaving the job (id: 0; payload: the rank)
 *   TT_CH_CHECK  divergence checks (runtime/job/check.h) and trace merging (runtime/job/trace.h)
 *   TT_CH_TURN   the order in which rank 0's host threads took turns (runtime/job/turns.h; id:
 *                the batch's number)
 * Point-to-point operations are posted from any thread; one progress thread tests them with
 * MPI_Testsome and backs off when nothing completes (a blocking MPI wait spins a core:
 * doc/architecture.md). Completion callbacks run on that thread and must not block. Collectives run on
 * the calling (host) thread, in program order, on their own communicator. */
#ifndef TUTTI_TRANSPORT_H
#define TUTTI_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tt_channel {
  TT_CH_DATA,
  TT_CH_HOST,
  TT_CH_EVENT,
  TT_CH_BATCH,
  TT_CH_PEER,
  TT_CH_ANSWER,
  TT_CH_CTRL,
  TT_CH_CHECK,
  TT_CH_TURN,
  TT_CH_COUNT
};

/* ok: the operation completed (0 when MPI reported an error, already logged). */
typedef void (*tt_done_fn)(void *arg, int ok);

/* Starts the transport over a duplicate of `world` (an MPI_Comm passed as a pointer, so
 * that this header needs no mpi.h). */
int tt_transport_start(const void *world);
/* Stops after the operations under way are done (standing receives for goodbyes are
 * cancelled). */
void tt_transport_stop(void);

/* Whether the transport runs: started and not yet stopped (false once the rank left). */
bool tt_transport_running(void);

/* Tells every other rank that this one's host program ended. A rank that still expects
 * messages from a rank that said goodbye stops the job, naming it, after a short grace. */
void tt_transport_goodbye(void);

/* Non-blocking point-to-point; large messages travel in pieces of at most 1 GiB under the
 * same id (MPI keeps their order). done may be NULL. 0: done(arg, ok) will be called once;
 * -1: nothing was posted and done will never be called (the caller fails the operation). */
int tt_transport_isend(enum tt_channel ch, const void *buf, size_t len, int peer, uint64_t id,
                       tt_done_fn done, void *arg);
int tt_transport_irecv(enum tt_channel ch, void *buf, size_t len, int peer, uint64_t id,
                       tt_done_fn done, void *arg);

/* Within a receive's done: the bytes that arrived (at most the buffer's length). */
size_t tt_transport_received(void);

/* Bytes from rank peer that cannot be read: why (runtime/job/wire.h's checks) is NULL when
 * they can, else the job stops with a message naming the peer and what it sent (`what`, or
 * channel ch's kind of message). */
void tt_transport_check(int peer, enum tt_channel ch, const char *why);
void tt_transport_check_what(int peer, const char *what, const char *why);

/* Standing operations: nobody waits for them, stopping cancels those still open, and a
 * rank that left is not an error for them (reports, listeners for requests). An MPI error
 * in posting one is told to its done. */
int tt_transport_isend_standing(enum tt_channel ch, const void *buf, size_t len, int peer,
                                uint64_t id, tt_done_fn done, void *arg);
int tt_transport_irecv_standing(enum tt_channel ch, void *buf, size_t len, int peer, uint64_t id,
                                tt_done_fn done, void *arg);

/* Describes what an operation of channel ch carries, from its callback argument, for the
 * message that stops a job whose rank left while this one still expects it. */
void tt_transport_describe_with(enum tt_channel ch, void (*fn)(void *arg, char *buf, size_t cap));

/* fn runs on the progress thread at every turn of its loop (at least every 5 ms while the
 * transport runs); it must be quick and must not block. Up to four of them. */
void tt_transport_on_poll(void (*fn)(void));

/* A host thread starts (+1) or ends (-1) waiting for something a message will complete:
 * meanwhile the progress thread polls without sleeping, where the rank has cores to spare,
 * for the wait's first millisecond (for all of it where no device of the rank computes on
 * the host's cores), then sleeps between tests up to 1/16 of the time waited so far. */
void tt_transport_host_waits(int delta);

/* Whether some device of this rank runs its kernels on the host's cores (the default: yes),
 * told once its devices are known. */
void tt_transport_kernels_on_cores(bool yes);

/* Whether the rank has cores to spare for a host thread to poll for a message's effect
 * rather than sleep (4 or more in its affinity; every thread alike), and for how long such a
 * wait polls before it sleeps. */
bool tt_transport_cores_to_spare(void);
#define TT_HOST_SPIN_NS 200000ULL

/* Blocking collectives over all ranks (host thread, program order). */
int tt_transport_allgatherv(const void *mine, size_t len, void **all, size_t **lens);
int tt_transport_bcast(void *buf, size_t len, int root);
/* len bytes from every rank into all (size * len bytes, in rank order). */
int tt_transport_allgather(const void *mine, size_t len, void *all);
/* Rank 0 gets every rank's bytes, in rank order (*all and *lens malloc'd there, NULL
 * elsewhere). */
int tt_transport_gatherv(const void *mine, size_t len, void **all, size_t **lens);
int tt_transport_allreduce_min_int(int *v);
/* Collective: this rank's clock (now) minus rank 0's, by ping-pong with rank 0 (the round
 * trip's midpoint of the fastest of a few). */
int tt_transport_clock_offset(uint64_t (*now)(void), int64_t *offset);

/* Sends this rank owes others once a native command completes (a callback will post them):
 * +1 when the callback is set, -1 once it posted its sends. Stopping waits for them (up to
 * a limit), so that a rank whose host program ended still delivers what others wait for. */
void tt_transport_promise(int delta);

/* Traces (runtime/job/trace.c) hear of each message of bytes (TT_CH_DATA, TT_CH_HOST) once
 * done: its channel, direction, peer, id and length, posted at t0 and done at t1
 * (tt_stats_now_ns). NULL: nobody. */
typedef void tt_transport_message_fn(int channel, bool send, int peer, uint64_t id, size_t len,
                                     uint64_t t0, uint64_t t1);
void tt_transport_on_message(tt_transport_message_fn *fn);

#endif
