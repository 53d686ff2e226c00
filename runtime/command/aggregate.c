/* The aggregate device (TUTTI_AGGREGATE=gpu|cpu|all, doc/split.md): one more device, listed
 * first, standing for every device of its type in the job. A program that picks the first
 * device has its kernels split over all of them, unchanged: by their annotations, written
 * or derived from their code. Its queue is its first member's queue plus one queue per other member: reads,
 * writes, copies and maps run on the first member (the plan brings the bytes there), kernels
 * are split over all members when annotated (or derived), else run whole on the member
 * holding most of the bytes they write; markers, barriers and clFinish cover every member. */
#include "config.h"

#include "runtime/command/compound.h"

#include <stdio.h>
#include <stdlib.h>

#include "runtime/base/env.h"
#include "runtime/command/coherence.h"
#include "runtime/base/rangemap.h"
#include "runtime/job/stats.h"



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
  /* Without a written annotation, one derived from the kernel's code (TUTTI_AUTO_SPLIT). */
  tt_split_kernel_derive(kernel);
  pthread_mutex_lock(&kernel->obj.lock);
  bool annotated = kernel->ann != NULL;
  pthread_mutex_unlock(&kernel->obj.lock);
  if (!annotated)
    tt_stats_split_launch(kernel->name, 0);
  if (annotated)
    return tt_split_enqueue(q->nmembers, q->members, kernel, work_dim, offset, gws, lws, nwait,
                            wait, event);
  cl_uint m = best_member(q, kernel);
  return tt_enqueue_kernel(q->members[m], kernel, work_dim, offset, gws, lws, nwait, wait, event);
}
