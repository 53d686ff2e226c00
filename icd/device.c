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

cl_int CL_API_CALL tt_clGetDeviceInfo(cl_device_id device, cl_device_info param_name,
                                      size_t param_value_size, void *param_value,
                                      size_t *param_value_size_ret)
{
  /* CL_INVALID_DEVICE if device is not valid. */
  TT_RETURN_IF(!tt_object_valid(device, TT_DEVICE), CL_INVALID_DEVICE);
  return tt_device_info(device, param_name, param_value_size, param_value,
                        param_value_size_ret);
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
