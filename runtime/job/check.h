/* Divergence detection: every rank must make the same API calls in the same order (the one
 * invariant, doc/architecture.md). Each rank keeps a running hash of the calls that must agree (the
 * entry point and the arguments that are the same everywhere: object ids, sizes, offsets,
 * flags, kernel argument values; never host addresses). Where the host waits (clFinish,
 * blocking commands, event waits and status queries, the agreements of builds and of the
 * host layer) a rank sends its call count and hash to rank 0, whose progress thread compares
 * them with its own. On a mismatch rank 0 asks that rank for its calls since the last point
 * they agreed, finds the first that differs and stops the job:
 *   rank 2 diverged from rank 0 at call #1234 (clEnqueueWriteBuffer)
 * Jobs of one rank, and TUTTI_CHECK=0, skip all of it. */
#ifndef TUTTI_CHECK_H
#define TUTTI_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


/* Whether calls are hashed (a job of several ranks; read once the transport runs). */
extern bool tt_check_active;

/* Starts checking (after the transport started): standing receives for reports on rank 0
 * and for requests elsewhere. */
void tt_check_start(void);

/* Adds one call to the running hash: `name` (a string that outlives the job; "tt_" dropped),
 * its hash (tt_check_name, or 0 to have it computed) and n values. */
void tt_check_call(const char *name, uint64_t name_hash, const uint64_t *v, size_t n);
uint64_t tt_check_name(const char *name);

/* The calling thread's name as the host layer gives it alike on every rank
 * (host/preload_thread.c: "0" is the main thread, "0.2" its second thread); NULL for a
 * thread of the runtime's, or without the host layer. */
const char *tt_check_host_thread(void);

/* The host layer's answer to a file query of the program's that every rank makes itself
 * (access, stat, an open for reading): not hashed, since ranks may see different answers
 * and go on alike, but kept with the next call, so that a report of ranks that parted
 * names the first query whose answers differed before it. Only while the program runs
 * one thread (the host layer says when). */
void tt_check_result(const char *call, const char *path, int64_t ret, int err);

/* The host reaches a point where it may wait: rank 0 learns this rank's count and hash. */
void tt_check_sync(void);

/* Where this rank is in the program, for the exchanges of answers between ranks (runtime/
 * cluster.c): the call count and running hash, mixed with `site` (the exchange's own name),
 * so that ranks at different calls, or at different exchanges within one call, never take
 * each other's bytes for their own. All zero while checking is off. */
struct tt_stamp {
  uint64_t calls, hash;
};
struct tt_stamp tt_check_stamp(const char *site);

/* This rank found at an exchange that rank `other` is elsewhere (`theirs`): the ranks
 * diverged. Rank 0's check then finds the first call that differs and stops the job; if it
 * cannot tell (the calls agree, the exchanges do not: Tutti's own fault), the job is
 * stopped after a few seconds with both places named. Never returns. */
_Noreturn void tt_check_disagree(const char *site, int other, struct tt_stamp theirs);

/* The host program ended (at exit, before the goodbyes): elsewhere the last report goes
 * out; on rank 0, ranks that made more calls are stopped as diverged. */
void tt_check_finish(void);

/* Values for tt_check_call: an object's id (0 for NULL or a handle that is no live object)
 * and a hash of bytes (strings, kernel argument values). */
uint64_t tt_check_id(const void *handle);
uint64_t tt_check_bytes(const void *p, size_t n);
/* A list of n handles (NULL: 0). */
uint64_t tt_check_ids(const void *list, size_t n);
/* A kernel argument's value: the object's id for a buffer or sampler, else its bytes. */
uint64_t tt_check_arg(size_t size, const void *value);

/* Hashes the calling entry point with the values given (tt_clX is recorded as clX): at a
 * call's start. TT_HASH_IF hashes only when cond holds. Entry points take their host thread's
 * turn first: TT_TURN_CHECK (runtime/job/turns.h) does both. */
#define TT_HASH(...) TT_HASH_IF(1, __VA_ARGS__)
#define TT_HASH_IF(cond, ...)                                                                     \
  do {                                                                                            \
    if ((cond) && tt_check_active) {                                                              \
      static uint64_t name_;                                                                      \
      if (!name_)                                                                                 \
        name_ = tt_check_name(__func__);                                                          \
      const uint64_t v_[] = {__VA_ARGS__};                                                        \
      tt_check_call(__func__, name_, v_, sizeof v_ / sizeof v_[0]);                               \
    }                                                                                             \
  } while (0)

#endif
