/* The global device table (one rank for now: every device is actual). */
#include "config.h"

#include "runtime/cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/backend.h"
#include "runtime/env.h"
#include "runtime/log.h"

struct _cl_platform_id tt_platform;

static struct _cl_device_id *table;
static cl_uint ntable;
static char hostname[64];
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init(void)
{
  tt_object_init(&tt_platform.obj, TT_PLATFORM, NULL);
  gethostname(hostname, sizeof hostname - 1);
  cl_uint nbp = tt_backend_discover();
  cl_uint n = 0;
  for (cl_uint i = 0; i < nbp; i++)
    n += tt_backend_get(i)->ndevices;
  table = n ? calloc(n, sizeof *table) : NULL;
  if (n && !table) {
    TT_WARN("out of memory building the device table");
    return;
  }
  cl_device_type forced = tt_env()->device_type;
  for (cl_uint i = 0; i < nbp; i++) {
    struct tt_backend_platform *bp = tt_backend_get(i);
    for (cl_uint j = 0; j < bp->ndevices; j++) {
      struct _cl_device_id *d = &table[ntable];
      tt_object_init(&d->obj, TT_DEVICE, NULL);
      d->index = ntable;
      d->rank = 0;
      d->actual = true;
      d->bp = bp;
      d->native = bp->devices[j];
      cl_device_type t = CL_DEVICE_TYPE_CPU;
      TT_NCALL(bp, clGetDeviceInfo, d->native, CL_DEVICE_TYPE, sizeof t, &t, NULL);
      t &= ~(cl_device_type)CL_DEVICE_TYPE_DEFAULT;
      if (forced)
        t = forced;
      /* One device of the platform carries CL_DEVICE_TYPE_DEFAULT: the first. */
      if (ntable == 0)
        t |= CL_DEVICE_TYPE_DEFAULT;
      d->type = t;
      snprintf(d->host, sizeof d->host, "%s", hostname);
      ntable++;
    }
  }
}

void tt_cluster_init(void)
{
  pthread_once(&init_once, init);
}

int tt_cluster_rank(void)
{
  return 0;
}

int tt_cluster_size(void)
{
  return 1;
}

const char *tt_cluster_hostname(void)
{
  return hostname;
}

cl_uint tt_cluster_ndevices(void)
{
  tt_cluster_init();
  return ntable;
}

cl_device_id tt_cluster_device(cl_uint i)
{
  return i < ntable ? &table[i] : NULL;
}

int tt_cluster_is_device(const void *d)
{
  const struct _cl_device_id *p = d;
  return table && p >= table && p < table + ntable &&
         ((const char *)p - (const char *)table) % sizeof *table == 0;
}
