/* The aggregate device (TUTTI_AGGREGATE=gpu|cpu|all, doc/split.md): one more device, listed
 * first, standing for every device of its type in the job. A program that picks the first
 * device and launches annotated kernels on its queue has them split over all of them,
 * unchanged. Its queue is its first member's queue plus one queue per other member: reads,
 * writes, copies and maps run on the first member (the plan brings the bytes there), kernels
 * are split over all members when annotated, else run whole on the member holding most of
 * the bytes they write; markers, barriers and clFinish cover every member. */
#include "config.h"

#include "icd/icd.h"

#include <stdio.h>
#include <stdlib.h>

#include "runtime/base/env.h"
#include "runtime/command/plan.h"
#include "runtime/base/rangemap.h"


enum combine { COMBINE_SUM, COMBINE_MIN, COMBINE_MAX };

/* The members' answers to a numeric query of `size` bytes, summed, or their smallest or
 * largest. */
static cl_int members_combine(cl_device_id agg, cl_device_info param, size_t size,
                              enum combine how, cl_ulong *out)
{
  *out = 0;
  for (cl_uint i = 0; i < agg->nmembers; i++) {
    cl_ulong v = 0;
    cl_uint u = 0;
    cl_int err = tt_device_info(agg->members[i], param, size, size == sizeof u ? (void *)&u : &v,
                                    NULL);
    if (err != CL_SUCCESS)
      return err;
    if (size == sizeof u)
      v = u;
    if (how == COMBINE_SUM)
      *out += v;
    else if (i == 0 || (how == COMBINE_MAX ? v > *out : v < *out))
      *out = v;
  }
  return CL_SUCCESS;
}

cl_int tt_aggregate_device_info(cl_device_id agg, cl_device_info param_name,
                                size_t param_value_size, void *param_value,
                                size_t *param_value_size_ret)
{
  char name[64];
  size_t size;
  enum combine how;
  cl_int err;
  switch (param_name) {
  case CL_DEVICE_NAME:
    snprintf(name, sizeof name, "Tutti aggregate of %u devices", agg->nmembers);
    return TT_INFO_STR(name);
  /* The members' sums. */
  case CL_DEVICE_MAX_COMPUTE_UNITS:
    size = sizeof(cl_uint), how = COMBINE_SUM;
    break;
  case CL_DEVICE_GLOBAL_MEM_SIZE:
  /* A buffer larger than any member spreads over them (windows, runtime/memory/window.h). */
  case CL_DEVICE_MAX_MEM_ALLOC_SIZE:
    size = sizeof(cl_ulong), how = COMBINE_SUM;
    break;
  /* The members' smallest limits; alignment: the largest any member needs. */
  case CL_DEVICE_MAX_WORK_GROUP_SIZE:
  case CL_DEVICE_MAX_PARAMETER_SIZE:
  case CL_DEVICE_PROFILING_TIMER_RESOLUTION:
    size = sizeof(size_t), how = COMBINE_MIN;
    break;
  case CL_DEVICE_LOCAL_MEM_SIZE:
  case CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE:
  case CL_DEVICE_GLOBAL_MEM_CACHE_SIZE:
    size = sizeof(cl_ulong), how = COMBINE_MIN;
    break;
  case CL_DEVICE_MAX_CLOCK_FREQUENCY:
  case CL_DEVICE_MAX_CONSTANT_ARGS:
    size = sizeof(cl_uint), how = COMBINE_MIN;
    break;
  case CL_DEVICE_MEM_BASE_ADDR_ALIGN:
    size = sizeof(cl_uint), how = COMBINE_MAX;
    break;
  case CL_DEVICE_MAX_WORK_ITEM_SIZES: {
    size_t sizes[3] = {0, 0, 0};
    for (cl_uint i = 0; i < agg->nmembers; i++) {
      size_t s[3] = {0, 0, 0};
      if ((err = tt_device_info(agg->members[i], param_name, sizeof s, s, NULL)) != CL_SUCCESS)
        return err;
      for (int d = 0; d < 3; d++)
        sizes[d] = i == 0 || s[d] < sizes[d] ? s[d] : sizes[d];
    }
    return TT_INFO(sizes);
  }
  case CL_DEVICE_TUTTI_RANK: {
    cl_int none = -1; /* every member's rank runs it */
    return TT_INFO(none);
  }
  default:
    /* The first member's answer. */
    return tt_device_info(agg->members[0], param_name, param_value_size, param_value,
                              param_value_size_ret);
  }
  cl_ulong v;
  if ((err = members_combine(agg, param_name, size, how, &v)) != CL_SUCCESS)
    return err;
  if (size == sizeof(cl_uint)) {
    cl_uint u = (cl_uint)v;
    return TT_INFO(u);
  }
  if (size == sizeof(size_t) && sizeof(size_t) != sizeof(cl_ulong)) {
    size_t z = (size_t)v;
    return TT_INFO(z);
  }
  return TT_INFO(v);
}

cl_int tt_aggregate_queue_init(cl_command_queue q, cl_device_id agg,
                               cl_command_queue_properties props)
{
  q->members = calloc(agg->nmembers, sizeof *q->members);
  TT_RETURN_IF(!q->members, CL_OUT_OF_HOST_MEMORY);
  q->aggregate = agg;
  q->members[0] = q;
  q->nmembers = 1;
  cl_int err = CL_SUCCESS;
  for (cl_uint i = 1; i < agg->nmembers && err == CL_SUCCESS; i++) {
    q->members[i] = tt_queue_new(q->context, agg->members[i], NULL, props, &err);
    if (q->members[i])
      q->nmembers++;
  }
  return err;
}

void tt_aggregate_queue_free(cl_command_queue q)
{
  for (cl_uint i = 1; i < q->nmembers; i++)
    tt_queue_release(q->members[i]);
  free(q->members);
  q->members = NULL;
  q->nmembers = 0;
}

struct holding {
  cl_command_queue q;
  size_t *bytes; /* per member */
};

static int count_held(void *arg, size_t off, size_t len, tt_holders holders)
{
  struct holding *h = arg;
  for (cl_uint i = 0; i < h->q->nmembers; i++)
    if (tt_holders_has(holders, h->q->members[i]->domain))
      h->bytes[i] += len;
  return 0;
}

/* The member holding most of the bytes an unannotated kernel writes (the first on ties). */
static cl_uint best_member(cl_command_queue q, cl_kernel k)
{
  size_t *bytes = calloc(q->nmembers, sizeof *bytes);
  if (!bytes)
    return 0;
  struct holding h = {q, bytes};
  tt_plan_lock();
  pthread_mutex_lock(&k->obj.lock);
  for (cl_uint i = 0; i < k->nargs; i++) {
    const struct tt_kernel_arg *a = &k->args[i];
    if (a->kind != TT_ARG_MEM || !a->mem || a->is_const || (a->mem->flags & CL_MEM_READ_ONLY))
      continue;
    cl_mem root = a->mem->root;
    if (root->latest)
      tt_rangemap_walk(root->latest, a->mem->origin, a->mem->size, count_held, &h);
  }
  pthread_mutex_unlock(&k->obj.lock);
  tt_plan_unlock();
  cl_uint best = 0;
  for (cl_uint i = 1; i < q->nmembers; i++)
    if (bytes[i] > bytes[best])
      best = i;
  free(bytes);
  return best;
}

cl_int tt_aggregate_launch(cl_command_queue q, cl_kernel kernel, cl_uint work_dim,
                           const size_t *offset, const size_t *gws, const size_t *lws,
                           cl_uint nwait, const cl_event *wait, cl_event *event)
{
  TT_RETURN_IF(!tt_object_valid(kernel, TT_KERNEL), CL_INVALID_KERNEL);
  pthread_mutex_lock(&kernel->obj.lock);
  bool annotated = kernel->ann != NULL;
  pthread_mutex_unlock(&kernel->obj.lock);
  if (annotated)
    return tt_split_enqueue(q->nmembers, q->members, kernel, work_dim, offset, gws, lws, nwait,
                            wait, event);
  cl_uint m = best_member(q, kernel);
  return tt_enqueue_kernel(q->members[m], kernel, work_dim, offset, gws, lws, nwait, wait, event);
}
