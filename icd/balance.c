/* Balancing split launches (SPLIT.md step 6, doc/split.md "Balancing"): CUDASA's idea made
 * deterministic. A kernel split into equal group ranges over devices of unequal speed waits
 * for its slowest part; Tutti measures each part's kernel time and gives the next launches of
 * that kernel group ranges in proportion to the measured speeds.
 *
 * Every rank must plan the same parts, so the weights change only at a point of the host
 * program (clFinish of a queue: the same call on every rank) and only from times every rank
 * holds by then: a part's owner reads its kernel's profiling times, and the status batch that
 * clFinish waits for carries them to the other ranks (runtime/event.c). One launch of a kernel
 * is measured at a time, never the first on a set of devices; once clFinish has covered every
 * one of its parts, the kernel's weights move three quarters of the way from the old ones to
 * the measured speeds, unless the parts already ended within 5% of each other. Launches whose parts follow
 * a buffer's distribution are not re-weighted (the data decides where work goes).
 * TUTTI_BALANCE=off turns it off. */
#include "icd/icd.h"

#include "runtime/check.h"
#include "runtime/cluster.h"
#include "runtime/env.h"
#include "runtime/event.h"
#include "runtime/log.h"
#include "runtime/stats.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ONE ((uint64_t)1 << 32) /* weights of a launch add up to this */

/* A kernel's balance, guarded by the list lock below. */
struct tt_balance {
  cl_uint nq;
  cl_device_id *dev; /* the queues' devices, in launch order */
  uint64_t *w;       /* their weights (sum ONE); NULL while equal */
  uint64_t launches; /* launches on these devices so far */
  /* The launch being measured: one part per queue, or none (nparts 0). */
  cl_uint nparts;
  cl_event *ev;   /* the parts' events (retained) */
  size_t *groups; /* work-groups of each part */
  uint64_t *ns;   /* kernel time of each part once clFinish covered it, else 0 */
  bool *known;
};

/* Kernels with a launch being measured. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cl_kernel *measuring;
static size_t nmeasuring, capmeasuring;

bool tt_balance_on(cl_context ctx)
{
  return tt_env()->balance && ctx->ndevices > 1;
}

static void measure_end(struct tt_balance *b)
{
  for (cl_uint p = 0; p < b->nparts; p++)
    TT_RELEASE(b->ev[p]);
  free(b->ev);
  free(b->groups);
  free(b->ns);
  free(b->known);
  b->ev = NULL;
  b->groups = b->ns = NULL;
  b->known = NULL;
  b->nparts = 0;
}

static void balance_free(struct tt_balance *b)
{
  if (!b)
    return;
  measure_end(b);
  free(b->dev);
  free(b->w);
  free(b);
}

static void unlist(cl_kernel k)
{
  for (size_t i = 0; i < nmeasuring; i++)
    if (measuring[i] == k) {
      measuring[i] = measuring[--nmeasuring];
      return;
    }
}

void tt_balance_kernel_free(cl_kernel k)
{
  pthread_mutex_lock(&lock);
  unlist(k);
  balance_free(k->balance);
  k->balance = NULL;
  pthread_mutex_unlock(&lock);
}

/* Whether b's weights are for these queues' devices. */
static bool same_devices(const struct tt_balance *b, cl_uint nq, const cl_command_queue *qs)
{
  if (!b || b->nq != nq)
    return false;
  for (cl_uint q = 0; q < nq; q++)
    if (b->dev[q] != qs[q]->device)
      return false;
  return true;
}

bool tt_balance_bounds(cl_kernel k, cl_uint nq, const cl_command_queue *qs, size_t G,
                       size_t *bounds)
{
  pthread_mutex_lock(&lock);
  struct tt_balance *b = k->balance;
  bool weighted = same_devices(b, nq, qs) && b->w && G >= nq;
  if (weighted) {
    uint64_t cum = 0;
    bounds[0] = 0;
    for (cl_uint q = 0; q < nq; q++) {
      cum += b->w[q];
      size_t e = q + 1 == nq ? G : (size_t)((unsigned __int128)G * cum / ONE);
      /* At least one group each: a device given none would never be measured again. */
      if (e < bounds[q] + 1)
        e = bounds[q] + 1;
      if (e > G - (nq - q - 1))
        e = G - (nq - q - 1);
      bounds[q + 1] = e;
    }
  }
  pthread_mutex_unlock(&lock);
  return weighted;
}

void tt_balance_measure(cl_kernel k, cl_uint nq, const cl_command_queue *qs,
                        const size_t *groups, cl_event *ev)
{
  pthread_mutex_lock(&lock);
  struct tt_balance *b = k->balance;
  if (!same_devices(b, nq, qs)) {
    balance_free(b);
    unlist(k);
    b = k->balance = calloc(1, sizeof *b);
    if (b && !(b->dev = calloc(nq, sizeof *b->dev))) {
      free(b);
      b = k->balance = NULL;
    }
    if (b) {
      b->nq = nq;
      for (cl_uint q = 0; q < nq; q++)
        b->dev[q] = qs[q]->device;
    }
  }
  /* Not the first launch on these devices (its times may hold the backend's first-use
   * work), and one launch measured at a time: later ones wait until it is (decisions of
   * program order, alike on every rank). */
  if (b && !b->nparts && b->launches++ > 0) {
    b->ev = calloc(nq, sizeof *b->ev);
    b->groups = calloc(nq, sizeof *b->groups);
    b->ns = calloc(nq, sizeof *b->ns);
    b->known = calloc(nq, sizeof *b->known);
    bool listed = false;
    if (b->ev && b->groups && b->ns && b->known && nmeasuring == capmeasuring) {
      size_t cap = capmeasuring ? capmeasuring * 2 : 16;
      cl_kernel *m = realloc(measuring, cap * sizeof *m);
      if (m) {
        measuring = m;
        capmeasuring = cap;
      }
    }
    if (b->ev && b->groups && b->ns && b->known && nmeasuring < capmeasuring) {
      measuring[nmeasuring++] = k;
      listed = true;
    }
    if (listed) {
      b->nparts = nq;
      for (cl_uint p = 0; p < nq; p++) {
        TT_RETAIN(ev[p]);
        b->ev[p] = ev[p];
        b->groups[p] = groups[p];
      }
    } else {
      measure_end(b);
    }
  }
  pthread_mutex_unlock(&lock);
}

/* A part's kernel time: from the backend on its owner, from the status batch elsewhere. */
static uint64_t part_ns(cl_event e)
{
  return e->owner == tt_cluster_rank() ? tt_event_native_ns(e) : e->ns;
}

/* All parts of k's measured launch are known: new weights, unless they ended within 5%. */
static void reweigh(cl_kernel k, struct tt_balance *b)
{
  cl_uint n = b->nparts;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (cl_uint p = 0; p < n; p++) {
    lo = b->ns[p] < lo ? b->ns[p] : lo;
    hi = b->ns[p] > hi ? b->ns[p] : hi;
  }
  if (lo == 0 || hi * 100 <= lo * 105)
    return;
  /* Speeds in groups per second, scaled, then as weights adding up to ONE. */
  unsigned __int128 speed[n], total = 0;
  for (cl_uint p = 0; p < n; p++) {
    speed[p] = ((unsigned __int128)b->groups[p] << 40) / b->ns[p];
    total += speed[p];
  }
  if (!total)
    return;
  uint64_t fresh[n];
  for (cl_uint p = 0; p < n; p++)
    fresh[p] = (uint64_t)(speed[p] * ONE / total);
  bool first = !b->w;
  if (first && !(b->w = malloc(n * sizeof *b->w)))
    return;
  uint64_t got = 0;
  for (cl_uint p = 0; p < n; p++) {
    /* A quarter of the equal (or last) split, three quarters of the measured one: near
     * the measured speeds in one step or two, less moved by noise. */
    uint64_t old = first ? ONE / n : b->w[p];
    b->w[p] = old / 4 + fresh[p] / 4 * 3;
    got += b->w[p];
  }
  b->w[n - 1] += ONE - got; /* rounding: the sum stays ONE */
  uint64_t h = tt_check_bytes(b->w, n * sizeof *b->w);
  /* Rank-0 comparison: the weights are a plan decision like any other. */
  if (tt_check_active) {
    uint64_t v[2] = {k->obj.id, h};
    tt_check_call("rebalance", 0, v, 2);
  }
  if (tt_cluster_rank() == 0 || !tt_cluster_distributed()) {
    char line[512];
    int at = 0;
    for (cl_uint p = 0; p < n && at < (int)sizeof line - 24; p++)
      at += snprintf(line + at, sizeof line - (size_t)at, "%s%.1f%%", p ? " " : "",
                     (double)b->w[p] * 100.0 / (double)ONE);
    TT_LOG(TT_LOG_PLAN, "kernel '%s' rebalanced over %u devices: %s", k->name, n, line);
  }
  atomic_fetch_add_explicit(&tt_stats.rebalanced, 1, memory_order_relaxed);
  atomic_store_explicit(&tt_stats.balance_digest,
                        (atomic_load(&tt_stats.balance_digest) ^ h) * 1099511628211ull,
                        memory_order_relaxed);
}

void tt_balance_finished(cl_command_queue q, uint64_t seq)
{
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < nmeasuring;) {
    cl_kernel k = measuring[i];
    struct tt_balance *b = k->balance;
    bool all = true;
    for (cl_uint p = 0; p < b->nparts; p++) {
      if (!b->known[p] && b->ev[p]->queue == q && b->ev[p]->seq <= seq) {
        b->known[p] = true;
        b->ns[p] = part_ns(b->ev[p]);
      }
      all = all && b->known[p];
    }
    if (!all) {
      i++;
      continue;
    }
    reweigh(k, b);
    measure_end(b);
    measuring[i] = measuring[--nmeasuring];
  }
  pthread_mutex_unlock(&lock);
}
