/* Divergence detection (runtime/job/check.h). Messages on TT_CH_CHECK:
 *   REPORT  rank r -> 0: {calls made, running hash}, at most one in flight per rank (a newer
 *           one follows when the first is through);
 *   ASK     0 -> r: {first call, count}: r's records of those calls;
 *   RECORDS r -> 0: {r's call count, then count records of {hash, name}}.
 * Rank 0 compares on its progress thread, so a host thread stuck in a wait that will never
 * end (the usual result of a divergence) does not stop the check. */
#include "config.h"

#include "runtime/job/check.h"

#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/job/cluster.h"
#include "runtime/base/env.h"
#include "runtime/base/log.h"
#include "runtime/base/object.h"
#include "runtime/job/stats.h"
#include "runtime/job/transport.h"
#include "runtime/job/wire.h"

enum { ID_REPORT = 1, ID_ASK = 2, ID_RECORDS = 3 };

#define RING ((uint64_t)1 << 16) /* calls kept for the search of the first difference */
#define WINDOW 2048              /* records asked for at once */
#define SEED 0xcbf29ce484222325ULL
#define WAIT_NS 200000000LL      /* rank 0 making no call this long: compare up to it */

bool tt_check_active;

struct rec {
  uint64_t hash; /* running hash after the call */
  const char *name;
  const char *thread; /* the host layer's name of the calling thread; NULL: the main one */
};

/* The answers of the file queries made since the last call (tt_check_result), kept with
 * the call that follows them for reports: they are not part of the hash, since ranks may
 * see different answers and still go on alike, but when they part, the answers before the
 * point they parted say why. Only the host thread writes them (no other thread of the
 * program is running: tt_check_result). */
#define SAID 1024
static struct {
  uint64_t call; /* the call they came before; 0: none */
  uint64_t key;
  char text[96];
} said[SAID];
static uint64_t said_key;
static char said_text[96];

/* A report's final: the rank's host program ended (ENDED), or it waits at an exchange of
 * answers the other ranks are not at (STUCK). */
enum { ENDED = 1, STUCK = 2 };

static struct rec ring[RING];
static atomic_uint_fast64_t ncalls;
static uint64_t running = SEED;
static int me, nranks;

/* Any rank but 0: the report in flight, and the listener for rank 0's questions. */
static struct tt_wire_report out;
static atomic_bool in_flight, dirty;
static atomic_uint_fast64_t last_sent = UINT64_MAX; /* host and progress threads */
static uint64_t ask_in[2];

/* Rank 0: what each rank said, and how far it agreed. */
struct peer {
  struct tt_wire_report in, latest;
  bool pending;        /* latest not compared yet */
  bool asking;         /* records asked for, not arrived */
  uint64_t good;       /* calls known to agree with rank 0's */
  uint64_t asked_at;   /* last call asked for while rank 0 waited or ended */
  uint64_t ask[2];
  struct tt_wire_record *answer;
};
static struct peer *peers;
static pthread_mutex_t peers_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t last_count;
static int64_t last_move_ns;
static atomic_bool finishing; /* rank 0's host program ended */
static atomic_bool stuck0;    /* rank 0 waits at an exchange the other ranks are not at */

static uint64_t mix(uint64_t h, uint64_t v)
{
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 29);
}

uint64_t tt_check_bytes(const void *p, size_t n)
{
  const unsigned char *b = p;
  uint64_t h = SEED;
  for (size_t i = 0; i < n && b; i++)
    h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}

uint64_t tt_check_id(const void *handle)
{
  uint64_t id = 0;
  if (!tt_object_lookup(handle, &id))
    return 0;
  return id;
}

uint64_t tt_check_ids(const void *list, size_t n)
{
  const void *const *h = list;
  uint64_t x = mix(SEED, n);
  for (size_t i = 0; h && i < n; i++)
    x = mix(x, tt_check_id(h[i]));
  return x;
}

uint64_t tt_check_arg(size_t size, const void *value)
{
  if (!value)
    return 0;
  if (size == sizeof(void *)) {
    const void *h;
    memcpy(&h, value, sizeof h);
    uint64_t id = tt_check_id(h);
    if (id)
      return id;
  }
  return tt_check_bytes(value, size);
}

uint64_t tt_check_name(const char *name)
{
  if (!strncmp(name, "tt_", 3))
    name += 3;
  return tt_check_bytes(name, strlen(name)) | 1;
}

static const char *(*shim_thread_name)(void);
static pthread_once_t shim_once = PTHREAD_ONCE_INIT;

static void find_shim(void)
{
  shim_thread_name = (const char *(*)(void))dlsym(RTLD_DEFAULT, "tutti_shim_thread_name");
}

const char *tt_check_host_thread(void)
{
  pthread_once(&shim_once, find_shim);
  return shim_thread_name ? shim_thread_name() : NULL;
}

/* The calling thread's name for reports, kept for the thread's life; NULL for the main
 * thread, a thread of the runtime's, or without the host layer. Names stay once made:
 * records may outlive their thread. */
static const char *thread_of_call(void)
{
  static __thread const char *mine;
  static __thread bool looked;
  if (looked)
    return mine;
  looked = true;
  const char *n = tt_check_host_thread();
  if (!n || !strcmp(n, "0"))
    return NULL;
  static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
  static struct name {
    struct name *next;
    char s[];
  } *names;
  pthread_mutex_lock(&names_lock);
  struct name *x = names;
  while (x && strcmp(x->s, n) != 0)
    x = x->next;
  if (!x && (x = malloc(sizeof *x + strlen(n) + 1))) {
    strcpy(x->s, n);
    x->next = names;
    names = x;
  }
  pthread_mutex_unlock(&names_lock);
  return mine = x ? x->s : NULL;
}

/* A call as a report names it: "clX", and " on thread T" for a thread other than the main
 * one (host/preload_thread.c). */
static const char *call_named(char *buf, size_t cap, const char *name, const char *thread)
{
  snprintf(buf, cap, "%s%s%s", name, thread && thread[0] ? " on thread " : "",
           thread ? thread : "");
  return buf;
}

void tt_check_call(const char *name, uint64_t name_hash, const uint64_t *v, size_t n)
{
  if (!name_hash)
    name_hash = tt_check_name(name);
  if (name[0] == 't' && name[1] == 't' && name[2] == '_')
    name += 3;
  uint64_t h = mix(running, name_hash);
  for (size_t i = 0; i < n; i++)
    h = mix(h, v[i]);
  running = h;
  uint64_t k = atomic_load_explicit(&ncalls, memory_order_relaxed) + 1;
  ring[k % RING] = (struct rec){h, name, thread_of_call()};
  if (said_key) {
    said[k % SAID].call = k;
    said[k % SAID].key = said_key;
    memcpy(said[k % SAID].text, said_text, sizeof said_text);
    said_key = 0;
    said_text[0] = 0;
  }
  atomic_store_explicit(&ncalls, k, memory_order_release);
}

/* The hash after call k, if still kept (k <= the count read before). */
static bool hash_at(uint64_t k, uint64_t count, uint64_t *h)
{
  if (k == 0) {
    *h = SEED;
    return true;
  }
  if (k > count || count - k >= RING - 64)
    return false;
  *h = ring[k % RING].hash;
  return true;
}

/* --- every rank but 0 ------------------------------------------------------------------ */

static void send_report(void);

static void report_sent(void *arg, int ok)
{
  atomic_store(&in_flight, false);
  if (atomic_load(&dirty) && !atomic_exchange(&in_flight, true))
    send_report();
}

static uint64_t ended; /* ENDED or STUCK: this rank's last report says so */

static void send_report(void)
{
  atomic_store(&dirty, false);
  out.final = ended;
  uint64_t n = atomic_load_explicit(&ncalls, memory_order_acquire);
  out.calls = n;
  if (!hash_at(n, n, &out.hash))
    out.hash = 0;
  atomic_store(&last_sent, n);
  tt_transport_isend_standing(TT_CH_CHECK, &out, sizeof out, 0, ID_REPORT, report_sent, NULL);
}

void tt_check_sync(void)
{
  if (!tt_check_active || me == 0)
    return;
  if (atomic_load_explicit(&ncalls, memory_order_relaxed) == atomic_load(&last_sent))
    return; /* nothing new since the last report (a loop polling a status) */
  atomic_store(&dirty, true);
  if (!atomic_exchange(&in_flight, true))
    send_report();
}

static void asked(void *arg, int ok);

void tt_check_result(const char *call, const char *path, int64_t ret, int err)
{
  if (!tt_check_active)
    return;
  said_key = tt_check_bytes(&ret, sizeof ret) ^ (uint64_t)err * 0x9e3779b97f4a7c15ULL ^
             (said_key * 31) ^ 1;
  size_t len = strlen(said_text);
  char one[96];
  if (ret < 0)
    snprintf(one, sizeof one, "%s(%s) = %lld (%s)", call, path, (long long)ret, strerror(err));
  else
    snprintf(one, sizeof one, "%s(%s) = %lld", call, path, (long long)ret);
  /* The first answers since the last call: the earliest is where the ranks first saw
   * different things. */
  if (len && len + 2 < sizeof said_text)
    memcpy(said_text + len, "; ", 3), len += 2;
  size_t n = strlen(one);
  if (len + n >= sizeof said_text)
    n = sizeof said_text - 1 - len;
  memcpy(said_text + len, one, n);
  said_text[len + n] = 0;
}

/* The file queries' answers before call k, if kept. */
static void said_before(uint64_t k, uint64_t *key, char *text, size_t cap)
{
  bool kept = said[k % SAID].call == k;
  *key = kept ? said[k % SAID].key : 0;
  snprintf(text, cap, "%s", kept ? said[k % SAID].text : "");
}

static void listen_for_questions(void)
{
  tt_transport_irecv_standing(TT_CH_CHECK, ask_in, sizeof ask_in, 0, ID_ASK, asked, NULL);
}

static void answer_sent(void *arg, int ok)
{
  free(arg);
}

/* Rank 0 asks for records [ask_in[0], ask_in[0] + ask_in[1]). */
static void asked(void *arg, int ok)
{
  if (!ok)
    return;
  tt_transport_check(0, TT_CH_CHECK, tt_transport_received() != sizeof ask_in
                                         ? "a question for divergence records of another length"
                                         : NULL);
  uint64_t first = ask_in[0], count = ask_in[1] < WINDOW ? ask_in[1] : WINDOW;
  size_t len = sizeof(uint64_t) + count * sizeof(struct tt_wire_record);
  unsigned char *buf = calloc(1, len);
  if (buf) {
    uint64_t n = atomic_load_explicit(&ncalls, memory_order_acquire);
    memcpy(buf, &n, sizeof n);
    struct tt_wire_record *w = (struct tt_wire_record *)(buf + sizeof n);
    for (uint64_t i = 0; i < count; i++) {
      uint64_t k = first + i;
      if (k == 0 || !hash_at(k, n, &w[i].hash))
        continue;
      snprintf(w[i].name, sizeof w[i].name, "%s", ring[k % RING].name);
      snprintf(w[i].thread, sizeof w[i].thread, "%s",
               ring[k % RING].thread ? ring[k % RING].thread : "");
      said_before(k, &w[i].said_key, w[i].said, sizeof w[i].said);
    }
    tt_transport_isend_standing(TT_CH_CHECK, buf, len, 0, ID_RECORDS, answer_sent, buf);
  }
  listen_for_questions();
}

/* The job stops from this rank, its status file saying so (tutti-run's closing lines). */
static _Noreturn void abort_job(void)
{
  fflush(stdout);
  tt_log_stopping_job();
  MPI_Abort(MPI_COMM_WORLD, 3);
  abort();
}

struct tt_stamp tt_check_stamp(const char *site)
{
  if (!tt_check_active)
    return (struct tt_stamp){0, 0};
  uint64_t n = atomic_load_explicit(&ncalls, memory_order_acquire), h = 0;
  hash_at(n, n, &h);
  return (struct tt_stamp){n, mix(h, tt_check_name(site))};
}

_Noreturn void tt_check_disagree(const char *site, int other, struct tt_stamp theirs)
{
  struct tt_stamp mine = tt_check_stamp(site);
  uint64_t n = mine.calls;
  TT_LOG(TT_LOG_MPI, "check: at %s after call #%llu, rank %d is after call #%llu elsewhere",
         site, (unsigned long long)n, other, (unsigned long long)theirs.calls);
  if (me == 0) {
    atomic_store(&stuck0, true);
  } else {
    ended = STUCK;
    atomic_store(&last_sent, UINT64_MAX);
    tt_check_sync();
  }
  /* Rank 0's progress thread compares and stops the job within a few hundred milliseconds
   * (WAIT_NS) when the calls differ. */
  struct timespec ms = {0, 10000000};
  for (int i = 0; i < 1000; i++)
    nanosleep(&ms, NULL);
  char name[96];
  if (n)
    call_named(name, sizeof name, ring[n % RING].name, ring[n % RING].thread);
  else
    snprintf(name, sizeof name, "the start");
  TT_WARN("rank %d waits at an exchange of answers (%s) inside call #%llu (%s), where rank %d "
          "is after call #%llu elsewhere: the ranks diverged; stopping the job", me, site,
          (unsigned long long)n, name, other, (unsigned long long)theirs.calls);
  abort_job();
}

/* --- rank 0 ---------------------------------------------------------------------------- */

static _Noreturn void stop_job(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The first file query before the point of divergence whose answers differ, for the report
 * (compare_records). */
static char stop_said[256];

static void stop_job(const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  TT_WARN("%s", msg);
  if (stop_said[0])
    TT_WARN("%s", stop_said);
  TT_WARN("every rank must make the same OpenCL calls in the same order (doc/cluster.md, "
          "\"Divergence\"); stopping the job");
  abort_job();
}

static void records_arrived(void *arg, int ok);

/* Caller holds peers_lock. */
static void ask(int r, uint64_t first, uint64_t count)
{
  struct peer *p = &peers[r];
  if (count > WINDOW)
    count = WINDOW;
  free(p->answer);
  size_t len = sizeof(uint64_t) + count * sizeof(struct tt_wire_record);
  unsigned char *buf = calloc(1, len);
  if (!buf)
    return;
  p->answer = (struct tt_wire_record *)buf;
  p->asking = true;
  p->ask[0] = first;
  p->ask[1] = count;
  TT_LOG(TT_LOG_MPI, "check: asking rank %d for calls #%llu..#%llu", r,
         (unsigned long long)first, (unsigned long long)(first + count - 1));
  tt_transport_irecv_standing(TT_CH_CHECK, buf, len, r, ID_RECORDS, records_arrived,
                              &peers[r]);
  tt_transport_isend_standing(TT_CH_CHECK, p->ask, sizeof p->ask, r, ID_ASK, NULL, NULL);
}

/* Rank r's records against rank 0's: stops the job at the first difference, or moves the
 * agreed mark on. A rank that only waits longer than another, with every call so far alike,
 * has not diverged: its wait depends on nothing but those calls. Caller holds peers_lock. */
static void compare_records(int r)
{
  struct peer *p = &peers[r];
  unsigned char *buf = (unsigned char *)p->answer;
  uint64_t rcount;
  memcpy(&rcount, buf, sizeof rcount);
  const struct tt_wire_record *w = (const struct tt_wire_record *)(buf + sizeof rcount);
  uint64_t n0 = atomic_load_explicit(&ncalls, memory_order_acquire);
  bool ended0 = atomic_load(&finishing);
  stop_said[0] = 0;
  for (uint64_t i = 0; i < p->ask[1]; i++) {
    uint64_t k = p->ask[0] + i;
    char theirs[96], ours[96];
    uint64_t key0;
    char said0[96];
    said_before(k, &key0, said0, sizeof said0);
    if (!stop_said[0] && k <= rcount && w[i].said_key != key0)
      snprintf(stop_said, sizeof stop_said, "before call #%llu the ranks' files differed: "
               "rank %d saw %s; rank 0 saw %s", (unsigned long long)k, r,
               w[i].said[0] ? w[i].said : "nothing", said0[0] ? said0 : "nothing");
    call_named(theirs, sizeof theirs, w[i].name, w[i].thread);
    if (k > n0 && k <= rcount) {
      if (ended0 || atomic_load(&stuck0))
        stop_job("rank %d diverged from rank 0 at call #%llu (%s): rank 0 %s after call #%llu",
                 r, (unsigned long long)k, theirs,
                 ended0 ? "ended its program" : "waits for the other ranks' answers",
                 (unsigned long long)n0);
      if (p->latest.final == STUCK)
        stop_job("rank %d diverged from rank 0 at call #%llu (%s): rank %d waits for the other "
                 "ranks' answers after it, rank 0 is after call #%llu", r,
                 (unsigned long long)k, theirs, r, (unsigned long long)n0);
      break;
    }
    if (k > rcount) {
      if (k <= n0 && p->latest.final && p->latest.calls == rcount)
        stop_job("rank %d diverged from rank 0 at call #%llu (%s): rank %d %s after call #%llu",
                 r, (unsigned long long)k,
                 call_named(ours, sizeof ours, ring[k % RING].name, ring[k % RING].thread), r,
                 p->latest.final == STUCK ? "waits for the other ranks' answers"
                                          : "ended its program",
                 (unsigned long long)rcount);
      break;
    }
    uint64_t h0;
    if (!w[i].name[0] || !hash_at(k, n0, &h0))
      stop_job("rank %d diverged from rank 0 after call #%llu (the calls after it are no "
               "longer kept)", r, (unsigned long long)p->good);
    if (w[i].hash != h0) {
      const char *name0 = ring[k % RING].name, *thread0 = ring[k % RING].thread;
      call_named(ours, sizeof ours, name0, thread0);
      if (strcmp(name0, w[i].name) != 0 || strcmp(thread0 ? thread0 : "", w[i].thread) != 0)
        stop_job("rank %d diverged from rank 0 at call #%llu (%s): rank 0 made %s there", r,
                 (unsigned long long)k, theirs, ours);
      stop_job("rank %d diverged from rank 0 at call #%llu (%s): same call, other arguments",
               r, (unsigned long long)k, theirs);
    }
    p->good = k;
  }
}

static void records_arrived(void *arg, int ok)
{
  struct peer *p = arg;
  int r = (int)(p - peers);
  pthread_mutex_lock(&peers_lock);
  p->asking = false;
  if (ok)
    tt_transport_check(r, TT_CH_CHECK,
                       tt_wire_records_check(p->answer, tt_transport_received(), p->ask[1]));
  if (ok)
    compare_records(r);
  free(p->answer);
  p->answer = NULL;
  pthread_mutex_unlock(&peers_lock);
}

/* Caller holds peers_lock. `waiting`: rank 0 has made no call for a while. */
static void compare_latest(int r, uint64_t n0, bool waiting)
{
  struct peer *p = &peers[r];
  if (p->asking || !p->pending)
    return;
  const struct tt_wire_report *l = &p->latest;
  if (l->calls > n0) {
    /* Rank r is ahead. Once rank 0 ended, or while it waits, compare up to where it is
     * (and one call beyond, to name rank r's call there). */
    bool ended0 = atomic_load(&finishing) || atomic_load(&stuck0);
    if ((ended0 || waiting) && (p->good < n0 || (ended0 && p->asked_at != n0 + 1))) {
      p->asked_at = n0 + 1;
      ask(r, p->good + 1, n0 + 1 - p->good);
    }
    return;
  }
  uint64_t h0;
  if (!hash_at(l->calls, n0, &h0)) {
    p->pending = false; /* too old to compare */
    return;
  }
  if (h0 != l->hash) {
    /* Stays pending: asked again, a window further, until the first difference shows. */
    ask(r, p->good + 1, l->calls - p->good);
    return;
  }
  p->pending = false;
  if (l->calls > p->good)
    p->good = l->calls;
  if (l->final && l->calls < n0) {
    p->asked_at = n0;
    ask(r, l->calls + 1, 1); /* stops the job: rank r ended short of rank 0's calls */
  }
}

static void report_arrived(void *arg, int ok);

static void listen_for_report(int r)
{
  tt_transport_irecv_standing(TT_CH_CHECK, &peers[r].in, sizeof peers[r].in, r, ID_REPORT,
                              report_arrived, &peers[r]);
}

static void report_arrived(void *arg, int ok)
{
  struct peer *p = arg;
  int r = (int)(p - peers);
  if (!ok)
    return;
  tt_transport_check(r, TT_CH_CHECK, tt_wire_report_check(&p->in, tt_transport_received()));
  pthread_mutex_lock(&peers_lock);
  p->latest = p->in;
  p->pending = true;
  compare_latest(r, atomic_load_explicit(&ncalls, memory_order_acquire), false);
  pthread_mutex_unlock(&peers_lock);
  listen_for_report(r);
}

static void poll_peers(void)
{
  uint64_t n0 = atomic_load_explicit(&ncalls, memory_order_acquire);
  int64_t t = (int64_t)tt_stats_now_ns();
  if (n0 != last_count) {
    last_count = n0;
    last_move_ns = t;
  }
  bool waiting = t - last_move_ns > WAIT_NS;
  pthread_mutex_lock(&peers_lock);
  for (int r = 1; r < nranks; r++)
    compare_latest(r, n0, waiting);
  pthread_mutex_unlock(&peers_lock);
}

void tt_check_start(void)
{
  me = tt_cluster_rank();
  nranks = tt_cluster_size();
  if (nranks < 2 || !tt_env()->check)
    return;
  if (me == 0) {
    peers = calloc((size_t)nranks, sizeof *peers);
    if (!peers)
      return;
    last_move_ns = (int64_t)tt_stats_now_ns();
    for (int r = 1; r < nranks; r++)
      listen_for_report(r);
    tt_transport_on_poll(poll_peers);
  } else {
    listen_for_questions();
  }
  tt_check_active = true;
}

void tt_check_finish(void)
{
  if (!tt_check_active)
    return;
  int64_t deadline = (int64_t)tt_stats_now_ns() + 2000000000LL;
  struct timespec ms = {0, 1000000};
  if (me != 0) {
    /* The last report says the program ended here, so that rank 0 can tell a rank that
     * stopped short of its calls. */
    ended = ENDED;
    atomic_store(&last_sent, UINT64_MAX);
    tt_check_sync();
    while (atomic_load(&in_flight) && (int64_t)tt_stats_now_ns() < deadline)
      nanosleep(&ms, NULL);
    return;
  }
  /* Rank 0: ranks that made more calls than rank 0 diverged; those comparisons under way
   * finish first. A rank whose report of rank 0's last call has not come yet (it parted
   * there and waits at an exchange of its own, or lags) is waited for, up to the deadline:
   * rank 0 ending first would leave that rank to find only that rank 0 left, not where the
   * ranks parted. */
  atomic_store(&finishing, true);
  for (;;) {
    bool busy = false;
    uint64_t n0 = atomic_load(&ncalls);
    pthread_mutex_lock(&peers_lock);
    for (int r = 1; r < nranks; r++) {
      compare_latest(r, n0, false);
      busy |= peers[r].asking || (!peers[r].latest.final && peers[r].latest.calls < n0);
    }
    pthread_mutex_unlock(&peers_lock);
    if (!busy || (int64_t)tt_stats_now_ns() > deadline)
      break;
    nanosleep(&ms, NULL);
  }
}
