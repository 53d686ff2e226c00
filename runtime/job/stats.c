/* Statistics counters and their report at exit. */
#include "config.h"

#include "runtime/job/stats.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/job/cluster.h"
#include "runtime/base/env.h"
#include "runtime/base/log.h"
#include "runtime/base/object.h"

struct tt_stats tt_stats;

uint64_t tt_stats_now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Sized once the device table exists; a device beyond it counts in a spare slot. */
static struct tt_stats_device *devices, spare;
static unsigned ndevices;
static pthread_once_t devices_once = PTHREAD_ONCE_INIT;

static void devices_make(void)
{
  unsigned n = tt_cluster_ndevices();
  devices = calloc(n ? n : 1, sizeof *devices);
  ndevices = devices ? n : 0;
}

struct tt_stats_device *tt_stats_device(unsigned index)
{
  pthread_once(&devices_once, devices_make);
  return index < ndevices ? &devices[index] : &spare;
}

static void report_devices(void)
{
  uint64_t windows = 0, bytes = 0, back = 0;
  for (unsigned i = 0; i < ndevices; i++) {
    struct tt_stats_device *d = &devices[i];
    windows += atomic_load(&d->evictions);
    bytes += atomic_load(&d->evicted);
    back += atomic_load(&d->written_back);
    cl_device_id dev = tt_cluster_device(i);
    if (!dev || !dev->actual)
      continue; /* its owner reports it */
    uint64_t parts = atomic_load(&d->parts), halo = atomic_load(&d->halo_bytes),
             red = atomic_load(&d->reduce_bytes), peak = atomic_load(&d->window_peak);
    if (parts || halo || red || peak)
      fprintf(tt_log_file(), "[tutti %d stats] device %u: split parts %llu (work-groups %llu), "
              "halo bytes %llu, reduction bytes %llu, window bytes at most %llu\n",
              tt_cluster_rank(), i, (unsigned long long)parts,
              (unsigned long long)atomic_load(&d->groups), (unsigned long long)halo,
              (unsigned long long)red, (unsigned long long)peak);
    uint64_t ev = atomic_load(&d->evicted);
    if (ev)
      fprintf(tt_log_file(), "[tutti %d stats] device %u: evicted bytes %llu, written back "
              "%llu (held by clean copies already %llu), re-fetched %llu (ahead of use %llu), "
              "to files %llu\n", tt_cluster_rank(), i,
              (unsigned long long)ev, (unsigned long long)atomic_load(&d->written_back),
              (unsigned long long)atomic_load(&d->clean),
              (unsigned long long)atomic_load(&d->refetched),
              (unsigned long long)atomic_load(&d->prefetched),
              (unsigned long long)atomic_load(&d->to_files));
  }
  /* Every rank plans every device's evictions: this line is the same on all of them. */
  if (windows)
    fprintf(tt_log_file(), "[tutti %d stats] evictions on every device: windows %llu, bytes "
            "%llu, written back %llu, digest %016llx\n", tt_cluster_rank(),
            (unsigned long long)windows, (unsigned long long)bytes, (unsigned long long)back,
            (unsigned long long)atomic_load(&tt_stats.evictions_digest));
  /* Balancing is planned alike on every rank too. */
  uint64_t rebalanced = atomic_load(&tt_stats.rebalanced);
  if (rebalanced)
    fprintf(tt_log_file(), "[tutti %d stats] split kernels rebalanced %llu times, digest "
            "%016llx\n", tt_cluster_rank(), (unsigned long long)rebalanced,
            (unsigned long long)atomic_load(&tt_stats.balance_digest));
}

/* Launches of kernels without a written annotation, per kernel name and tier. */
struct auto_kernel {
  struct auto_kernel *next;
  uint64_t launches[3]; /* whole, derived regions, merged writes */
  char name[];
};
static struct auto_kernel *auto_kernels;
static pthread_mutex_t auto_lock = PTHREAD_MUTEX_INITIALIZER;

void tt_stats_split_launch(const char *kernel, int tier)
{
  if (!tt_env()->stats || tier < 0 || tier > 2)
    return;
  pthread_mutex_lock(&auto_lock);
  struct auto_kernel *k = auto_kernels, **tail = &auto_kernels;
  for (; k && strcmp(k->name, kernel); k = k->next)
    tail = &k->next;
  if (!k && (k = calloc(1, sizeof *k + strlen(kernel) + 1))) {
    strcpy(k->name, kernel);
    *tail = k;
  }
  if (k)
    k->launches[tier]++;
  pthread_mutex_unlock(&auto_lock);
}

/* The same on every rank: every rank plans every launch. */
static void report_auto(void)
{
  pthread_mutex_lock(&auto_lock);
  for (struct auto_kernel *k = auto_kernels; k; k = k->next)
    fprintf(tt_log_file(), "[tutti %d stats] kernel '%s' without annotation: launches split by "
            "derived regions %llu, by merged writes %llu, run whole %llu\n", tt_cluster_rank(),
            k->name, (unsigned long long)k->launches[1], (unsigned long long)k->launches[2],
            (unsigned long long)k->launches[0]);
  pthread_mutex_unlock(&auto_lock);
}

static void report(void)
{
  fprintf(tt_log_file(),
          "[tutti %d stats] commands %llu (All), virtual %llu (V), virtual after queueing "
          "optimization %llu (VQO), reads to every rank %llu, bytes sent to other ranks %llu, "
          "host waiting %.3f s\n",
          tt_cluster_rank(), (unsigned long long)atomic_load(&tt_stats.commands),
          (unsigned long long)atomic_load(&tt_stats.virtual_cmds),
          (unsigned long long)atomic_load(&tt_stats.virtual_kept),
          (unsigned long long)atomic_load(&tt_stats.host_reads),
          (unsigned long long)atomic_load(&tt_stats.bytes_sent),
          atomic_load(&tt_stats.wait_ns) / 1e9);
  uint64_t polled = atomic_load(&tt_stats.polled);
  if (polled)
    fprintf(tt_log_file(), "[tutti %d stats] callbacks on native events polled %llu, run by "
            "polling first %llu\n", tt_cluster_rank(), (unsigned long long)polled,
            (unsigned long long)atomic_load(&tt_stats.poll_fired));
  uint64_t markers = atomic_load(&tt_stats.access_markers);
  if (markers)
    fprintf(tt_log_file(), "[tutti %d stats] markers for waits on earlier commands %llu\n",
            tt_cluster_rank(), (unsigned long long)markers);
  report_devices();
  report_auto();
}

static void list_leaks(void)
{
  tt_object_list_live();
}

void tt_stats_start(void)
{
  if (tt_env()->stats)
    atexit(report);
  if (tt_env()->debug & TT_LOG_LEAK)
    atexit(list_leaks);
}
