/* Tutti's extension functions (doc/extensions.md): cl_tutti_attach_buffer, SnuCL-D's
 * clAttachBufferToDevice (section 3.6). Every rank calls them at the same program step. */
#include "config.h"

#include "icd/icd.h"

#include "runtime/job/check.h"
#include "runtime/job/turns.h"

#include "runtime/command/coherence.h"

/* The checks and the attachment behind both names (one divergence-check entry each call). */
static cl_int attach(cl_mem buffer, cl_device_id device)
{
  TT_TURN_CHECK(tt_check_id(buffer), tt_check_id(device));
  /* CL_INVALID_MEM_OBJECT if buffer is not a valid buffer object, or is a sub-buffer (attach
   * its buffer instead). */
  TT_RETURN_IF(!tt_object_valid(buffer, TT_MEM) || buffer->parent, CL_INVALID_MEM_OBJECT);
  /* CL_INVALID_DEVICE if device is not a valid device of the buffer's context. */
  TT_RETURN_IF(!tt_object_valid(device, TT_DEVICE) || !tt_context_has_device(buffer->context, device),
               CL_INVALID_DEVICE);
  cl_uint dom = tt_context_domain_of(buffer->context, device);
  tt_plan_lock();
  cl_int err = tt_coherence_attach(buffer, dom);
  tt_plan_unlock();
  return err;
}

cl_int CL_API_CALL tt_clAttachBufferToDeviceTUTTI(cl_mem buffer, cl_device_id device)
{
  return attach(buffer, device);
}

void CL_API_CALL tt_clAttachBufferToDevice(cl_mem buffer, cl_device_id device)
{
  cl_int err = attach(buffer, device);
  if (err != CL_SUCCESS)
    TT_WARN("clAttachBufferToDevice: %s (the buffer stays unattached)", tt_error_name(err));
}

/* For programs that link libtutti directly (doc/extensions.md): the entry points under
 * their exported names. */
TT_API __typeof__(tt_clAttachBufferToDeviceTUTTI) clAttachBufferToDeviceTUTTI
    __attribute__((alias("tt_clAttachBufferToDeviceTUTTI")));
TT_API __typeof__(tt_clAttachBufferToDevice) clAttachBufferToDevice
    __attribute__((alias("tt_clAttachBufferToDevice")));
