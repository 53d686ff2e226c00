/* Contexts (runtime/program/program.h). A context holds one native context per memory domain: each
 * backend platform among its devices. */
#include "config.h"

#include "runtime/program/program.h"

#include "runtime/base/backend.h"
#include "runtime/base/log.h"
#include "runtime/job/cluster.h"
#include "runtime/job/cluster_start.h"
#include "runtime/job/devices.h"


#include <pthread.h>
#include <stdlib.h>
#include <strings.h>

#include "runtime/memory/domain.h"
#include "runtime/transfer/transfer.h"

/* Native contexts. NVIDIA's clReleaseContext (driver 580) can wait forever in a rank that
 * received bytes from another rank into its GPU, with nothing of Tutti's left in that
 * context (status.md); left alive, the process exits. So a native context of the backends
 * TUTTI_KEEP_CONTEXTS names (default NVIDIA's) is kept when its context goes and taken again
 * by the next context of the same devices and properties: at most as many as a program had
 * alive at once, never released. Other backends' are made and released with their contexts.
 * The backend's error callback reaches the context that holds the native one now. */
struct native_ctx {
  struct tt_backend_platform *bp;
  bool kept;        /* kept when its context goes (not over sub-devices: theirs go with them) */
  cl_uint ndevices;
  cl_device_id devices[64];
  cl_context_properties *props; /* as passed to the backend, terminated by 0 */
  cl_context native;
  cl_context owner; /* NULL while kept (guarded by natives_lock) */
  struct native_ctx *next;
};
static pthread_mutex_t natives_lock = PTHREAD_MUTEX_INITIALIZER;
static struct native_ctx *kept_natives;

static bool keeps_contexts(const struct tt_backend_platform *bp)
{
  const char *list = tt_env()->keep_contexts ? tt_env()->keep_contexts : "nvidia";
  return strcasecmp(list, "none") != 0 && tt_backend_selected(list, bp->name, bp->short_name);
}

static size_t props_len(const cl_context_properties *p)
{
  size_t n = 0;
  while (p[n])
    n += 2;
  return n + 1;
}

static void CL_CALLBACK native_notify(const char *errinfo, const void *private_info, size_t cb,
                                      void *user_data)
{
  struct native_ctx *nc = user_data;
  pthread_mutex_lock(&natives_lock);
  cl_context c = nc->owner;
  pthread_mutex_unlock(&natives_lock);
  if (c && c->notify)
    c->notify(errinfo, private_info, cb, c->notify_data);
}

/* A native context of bp over devices for c: a kept one that matches, else a new one. */
static struct native_ctx *native_take(cl_context c, struct tt_backend_platform *bp, cl_uint n,
                                      const cl_device_id *devices, bool subs,
                                      cl_context_properties *props, cl_int *err)
{
  size_t np = props_len(props);
  pthread_mutex_lock(&natives_lock);
  for (struct native_ctx *k = kept_natives; k; k = k->next)
    if (!k->owner && k->bp == bp && k->ndevices == n &&
        !memcmp(k->devices, devices, n * sizeof *devices) && props_len(k->props) == np &&
        !memcmp(k->props, props, np * sizeof *props)) {
      k->owner = c;
      pthread_mutex_unlock(&natives_lock);
      free(props);
      TT_LOG(TT_LOG_BACKEND, "clCreateContext: %s's native context of %u device(s) taken again",
             bp->short_name, n);
      return k;
    }
  pthread_mutex_unlock(&natives_lock);
  struct native_ctx *nc = calloc(1, sizeof *nc);
  if (!nc) {
    free(props);
    *err = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  *nc = (struct native_ctx){bp, keeps_contexts(bp) && !subs, n, {0}, props, NULL, c, NULL};
  memcpy(nc->devices, devices, n * sizeof *devices);
  nc->native = bp->d->clCreateContext(props, n, devices, native_notify, nc, err);
  if (!nc->native) {
    free(props);
    free(nc);
    return NULL;
  }
  if (nc->kept) {
    pthread_mutex_lock(&natives_lock);
    nc->next = kept_natives;
    kept_natives = nc;
    pthread_mutex_unlock(&natives_lock);
  }
  return nc;
}

static void native_put(struct native_ctx *nc)
{
  if (nc->kept) {
    pthread_mutex_lock(&natives_lock);
    nc->owner = NULL;
    pthread_mutex_unlock(&natives_lock);
    return;
  }
  nc->bp->d->clReleaseContext(nc->native);
  free(nc->props);
  free(nc);
}

static void destroy_context(struct tt_object *o)
{
  cl_context c = (cl_context)o;
  cl_program reduce = atomic_load(&c->reduce);
  if (reduce)
    TT_RELEASE(reduce);
  for (cl_uint i = 0; i < c->ndomains; i++) {
    struct tt_domain *dm = &c->domains[i];
    if (!dm->actual)
      continue;
    tt_transfer_domain_release(dm);
    if (dm->native_ctx)
      native_put(dm->native_ctx);
  }
  free(c->domains);
  free(c->devices);
  free(c->user_devices);
  free(c->props);
  free(c);
}

/* Checks properties; copies them into c. */
static cl_int take_properties(cl_context c, const cl_context_properties *props)
{
  if (!props)
    return CL_SUCCESS;
  size_t n = 0;
  bool seen_platform = false, seen_sync = false;
  for (; props[n]; n += 2) {
    switch (props[n]) {
    case CL_CONTEXT_PLATFORM:
      /* CL_INVALID_PROPERTY if the same property name is specified more than once. */
      TT_RETURN_IF(seen_platform, CL_INVALID_PROPERTY);
      seen_platform = true;
      /* CL_INVALID_PLATFORM if platform value specified in properties is not a valid
       * platform. */
      TT_RETURN_IF((cl_platform_id)props[n + 1] != &tt_platform, CL_INVALID_PLATFORM);
      break;
    case CL_CONTEXT_INTEROP_USER_SYNC:
      TT_RETURN_IF(seen_sync, CL_INVALID_PROPERTY);
      seen_sync = true;
      break;
    default:
      /* CL_INVALID_PROPERTY if context property name in properties is not a supported
       * property name. */
      TT_RETURN_IF(1, CL_INVALID_PROPERTY);
    }
  }
  c->nprops = n + 1;
  c->props = malloc(c->nprops * sizeof *c->props);
  if (!c->props)
    return CL_OUT_OF_HOST_MEMORY;
  memcpy(c->props, props, c->nprops * sizeof *c->props);
  return CL_SUCCESS;
}

/* Native properties for a domain: the same list with the backend's platform. */
static cl_context_properties *native_properties(cl_context c, struct tt_backend_platform *bp)
{
  /* The platform pair, the program's other pairs and the terminator. */
  cl_context_properties *p = malloc((c->nprops + 3) * sizeof *p);
  if (!p)
    return NULL;
  size_t w = 0;
  p[w++] = CL_CONTEXT_PLATFORM;
  p[w++] = (cl_context_properties)bp->native;
  for (size_t i = 0; c->props && c->props[i]; i += 2)
    if (c->props[i] != CL_CONTEXT_PLATFORM) {
      p[w++] = c->props[i];
      p[w++] = c->props[i + 1];
    }
  p[w] = 0;
  return p;
}

cl_context tt_context_new(const cl_context_properties *properties, cl_uint num_devices,
                               const cl_device_id *devices,
                               void (CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *),
                               void *user_data, cl_int *errcode_ret)
{
  /* The aggregate device stands for its members; the program's list is kept for queries. */
  cl_device_id *real = NULL, *user = malloc(num_devices * sizeof *user), agg = NULL;
  cl_uint nreal = tt_devices_expand(num_devices, devices, &real);
  if (!real || !user) {
    free(real);
    free(user);
    tt_set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
    return NULL;
  }
  memcpy(user, devices, num_devices * sizeof *user);
  for (cl_uint i = 0; i < num_devices; i++)
    if (devices[i] == tt_aggregate_device())
      agg = devices[i];
  cl_uint nuser = num_devices;
  num_devices = nreal;
  devices = real;
  cl_int err = CL_SUCCESS;
  cl_context c = calloc(1, sizeof *c);
  TT_GOTO_IF(!c, CL_OUT_OF_HOST_MEMORY);
  tt_object_init(&c->obj, TT_CONTEXT, destroy_context);
  c->notify = pfn_notify;
  c->notify_data = user_data;
  c->aggregate = agg;
  c->user_devices = user;
  c->nuser_devices = nuser;
  user = NULL;
  err = take_properties(c, properties);
  if (err != CL_SUCCESS)
    goto out;
  c->devices = malloc(num_devices * sizeof *c->devices);
  c->domains = calloc(num_devices, sizeof *c->domains);
  TT_GOTO_IF(!c->devices || !c->domains, CL_OUT_OF_HOST_MEMORY);
  /* The same device twice is kept once: native contexts refuse duplicates. */
  for (cl_uint i = 0; i < num_devices; i++) {
    if (tt_context_has_device(c, devices[i]))
      continue;
    /* A rank other than its node's first opens its backends at its first context. */
    err = tt_cluster_device_load(devices[i]);
    TT_GOTO_IF(err != CL_SUCCESS, err);
    c->devices[c->ndevices++] = devices[i];
    if (tt_context_domain_of(c, devices[i]) == c->ndomains) {
      struct tt_domain *dm = &c->domains[c->ndomains++];
      dm->rank = devices[i]->rank;
      dm->bp_index = devices[i]->bp_index;
      dm->actual = devices[i]->actual;
      dm->bp = devices[i]->bp;
      dm->first_device = devices[i];
      dm->cuda = devices[i]->cuda;
      dm->host_unified = -1;
      dm->direct = -1;
    }
  }
  for (cl_uint k = 0; k < c->ndomains; k++) {
    struct tt_domain *dm = &c->domains[k];
    if (!dm->actual)
      continue;
    cl_device_id nd[64];
    cl_uint n = 0;
    bool subs = false;
    char list[256] = ""; /* their indices, for the log */
    for (cl_uint i = 0; i < c->ndevices && n < 64; i++)
      if (tt_context_domain_of(c, c->devices[i]) == k) {
        subs |= c->devices[i]->parent != NULL;
        nd[n++] = c->devices[i]->native;
        if (strlen(list) < sizeof list - 16)
          snprintf(list + strlen(list), sizeof list - strlen(list), " %u", c->devices[i]->index);
      }
    TT_LOG(TT_LOG_BACKEND, "context #%llu: memory domain %u, device(s)%s (%s): %s%s",
           (unsigned long long)c->obj.id, k, list, dm->bp->short_name,
           tt_domain_own(dm->first_device) ? "a domain of its own: "
                                           : "one native context for the backend's devices",
           tt_domain_own(dm->first_device) ? tt_domain_own(dm->first_device) : "");
    cl_context_properties *np = native_properties(c, dm->bp);
    TT_GOTO_IF(!np, CL_OUT_OF_HOST_MEMORY);
    dm->native_ctx = native_take(c, dm->bp, n, nd, subs, np, &err);
    dm->native = dm->native_ctx ? dm->native_ctx->native : NULL;
    if (!dm->native) {
      TT_LOG(TT_LOG_ERR, "clCreateContext: the %s backend refused: %s", dm->bp->short_name,
             tt_error_name(err));
      if (err == CL_SUCCESS)
        err = CL_OUT_OF_RESOURCES;
      goto out;
    }
  }
out:
  free(real);
  free(user);
  tt_set_err(errcode_ret, err);
  if (err != CL_SUCCESS && c) {
    TT_RELEASE(c);
    return NULL;
  }
  return c;
}


