/* Turns: the calls of several host threads in one order on every rank (doc/cluster.md,
 * "Host threads").
 *
 * Every decision that must agree is taken in program order (doc/architecture.md); with
 * several host threads the operating system interleaves their calls differently on each
 * rank. Once the program has made a thread of its own (the host layer names it:
 * host/preload_thread.c), a call that must agree (TT_TURN_CHECK, the host layer's agreements)
 * first takes the turn: one thread at a time, from its start until it returns or waits for
 * a command. Rank 0 takes turns in whatever order its threads come and sends that order,
 * as a list of thread names, to the other ranks; there a thread takes the turn only when
 * the list says it is next. Object ids, command ids, the planner's state and the divergence
 * check's call count then come out alike on every rank. Jobs of one rank, programs that
 * make no thread, and threads the host layer does not name (MPI's, the drivers', Tutti's)
 * take no turns. */
#ifndef TUTTI_TURNS_H
#define TUTTI_TURNS_H

#include <stdbool.h>

#include "runtime/job/check.h"

/* After the transport started (runtime/job/cluster_start.c): rank 0 sends the order of turns,
 * the others listen for it. Nothing in a job of one rank. */
void tt_turns_start(void);

/* Whether turns are taken: the program made a thread of its own. */
bool tt_turns_on(void);

/* At a call's start: the calling thread takes the turn, when turns are on and the thread is
 * one of the program's; returns whether it did (the call then ends with tt_turn_end). */
bool tt_turn_take(void);

/* Gives the calling thread's turn back, if it holds one, before a wait for commands or
 * messages: another thread's call may be what ends the wait. The rest of the call runs
 * without the turn, and so must decide nothing that has to agree, unless it takes the turn
 * again with tt_turn_resume. */
void tt_turn_give(void);

/* Takes the turn again after a wait, if the call took one at its start. Only at a point
 * every rank passes alike, after a tt_turn_give every rank made: a turn taken here is one
 * more in the order, and must be one on every rank. */
void tt_turn_resume(void);

/* The call that took the turn ends. */
void tt_turn_end(void);

/* For __attribute__((cleanup)). */
static inline void tt_turn_scope_end(bool *took)
{
  if (*took)
    tt_turn_end();
}

/* Holds the turn until the enclosing scope ends. */
#define TT_TURN() __attribute__((cleanup(tt_turn_scope_end))) bool tt_turn_held_ = tt_turn_take()

/* An entry point's start: takes the turn until the enclosing scope ends, then feeds the
 * divergence check the call and the values given (runtime/job/check.h: TT_HASH), in the scope
 * of its whole body. TT_TURN_CHECK_IF hashes only when cond holds. A function that jumps past
 * its check (goto) takes the turn with TT_TURN at its top and hashes with TT_HASH. */
#define TT_TURN_CHECK(...) TT_TURN_CHECK_IF(1, __VA_ARGS__)
#define TT_TURN_CHECK_IF(cond, ...)                                                               \
  TT_TURN();                                                                                      \
  TT_HASH_IF(cond, __VA_ARGS__)

/* Runs fn at this thread's next turn, for the host layer's locks (host/preload_thread.c):
 * on rank 0 fn(arg, -1) runs first and its outcome (0 or not) goes into the order with the
 * turn; on the other ranks fn runs once the turn comes, told rank 0's outcome (0: rank 0's
 * succeeded, 1: it did not; -1 without turns), and must come out alike. Returns fn's
 * result. */
int tt_turn_ordered(int (*fn)(void *arg, int rank0), void *arg);

#endif
