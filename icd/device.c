/* Device entry points: the global device table seen through OpenCL. */
#include "config.h"

#include "icd/icd.h"

#include "runtime/job/check.h"
#include "runtime/job/turns.h"

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

cl_int CL_API_CALL tt_clGetDeviceInfo(cl_device_id device, cl_device_info param_name,
                                      size_t param_value_size, void *param_value,
                                      size_t *param_value_size_ret)
{
  /* CL_INVALID_DEVICE if device is not valid. */
  TT_RETURN_IF(!tt_object_valid(device, TT_DEVICE), CL_INVALID_DEVICE);
  return tt_device_info(device, param_name, param_value_size, param_value,
                        param_value_size_ret);
}

/* Whether device offers partition type t (CL_DEVICE_PARTITION_PROPERTIES, its backend's). */
static bool offers(cl_device_id device, cl_device_partition_property t)
{
  cl_device_partition_property list[8] = {0};
  size_t n = 0;
  if (tt_device_info(device, CL_DEVICE_PARTITION_PROPERTIES, sizeof list, list, &n) != CL_SUCCESS)
    return false;
  for (size_t i = 0; i < n / sizeof *list && i < 8; i++)
    if (list[i] == t)
      return true;
  return false;
}

/* CL_INVALID_VALUE if values specified in properties are not valid or if values specified in
 * properties are valid but not supported by the device; the list's length in *len. */
static cl_int check_partition(cl_device_id device, const cl_device_partition_property *p,
                              size_t *len)
{
  TT_RETURN_IF(!p || !p[0], CL_INVALID_VALUE);
  TT_RETURN_IF(!offers(device, p[0]), CL_INVALID_VALUE);
  size_t n = 1;
  switch (p[0]) {
  case CL_DEVICE_PARTITION_EQUALLY:
  case CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN:
    n = 2;
    break;
  case CL_DEVICE_PARTITION_BY_COUNTS:
    while (n < 6 && p[n] != CL_DEVICE_PARTITION_BY_COUNTS_LIST_END)
      n++;
    TT_RETURN_IF(p[n] != CL_DEVICE_PARTITION_BY_COUNTS_LIST_END || n == 1, CL_INVALID_VALUE);
    n++;
    break;
  default:
    TT_RETURN_IF(1, CL_INVALID_VALUE);
  }
  TT_RETURN_IF(p[n] != 0, CL_INVALID_VALUE);
  *len = n + 1;
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clCreateSubDevices(cl_device_id in_device,
                                         const cl_device_partition_property *properties,
                                         cl_uint num_devices, cl_device_id *out_devices,
                                         cl_uint *num_devices_ret)
{
  /* CL_INVALID_DEVICE if in_device is not valid (the aggregate device is not partitioned). */
  TT_RETURN_IF(!tt_object_valid(in_device, TT_DEVICE) || in_device->members, CL_INVALID_DEVICE);
  size_t len = 0;
  TT_TRY(check_partition(in_device, properties, &len));
  /* CL_INVALID_VALUE if out_devices is not NULL and num_devices is 0 (too few: the owner
   * says, once it knows how many the partition makes). */
  TT_RETURN_IF(out_devices && !num_devices, CL_INVALID_VALUE);
  TT_TURN_CHECK(tt_check_id(in_device), tt_check_bytes(properties, len * sizeof *properties),
                num_devices, out_devices != NULL);
  return tt_devices_partition(in_device, properties, num_devices, out_devices,
                              num_devices_ret);
}

cl_int CL_API_CALL tt_clRetainDevice(cl_device_id device)
{
  /* CL_INVALID_DEVICE if device is not a valid device. Root devices are not counted. */
  TT_RETURN_IF(!tt_object_valid(device, TT_DEVICE), CL_INVALID_DEVICE);
  if (device->parent)
    TT_RETAIN(device);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clReleaseDevice(cl_device_id device)
{
  TT_TURN();
  /* CL_INVALID_DEVICE if device is not a valid device. */
  TT_RETURN_IF(!tt_object_valid(device, TT_DEVICE), CL_INVALID_DEVICE);
  if (device->parent)
    TT_RELEASE(device);
  return CL_SUCCESS;
}
