/* The transport: duplicated communicators, the progress thread, collectives. */
#include "config.h"

#include "runtime/transport.h"

#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/log.h"

#define PIECE ((size_t)1 << 30)

struct op {
  tt_done_fn done;
  void *arg;
  int pending; /* MPI requests of this operation still open */
  int failed;
};

static MPI_Comm comms[TT_CH_COUNT], coll;
static int tag_ub = 32767;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static MPI_Request *reqs;
static struct op **owners; /* owners[i]: the operation reqs[i] belongs to */
static int nreqs, capreqs;
static bool stopping, started;
static pthread_t progress;
static atomic_uint_fast64_t bytes_sent;

static int tag_of(uint64_t id)
{
  return (int)(id % ((uint64_t)tag_ub + 1));
}

static void finish_op(struct op *o)
{
  if (o->done)
    o->done(o->arg, !o->failed);
  free(o);
}

static void *progress_main(void *unused)
{
  int cap = 0;
  int *idx = NULL;
  MPI_Status *st = NULL;
  struct op **done = NULL;
  long backoff_ns = 0;
  pthread_mutex_lock(&lock);
  for (;;) {
    while (nreqs == 0 && !stopping)
      pthread_cond_wait(&wake, &lock);
    if (nreqs == 0 && stopping)
      break;
    if (cap < nreqs) {
      cap = capreqs;
      idx = realloc(idx, cap * sizeof *idx);
      st = realloc(st, cap * sizeof *st);
      done = realloc(done, cap * sizeof *done);
    }
    int n = 0;
    int err = MPI_Testsome(nreqs, reqs, &n, idx, st);
    int ndone = 0;
    if (err != MPI_SUCCESS) {
      TT_WARN("MPI_Testsome failed (%d): a rank may have died", err);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (n != MPI_UNDEFINED && n > 0) {
      for (int i = 0; i < n; i++) {
        struct op *o = owners[idx[i]];
        if (st[i].MPI_ERROR != MPI_SUCCESS)
          o->failed = 1;
        if (--o->pending == 0)
          done[ndone++] = o;
        owners[idx[i]] = NULL;
      }
      /* Compact: drop the completed requests (MPI set them to MPI_REQUEST_NULL). */
      int w = 0;
      for (int i = 0; i < nreqs; i++)
        if (owners[i]) {
          reqs[w] = reqs[i];
          owners[w] = owners[i];
          w++;
        }
      nreqs = w;
    }
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < ndone; i++)
      finish_op(done[i]);
    if (ndone == 0 && n <= 0) {
      /* Nothing moved: back off, from a yield up to 200 us, so that an idle rank leaves the
       * cores to the backends' kernels. */
      backoff_ns = backoff_ns ? backoff_ns * 2 : 1000;
      if (backoff_ns > 200000)
        backoff_ns = 200000;
      struct timespec ts = {0, backoff_ns};
      nanosleep(&ts, NULL);
    } else {
      backoff_ns = 0;
    }
    pthread_mutex_lock(&lock);
  }
  pthread_mutex_unlock(&lock);
  free(idx);
  free(st);
  free(done);
  return NULL;
}

int tt_transport_start(const void *world_ptr)
{
  MPI_Comm world = *(const MPI_Comm *)world_ptr;
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
  if (pthread_create(&progress, NULL, progress_main, NULL) != 0)
    return -1;
  started = true;
  return 0;
}

void tt_transport_stop(void)
{
  if (!started)
    return;
  pthread_mutex_lock(&lock);
  stopping = true;
  pthread_cond_signal(&wake);
  pthread_mutex_unlock(&lock);
  pthread_join(progress, NULL);
  started = false;
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

static int post(bool send, enum tt_channel ch, void *buf, size_t len, int peer, uint64_t id,
                tt_done_fn done, void *arg)
{
  struct op *o = calloc(1, sizeof *o);
  if (!o)
    return -1;
  o->done = done;
  o->arg = arg;
  int pieces = len ? (int)((len + PIECE - 1) / PIECE) : 1;
  int tag = tag_of(id);
  pthread_mutex_lock(&lock);
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
  pthread_cond_signal(&wake);
  pthread_mutex_unlock(&lock);
  if (rc != MPI_SUCCESS)
    TT_WARN("MPI_%s of %zu bytes %s rank %d (channel %d, id %llu) failed: %d",
            send ? "Isend" : "Irecv", len, send ? "to" : "from", peer, (int)ch,
            (unsigned long long)id, rc);
  if (nothing_posted)
    finish_op(o);
  if (send && ch == TT_CH_DATA)
    atomic_fetch_add(&bytes_sent, len);
  return rc == MPI_SUCCESS ? 0 : -1;
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
  free(counts);
  free(displs);
  return rc == MPI_SUCCESS && *all ? 0 : -1;
}

int tt_transport_bcast(void *buf, size_t len, int root)
{
  return MPI_Bcast(buf, (int)len, MPI_BYTE, root, coll) == MPI_SUCCESS ? 0 : -1;
}

int tt_transport_allreduce_min_int(int *v)
{
  int in = *v;
  return MPI_Allreduce(&in, v, 1, MPI_INT, MPI_MIN, coll) == MPI_SUCCESS ? 0 : -1;
}

int tt_transport_barrier(void)
{
  return MPI_Barrier(coll) == MPI_SUCCESS ? 0 : -1;
}

uint64_t tt_transport_bytes_sent(void)
{
  return atomic_load(&bytes_sent);
}
