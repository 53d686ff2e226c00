/* Balancing split launches (doc/split.md, "Balancing"): CUDASA's idea made
 * deterministic. A kernel split into equal group ranges over devices of unequal speed waits
 * for its slowest part; Tutti measures each part's kernel time and gives the next launches of
 * that kernel group ranges in proportion to the measured speeds.
 *
 * Every rank must plan the same parts, so the weights change only at a point of the host
 * program (clFinish of a queue: the same call on every rank) and only from times every rank
 * holds by then: a part's owner reads its kernel's profiling times, and the status batch that
 * clFinish waits for carries them to the other ranks (runtime/order/event.c). One launch of a kernel
 * is measured at a time, never the first on a set of devices; once clFinish has covered every
 * one of its parts, the kernel's weights move three quarters of the way from the old ones to
 * the measured speeds, unless the parts already ended within 5% of each other. Launches whose
 * parts follow a buffer's distribution are not re-weighted (the data decides where work
 * goes). TUTTI_BALANCE=off turns it off. */
#include "runtime/command/compound.h"

#include "annotations/partition.h"

#include "runtime/job/check.h"
#include "runtime/job/cluster.h"
#include "runtime/base/env.h"
#include "runtime/order/event.h"
#include "runtime/base/log.h"
#include "runtime/job/stats.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ONE ((uint64_t)1 << 32) /* weights of a launch add up to this */

/* One part of the launch being measured. */
struct part_time {
  cl_event ev;   /* retained */
  size_t groups; /* its work-groups */
  uint64_t ns;   /* its kernel time, once clFinish covered it */
  bool known;
};

/* A kernel's balance, guarded by the lock below. */
struct tt_balance {
  cl_kernel kernel;
  cl_uint nq;
  cl_device_id *dev; /* the queues' devices, in launch order */
  uint64_t *w;       /* their weights (sum ONE); NULL while equal */
  uint64_t launches; /* launches on these devices so far */
  /* The launch being measured (one part per queue), or NULL; measured balances are listed
   * from `measuring` through next. */
  struct part_time *parts;
  struct tt_balance *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tt_balance *measuring;

bool tt_balance_on(cl_context ctx)
{
  return tt_env()->balance && ctx->ndevices > 1;
}

/* Ends b's measurement (b is off the list). */
static void measure_end(struct tt_balance *b)
{
  for (cl_uint p = 0; b->parts && p < b->nq; p++)
    TT_RELEASE(b->parts[p].ev);
  free(b->parts);
  b->parts = NULL;
}

static void unlist(struct tt_balance *b)
{
  for (struct tt_balance **at = &measuring; *at; at = &(*at)->next)
    if (*at == b) {
      *at = b->next;
      return;
    }
}

static void balance_free(struct tt_balance *b)
{
  if (!b)
    return;
  if (b->parts)
    unlist(b);
  measure_end(b);
  free(b->dev);
  free(b->w);
  free(b);
}

void tt_balance_kernel_free(cl_kernel k)
{
  pthread_mutex_lock(&lock);
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
  if (weighted)
    tt_part_weighted_bounds(nq, b->w, ONE, G, bounds);
  pthread_mutex_unlock(&lock);
  return weighted;
}

bool tt_balance_wants(cl_kernel k, cl_uint nq, const cl_command_queue *qs)
{
  pthread_mutex_lock(&lock);
  struct tt_balance *b = k->balance;
  if (!same_devices(b, nq, qs)) {
    balance_free(b);
    b = k->balance = calloc(1, sizeof *b);
    if (b && !(b->dev = calloc(nq, sizeof *b->dev))) {
      free(b);
      b = k->balance = NULL;
    }
    if (b) {
      b->kernel = k;
      b->nq = nq;
      for (cl_uint q = 0; q < nq; q++)
        b->dev[q] = qs[q]->device;
    }
  }
  /* Not the first launch on these devices (its times may hold the backend's first-use
   * work), and one launch measured at a time: later ones wait until it is (decisions of
   * program order, alike on every rank). */
  bool wants = b && !b->parts && b->launches++ > 0;
  pthread_mutex_unlock(&lock);
  return wants;
}

void tt_balance_measure(cl_kernel k, const size_t *groups, cl_event *ev)
{
  pthread_mutex_lock(&lock);
  struct tt_balance *b = k->balance;
  if (b && !b->parts && (b->parts = calloc(b->nq, sizeof *b->parts))) {
    for (cl_uint p = 0; p < b->nq; p++) {
      TT_RETAIN(ev[p]);
      b->parts[p] = (struct part_time){.ev = ev[p], .groups = groups[p]};
    }
    b->next = measuring;
    measuring = b;
  }
  pthread_mutex_unlock(&lock);
}

/* A part's kernel time: from the backend on its owner, from the status batch elsewhere. */
static uint64_t part_ns(cl_event e)
{
  return e->owner == tt_cluster_rank() ? tt_event_native_ns(e) : e->ns;
}

/* All parts of b's measured launch are known: new weights (annotations/partition.h), unless
 * they ended within 5%. */
static void reweigh(struct tt_balance *b)
{
  cl_uint n = b->nq;
  size_t *groups = malloc(n * sizeof *groups);
  uint64_t *ns = malloc(n * sizeof *ns), *w = malloc(n * sizeof *w);
  bool moved = groups && ns && w;
  for (cl_uint p = 0; moved && p < n; p++) {
    groups[p] = b->parts[p].groups;
    ns[p] = b->parts[p].ns;
  }
  moved = moved && tt_part_reweigh(n, groups, ns, b->w, ONE, w);
  free(groups);
  free(ns);
  if (!moved) {
    free(w);
    return;
  }
  free(b->w);
  b->w = w;
  uint64_t h = tt_check_bytes(b->w, n * sizeof *b->w);
  /* Rank-0 comparison: the weights are a plan decision like any other. */
  if (tt_check_active) {
    uint64_t v[2] = {b->kernel->obj.id, h};
    tt_check_call("rebalance", 0, v, 2);
  }
#ifdef TT_ENABLE_DEBUG
  if (tt_cluster_rank() == 0 && (tt_env()->debug & TT_LOG_PLAN)) {
    char line[512];
    int at = 0;
    for (cl_uint p = 0; p < n && at < (int)sizeof line - 24; p++)
      at += snprintf(line + at, sizeof line - (size_t)at, "%s%.1f%%", p ? " " : "",
                     (double)b->w[p] * 100.0 / (double)ONE);
    TT_LOG(TT_LOG_PLAN, "kernel '%s' rebalanced over %u devices: %s", b->kernel->name, n, line);
  }
#endif
  atomic_fetch_add_explicit(&tt_stats.rebalanced, 1, memory_order_relaxed);
  atomic_store_explicit(&tt_stats.balance_digest,
                        (atomic_load(&tt_stats.balance_digest) ^ h) * 1099511628211ull,
                        memory_order_relaxed);
}

void tt_balance_finished(cl_command_queue q, uint64_t seq)
{
  pthread_mutex_lock(&lock);
  for (struct tt_balance **at = &measuring; *at;) {
    struct tt_balance *b = *at;
    bool all = true;
    for (cl_uint p = 0; p < b->nq; p++) {
      struct part_time *t = &b->parts[p];
      if (!t->known && t->ev->queue == q && t->ev->seq <= seq) {
        t->known = true;
        t->ns = part_ns(t->ev);
      }
      all = all && t->known;
    }
    if (!all) {
      at = &b->next;
      continue;
    }
    *at = b->next;
    reweigh(b);
    measure_end(b);
  }
  pthread_mutex_unlock(&lock);
}
