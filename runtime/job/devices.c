/* Devices as OpenCL sees them (runtime/job/devices.h). */
#include "config.h"

#include "runtime/job/devices.h"

#include <pthread.h>
#include <stdlib.h>

#include "runtime/base/env.h"
#include "runtime/base/log.h"

#define VALID_TYPES                                                                               \
  (CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU |                             \
   CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM)

bool tt_device_type_valid(cl_device_type t)
{
  return t == CL_DEVICE_TYPE_ALL || (t != 0 && (t & ~(cl_device_type)VALID_TYPES) == 0);
}

bool tt_device_matches(cl_device_id d, cl_device_type t)
{
  if (t == CL_DEVICE_TYPE_ALL)
    return true;
  return (d->type & t) != 0;
}

cl_uint tt_devices_of_type(cl_device_type device_type, cl_uint cap, cl_device_id *out)
{
  cl_uint n = 0;
  /* The aggregate device comes first; it alone answers CL_DEVICE_TYPE_DEFAULT. */
  cl_device_id agg = tt_aggregate_device();
  if (agg && (device_type == CL_DEVICE_TYPE_DEFAULT || tt_device_matches(agg, device_type))) {
    if (out && n < cap)
      out[n] = agg;
    n++;
  }
  for (cl_uint i = 0; i < tt_cluster_ndevices() && !(agg && device_type == CL_DEVICE_TYPE_DEFAULT); i++) {
    cl_device_id d = tt_cluster_device(i);
    if (!tt_device_matches(d, device_type))
      continue;
    if (out && n < cap)
      out[n] = d;
    n++;
  }
  return n;
}

static struct _cl_device_id aggregate;
static pthread_once_t aggregate_once = PTHREAD_ONCE_INIT;
static bool aggregate_made;

/* Made at the first question, the same step on every rank (ids are drawn alike). */
static void make_aggregate(void)
{
  cl_device_type type = tt_env()->aggregate;
  cl_uint n = tt_cluster_ndevices(), k = 0;
  if (!type || !n)
    return;
  cl_device_id *members = malloc(n * sizeof *members);
  if (!members)
    return;
  for (cl_uint i = 0; i < n; i++)
    if (tt_device_matches(tt_cluster_device(i), type))
      members[k++] = tt_cluster_device(i);
  if (!k) {
    TT_WARN("TUTTI_AGGREGATE: no device of that type in the job: no aggregate device");
    free(members);
    return;
  }
  aggregate = *members[0];
  tt_object_init(&aggregate.obj, TT_DEVICE, NULL);
  aggregate.type = members[0]->type & ~(cl_device_type)CL_DEVICE_TYPE_DEFAULT;
  aggregate.nmembers = k;
  aggregate.members = members;
  aggregate_made = true;
}

cl_device_id tt_aggregate_device(void)
{
  pthread_once(&aggregate_once, make_aggregate);
  return aggregate_made ? &aggregate : NULL;
}

cl_device_id tt_device_resolve(cl_device_id d)
{
  return d && d->members ? d->members[0] : d;
}

cl_uint tt_devices_expand(cl_uint n, const cl_device_id *in, cl_device_id **out)
{
  /* Handles are compared, never followed: the list is not checked yet. */
  cl_device_id agg = aggregate_made ? &aggregate : NULL;
  cl_uint total = 0;
  for (cl_uint i = 0; i < n; i++)
    total += agg && in[i] == agg ? agg->nmembers : 1;
  cl_device_id *list = malloc((total ? total : 1) * sizeof *list);
  if (!list)
    return 0;
  cl_uint k = 0;
  for (cl_uint i = 0; i < n; i++) {
    cl_uint m = agg && in[i] == agg ? agg->nmembers : 1;
    const cl_device_id *from = agg && in[i] == agg ? agg->members : &in[i];
    for (cl_uint j = 0; j < m; j++) {
      bool seen = false;
      for (cl_uint x = 0; x < k && !seen; x++)
        seen = list[x] == from[j];
      if (!seen)
        list[k++] = from[j];
    }
  }
  *out = list;
  return k;
}
