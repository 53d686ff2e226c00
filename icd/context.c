/* Context entry points: the divergence check and the specification's checks, then the body
 * (runtime/program/program.h). */
#include "config.h"

#include "icd/icd.h"

#include <stdlib.h>

#include "runtime/job/check.h"
#include "runtime/job/turns.h"

cl_context CL_API_CALL tt_clCreateContext(const cl_context_properties *properties,
                                          cl_uint num_devices, const cl_device_id *devices,
                                          void (CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *),
                                          void *user_data, cl_int *errcode_ret)
{
  TT_TURN_CHECK(num_devices, tt_check_ids(devices, num_devices));
  cl_int err = CL_SUCCESS;
  tt_cluster_init();
  /* CL_INVALID_VALUE if devices is NULL; if num_devices is equal to zero; or if pfn_notify is
   * NULL but user_data is not NULL. */
  TT_GOTO_IF(devices == NULL || num_devices == 0, CL_INVALID_VALUE);
  TT_GOTO_IF(pfn_notify == NULL && user_data != NULL, CL_INVALID_VALUE);
  /* CL_INVALID_DEVICE if devices contains an invalid device. */
  for (cl_uint i = 0; i < num_devices; i++)
    TT_GOTO_IF(!tt_object_valid(devices[i], TT_DEVICE), CL_INVALID_DEVICE);
  return tt_context_new(properties, num_devices, devices, pfn_notify, user_data, errcode_ret);
out:
  tt_set_err(errcode_ret, err);
  return NULL;
}

cl_context CL_API_CALL tt_clCreateContextFromType(const cl_context_properties *properties,
                                                  cl_device_type device_type,
                                                  void (CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *),
                                                  void *user_data, cl_int *errcode_ret)
{
  TT_TURN_CHECK(device_type);
  cl_int err = CL_SUCCESS;
  cl_device_id *devs = NULL;
  cl_context c = NULL;
  tt_cluster_init();
  /* CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL. */
  TT_GOTO_IF(pfn_notify == NULL && user_data != NULL, CL_INVALID_VALUE);
  /* CL_INVALID_DEVICE_TYPE if device_type is not a valid value. */
  TT_GOTO_IF(!tt_device_type_valid(device_type), CL_INVALID_DEVICE_TYPE);
  /* The devices clGetDeviceIDs lists for that type (the aggregate device first).
   * CL_DEVICE_NOT_FOUND if no devices that match device_type and property values specified
   * in properties are currently available. */
  cl_uint n = 0, total = tt_cluster_ndevices() + 1;
  devs = malloc(total * sizeof *devs);
  TT_GOTO_IF(!devs, CL_OUT_OF_HOST_MEMORY);
  n = tt_devices_of_type(device_type, total, devs);
  TT_GOTO_IF(n == 0, CL_DEVICE_NOT_FOUND);
  c = tt_context_new(properties, n, devs, pfn_notify, user_data, &err);
out:
  free(devs);
  tt_set_err(errcode_ret, err);
  return c;
}

cl_int CL_API_CALL tt_clRetainContext(cl_context context)
{
  /* CL_INVALID_CONTEXT if context is not a valid OpenCL context. */
  TT_RETURN_IF(!tt_object_valid(context, TT_CONTEXT), CL_INVALID_CONTEXT);
  TT_RETAIN(context);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clReleaseContext(cl_context context)
{
  TT_TURN();
  /* CL_INVALID_CONTEXT if context is not a valid OpenCL context. */
  TT_RETURN_IF(!tt_object_valid(context, TT_CONTEXT), CL_INVALID_CONTEXT);
  TT_RELEASE(context);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clGetContextInfo(cl_context context, cl_context_info param_name,
                                       size_t param_value_size, void *param_value,
                                       size_t *param_value_size_ret)
{
  /* CL_INVALID_CONTEXT if context is not a valid context. */
  TT_RETURN_IF(!tt_object_valid(context, TT_CONTEXT), CL_INVALID_CONTEXT);
  cl_uint u;
  switch (param_name) {
  case CL_CONTEXT_REFERENCE_COUNT:
    u = (cl_uint)atomic_load(&context->obj.refcount);
    return TT_INFO(u);
  case CL_CONTEXT_NUM_DEVICES:
    return TT_INFO(context->nuser_devices);
  case CL_CONTEXT_DEVICES:
    /* As the program listed them (the aggregate device, not its members). */
    return tt_info(param_value_size, param_value, param_value_size_ret, context->user_devices,
                   context->nuser_devices * sizeof(cl_device_id));
  case CL_CONTEXT_PROPERTIES:
    return tt_info(param_value_size, param_value, param_value_size_ret, context->props,
                   context->nprops * sizeof(cl_context_properties));
  default:
    /* CL_INVALID_VALUE if param_name is not one of the supported values. */
    TT_RETURN_IF(1, CL_INVALID_VALUE);
  }
}
