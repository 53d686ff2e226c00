/* Devices as OpenCL sees them (runtime/job/devices.h). */
#include "config.h"

#include "runtime/job/devices.h"

#include <pthread.h>
#include <stdlib.h>

#include "runtime/base/env.h"
#include "runtime/base/log.h"

#include <CL/tutti.h>
#include <stdio.h>
#include <string.h>

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
    if (d->parent || !tt_device_matches(d, device_type))
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

/* --- answers to clGetDeviceInfo ------------------------------------------------------------ */

/* Extensions a device keeps through Tutti: those of the kernel language and of queries that
 * pass through unchanged. Sharing with graphics APIs and SVM are not offered. */
static const char *const kept_extensions[] = {
    "cl_khr_fp64", "cl_khr_fp16", "cl_khr_byte_addressable_store",
    "cl_khr_global_int32_base_atomics", "cl_khr_global_int32_extended_atomics",
    "cl_khr_local_int32_base_atomics", "cl_khr_local_int32_extended_atomics",
    "cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics",
    "cl_nv_device_attribute_query", "cl_nv_pragma_unroll", "cl_nv_compiler_options",
    "cl_amd_fp64",
};

static char *filtered_extensions(const char *all)
{
  char *out = calloc(1, strlen(all) + 1);
  if (!out)
    return NULL;
  const char *s = all;
  while (*s) {
    while (*s == ' ')
      s++;
    size_t n = strcspn(s, " ");
    for (size_t i = 0; n && i < sizeof kept_extensions / sizeof kept_extensions[0]; i++)
      if (strlen(kept_extensions[i]) == n && !strncmp(kept_extensions[i], s, n)) {
        if (*out)
          strcat(out, " ");
        strncat(out, s, n);
      }
    s += n;
  }
  return out;
}

/* "OpenCL 3.0 PoCL ..." -> "OpenCL 1.2 PoCL ..." (prefix "OpenCL " or "OpenCL C "). */
static char *version_1_2(const char *backend, const char *prefix)
{
  const char *rest = backend;
  size_t n = strlen(prefix);
  if (!strncmp(rest, prefix, n)) {
    rest += n;
    rest += strcspn(rest, " "); /* the backend's version number */
    rest += strspn(rest, " ");
  }
  char *out = malloc(n + 4 + strlen(rest) + 2);
  if (out)
    sprintf(out, "%s1.2%s%s", prefix, *rest ? " " : "", rest);
  return out;
}

static cl_int query_string(cl_device_id d, cl_device_info p, char **out)
{
  size_t sz = 0;
  cl_int err = tt_cluster_device_query(d, p, 0, NULL, &sz);
  if (err != CL_SUCCESS)
    return err;
  *out = calloc(1, sz + 1);
  if (!*out)
    return CL_OUT_OF_HOST_MEMORY;
  return tt_cluster_device_query(d, p, sz, *out, NULL);
}

/* Tutti's own queries of a device (CL/tutti.h): where it is and how it is reached. */
static cl_int tutti_info(cl_device_id device, cl_device_info param_name, size_t param_value_size,
                         void *param_value, size_t *param_value_size_ret)
{
  cl_int rank = device->rank;
  cl_bool actual = device->actual;
  switch (param_name) {
  case CL_DEVICE_TUTTI_RANK:
    return TT_INFO(rank);
  case CL_DEVICE_TUTTI_ACTUAL:
    return TT_INFO(actual);
  case CL_DEVICE_TUTTI_HOST:
    return TT_INFO_STR(device->host);
  case CL_DEVICE_TUTTI_BACKEND:
    return TT_INFO_STR(device->backend);
  case CL_DEVICE_TUTTI_BACKEND_PLATFORM:
    return TT_INFO_STR(device->backend_platform);
  default:
    return TT_INFO_STR(device->gpu_copies);
  }
}

cl_int tt_device_info(cl_device_id device, cl_device_info param_name, size_t param_value_size,
                      void *param_value, size_t *param_value_size_ret)
{
  if (device->members)
    return tt_aggregate_device_info(device, param_name, param_value_size, param_value,
                                    param_value_size_ret);
  cl_platform_id platform = &tt_platform;
  char *s = NULL;
  cl_int err;
  cl_device_type type = device->type & ~(cl_device_type)CL_DEVICE_TYPE_DEFAULT;
  switch (param_name) {
  case CL_DEVICE_TYPE:
    /* One type: CL_DEVICE_TYPE_DEFAULT is what clGetDeviceIDs is asked for, and answers
     * with the first device, not a type a device has. */
    return TT_INFO(type);
  case CL_DEVICE_VERSION:
  case CL_DEVICE_OPENCL_C_VERSION:
    /* The version Tutti offers, with the backend's own words after it. */
    err = query_string(device, param_name, &s);
    if (err == CL_SUCCESS) {
      char *v = version_1_2(s, param_name == CL_DEVICE_VERSION ? "OpenCL " : "OpenCL C ");
      err = v ? TT_INFO_STR(v) : CL_OUT_OF_HOST_MEMORY;
      free(v);
    }
    free(s);
    return err;
  case CL_DEVICE_PLATFORM:
    return TT_INFO(platform);
  case CL_DEVICE_PARENT_DEVICE:
  case CL_DEVICE_REFERENCE_COUNT:
  case CL_DEVICE_PARTITION_MAX_SUB_DEVICES:
  case CL_DEVICE_PARTITION_PROPERTIES:
  case CL_DEVICE_PARTITION_TYPE:
  case CL_DEVICE_PARTITION_AFFINITY_DOMAIN:
    return tt_devices_partition_info(device, param_name, param_value_size, param_value,
                                     param_value_size_ret);
  case CL_DEVICE_BUILT_IN_KERNELS:
    return TT_INFO_STR("");
  case CL_DEVICE_EXTENSIONS:
    err = query_string(device, param_name, &s);
    if (err == CL_SUCCESS) {
      char *f = filtered_extensions(s);
      err = f ? TT_INFO_STR(f) : CL_OUT_OF_HOST_MEMORY;
      free(f);
    }
    free(s);
    return err;
  case CL_DEVICE_DOUBLE_FP_CONFIG:
  case CL_DEVICE_HALF_FP_CONFIG: {
    /* OpenCL 1.2 allows CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT for single precision only
     * (PoCL reports it for double too). */
    cl_device_fp_config fp = 0;
    err = tt_cluster_device_query(device, param_name, sizeof fp, &fp, NULL);
    if (err != CL_SUCCESS)
      return err;
    fp &= ~(cl_device_fp_config)CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT;
    return TT_INFO(fp);
  }
  case CL_DEVICE_TUTTI_RANK:
  case CL_DEVICE_TUTTI_ACTUAL:
  case CL_DEVICE_TUTTI_HOST:
  case CL_DEVICE_TUTTI_BACKEND:
  case CL_DEVICE_TUTTI_BACKEND_PLATFORM:
  case CL_DEVICE_TUTTI_GPU_COPIES:
    return tutti_info(device, param_name, param_value_size, param_value, param_value_size_ret);
  default:
    /* Everything else is the backend's answer, unchanged. */
    return tt_cluster_device_query(device, param_name, param_value_size, param_value,
                           param_value_size_ret);
  }
}

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

/* What the aggregate device has not, of what its members have: images (they live on devices
 * of their own: doc/opencl.md), partitions, native kernels (its launches are split). */
static cl_int aggregate_lacks(cl_device_info param_name, size_t param_value_size,
                              void *param_value, size_t *param_value_size_ret)
{
  cl_bool no = CL_FALSE;
  size_t no_size = 0;
  cl_uint zero = 0;
  cl_device_partition_property none = 0;
  cl_device_exec_capabilities caps = CL_EXEC_KERNEL;
  switch (param_name) {
  case CL_DEVICE_IMAGE_SUPPORT:
    return TT_INFO(no);
  case CL_DEVICE_MAX_READ_IMAGE_ARGS:
  case CL_DEVICE_MAX_WRITE_IMAGE_ARGS:
  case CL_DEVICE_MAX_SAMPLERS:
  case CL_DEVICE_PARTITION_MAX_SUB_DEVICES:
    return TT_INFO(zero);
  case CL_DEVICE_PARTITION_PROPERTIES:
  case CL_DEVICE_PARTITION_TYPE:
    return TT_INFO(none);
  case CL_DEVICE_EXECUTION_CAPABILITIES:
    return TT_INFO(caps);
  default: /* the image sizes */
    return TT_INFO(no_size);
  }
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
  case CL_DEVICE_IMAGE_SUPPORT:
  case CL_DEVICE_IMAGE2D_MAX_WIDTH:
  case CL_DEVICE_IMAGE2D_MAX_HEIGHT:
  case CL_DEVICE_IMAGE3D_MAX_WIDTH:
  case CL_DEVICE_IMAGE3D_MAX_HEIGHT:
  case CL_DEVICE_IMAGE3D_MAX_DEPTH:
  case CL_DEVICE_IMAGE_MAX_BUFFER_SIZE:
  case CL_DEVICE_IMAGE_MAX_ARRAY_SIZE:
  case CL_DEVICE_MAX_READ_IMAGE_ARGS:
  case CL_DEVICE_MAX_WRITE_IMAGE_ARGS:
  case CL_DEVICE_MAX_SAMPLERS:
  case CL_DEVICE_PARTITION_MAX_SUB_DEVICES:
  case CL_DEVICE_PARTITION_PROPERTIES:
  case CL_DEVICE_PARTITION_TYPE:
  case CL_DEVICE_EXECUTION_CAPABILITIES:
    return aggregate_lacks(param_name, param_value_size, param_value, param_value_size_ret);
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
