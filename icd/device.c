/* Device entry points: the global device table seen through OpenCL. */
#include "config.h"

#include "icd/icd.h"

#include <stdlib.h>

#include <CL/tutti.h>

cl_int CL_API_CALL tt_clGetDeviceIDs(cl_platform_id platform, cl_device_type device_type,
                                     cl_uint num_entries, cl_device_id *devices,
                                     cl_uint *num_devices)
{
  tt_cluster_init();
  /* CL_INVALID_PLATFORM if platform is not a valid platform. */
  TT_RETURN_IF(platform && platform != &tt_platform, CL_INVALID_PLATFORM);
  /* CL_INVALID_DEVICE_TYPE if device_type is not a valid value. */
  TT_RETURN_IF(!tt_device_type_valid(device_type), CL_INVALID_DEVICE_TYPE);
  /* CL_INVALID_VALUE if num_entries is equal to zero and devices is not NULL or if both
   * num_devices and devices are NULL. */
  TT_RETURN_IF(num_entries == 0 && devices != NULL, CL_INVALID_VALUE);
  TT_RETURN_IF(num_devices == NULL && devices == NULL, CL_INVALID_VALUE);
  cl_uint n = tt_devices_of_type(device_type, num_entries, devices);
  /* CL_DEVICE_NOT_FOUND if no OpenCL devices that matched device_type were found. */
  TT_RETURN_IF(n == 0, CL_DEVICE_NOT_FOUND);
  if (num_devices)
    *num_devices = n;
  return CL_SUCCESS;
}

/* Extensions a device keeps through Tutti: those of the kernel language and of queries that
 * pass through unchanged. Sharing with graphics APIs, images and SVM are not offered. */
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

cl_int CL_API_CALL tt_clGetDeviceInfo(cl_device_id device, cl_device_info param_name,
                                      size_t param_value_size, void *param_value,
                                      size_t *param_value_size_ret)
{
  /* CL_INVALID_DEVICE if device is not valid. */
  TT_RETURN_IF(!tt_object_valid(device, TT_DEVICE), CL_INVALID_DEVICE);
  return tt_device_info(device, param_name, param_value_size, param_value,
                        param_value_size_ret);
}

cl_int tt_device_info(cl_device_id device, cl_device_info param_name, size_t param_value_size,
                      void *param_value, size_t *param_value_size_ret)
{
  if (device->members)
    return tt_aggregate_device_info(device, param_name, param_value_size, param_value,
                                    param_value_size_ret);
  cl_bool no = CL_FALSE;
  cl_uint zero = 0;
  cl_device_partition_property none = 0;
  cl_device_id null_device = NULL;
  cl_platform_id platform = &tt_platform;
  cl_int rank = device->rank;
  cl_bool actual = device->actual;
  char *s = NULL;
  cl_int err;
  size_t no_size = 0;
  cl_device_type type = device->type & ~(cl_device_type)CL_DEVICE_TYPE_DEFAULT;
  switch (param_name) {
  case CL_DEVICE_TYPE:
    /* One type: CL_DEVICE_TYPE_DEFAULT is what clGetDeviceIDs is asked for, and answers
     * with the first device, not a type a device has. */
    return TT_INFO(type);
  case CL_DEVICE_IMAGE2D_MAX_WIDTH:
  case CL_DEVICE_IMAGE2D_MAX_HEIGHT:
  case CL_DEVICE_IMAGE3D_MAX_WIDTH:
  case CL_DEVICE_IMAGE3D_MAX_HEIGHT:
  case CL_DEVICE_IMAGE3D_MAX_DEPTH:
  case CL_DEVICE_IMAGE_MAX_BUFFER_SIZE:
  case CL_DEVICE_IMAGE_MAX_ARRAY_SIZE:
    /* No images (CL_DEVICE_IMAGE_SUPPORT is CL_FALSE): no image limits either. */
    return TT_INFO(no_size);
  case CL_DEVICE_MAX_READ_IMAGE_ARGS:
  case CL_DEVICE_MAX_WRITE_IMAGE_ARGS:
  case CL_DEVICE_MAX_SAMPLERS:
    return TT_INFO(zero);
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
  case CL_DEVICE_IMAGE_SUPPORT:
    return TT_INFO(no);
  case CL_DEVICE_PARENT_DEVICE:
    return TT_INFO(null_device);
  case CL_DEVICE_PARTITION_MAX_SUB_DEVICES:
  case CL_DEVICE_REFERENCE_COUNT:
    zero = param_name == CL_DEVICE_REFERENCE_COUNT;
    return TT_INFO(zero);
  case CL_DEVICE_PARTITION_PROPERTIES:
  case CL_DEVICE_PARTITION_TYPE:
    return TT_INFO(none);
  case CL_DEVICE_PARTITION_AFFINITY_DOMAIN: {
    cl_device_affinity_domain a = 0;
    return TT_INFO(a);
  }
  case CL_DEVICE_EXECUTION_CAPABILITIES: {
    /* Native kernels are not offered: they would run a host function on another rank. */
    cl_device_exec_capabilities caps = CL_EXEC_KERNEL;
    return TT_INFO(caps);
  }
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
    return TT_INFO(rank);
  case CL_DEVICE_TUTTI_ACTUAL:
    return TT_INFO(actual);
  case CL_DEVICE_TUTTI_HOST:
    return TT_INFO_STR(device->host);
  case CL_DEVICE_TUTTI_BACKEND:
    return TT_INFO_STR(device->backend);
  case CL_DEVICE_TUTTI_BACKEND_PLATFORM:
    return TT_INFO_STR(device->backend_platform);
  case CL_DEVICE_TUTTI_GPU_COPIES:
    return TT_INFO_STR(device->gpu_copies);
  default:
    /* Everything else is the backend's answer, unchanged. */
    return tt_cluster_device_query(device, param_name, param_value_size, param_value,
                           param_value_size_ret);
  }
}

cl_int CL_API_CALL tt_clCreateSubDevices(cl_device_id in_device,
                                         const cl_device_partition_property *properties,
                                         cl_uint num_devices, cl_device_id *out_devices,
                                         cl_uint *num_devices_ret)
{
  /* CL_INVALID_DEVICE if in_device is not valid. */
  TT_RETURN_IF(!tt_object_valid(in_device, TT_DEVICE), CL_INVALID_DEVICE);
  /* CL_INVALID_VALUE if values specified in properties are not valid or if values specified
   * in properties are valid but not supported by the device (Tutti partitions nothing). */
  TT_RETURN_IF(1, CL_INVALID_VALUE);
}

cl_int CL_API_CALL tt_clRetainDevice(cl_device_id device)
{
  /* CL_INVALID_DEVICE if device is not a valid device. Root devices are not counted. */
  TT_RETURN_IF(!tt_object_valid(device, TT_DEVICE), CL_INVALID_DEVICE);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clReleaseDevice(cl_device_id device)
{
  /* CL_INVALID_DEVICE if device is not a valid device. */
  TT_RETURN_IF(!tt_object_valid(device, TT_DEVICE), CL_INVALID_DEVICE);
  return CL_SUCCESS;
}
