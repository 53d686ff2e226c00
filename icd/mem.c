/* Buffers and sub-buffers, and what every memory object answers: the checks of their entry
 * points, then their bodies (runtime/command/memobj.h). Images and samplers: icd/image.c. */
#include "config.h"

#include "icd/icd.h"

#include "runtime/job/check.h"
#include "runtime/job/turns.h"

#include <stdlib.h>

#define ACCESS_FLAGS TT_MEM_ACCESS_FLAGS
#define HOST_PTR_FLAGS TT_MEM_HOST_PTR_FLAGS
#define HOST_ACCESS_FLAGS TT_MEM_HOST_ACCESS_FLAGS


static bool one_bit_at_most(cl_mem_flags f)
{
  return (f & (f - 1)) == 0;
}

bool tt_mem_flags_valid(cl_mem_flags flags)
{
  if (flags & ~(cl_mem_flags)(ACCESS_FLAGS | HOST_PTR_FLAGS | HOST_ACCESS_FLAGS))
    return false;
  if (!one_bit_at_most(flags & ACCESS_FLAGS) || !one_bit_at_most(flags & HOST_ACCESS_FLAGS))
    return false;
  if ((flags & CL_MEM_USE_HOST_PTR) && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)))
    return false;
  return true;
}

cl_mem CL_API_CALL tt_clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size,
                                     void *host_ptr, cl_int *errcode_ret)
{
  TT_TURN_CHECK(tt_check_id(context), flags, size);
  cl_int err = CL_SUCCESS;
  /* CL_INVALID_CONTEXT if context is not a valid context. */
  TT_GOTO_IF(!tt_object_valid(context, TT_CONTEXT), CL_INVALID_CONTEXT);
  /* CL_INVALID_VALUE if values specified in flags are not valid. */
  TT_GOTO_IF(!tt_mem_flags_valid(flags), CL_INVALID_VALUE);
  /* CL_INVALID_BUFFER_SIZE if size is 0, or is greater than CL_DEVICE_MAX_MEM_ALLOC_SIZE
   * for all devices in context. */
  TT_GOTO_IF(size == 0, CL_INVALID_BUFFER_SIZE);
  bool fits = false;
  for (cl_uint i = 0; i < context->ndevices && !fits; i++) {
    cl_ulong max = 0;
    cl_device_id d = context->devices[i];
    tt_cluster_device_query(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max, &max, NULL);
    fits = size <= max;
  }
  /* CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or CL_MEM_COPY_HOST_PTR
   * are set in flags, or if host_ptr is not NULL but they are not set. */
  bool wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  /* The aggregate device allocates up to its members' sum: such a buffer is windowed from
   * the start (each member holds the parts it uses). Not with host memory of the program's:
   * its bytes would have to live whole somewhere. */
  bool spread = false;
  if (!fits && context->aggregate && !wants_ptr) {
    cl_ulong max = 0;
    tt_aggregate_device_info(context->aggregate, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max, &max,
                             NULL);
    spread = size <= max;
  }
  TT_GOTO_IF(!fits && !spread, CL_INVALID_BUFFER_SIZE);
  TT_GOTO_IF(wants_ptr != (host_ptr != NULL), CL_INVALID_HOST_PTR);
  return tt_buffer_new(context, flags, size, host_ptr, spread, errcode_ret);
out:
  tt_set_err(errcode_ret, err);
  return NULL;
}

cl_mem CL_API_CALL tt_clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags,
                                        cl_buffer_create_type buffer_create_type,
                                        const void *buffer_create_info, cl_int *errcode_ret)
{
  TT_TURN_CHECK(tt_check_id(buffer), flags, buffer_create_type, tt_check_bytes(buffer_create_info, buffer_create_info ? 2 * sizeof(size_t) : 0));
  cl_int err = CL_SUCCESS;
  /* CL_INVALID_MEM_OBJECT if buffer is not a valid buffer object or is a sub-buffer. */
  TT_GOTO_IF(!tt_object_valid(buffer, TT_MEM) || buffer->parent || buffer->image,
             CL_INVALID_MEM_OBJECT);
  /* CL_INVALID_VALUE if values specified in flags are not valid (or conflict with the
   * buffer's: a WRITE_ONLY buffer gives no READ_* sub-buffer, and so on). */
  TT_GOTO_IF(!tt_mem_flags_valid(flags) || (flags & HOST_PTR_FLAGS), CL_INVALID_VALUE);
  TT_GOTO_IF((buffer->flags & CL_MEM_WRITE_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY)),
             CL_INVALID_VALUE);
  TT_GOTO_IF((buffer->flags & CL_MEM_READ_ONLY) && (flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY)),
             CL_INVALID_VALUE);
  TT_GOTO_IF((buffer->flags & CL_MEM_HOST_WRITE_ONLY) && (flags & CL_MEM_HOST_READ_ONLY),
             CL_INVALID_VALUE);
  TT_GOTO_IF((buffer->flags & CL_MEM_HOST_READ_ONLY) && (flags & CL_MEM_HOST_WRITE_ONLY),
             CL_INVALID_VALUE);
  TT_GOTO_IF((buffer->flags & CL_MEM_HOST_NO_ACCESS) &&
                 (flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY)),
             CL_INVALID_VALUE);
  /* CL_INVALID_VALUE if value specified in buffer_create_type is not valid, or if
   * buffer_create_info is NULL or describes a region out of bounds of buffer. */
  TT_GOTO_IF(buffer_create_type != CL_BUFFER_CREATE_TYPE_REGION, CL_INVALID_VALUE);
  TT_GOTO_IF(!buffer_create_info, CL_INVALID_VALUE);
  const cl_buffer_region *r = buffer_create_info;
  /* CL_INVALID_BUFFER_SIZE if size is 0. */
  TT_GOTO_IF(r->size == 0, CL_INVALID_BUFFER_SIZE);
  TT_GOTO_IF(r->origin > buffer->size || r->size > buffer->size - r->origin, CL_INVALID_VALUE);
  /* CL_MISALIGNED_SUB_BUFFER_OFFSET if there are no devices in context associated with
   * buffer for which the origin value is aligned to the CL_DEVICE_MEM_BASE_ADDR_ALIGN value. */
  bool aligned = false;
  cl_context ctx = buffer->context;
  for (cl_uint i = 0; i < ctx->ndevices && !aligned; i++) {
    cl_uint bits = 8;
    cl_device_id d = ctx->devices[i];
    tt_cluster_device_query(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL);
    aligned = bits < 8 || r->origin % (bits / 8) == 0;
  }
  TT_GOTO_IF(!aligned, CL_MISALIGNED_SUB_BUFFER_OFFSET);
  return tt_sub_buffer_new(buffer, flags, r, errcode_ret);
out:
  tt_set_err(errcode_ret, err);
  return NULL;
}

cl_int CL_API_CALL tt_clRetainMemObject(cl_mem memobj)
{
  /* CL_INVALID_MEM_OBJECT if memobj is not a valid memory object. */
  TT_RETURN_IF(!tt_object_valid(memobj, TT_MEM), CL_INVALID_MEM_OBJECT);
  TT_RETAIN(memobj);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clReleaseMemObject(cl_mem memobj)
{
  TT_TURN();
  /* CL_INVALID_MEM_OBJECT if memobj is not a valid memory object. */
  TT_RETURN_IF(!tt_object_valid(memobj, TT_MEM), CL_INVALID_MEM_OBJECT);
  TT_RELEASE(memobj);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clGetMemObjectInfo(cl_mem memobj, cl_mem_info param_name,
                                         size_t param_value_size, void *param_value,
                                         size_t *param_value_size_ret)
{
  /* CL_INVALID_MEM_OBJECT if memobj is not a valid memory object. */
  TT_RETURN_IF(!tt_object_valid(memobj, TT_MEM), CL_INVALID_MEM_OBJECT);
  cl_mem_object_type type = memobj->image ? memobj->image->desc.image_type : CL_MEM_OBJECT_BUFFER;
  cl_uint u;
  switch (param_name) {
  case CL_MEM_TYPE:
    return TT_INFO(type);
  case CL_MEM_FLAGS:
    return TT_INFO(memobj->flags);
  case CL_MEM_SIZE:
    return TT_INFO(memobj->size);
  case CL_MEM_HOST_PTR:
    return TT_INFO(memobj->host_ptr);
  case CL_MEM_MAP_COUNT:
    u = atomic_load(&memobj->map_count);
    return TT_INFO(u);
  case CL_MEM_REFERENCE_COUNT:
    u = (cl_uint)atomic_load(&memobj->obj.refcount);
    return TT_INFO(u);
  case CL_MEM_CONTEXT:
    return TT_INFO(memobj->context);
  case CL_MEM_ASSOCIATED_MEMOBJECT:
    return TT_INFO(memobj->parent);
  case CL_MEM_OFFSET:
    return TT_INFO(memobj->origin);
  default:
    /* CL_INVALID_VALUE if param_name is not valid. */
    TT_RETURN_IF(1, CL_INVALID_VALUE);
  }
}

cl_int CL_API_CALL tt_clSetMemObjectDestructorCallback(cl_mem memobj,
                                                       void (CL_CALLBACK *pfn_notify)(cl_mem, void *),
                                                       void *user_data)
{
  /* CL_INVALID_MEM_OBJECT if memobj is not a valid memory object. */
  TT_RETURN_IF(!tt_object_valid(memobj, TT_MEM), CL_INVALID_MEM_OBJECT);
  /* CL_INVALID_VALUE if pfn_notify is NULL. */
  TT_RETURN_IF(!pfn_notify, CL_INVALID_VALUE);
  return tt_buffer_destructor_add(memobj, pfn_notify, user_data);
}
