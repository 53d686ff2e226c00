/* The job as every part of Tutti asks about it (runtime/job/cluster.h): this rank, the
 * ranks, the device table, message ids. Start-up fills it in (runtime/job/cluster_start.c). */
#include "config.h"

#include "runtime/job/cluster.h"
#include "runtime/job/cluster_impl.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/base/log.h"

struct tt_job_state tt_job = {.size = 1};
static atomic_uint_fast64_t next_id = 1;

struct _cl_platform_id tt_platform;

cl_int tt_cluster_device_info(cl_device_id d, cl_device_info param, size_t size, void *value,
                              size_t *size_ret)
{
  cl_uint n;
  const unsigned char *answer = tt_wire_device_answer(d->info, d->info_len, param, &n);
  if (!answer)
    return CL_INVALID_VALUE;
  if (value) {
    if (size < n)
      return CL_INVALID_VALUE;
    memcpy(value, answer, n);
  }
  if (size_ret)
    *size_ret = n;
  return CL_SUCCESS;
}

cl_int tt_cluster_device_query(cl_device_id d, cl_device_info param, size_t size, void *value,
                               size_t *size_ret)
{
  if (!d->actual || tt_cluster_distributed())
    return tt_cluster_device_info(d, param, size, value, size_ret);
  return TT_NCALL(d->bp, clGetDeviceInfo, d->native, param, size, value, size_ret);
}

int tt_cluster_rank(void)
{
  return tt_job.rank;
}

int tt_cluster_size(void)
{
  return tt_job.size;
}

bool tt_cluster_distributed(void)
{
  return tt_job.size > 1;
}

const char *tt_cluster_hostname(void)
{
  return tt_job.hostname;
}

/* Sub-devices follow the table, by index, in the order every rank made them (pointers: they
 * are objects of their own). */
static cl_device_id *subs;
static cl_uint nsubs, subs_cap;
static pthread_mutex_t subs_lock = PTHREAD_MUTEX_INITIALIZER;

cl_uint tt_cluster_ndevices(void)
{
  pthread_mutex_lock(&subs_lock);
  cl_uint n = tt_job.ntable + nsubs;
  pthread_mutex_unlock(&subs_lock);
  return n;
}

cl_device_id tt_cluster_device(cl_uint i)
{
  if (i < tt_job.ntable)
    return &tt_job.table[i];
  pthread_mutex_lock(&subs_lock);
  cl_device_id d = i - tt_job.ntable < nsubs ? subs[i - tt_job.ntable] : NULL;
  pthread_mutex_unlock(&subs_lock);
  return d;
}

cl_uint tt_cluster_device_add(cl_device_id d)
{
  pthread_mutex_lock(&subs_lock);
  if (nsubs == subs_cap) {
    cl_uint cap = subs_cap ? 2 * subs_cap : 16;
    cl_device_id *grown = realloc(subs, cap * sizeof *grown);
    if (!grown) {
      pthread_mutex_unlock(&subs_lock);
      return UINT32_MAX;
    }
    subs = grown;
    subs_cap = cap;
  }
  d->index = tt_job.ntable + nsubs;
  subs[nsubs++] = d;
  pthread_mutex_unlock(&subs_lock);
  return d->index;
}

static uint64_t *pair_out, *pair_in; /* by peer: transfers sent to it, received from it */

uint64_t tt_cluster_pair_ids(int src, int dst, uint64_t n)
{
  if (!pair_out) {
    pair_out = calloc((size_t)tt_job.size, sizeof *pair_out);
    pair_in = calloc((size_t)tt_job.size, sizeof *pair_in);
    if (!pair_out || !pair_in) {
      TT_WARN("out of memory for transfer ids");
      abort();
    }
  }
  uint64_t *c = src == tt_job.rank ? &pair_out[dst] : &pair_in[src];
  uint64_t first = *c;
  *c += n;
  return first;
}

uint64_t tt_cluster_next_id(void)
{
  return atomic_fetch_add(&next_id, 1);
}

uint64_t tt_cluster_next_ids(uint64_t n)
{
  return atomic_fetch_add(&next_id, n);
}
