/* The memory of a domain (runtime/memory/domain.h). */
#include "config.h"

#include "runtime/memory/domain.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/base/env.h"
#include "runtime/base/log.h"

static bool device_memory(cl_context ctx, cl_uint dom)
{
  struct tt_domain *dm = &ctx->domains[dom];
  if (tt_env()->staging >= 0 && dm->host_unified < 0)
    dm->host_unified = !tt_env()->staging;
  if (dm->host_unified < 0) {
    cl_bool unified = CL_TRUE;
    dm->bp->d->clGetDeviceInfo(dm->first_device->native, CL_DEVICE_HOST_UNIFIED_MEMORY,
                               sizeof unified, &unified, NULL);
    dm->host_unified = unified != CL_FALSE;
  }
  return !dm->host_unified;
}

bool tt_domain_device_memory(cl_context ctx, cl_uint dom)
{
  return device_memory(ctx, dom);
}

/* Does the backend run its commands on the very host memory of a CL_MEM_USE_HOST_PTR
 * buffer? A fill must show in that memory and a store there in a read, with no map between. */
static bool probe_direct(struct tt_domain *dm)
{
  const size_t n = 4096;
  unsigned char *mem = aligned_alloc(n, n), back[64];
  cl_int err = mem ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
  cl_command_queue q = NULL;
  cl_mem b = NULL;
  bool ok = false;
  if (mem)
    q = dm->bp->d->clCreateCommandQueue(dm->native, dm->first_device->native, 0, &err);
  if (q)
    b = dm->bp->d->clCreateBuffer(dm->native, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, n, mem,
                                  &err);
  if (b) {
    const unsigned char pattern = 0x5a;
    memset(mem, 0, n);
    ok = dm->bp->d->clEnqueueFillBuffer(q, b, &pattern, 1, 0, n, 0, NULL, NULL) == CL_SUCCESS &&
         dm->bp->d->clFinish(q) == CL_SUCCESS;
    for (size_t i = 0; ok && i < n; i++)
      ok = mem[i] == pattern;
    memset(mem + 64, 0xa5, sizeof back);
    ok = ok && dm->bp->d->clEnqueueReadBuffer(q, b, CL_TRUE, 64, sizeof back, back, 0, NULL,
                                              NULL) == CL_SUCCESS;
    for (size_t i = 0; ok && i < sizeof back; i++)
      ok = back[i] == 0xa5;
    dm->bp->d->clReleaseMemObject(b);
    dm->bp->d->clFinish(q);
  }
  if (q)
    dm->bp->d->clReleaseCommandQueue(q);
  /* The backend may keep the memory until its own release completes: one page, kept. */
  if (!b)
    free(mem);
  TT_LOG(TT_LOG_MM, "%s: buffers %s in host memory of Tutti's (%s)", dm->bp->short_name,
         ok ? "live" : "do not live", b ? "probed" : tt_error_name(err));
  return ok;
}

bool tt_domain_direct_memory(cl_context ctx, cl_uint dom)
{
  struct tt_domain *dm = &ctx->domains[dom];
  if (dm->direct >= 0)
    return dm->direct;
  static pthread_mutex_t probing = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&probing);
  if (dm->direct < 0) {
    bool several = false;
    for (cl_uint i = 0; i < ctx->ndomains; i++)
      several |= !ctx->domains[i].actual;
    dm->direct = dm->actual && several && tt_env()->staging < 0 && !device_memory(ctx, dom) &&
                 probe_direct(dm);
  }
  pthread_mutex_unlock(&probing);
  return dm->direct;
}

/* len bytes of the domain's pinned host memory: a CL_MEM_ALLOC_HOST_PTR buffer (*buffer), mapped
 * on the unmaps' queue, behind which nothing ever waits (the internal queue may hold commands
 * waiting for other ranks). NULL with *err on failure. */
void *tt_domain_pinned_map(struct tt_domain *dm, size_t len, cl_mem *buffer, cl_int *err)
{
  *buffer = NULL;
  *err = tt_order_queue_make(dm, &dm->unmaps);
  cl_mem b = *err == CL_SUCCESS
                 ? dm->bp->d->clCreateBuffer(dm->native, CL_MEM_ALLOC_HOST_PTR, len, NULL, err)
                 : NULL;
  void *p = b ? dm->bp->d->clEnqueueMapBuffer(dm->unmaps->native, b, CL_TRUE,
                                              CL_MAP_READ | CL_MAP_WRITE, 0, len, 0, NULL, NULL,
                                              err)
              : NULL;
  if (!p && b)
    dm->bp->d->clReleaseMemObject(b);
  if (p)
    *buffer = b;
  return p;
}

void *tt_domain_pinned_new(cl_context ctx, cl_uint dom, size_t len, cl_mem *buffer)
{
  struct tt_domain *dm = &ctx->domains[dom];
  *buffer = NULL;
  if (!device_memory(ctx, dom))
    return NULL;
  cl_int err;
  void *p = tt_domain_pinned_map(dm, len, buffer, &err);
  if (!p)
    TT_LOG(TT_LOG_MM, "no pinned memory of %zu bytes on %s: %s", len, dm->bp->short_name,
           tt_error_name(err));
  return p;
}

void tt_domain_pinned_free(struct tt_domain *dm, cl_mem buffer, void *p)
{
  if (dm->unmaps)
    dm->bp->d->clEnqueueUnmapMemObject(dm->unmaps->native, buffer, p, 0, NULL, NULL);
  dm->bp->d->clReleaseMemObject(buffer);
}

