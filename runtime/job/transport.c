/* The transport: duplicated communicators, the progress thread, collectives. */
#include "config.h"

#include "runtime/job/transport.h"

#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "runtime/base/env.h"
#include "runtime/base/log.h"
#include "runtime/base/object.h"
#include "runtime/job/stats.h"

#define PIECE ((size_t)1 << 30)

struct op {
  tt_done_fn done;
  void *arg;
  int pending; /* MPI requests of this operation still open */
  int failed;
  int peer;
  bool watch;  /* standing (goodbyes, checks): nobody waits on it, stopping cancels it */
  enum tt_channel ch;
  uint64_t id;
  bool send;
  size_t len;
  size_t got;  /* receives: the bytes that arrived (a message may be shorter than its buffer) */
  uint64_t t0; /* posted (traces) */
};

/* A rank whose goodbye arrived while this rank still expects messages from it left early
 * (its host program diverged or failed): after this grace, the job stops with a message
 * instead of hanging. Messages it sent before leaving arrive well within it. */
#define GONE_GRACE_NS 3000000000LL

static MPI_Comm comms[TT_CH_COUNT], coll;
static int tag_ub = 32767;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The progress thread waits on it when it has nothing to test, and between tests while it
 * backs off (on CLOCK_MONOTONIC, set up in tt_transport_start); every operation posted
 * (posted counts them) cuts its sleep short, and so does every host wait that begins where
 * the polling then turns hot (hot_polling). */
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static uint64_t posted;
/* Threads waiting for the lock to post an operation: a burst of tests gives way to them. */
static atomic_int posters;
static MPI_Request *reqs;
static struct op **owners; /* owners[i]: the operation reqs[i] belongs to */
static int nreqs, capreqs;
static bool stopping, started;
static pthread_t progress;
static int my_rank, nranks;
static atomic_int promises;
static int64_t stop_deadline;
static int64_t *gone_since; /* by rank: when its goodbye arrived (0: still here) */
static int goodbye_payload;
static void (*poll_hooks[4])(void); /* tt_transport_on_poll */
static void (*describers[TT_CH_COUNT])(void *arg, char *buf, size_t cap);
static int *goodbye_in;

static int64_t now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Host threads inside a collective of every rank (MPI on coll), and what it exchanges: a
 * rank that said goodbye will never enter it (check_departed). */
static atomic_int in_exchange;
static const char *_Atomic exchange_what;

static atomic_bool anyone_gone; /* a goodbye arrived (goodbye_arrived) */

static void exchange_begin(const char *what)
{
  atomic_store(&exchange_what, what);
  atomic_fetch_add(&in_exchange, 1);
  /* A progress thread idle without requests waits untimed only while nobody is gone: it
   * starts watching when woken. A goodbye arriving later is its own doing, and it then sees
   * in_exchange. So agreements (status polls among them) take no lock here. */
  if (atomic_load(&anyone_gone)) {
    pthread_mutex_lock(&lock);
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
  }
}

static int exchange_end(int rc)
{
  atomic_fetch_sub(&in_exchange, 1);
  return rc;
}

/* Caller holds the lock. Stops the job when an operation, or a collective of every rank,
 * still waits on a rank that left. */
static void check_departed(void)
{
  int64_t now = now_ns();
  for (int r = 0; gone_since && atomic_load(&in_exchange) > 0 && r < nranks; r++)
    if (gone_since[r] && now - gone_since[r] >= GONE_GRACE_NS) {
      TT_WARN("rank %d exited while rank %d waits for every rank at an exchange (%s): their "
              "host programs went different ways (one failed or ended early); stopping the job",
              r, my_rank, atomic_load(&exchange_what));
      tt_log_stopping_job();
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  for (int i = 0; i < nreqs; i++) {
    struct op *o = owners[i];
    if (!o || o->watch || o->peer < 0 || !gone_since || !gone_since[o->peer] ||
        now - gone_since[o->peer] < GONE_GRACE_NS)
      continue;
    static const char *what[] = {"buffer bytes", "bytes of a read", "a command's completion",
                                 "a message", "a check"};
    char desc[256] = "";
    if (describers[o->ch])
      describers[o->ch](o->arg, desc, sizeof desc);
    TT_WARN("rank %d exited while rank %d still expects %s from it (id %llu%s%s): stopping the "
            "job", o->peer, my_rank, what[o->ch], (unsigned long long)o->id, desc[0] ? ": " : "",
            desc);
    tt_log_stopping_job();
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* Messages of buffer bytes move only while MPI is called on both sides (rendezvous, and the
 * fragments of a pipelined protocol): a progress thread that sleeps between tests makes a
 * 1 MiB message take twice its time or more (3.4x on 2 cores). While such a message is in
 * flight and was posted or moved lately, the thread polls without sleeping (yielding the
 * core); a receive that waits longer for its sender lets the backoff return: after 2 ms, or
 * 0.25 ms on a rank with fewer than 4 cores, where the polling takes a core from kernels.
 * Guarded by lock. */
#define LARGE_MESSAGE ((size_t)64 << 10)
#define HOT_NS 2000000LL
#define HOT_FEW_CORES_NS 250000LL
#define LARGE_BURST 128
static int large_inflight;
static int64_t large_activity_ns;
/* While the host waits, only where the rank has cores to spare (4 or more in its affinity):
 * with fewer, the yields take the core from the very threads (the peer's, the backend's)
 * that move the bytes or run the kernels waited for. */
static bool hot_polling;
static atomic_int host_waiting; /* tt_transport_host_waits */
/* When the host began to wait (host_waiting went from 0). The polling stays hot for the
 * first HOT_WAIT_NS only: a small read's bytes or a short kernel's status come within it,
 * and a wait for a long kernel elsewhere does not keep a core spinning beside the backend's
 * threads (4 ranks of 4 PoCL threads on 16 cores: each rank's spinning thread slowed its
 * kernels); after it, the thread sleeps between tests up to 1/16 of the time waited so far
 * (from 50 us to 5 ms: its wake-ups take the backend's cores too). */
#define HOT_WAIT_NS 1000000LL
static _Atomic int64_t host_wait_since;
/* Where no device of the rank computes on the host's cores (GPUs), the polling stays hot for
 * the whole of a host wait: a clFinish of another rank's queue at the end of a long run of
 * kernels (every rank's finish of every queue, as a split launch's program ends its steps)
 * was told of its end up to 1/16 of its length late, a millisecond and more at 2 GPUs
 * (doc/testing.md, "Figures behind the code"). */
static atomic_bool kernels_on_cores = true;

/* Receives of GPU copies' descriptions and answers: while any is outstanding, the polling
 * stays hot (hot_polling). Each stands between a command and the next on another rank (a
 * split launch's halos), where a nap of up to 50 us on either side adds to the copy's time
 * (doc/testing.md, "Figures behind the code"); such ranks run on hosts of many cores. */
static bool gpu_channel(const struct op *o)
{
  return !o->send && (o->ch == TT_CH_PEER || o->ch == TT_CH_ANSWER);
}

/* Outstanding requests that someone waits for (not standing ones); *gpu (unless NULL): how
 * many of them are GPU copies' receives (gpu_channel). Lock held. */
static int busy_requests(int *gpu)
{
  int n = 0, g = 0;
  for (int i = 0; i < nreqs; i++)
    if (owners[i] && !owners[i]->watch) {
      n++;
      g += gpu_channel(owners[i]);
    }
  if (gpu)
    *gpu = g;
  return n;
}

static int tag_of(uint64_t id)
{
  return (int)(id % ((uint64_t)tag_ub + 1));
}

static int post_op(bool send, enum tt_channel ch, void *buf, size_t len, int peer, uint64_t id,
                   tt_done_fn done, void *arg, bool watch);
static void post_watch(int r);

/* TUTTI_STRESS: random delays of up to max_us on some of the calls (one in `odds`), from a
 * seed per thread, so that races between the progress thread, the backends' callbacks and
 * the host show up in tests rather than in users' runs. */
static void stress_delay(int odds, long max_us)
{
  unsigned seed0 = tt_env()->stress;
  if (!seed0)
    return;
  static _Thread_local unsigned seed;
  if (!seed)
    seed = seed0 ^ (unsigned)(uintptr_t)&seed;
  if (rand_r(&seed) % odds)
    return;
  struct timespec ts = {0, (long)(rand_r(&seed) % (unsigned)max_us) * 1000};
  nanosleep(&ts, NULL);
}

/* Who hears of each message of bytes once done (traces), or NULL. */
static _Atomic(tt_transport_message_fn *) on_message;

void tt_transport_on_message(tt_transport_message_fn *fn)
{
  atomic_store(&on_message, fn);
}

/* The bytes of the receive whose done runs now (tt_transport_received). */
static _Thread_local size_t received;

size_t tt_transport_received(void)
{
  return received;
}

void tt_transport_check_what(int peer, const char *what, const char *why)
{
  if (!why)
    return;
  TT_WARN("rank %d sent %s that cannot be read (%s): stopping the job (ranks of one job must "
          "run one Tutti: a rank of another version, a corrupted message)", peer, what, why);
  tt_log_stopping_job();
  MPI_Abort(MPI_COMM_WORLD, 1);
  abort();
}

void tt_transport_check(int peer, enum tt_channel ch, const char *why)
{
  static const char *const names[TT_CH_COUNT] = {
      "buffer bytes", "read bytes", "a command's status", "a queue's statuses",
      "a GPU copy's description", "a GPU copy's answer", "a goodbye", "a divergence check",
      "host threads' turns"};
  tt_transport_check_what(peer, (unsigned)ch < TT_CH_COUNT ? names[ch] : "a message", why);
}

static void finish_op(struct op *o)
{
  stress_delay(3, 300);
  received = o->got;
  tt_transport_message_fn *heard = atomic_load_explicit(&on_message, memory_order_relaxed);
  if (heard && !o->watch && (o->ch == TT_CH_DATA || o->ch == TT_CH_HOST))
    heard((int)o->ch, o->send, o->peer, o->id, o->len, o->t0, tt_stats_now_ns());
  if (o->done)
    o->done(o->arg, !o->failed);
  free(o);
}

/* The n requests MPI_Testsome found complete (idx, st): each operation whose last request it
 * was goes to done (their count returned), and the completed requests leave the list (MPI set
 * them to MPI_REQUEST_NULL). The lock is held. */
static int collect_done(int n, const int *idx, const MPI_Status *st, struct op **done)
{
  int ndone = 0;
  for (int i = 0; i < n; i++) {
    struct op *o = owners[idx[i]];
    int count = 0;
    if (st[i].MPI_ERROR != MPI_SUCCESS)
      o->failed = 1;
    else if (!o->send && MPI_Get_count(&st[i], MPI_BYTE, &count) == MPI_SUCCESS && count > 0)
      o->got += (size_t)count;
    if (--o->pending == 0) {
      done[ndone++] = o;
      if (o->len >= LARGE_MESSAGE && !o->watch) {
        large_inflight--;
        large_activity_ns = now_ns();
      }
    }
    owners[idx[i]] = NULL;
  }
  int w = 0;
  for (int i = 0; i < nreqs; i++)
    if (owners[i]) {
      reqs[w] = reqs[i];
      owners[w] = owners[i];
      w++;
    }
  nreqs = w;
  return ndone;
}

/* Nothing moved: back off, from a microsecond up to 50 us (5 ms when only goodbyes are
 * awaited), so that an idle rank leaves the cores to the backends' kernels; or yield only,
 * while a large message moves or a host waits briefly (polling hot). Called without the lock;
 * returns with it held. */
static void idle(uint64_t seen, long *backoff_ns)
{
  pthread_mutex_lock(&lock);
  bool waited = atomic_load(&host_waiting) > 0;
  int64_t t = now_ns(), waited_ns = waited ? t - atomic_load(&host_wait_since) : 0;
  /* A long wait is told of its end at most 1/16 of its length late (5 ms at most). */
  int gpu_recvs;
  long cap = busy_requests(&gpu_recvs) ? 50000
             : waited        ? (long)(waited_ns / 16 < 50000     ? 50000
                                      : waited_ns / 16 > 5000000 ? 5000000
                                                                 : waited_ns / 16)
                             : 5000000;
  bool hot = (large_inflight > 0 &&
              t - large_activity_ns < (hot_polling ? HOT_NS : HOT_FEW_CORES_NS)) ||
             (hot_polling &&
              ((waited && (waited_ns < HOT_WAIT_NS || !atomic_load(&kernels_on_cores))) ||
               gpu_recvs > 0));
  pthread_mutex_unlock(&lock);
  if (hot) {
    sched_yield();
    pthread_mutex_lock(&lock);
    return;
  }
  *backoff_ns = *backoff_ns ? *backoff_ns * 2 : 1000;
  if (*backoff_ns > cap)
    *backoff_ns = cap;
  /* An operation posted meanwhile is tested at once: asleep, the thread would notice a
   * message's first fragment only when the sleep ends, and a large message moves only while
   * both ranks test it (a 1 MiB copy between two ranks of a 16-core host waited for each
   * side's sleep). */
  int64_t until = now_ns() + *backoff_ns;
  struct timespec ts = {(time_t)(until / 1000000000LL), (long)(until % 1000000000LL)};
  pthread_mutex_lock(&lock);
  if (posted == seen && !stopping)
    pthread_cond_timedwait(&wake, &lock, &ts);
  if (posted != seen)
    *backoff_ns = 0;
}

static void *progress_main(void *unused)
{
  /* Never destroy a queue or context here: that may wait for this very thread. */
  tt_reaper_enter();
  /* Linux lets a sleep of a microsecond last 50 us (the default timer slack): every message
   * would wait that long to be noticed. The backoff below asks for what it means. */
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  int cap = 0;
  int *idx = NULL;
  MPI_Status *st = NULL;
  struct op **done = NULL;
  long backoff_ns = 0;
  int64_t last_check = 0;
  pthread_mutex_lock(&lock);
  for (;;) {
    uint64_t seen = posted;
    while (nreqs == 0 && !stopping) {
      if (atomic_load(&in_exchange) == 0) {
        pthread_cond_wait(&wake, &lock);
        continue;
      }
      /* A collective with nothing else to test: watched for ranks that left. */
      int64_t until = now_ns() + 500000000LL;
      struct timespec ts = {(time_t)(until / 1000000000LL), (long)(until % 1000000000LL)};
      pthread_cond_timedwait(&wake, &lock, &ts);
      check_departed();
    }
    if (stopping && busy_requests(NULL) == 0 &&
        (atomic_load(&promises) == 0 || now_ns() > stop_deadline)) {
      if (atomic_load(&promises) > 0)
        TT_WARN("leaving with %d send(s) to other ranks never made: their commands did not "
                "complete", atomic_load(&promises));
      break;
    }
    if (now_ns() - last_check > 500000000LL) {
      check_departed();
      last_check = now_ns();
    }
    if (cap < nreqs) {
      cap = capreqs;
      idx = realloc(idx, cap * sizeof *idx);
      st = realloc(st, cap * sizeof *st);
      done = realloc(done, cap * sizeof *done);
    }
    if (tt_env()->stress) {
      pthread_mutex_unlock(&lock);
      stress_delay(4, 200);
      pthread_mutex_lock(&lock);
    }
    int n = 0;
    int err = MPI_Testsome(nreqs, reqs, &n, idx, st);
    /* While a large message moves, MPI advances it by a fragment or so per call: a burst of
     * calls keeps it moving at the wire's speed where one call per turn of this loop left it
     * well short (the burst lengths tried: doc/testing.md, "Figures behind the code").
     * Threads posting messages wait for the lock meanwhile, unless a thread waits to post: a
     * read sending its pieces at once would otherwise post them only between bursts. */
    for (int k = 0; k < LARGE_BURST && large_inflight > 0 && err == MPI_SUCCESS &&
                    (n == 0 || n == MPI_UNDEFINED) && atomic_load(&posters) == 0;
         k++)
      err = MPI_Testsome(nreqs, reqs, &n, idx, st);
    if (err != MPI_SUCCESS) {
      TT_WARN("MPI_Testsome failed (%d): a rank may have died", err);
      tt_log_stopping_job();
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int ndone = n != MPI_UNDEFINED && n > 0 ? collect_done(n, idx, st, done) : 0;
    void (*hooks[4])(void);
    memcpy(hooks, poll_hooks, sizeof hooks);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < ndone; i++)
      finish_op(done[i]);
    for (int i = 0; i < 4 && hooks[i]; i++)
      hooks[i]();
    if (ndone == 0 && n <= 0) {
      idle(seen, &backoff_ns); /* takes the lock again */
      continue;
    }
    backoff_ns = 0;
    pthread_mutex_lock(&lock);
  }
  pthread_mutex_unlock(&lock);
  free(idx);
  free(st);
  free(done);
  return NULL;
}

static void goodbye_arrived(void *arg, int ok)
{
  int *from = arg;
  int r = (int)(from - goodbye_in);
  pthread_mutex_lock(&lock);
  if (ok && gone_since && !gone_since[r])
    gone_since[r] = now_ns();
  if (ok)
    atomic_store(&anyone_gone, true);
  pthread_mutex_unlock(&lock);
  TT_LOG(TT_LOG_MPI, "rank %d said goodbye", r);
}

int tt_transport_start(const void *world_ptr)
{
  MPI_Comm world = *(const MPI_Comm *)world_ptr;
  MPI_Comm_rank(world, &my_rank);
  MPI_Comm_size(world, &nranks);
  gone_since = calloc((size_t)nranks, sizeof *gone_since);
  goodbye_in = calloc((size_t)nranks, sizeof *goodbye_in);
  for (int i = 0; i < TT_CH_COUNT; i++) {
    MPI_Comm_dup(world, &comms[i]);
    MPI_Comm_set_errhandler(comms[i], MPI_ERRORS_RETURN);
  }
  MPI_Comm_dup(world, &coll);
  MPI_Comm_set_errhandler(coll, MPI_ERRORS_RETURN);
  int *ub, flag = 0;
  MPI_Comm_get_attr(world, MPI_TAG_UB, &ub, &flag);
  if (flag)
    tag_ub = *ub;
  /* Timed waits on the clock the backoff counts on (no thread waits on wake yet). */
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_destroy(&wake);
  pthread_cond_init(&wake, &attr);
  pthread_condattr_destroy(&attr);
  cpu_set_t cores;
  hot_polling = sched_getaffinity(0, sizeof cores, &cores) == 0 && CPU_COUNT(&cores) >= 4;
  if (pthread_create(&progress, NULL, progress_main, NULL) != 0)
    return -1;
  pthread_setname_np(progress, "tutti-progress");
  started = true;
  /* A standing receive for each other rank's goodbye (tt_transport_goodbye). */
  for (int r = 0; r < nranks; r++)
    if (r != my_rank && gone_since && goodbye_in)
      post_watch(r);
  return 0;
}

void tt_transport_goodbye(void)
{
  if (!started)
    return;
  goodbye_payload = my_rank;
  for (int r = 0; r < nranks; r++)
    if (r != my_rank)
      tt_transport_isend(TT_CH_CTRL, &goodbye_payload, sizeof goodbye_payload, r, 0, NULL, NULL);
}

bool tt_transport_running(void)
{
  pthread_mutex_lock(&lock);
  bool running = started && !stopping;
  pthread_mutex_unlock(&lock);
  return running;
}

void tt_transport_stop(void)
{
  if (!started)
    return;
  pthread_mutex_lock(&lock);
  stopping = true;
  stop_deadline = now_ns() + 10000000000LL;
  pthread_cond_signal(&wake);
  pthread_mutex_unlock(&lock);
  pthread_join(progress, NULL);
  pthread_mutex_lock(&lock);
  started = false;
  pthread_mutex_unlock(&lock);
  /* The goodbyes that never came (ranks still running, or gone without one). */
  for (int i = 0; i < nreqs; i++)
    if (owners[i] && owners[i]->watch) {
      MPI_Cancel(&reqs[i]);
      MPI_Request_free(&reqs[i]);
      if (--owners[i]->pending == 0)
        free(owners[i]);
    }
  for (int i = 0; i < TT_CH_COUNT; i++)
    MPI_Comm_free(&comms[i]);
  MPI_Comm_free(&coll);
  free(reqs);
  free(owners);
  reqs = NULL;
  owners = NULL;
  nreqs = capreqs = 0;
}

/* Caller holds the lock. */
static int reserve(int extra)
{
  if (nreqs + extra <= capreqs)
    return 0;
  int cap = capreqs ? capreqs * 2 : 64;
  while (cap < nreqs + extra)
    cap *= 2;
  MPI_Request *r = realloc(reqs, cap * sizeof *r);
  if (!r)
    return -1;
  reqs = r;
  struct op **o = realloc(owners, cap * sizeof *o);
  if (!o)
    return -1;
  owners = o;
  capreqs = cap;
  return 0;
}

static int post_op(bool send, enum tt_channel ch, void *buf, size_t len, int peer, uint64_t id,
                   tt_done_fn done, void *arg, bool watch)
{
  struct op *o = calloc(1, sizeof *o);
  if (!o)
    return -1;
  o->done = done;
  o->arg = arg;
  o->peer = peer;
  o->watch = watch;
  o->ch = ch;
  o->id = id;
  o->send = send;
  o->len = len;
  o->t0 = atomic_load_explicit(&on_message, memory_order_relaxed) ? tt_stats_now_ns() : 0;
  int pieces = len ? (int)((len + PIECE - 1) / PIECE) : 1;
  int tag = tag_of(id);
  atomic_fetch_add(&posters, 1);
  pthread_mutex_lock(&lock);
  atomic_fetch_sub(&posters, 1);
  /* After tt_transport_stop (the process is leaving) there is no communicator left: the
   * operation fails here rather than inside MPI, which would abort the job. */
  if (!started) {
    pthread_mutex_unlock(&lock);
    free(o);
    TT_LOG(TT_LOG_WARN, "MPI_%s of %zu bytes %s rank %d after Tutti's transport stopped: not made",
           send ? "Isend" : "Irecv", len, send ? "to" : "from", peer);
    return -1;
  }
  if (reserve(pieces)) {
    pthread_mutex_unlock(&lock);
    free(o);
    return -1;
  }
  int rc = MPI_SUCCESS;
  for (int i = 0; i < pieces && rc == MPI_SUCCESS; i++) {
    size_t off = (size_t)i * PIECE;
    int count = (int)(len - off < PIECE ? len - off : PIECE);
    char *p = (char *)buf + off;
    rc = send ? MPI_Isend(p, count, MPI_BYTE, peer, tag, comms[ch], &reqs[nreqs])
              : MPI_Irecv(p, count, MPI_BYTE, peer, tag, comms[ch], &reqs[nreqs]);
    if (rc == MPI_SUCCESS) {
      owners[nreqs++] = o;
      o->pending++;
    }
  }
  if (rc != MPI_SUCCESS)
    o->failed = 1;
  bool nothing_posted = o->pending == 0;
  posted++;
  if (!nothing_posted && len >= LARGE_MESSAGE && !watch) {
    large_inflight++;
    large_activity_ns = now_ns();
  }
  pthread_cond_signal(&wake);
  pthread_mutex_unlock(&lock);
  if (rc != MPI_SUCCESS)
    TT_WARN("MPI_%s of %zu bytes %s rank %d (channel %d, id %llu) failed: %d",
            send ? "Isend" : "Irecv", len, send ? "to" : "from", peer, (int)ch,
            (unsigned long long)id, rc);
  if (nothing_posted) {
    if (watch) {
      finish_op(o); /* a standing operation's done hears of it */
      return 0;
    }
    free(o); /* the caller's failure, not done's */
    return -1;
  }
  if (send && (ch == TT_CH_DATA || ch == TT_CH_HOST))
    atomic_fetch_add_explicit(&tt_stats.bytes_sent, len, memory_order_relaxed);
  return 0; /* a piece that failed to post fails the operation when the others end */
}

static int post(bool send, enum tt_channel ch, void *buf, size_t len, int peer, uint64_t id,
                tt_done_fn done, void *arg)
{
  stress_delay(4, 100);
  return post_op(send, ch, buf, len, peer, id, done, arg, false);
}

static void post_watch(int r)
{
  post_op(false, TT_CH_CTRL, &goodbye_in[r], sizeof goodbye_in[r], r, 0, goodbye_arrived,
          &goodbye_in[r], true);
}

int tt_transport_isend_standing(enum tt_channel ch, const void *buf, size_t len, int peer,
                                uint64_t id, tt_done_fn done, void *arg)
{
  return post_op(true, ch, (void *)buf, len, peer, id, done, arg, true);
}

int tt_transport_irecv_standing(enum tt_channel ch, void *buf, size_t len, int peer, uint64_t id,
                                tt_done_fn done, void *arg)
{
  return post_op(false, ch, buf, len, peer, id, done, arg, true);
}

void tt_transport_describe_with(enum tt_channel ch, void (*fn)(void *arg, char *buf, size_t cap))
{
  pthread_mutex_lock(&lock);
  describers[ch] = fn;
  pthread_mutex_unlock(&lock);
}

void tt_transport_host_waits(int delta)
{
  if (delta > 0 && atomic_load(&host_waiting) == 0)
    atomic_store(&host_wait_since, now_ns());
  atomic_fetch_add(&host_waiting, delta);
  /* The polling turns hot now (progress_main), not when the thread's sleep ends. Without
   * the lock, which a burst of tests may hold: a signal that comes before the thread waits
   * is lost, and the sleep then ends as it would have. */
  if (delta > 0 && hot_polling)
    pthread_cond_signal(&wake);
}

void tt_transport_kernels_on_cores(bool yes)
{
  atomic_store(&kernels_on_cores, yes);
}

bool tt_transport_cores_to_spare(void)
{
  return hot_polling;
}

void tt_transport_on_poll(void (*fn)(void))
{
  pthread_mutex_lock(&lock);
  int i = 0;
  while (i < 4 && poll_hooks[i] && poll_hooks[i] != fn)
    i++;
  if (i < 4)
    poll_hooks[i] = fn;
  pthread_mutex_unlock(&lock);
  if (i == 4)
    TT_WARN("too many poll hooks");
}

int tt_transport_isend(enum tt_channel ch, const void *buf, size_t len, int peer, uint64_t id,
                       tt_done_fn done, void *arg)
{
  TT_LOG(TT_LOG_MPI, "send %zu bytes to rank %d (channel %d, id %llu)", len, peer, (int)ch,
         (unsigned long long)id);
  return post(true, ch, (void *)buf, len, peer, id, done, arg);
}

int tt_transport_irecv(enum tt_channel ch, void *buf, size_t len, int peer, uint64_t id,
                       tt_done_fn done, void *arg)
{
  TT_LOG(TT_LOG_MPI, "receive %zu bytes from rank %d (channel %d, id %llu)", len, peer, (int)ch,
         (unsigned long long)id);
  return post(false, ch, buf, len, peer, id, done, arg);
}

int tt_transport_allgatherv(const void *mine, size_t len, void **all, size_t **lens)
{
  int size;
  MPI_Comm_size(coll, &size);
  int n = (int)len;
  int *counts = malloc(size * sizeof *counts), *displs = malloc(size * sizeof *displs);
  *lens = malloc(size * sizeof **lens);
  if (!counts || !displs || !*lens)
    return -1;
  exchange_begin("an allgather");
  int rc = MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, coll);
  size_t total = 0;
  for (int i = 0; i < size; i++) {
    displs[i] = (int)total;
    total += (size_t)counts[i];
    (*lens)[i] = (size_t)counts[i];
  }
  *all = malloc(total ? total : 1);
  if (rc == MPI_SUCCESS && *all)
    rc = MPI_Allgatherv(mine, n, MPI_BYTE, *all, counts, displs, MPI_BYTE, coll);
  exchange_end(0);
  free(counts);
  free(displs);
  return rc == MPI_SUCCESS && *all ? 0 : -1;
}

int tt_transport_allgather(const void *mine, size_t len, void *all)
{
  exchange_begin("an allgather");
  return exchange_end(
      MPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, coll) == MPI_SUCCESS ? 0
                                                                                           : -1);
}

int tt_transport_bcast(void *buf, size_t len, int root)
{
  exchange_begin("a broadcast");
  return exchange_end(MPI_Bcast(buf, (int)len, MPI_BYTE, root, coll) == MPI_SUCCESS ? 0 : -1);
}

int tt_transport_gatherv(const void *mine, size_t len, void **all, size_t **lens)
{
  int size, me;
  MPI_Comm_size(coll, &size);
  MPI_Comm_rank(coll, &me);
  *all = NULL;
  *lens = NULL;
  int n = (int)len;
  int *counts = me == 0 ? malloc(size * sizeof *counts) : NULL;
  int *displs = me == 0 ? malloc(size * sizeof *displs) : NULL;
  exchange_begin("a gather");
  int rc = MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, coll);
  if (me == 0) {
    *lens = malloc(size * sizeof **lens);
    size_t total = 0;
    for (int i = 0; rc == MPI_SUCCESS && i < size; i++) {
      displs[i] = (int)total;
      total += (size_t)counts[i];
      (*lens)[i] = (size_t)counts[i];
    }
    *all = malloc(total ? total : 1);
  }
  if (rc == MPI_SUCCESS)
    rc = MPI_Gatherv(mine, n, MPI_BYTE, *all, counts, displs, MPI_BYTE, 0, coll);
  exchange_end(0);
  free(counts);
  free(displs);
  return rc == MPI_SUCCESS ? 0 : -1;
}

int tt_transport_clock_offset(uint64_t (*now)(void), int64_t *offset)
{
  int size, me;
  MPI_Comm_size(coll, &size);
  MPI_Comm_rank(coll, &me);
  *offset = 0;
  enum { ROUNDS = 8 };
  int rc = MPI_SUCCESS;
  if (me == 0) {
    for (int r = 1; r < size && rc == MPI_SUCCESS; r++) {
      int64_t best_rtt = INT64_MAX, best = 0;
      for (int k = 0; k < ROUNDS && rc == MPI_SUCCESS; k++) {
        uint64_t t0 = now(), tr = 0;
        rc = MPI_Send(&t0, 1, MPI_UINT64_T, r, 0, coll);
        if (rc == MPI_SUCCESS)
          rc = MPI_Recv(&tr, 1, MPI_UINT64_T, r, 0, coll, MPI_STATUS_IGNORE);
        uint64_t t1 = now();
        if ((int64_t)(t1 - t0) < best_rtt) {
          best_rtt = (int64_t)(t1 - t0);
          best = (int64_t)tr - (int64_t)(t0 + (t1 - t0) / 2);
        }
      }
      if (rc == MPI_SUCCESS)
        rc = MPI_Send(&best, 1, MPI_INT64_T, r, 1, coll);
    }
  } else {
    for (int k = 0; k < ROUNDS && rc == MPI_SUCCESS; k++) {
      uint64_t t;
      rc = MPI_Recv(&t, 1, MPI_UINT64_T, 0, 0, coll, MPI_STATUS_IGNORE);
      t = now();
      if (rc == MPI_SUCCESS)
        rc = MPI_Send(&t, 1, MPI_UINT64_T, 0, 0, coll);
    }
    if (rc == MPI_SUCCESS)
      rc = MPI_Recv(offset, 1, MPI_INT64_T, 0, 1, coll, MPI_STATUS_IGNORE);
  }
  return rc == MPI_SUCCESS ? 0 : -1;
}

int tt_transport_allreduce_min_int(int *v)
{
  int in = *v;
  exchange_begin("a reduction");
  return exchange_end(MPI_Allreduce(&in, v, 1, MPI_INT, MPI_MIN, coll) == MPI_SUCCESS ? 0 : -1);
}

void tt_transport_promise(int delta)
{
  atomic_fetch_add(&promises, delta);
}

