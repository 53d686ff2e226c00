/* Turns (runtime/job/turns.h). Messages on TT_CH_TURN, from rank 0 to every other rank:
 * batches of the order in which rank 0's threads took turns, each {seq, n, n thread ids}
 * (id: seq, counting from 1; one batch in flight at a time, the next one going out when
 * every rank received it). A thread's id is a hash of the name the host layer gave it, which
 * every rank gives it alike. */
#include "config.h"

#include "runtime/job/turns.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/base/log.h"
#include "runtime/job/check.h"
#include "runtime/job/cluster.h"
#include "runtime/job/transport.h"
#include "runtime/job/wire.h"

#define BATCH 1024    /* thread ids a batch carries at most */
#define LONG_WAIT_S 20 /* a thread waiting this long for its turn is told of */

struct batch {
  uint64_t seq;
  uint64_t n;
  uint64_t id[BATCH];
};

static int me, nranks;
static bool armed;     /* a job of several ranks under the host layer: turns may start */
static atomic_bool on; /* the program made a thread of its own: turns are taken */
static unsigned (*threads_made)(void);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static bool held;                 /* a thread holds the turn */
static __thread bool holding;     /* this thread does */
static __thread bool call_took;   /* this thread's current call took a turn at its start */
static uint64_t *order;           /* rank 0: taken, not sent; elsewhere: received, not taken */
static size_t first, count, cap;  /* order[first .. first + count) */

/* Rank 0: the batch in flight and the ranks still to receive it. */
static struct batch *flying;
static atomic_int to_receive;
static uint64_t next_seq = 1;

/* Elsewhere: the batch being received. */
static struct batch incoming;

/* This thread's id: 0 for a thread the host layer did not name (the runtime's). */
static uint64_t thread_id(void)
{
  static __thread uint64_t id;
  static __thread bool known;
  if (known)
    return id;
  known = true;
  const char *name = tt_check_host_thread();
  id = name ? (tt_check_bytes(name, strlen(name)) & ~(uint64_t)3) | 1 : 0;
  return id;
}

static bool push(uint64_t id)
{
  if (first + count == cap) {
    if (first > 0) {
      memmove(order, order + first, count * sizeof *order);
      first = 0;
    } else {
      size_t ncap = cap ? 2 * cap : 4096;
      uint64_t *n = realloc(order, ncap * sizeof *n);
      if (!n)
        return false;
      order = n;
      cap = ncap;
    }
  }
  order[first + count++] = id;
  return true;
}

/* --- rank 0 ------------------------------------------------------------------------------ */

static void batch_received(void *arg, int ok);

/* Sends what was taken and not yet sent, unless a batch is in flight. Called without the
 * lock: a send's callback may run at once. */
static void send_taken(void)
{
  pthread_mutex_lock(&lock);
  struct batch *b = NULL;
  if (!flying && count > 0 && (b = malloc(sizeof *b))) {
    b->seq = next_seq++;
    b->n = count < BATCH ? count : BATCH;
    memcpy(b->id, order + first, b->n * sizeof *order);
    first += b->n;
    count -= b->n;
    flying = b;
    atomic_store(&to_receive, nranks - 1);
  }
  pthread_mutex_unlock(&lock);
  if (!b)
    return;
  size_t len = offsetof(struct batch, id) + b->n * sizeof b->id[0];
  for (int r = 1; r < nranks; r++)
    if (tt_transport_isend_standing(TT_CH_TURN, b, len, r, b->seq, batch_received, b) != 0)
      batch_received(b, 0);
}

static void batch_received(void *arg, int ok)
{
  (void)ok; /* a rank that left stops the job by itself */
  struct batch *b = arg;
  if (atomic_fetch_sub(&to_receive, 1) != 1)
    return;
  pthread_mutex_lock(&lock);
  flying = NULL;
  pthread_mutex_unlock(&lock);
  free(b);
  send_taken();
}

/* --- every other rank ----------------------------------------------------------------- */

static void listen(void);

static void batch_arrived(void *arg, int ok)
{
  (void)arg;
  if (!ok)
    return; /* the job is stopping */
  tt_transport_check(0, TT_CH_TURN,
                     tt_wire_turns_check(&incoming, tt_transport_received(), next_seq, BATCH));
  pthread_mutex_lock(&lock);
  bool fits = true;
  for (uint64_t i = 0; fits && i < incoming.n; i++)
    fits = push(incoming.id[i]);
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
  if (!fits) {
    TT_WARN("turns: batch %llu of rank 0's order of host threads lost (out of memory)",
            (unsigned long long)incoming.seq);
    abort();
  }
  next_seq++;
  listen();
}

static void listen(void)
{
  tt_transport_irecv_standing(TT_CH_TURN, &incoming, sizeof incoming, 0, next_seq,
                              batch_arrived, NULL);
}

/* ------------------------------------------------------------------------------------------ */

void tt_turns_start(void)
{
  me = tt_cluster_rank();
  nranks = tt_cluster_size();
  threads_made = (unsigned (*)(void))dlsym(RTLD_DEFAULT, "tutti_shim_threads_made");
  if (nranks < 2 || !threads_made || !tt_check_host_thread())
    return;
  armed = true;
  if (me != 0)
    listen();
}

static bool take(void);
static bool take_flagged(bool *flag_out);

bool tt_turns_on(void)
{
  return atomic_load_explicit(&on, memory_order_relaxed);
}

bool tt_turn_take(void)
{
  if (!armed || holding || call_took)
    return false; /* a call inside a call (the host layer's, made by Tutti) */
  return call_took = take();
}

void tt_turn_resume(void)
{
  if (call_took && !holding)
    take();
}

void tt_turn_end(void)
{
  tt_turn_give();
  call_took = false;
}

static bool take(void)
{
  return take_flagged(NULL);
}

/* The calling thread's id when it takes turns now, else 0. */
static uint64_t turn_id(void)
{
  /* Turns start with the first call after the program made its first thread: a point of
   * the making thread's program order, so the same call on every rank. */
  if (!atomic_load_explicit(&on, memory_order_acquire)) {
    if (threads_made() == 0)
      return 0;
    atomic_store(&on, true);
  }
  /* Once this rank left the job (its exit handler ran), every call is its own again. */
  return tt_transport_running() ? thread_id() : 0;
}

static void push_or_die(uint64_t entry)
{
  if (!push(entry)) {
    pthread_mutex_unlock(&lock);
    TT_WARN("turns: out of memory for the order of host threads");
    abort();
  }
}

/* Rank 0: the place of a program's lock in the order, recorded once taken, without waiting
 * for the turn: the thread holding it may be waiting for that very lock (in a callback its
 * call runs). Elsewhere the lock's turn waits until that call is over. */
static void record(bool flag)
{
  uint64_t id = turn_id();
  if (!id)
    return;
  pthread_mutex_lock(&lock);
  push_or_die(id | (flag ? 2 : 0));
  pthread_mutex_unlock(&lock);
  send_taken();
}

/* Takes a turn; on ranks other than 0, *flag_out (if asked) gets the outcome rank 0 recorded
 * with it. */
static bool take_flagged(bool *flag_out)
{
  uint64_t id = turn_id();
  if (!id)
    return false;
  pthread_mutex_lock(&lock);
  if (me == 0) {
    while (held)
      pthread_cond_wait(&changed, &lock);
    push_or_die(id);
  } else {
    bool waits = false, said = false;
    struct timespec since;
    clock_gettime(CLOCK_REALTIME, &since);
    while (held || count == 0 || (order[first] & ~(uint64_t)2) != id) {
      if (!waits && count == 0) {
        waits = true;
        tt_transport_host_waits(1); /* the order comes in a message */
      }
      struct timespec until = since;
      until.tv_sec += said ? 3600 : LONG_WAIT_S;
      if (pthread_cond_timedwait(&changed, &lock, &until) == ETIMEDOUT && !said) {
        said = true;
        TT_WARN("host thread %s has waited %d s for its turn to call OpenCL (%s); if the job "
                "hangs here, its threads may hand work to each other by rwlocks, semaphores or "
                "atomics, which are not ordered alike on every rank (doc/cluster.md, \"Host "
                "threads\")",
                tt_check_host_thread(), LONG_WAIT_S,
                held ? "another thread holds it"
                     : count ? "rank 0's next turns are other threads'" : "no order from rank 0");
      }
    }
    if (waits)
      tt_transport_host_waits(-1);
    if (flag_out)
      *flag_out = order[first] & 2;
    first++;
    count--;
  }
  held = holding = true;
  pthread_mutex_unlock(&lock);
  if (me == 0)
    send_taken();
  return true;
}

void tt_turn_give(void)
{
  if (!holding)
    return;
  pthread_mutex_lock(&lock);
  held = holding = false;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
}

int tt_turn_ordered(int (*fn)(void *arg, int rank0), void *arg)
{
  if (!armed || holding || call_took)
    return fn(arg, -1);
  if (me == 0) {
    /* The action first (a lock may wait for its holder, who may need turns before it lets
     * go), then its place in the order, its outcome with it. */
    int r = fn(arg, -1);
    record(r != 0);
    return r;
  }
  /* Every turn before this one was taken: a lock's holder here needs no more turns before it
   * lets go, so the action may wait while holding this one. */
  bool failed = false;
  bool took = take_flagged(&failed);
  int r = fn(arg, took ? failed : -1);
  if (took)
    tt_turn_give();
  return r;
}
