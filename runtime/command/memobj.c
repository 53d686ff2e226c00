/* Buffer objects (runtime/command/memobj.h): what clCreateBuffer, clCreateSubBuffer,
 * clSetMemObjectDestructorCallback and the last release do once icd/mem.c checked their
 * arguments. A buffer has one native buffer per memory domain of its context (or windows,
 * runtime/memory/window.h); which of them hold the newest bytes of each range is the plan's
 * business (runtime/command/coherence.h). In runtime/command/ because forgetting a buffer's
 * ranges is the plan's. */
#include "config.h"

#include "runtime/command/memobj.h"

#include <stdlib.h>

#include "runtime/base/backend.h"
#include "runtime/base/log.h"
#include "runtime/base/rangemap.h"
#include "runtime/command/coherence.h"
#include "runtime/job/cluster.h"
#include "runtime/memory/window.h"
#include "runtime/order/order.h"

struct tt_destructor {
  void (CL_CALLBACK *fn)(cl_mem, void *);
  void *data;
  struct tt_destructor *next;
};

/* The program's destructor callbacks of a buffer that is going away: they run, newest
 * first, once every native buffer is gone too (only then is host memory given with
 * CL_MEM_USE_HOST_PTR the program's again). Every rank runs them, with or without native
 * buffers of its own. */
struct destructor_call {
  struct tt_destructor *list;
  cl_mem mem;          /* the handle the program knows (freed by the time they run) */
  atomic_uint pending; /* native buffers still alive, plus one for destroy_mem */
};

static void destructor_step(struct destructor_call *c)
{
  if (atomic_fetch_sub(&c->pending, 1) != 1)
    return;
  while (c->list) {
    struct tt_destructor *d = c->list;
    c->list = d->next;
    d->fn(c->mem, d->data);
    free(d);
  }
  free(c);
}

static void CL_CALLBACK native_destructor(cl_mem native, void *data)
{
  destructor_step(data);
}

void tt_buffer_dist_free(cl_mem m)
{
  if (m->dist)
    free(m->dist->devices);
  free(m->dist);
  m->dist = NULL;
}

static void destroy_mem(struct tt_object *o)
{
  cl_mem m = (cl_mem)o;
  if (m->root == m) {
    tt_plan_lock();
    tt_coherence_forget(m);
    tt_plan_unlock();
    tt_buffer_dist_free(m);
  }
  /* Every native buffer: one per domain, or a windowed buffer's windows. */
  cl_mem *natives = NULL;
  size_t nn = 0;
  if (m->root == m) {
    tt_plan_lock();
    tt_window_take_all(m, &natives, &nn);
    tt_plan_unlock();
  } else {
    atomic_fetch_sub(&m->root->nsubs, 1);
  }
  if (!natives && m->native && (natives = malloc(m->context->ndomains * sizeof *natives)))
    for (cl_uint i = 0; i < m->context->ndomains; i++)
      if (m->native[i])
        natives[nn++] = m->native[i];
  struct destructor_call *calls = m->destructors ? calloc(1, sizeof *calls) : NULL;
  if (calls) {
    calls->list = m->destructors;
    calls->mem = m;
    m->destructors = NULL;
    atomic_init(&calls->pending, (cl_uint)nn + 1);
    for (size_t i = 0; i < nn; i++)
      if (TT_NATIVE_DISPATCH(natives[i])->clSetMemObjectDestructorCallback(
              natives[i], native_destructor, calls) != CL_SUCCESS)
        destructor_step(calls);
  }
  for (size_t i = 0; i < nn; i++)
    TT_NATIVE_DISPATCH(natives[i])->clReleaseMemObject(natives[i]);
  free(natives);
  if (calls)
    destructor_step(calls);
  while (m->destructors) { /* out of memory above: they cannot run */
    struct tt_destructor *d = m->destructors;
    m->destructors = d->next;
    free(d);
  }
  while (m->maps) {
    struct tt_map_record *r = m->maps;
    m->maps = r->next;
    free(r);
  }
  free(m->native);
  free(m->image);
  free(m->direct); /* the memory itself goes with the backend's buffers (free_direct) */
  if (m->parent)
    TT_RELEASE(m->parent);
  TT_RELEASE(m->context);
  free(m);
}

cl_mem tt_mem_alloc(cl_context context, cl_mem_flags flags, size_t size)
{
  cl_mem m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  m->native = calloc(context->ndomains, sizeof *m->native);
  if (!m->native) {
    free(m);
    return NULL;
  }
  tt_object_init(&m->obj, TT_MEM, destroy_mem);
  m->context = context;
  TT_RETAIN(context);
  m->flags = flags;
  m->size = size;
  m->root = m;
  m->attached = TT_NOT_ATTACHED;
  return m;
}

cl_mem tt_buffer_new(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr,
                     bool spread, cl_int *errcode_ret)
{
  cl_int err = CL_SUCCESS;
  cl_mem m = tt_mem_alloc(context, flags ? flags : CL_MEM_READ_WRITE, size);
  TT_GOTO_IF(!m, CL_OUT_OF_HOST_MEMORY);
  if (flags & CL_MEM_USE_HOST_PTR)
    m->host_ptr = host_ptr;
  m->written = host_ptr != NULL;
  /* Every domain starts with the same bytes (the host's, or undefined ones). */
  m->latest = tt_rangemap_new(size, context->ndomains, 1);
  TT_GOTO_IF(!m->latest, CL_OUT_OF_HOST_MEMORY);
  /* With budgets of device memory (TUTTI_DEVICE_MEM) a buffer is windowed from the start too,
   * so that it can leave the device, and so is one too large for CUDA memory among GPUs that
   * copy by their copy engines; the program's bytes wait in this rank's memory. */
  if (!spread && !(spread = tt_window_spill_new(m)) && (spread = tt_window_cuda_new(m)))
    TT_LOG(TT_LOG_MM, "buffer #%llu of %zu bytes: windowed, too large for CUDA memory",
           (unsigned long long)m->obj.id, size);
  if (spread) {
    tt_plan_lock();
    if (flags & CL_MEM_COPY_HOST_PTR)
      err = tt_window_enable_copy(m, host_ptr);
    else
      tt_window_enable(m);
    tt_plan_unlock();
    TT_GOTO_IF(err != CL_SUCCESS || !tt_windowed(m), CL_OUT_OF_HOST_MEMORY);
  }
  for (cl_uint i = 0; i < context->ndomains && !spread; i++) {
    struct tt_domain *dm = &context->domains[i];
    if (!dm->actual)
      continue;
    void *host = NULL;
    m->native[i] = tt_window_native_new(context, i, m, flags, size, host_ptr, &host, &err);
    if (host) {
      TT_GOTO_IF(!m->direct && !(m->direct = calloc(context->ndomains, sizeof *m->direct)),
                 CL_OUT_OF_HOST_MEMORY);
      m->direct[i] = host;
    }
    if (!m->native[i]) {
      TT_LOG(TT_LOG_ERR, "clCreateBuffer: %zu bytes on %s: %s", size, dm->bp->short_name,
             tt_error_name(err));
      if (err == CL_SUCCESS)
        err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
      goto out;
    }
  }
out:
  tt_set_err(errcode_ret, err);
  if (err != CL_SUCCESS && m) {
    TT_RELEASE(m);
    m = NULL;
  }
  return m;
}

cl_mem tt_sub_buffer_new(cl_mem buffer, cl_mem_flags flags, const cl_buffer_region *r,
                         cl_int *errcode_ret)
{
  cl_int err = CL_SUCCESS;
  cl_mem m = NULL;
  cl_context ctx = buffer->context;
  /* Unspecified access and host-access flags are inherited from buffer. */
  if (!(flags & TT_MEM_ACCESS_FLAGS))
    flags |= buffer->flags & TT_MEM_ACCESS_FLAGS;
  if (!(flags & TT_MEM_HOST_ACCESS_FLAGS))
    flags |= buffer->flags & TT_MEM_HOST_ACCESS_FLAGS;
  flags |= buffer->flags & TT_MEM_HOST_PTR_FLAGS;
  m = tt_mem_alloc(ctx, flags, r->size);
  TT_GOTO_IF(!m, CL_OUT_OF_HOST_MEMORY);
  m->parent = buffer;
  TT_RETAIN(buffer);
  m->root = buffer;
  m->origin = r->origin;
  if (buffer->host_ptr)
    m->host_ptr = (char *)buffer->host_ptr + r->origin;
  cl_mem_flags native_flags = flags & ~(cl_mem_flags)TT_MEM_HOST_PTR_FLAGS;
  atomic_fetch_add(&buffer->nsubs, 1);
  for (cl_uint i = 0; i < ctx->ndomains; i++) {
    struct tt_domain *dm = &ctx->domains[i];
    /* A windowed buffer's sub-buffers come from a window over all its bytes (which stays
     * while they live), placed in every domain alike (runtime/memory/window.h). */
    struct tt_place whole = {buffer->native[i], 0, NULL, 0};
    if (tt_windowed(buffer)) {
      tt_plan_lock();
      err = tt_window_place(buffer, i, 0, buffer->size, &whole);
      tt_plan_unlock();
      if (err != CL_SUCCESS)
        goto out;
    }
    if (!dm->actual)
      continue;
    m->native[i] = dm->bp->d->clCreateSubBuffer(whole.native, native_flags,
                                                CL_BUFFER_CREATE_TYPE_REGION, r, &err);
    if (!m->native[i]) {
      /* A backend may refuse an origin that another device of the context accepts: the
       * sub-buffer then cannot be used on that backend's devices. */
      TT_LOG(TT_LOG_WARN, "clCreateSubBuffer: %s refused the region: %s", dm->bp->short_name,
             tt_error_name(err));
      if (ctx->ndomains == 1)
        goto out;
      err = CL_SUCCESS;
    }
  }
out:
  tt_set_err(errcode_ret, err);
  if (err != CL_SUCCESS && m) {
    TT_RELEASE(m);
    m = NULL;
  }
  return m;
}

cl_int tt_buffer_destructor_add(cl_mem memobj, void (CL_CALLBACK *pfn_notify)(cl_mem, void *),
                                void *user_data)
{
  struct tt_destructor *d = calloc(1, sizeof *d);
  TT_RETURN_IF(!d, CL_OUT_OF_HOST_MEMORY);
  d->fn = pfn_notify;
  d->data = user_data;
  /* "The registered user callback functions are called in the reverse order in which they
   * were registered": newest first. */
  pthread_mutex_lock(&memobj->obj.lock);
  d->next = memobj->destructors;
  memobj->destructors = d;
  pthread_mutex_unlock(&memobj->obj.lock);
  return CL_SUCCESS;
}

/* clSetBufferDistributionTUTTI with its checks (a buffer's distribution over devices:
 * doc/split.md): the buffer then holds windows of its chunks on those devices. */
cl_int tt_buffer_distribute(cl_mem buffer, const cl_tutti_distribution *d)
{
  /* CL_INVALID_MEM_OBJECT if buffer is not a valid buffer object, or is a sub-buffer. */
  TT_RETURN_IF(!tt_object_valid(buffer, TT_MEM) || buffer->parent, CL_INVALID_MEM_OBJECT);
  if (!d) {
    tt_plan_lock();
    tt_buffer_dist_free(buffer);
    tt_plan_unlock();
    return CL_SUCCESS;
  }
  /* CL_INVALID_VALUE for an unknown kind, ndims outside 1..3, a zero element size, extents
   * whose product times elem_size is not the buffer's size, a zero CYCLIC chunk, or devices
   * NULL with num_devices > 0. */
  TT_RETURN_IF(d->kind != CL_TUTTI_DIST_BLOCK && d->kind != CL_TUTTI_DIST_CYCLIC &&
                   d->kind != CL_TUTTI_DIST_REPLICATED,
               CL_INVALID_VALUE);
  TT_RETURN_IF(d->ndims < 1 || d->ndims > 3 || d->elem_size == 0, CL_INVALID_VALUE);
  size_t bytes = d->elem_size;
  for (cl_uint i = 0; i < d->ndims; i++) {
    TT_RETURN_IF(d->extents[i] == 0 || bytes > SIZE_MAX / d->extents[i], CL_INVALID_VALUE);
    bytes *= d->extents[i];
    TT_RETURN_IF(d->kind == CL_TUTTI_DIST_CYCLIC && d->chunk[i] == 0, CL_INVALID_VALUE);
  }
  TT_RETURN_IF(bytes != buffer->size, CL_INVALID_VALUE);
  TT_RETURN_IF(d->num_devices > 0 && d->devices == NULL, CL_INVALID_VALUE);
  /* CL_INVALID_DEVICE if a device is not a device of the buffer's context. */
  TT_RETURN_IF(!tt_context_has_devices(buffer->context, d->num_devices, d->devices),
               CL_INVALID_DEVICE);
  struct tt_distribution *t = calloc(1, sizeof *t);
  cl_uint n = d->num_devices ? d->num_devices : buffer->context->ndevices;
  cl_device_id *devs = malloc(n * sizeof *devs);
  if (!t || !devs) {
    free(t);
    free(devs);
    return CL_OUT_OF_HOST_MEMORY;
  }
  memcpy(devs, d->num_devices ? d->devices : buffer->context->devices, n * sizeof *devs);
  *t = (struct tt_distribution){d->kind, d->ndims, d->elem_size, {0}, {0}, n, devs};
  for (cl_uint i = 0; i < d->ndims; i++) {
    t->extents[i] = d->extents[i];
    t->chunk[i] = d->chunk[i];
  }
  tt_plan_lock();
  tt_buffer_dist_free(buffer);
  buffer->dist = t;
  /* A device then holds windows of it, not all of it (when it holds nothing yet). */
  tt_window_enable(buffer);
  tt_plan_unlock();
  return CL_SUCCESS;
}
