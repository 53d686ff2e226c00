/* Program entry points: the divergence check, then the bodies (runtime/program/program.h),
 * which check the arguments as the specification says. */
#include "config.h"

#include "icd/icd.h"

#include <stdlib.h>

#include "runtime/job/check.h"
#include "runtime/job/turns.h"
#include "runtime/program/program.h"

cl_program CL_API_CALL tt_clCreateProgramWithSource(cl_context context, cl_uint count,
                                                    const char **strings, const size_t *lengths,
                                                    cl_int *errcode_ret)
{
  TT_TURN_CHECK(tt_check_id(context), count);
  cl_int err = CL_SUCCESS;
  /* CL_INVALID_CONTEXT if context is not a valid context. */
  TT_GOTO_IF(!tt_object_valid(context, TT_CONTEXT), CL_INVALID_CONTEXT);
  /* CL_INVALID_VALUE if count is zero or if strings or any entry in strings is NULL. */
  TT_GOTO_IF(count == 0 || strings == NULL, CL_INVALID_VALUE);
  for (cl_uint i = 0; i < count; i++)
    TT_GOTO_IF(strings[i] == NULL, CL_INVALID_VALUE);
  return tt_program_with_source(context, count, strings, lengths, errcode_ret);
out:
  tt_set_err(errcode_ret, err);
  return NULL;
}

cl_program CL_API_CALL tt_clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                                    const cl_device_id *device_list,
                                                    const size_t *lengths,
                                                    const unsigned char **binaries,
                                                    cl_int *binary_status, cl_int *errcode_ret)
{
  TT_TURN();
  return tt_program_with_binary(context, num_devices, device_list, lengths, binaries, binary_status,
                                errcode_ret);
}

cl_program CL_API_CALL tt_clCreateProgramWithBuiltInKernels(cl_context context,
                                                            cl_uint num_devices,
                                                            const cl_device_id *device_list,
                                                            const char *kernel_names,
                                                            cl_int *errcode_ret)
{
  TT_TURN();
  cl_int err = CL_INVALID_VALUE;
  /* CL_INVALID_CONTEXT if context is not a valid context. */
  TT_GOTO_IF(!tt_object_valid(context, TT_CONTEXT), CL_INVALID_CONTEXT);
  /* CL_INVALID_VALUE if device_list is NULL or num_devices is zero. */
  TT_GOTO_IF(device_list == NULL || num_devices == 0, CL_INVALID_VALUE);
  /* CL_INVALID_DEVICE if devices listed in device_list are not in the list of devices
   * associated with context. */
  TT_GOTO_IF(!tt_context_has_devices(context, num_devices, device_list), CL_INVALID_DEVICE);
  /* CL_INVALID_VALUE if kernel_names is NULL or contains a kernel name that is not supported
   * by any of the devices (Tutti's devices report no built-in kernels). */
  TT_GOTO_IF(1, CL_INVALID_VALUE);
out:
  tt_set_err(errcode_ret, err);
  return NULL;
}

cl_int CL_API_CALL tt_clRetainProgram(cl_program program)
{
  /* CL_INVALID_PROGRAM if program is not a valid program object. */
  TT_RETURN_IF(!tt_object_valid(program, TT_PROGRAM), CL_INVALID_PROGRAM);
  TT_RETAIN(program);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clReleaseProgram(cl_program program)
{
  TT_TURN();
  /* CL_INVALID_PROGRAM if program is not a valid program object. */
  TT_RETURN_IF(!tt_object_valid(program, TT_PROGRAM), CL_INVALID_PROGRAM);
  TT_RELEASE(program);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clBuildProgram(cl_program program, cl_uint num_devices,
                                     const cl_device_id *device_list, const char *options,
                                     void (CL_CALLBACK *pfn_notify)(cl_program, void *),
                                     void *user_data)
{
  TT_TURN_CHECK(tt_check_id(program), tt_check_ids(device_list, num_devices), tt_check_bytes(options, options ? strlen(options) : 0));
  /* The aggregate device builds for its members. */
  cl_device_id *expanded = NULL;
  if (device_list && num_devices) {
    num_devices = tt_devices_expand(num_devices, device_list, &expanded);
    TT_RETURN_IF(!num_devices, CL_OUT_OF_HOST_MEMORY);
    device_list = expanded;
  }
  cl_int err = tt_program_build(program, num_devices, device_list, options, pfn_notify, user_data);
  free(expanded);
  return err;
}

cl_int CL_API_CALL tt_clCompileProgram(cl_program program, cl_uint num_devices,
                                       const cl_device_id *device_list, const char *options,
                                       cl_uint num_input_headers,
                                       const cl_program *input_headers,
                                       const char **header_include_names,
                                       void (CL_CALLBACK *pfn_notify)(cl_program, void *),
                                       void *user_data)
{
  TT_TURN_CHECK(tt_check_id(program), tt_check_ids(device_list, num_devices), tt_check_bytes(options, options ? strlen(options) : 0), num_input_headers);
  return tt_program_compile(program, num_devices, device_list, options, num_input_headers,
                            input_headers, header_include_names, pfn_notify, user_data);
}

cl_program CL_API_CALL tt_clLinkProgram(cl_context context, cl_uint num_devices,
                                        const cl_device_id *device_list, const char *options,
                                        cl_uint num_input_programs,
                                        const cl_program *input_programs,
                                        void (CL_CALLBACK *pfn_notify)(cl_program, void *),
                                        void *user_data, cl_int *errcode_ret)
{
  TT_TURN_CHECK(tt_check_id(context), tt_check_ids(device_list, num_devices), tt_check_ids(input_programs, num_input_programs));
  return tt_program_link(context, num_devices, device_list, options, num_input_programs,
                         input_programs, pfn_notify, user_data, errcode_ret);
}

cl_int CL_API_CALL tt_clGetProgramInfo(cl_program program, cl_program_info param_name,
                                       size_t param_value_size, void *param_value,
                                       size_t *param_value_size_ret)
{
  return tt_program_info(program, param_name, param_value_size, param_value, param_value_size_ret);
}

cl_int CL_API_CALL tt_clGetProgramBuildInfo(cl_program program, cl_device_id device,
                                            cl_program_build_info param_name,
                                            size_t param_value_size, void *param_value,
                                            size_t *param_value_size_ret)
{
  return tt_program_build_info(program, device, param_name, param_value_size, param_value,
                               param_value_size_ret);
}
