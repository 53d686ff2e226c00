/* Kernel entry points: the divergence check, then the bodies (runtime/program/program.h),
 * which check the arguments as the specification says. */
#include "config.h"

#include "icd/icd.h"

#include "runtime/job/check.h"
#include "runtime/job/turns.h"
#include "runtime/program/program.h"

cl_kernel CL_API_CALL tt_clCreateKernel(cl_program program, const char *kernel_name,
                                        cl_int *errcode_ret)
{
  TT_TURN_CHECK(tt_check_id(program), tt_check_bytes(kernel_name, kernel_name ? strlen(kernel_name) : 0));
  return tt_kernel_new(program, kernel_name, errcode_ret);
}

cl_int CL_API_CALL tt_clCreateKernelsInProgram(cl_program program, cl_uint num_kernels,
                                               cl_kernel *kernels, cl_uint *num_kernels_ret)
{
  TT_TURN_CHECK(tt_check_id(program), num_kernels, kernels != NULL);
  return tt_kernels_in_program(program, num_kernels, kernels, num_kernels_ret);
}

cl_int CL_API_CALL tt_clRetainKernel(cl_kernel kernel)
{
  /* CL_INVALID_KERNEL if kernel is not a valid kernel object. */
  TT_RETURN_IF(!tt_object_valid(kernel, TT_KERNEL), CL_INVALID_KERNEL);
  TT_RETAIN(kernel);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clReleaseKernel(cl_kernel kernel)
{
  TT_TURN();
  /* CL_INVALID_KERNEL if kernel is not a valid kernel object. */
  TT_RETURN_IF(!tt_object_valid(kernel, TT_KERNEL), CL_INVALID_KERNEL);
  TT_RELEASE(kernel);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                                     const void *arg_value)
{
  TT_TURN_CHECK(tt_check_id(kernel), arg_index, arg_size, tt_kernel_arg_hash(kernel, arg_index, arg_size, arg_value));
  return tt_kernel_arg_check_set(kernel, arg_index, arg_size, arg_value);
}

cl_int CL_API_CALL tt_clGetKernelInfo(cl_kernel kernel, cl_kernel_info param_name,
                                      size_t param_value_size, void *param_value,
                                      size_t *param_value_size_ret)
{
  return tt_kernel_info(kernel, param_name, param_value_size, param_value, param_value_size_ret);
}

cl_int CL_API_CALL tt_clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device,
                                               cl_kernel_work_group_info param_name,
                                               size_t param_value_size, void *param_value,
                                               size_t *param_value_size_ret)
{
  return tt_kernel_work_group_info(kernel, device, param_name, param_value_size, param_value,
                                   param_value_size_ret);
}

cl_int CL_API_CALL tt_clGetKernelArgInfo(cl_kernel kernel, cl_uint arg_indx,
                                         cl_kernel_arg_info param_name, size_t param_value_size,
                                         void *param_value, size_t *param_value_size_ret)
{
  return tt_kernel_arg_info(kernel, arg_indx, param_name, param_value_size, param_value,
                            param_value_size_ret);
}
