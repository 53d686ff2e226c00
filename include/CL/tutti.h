/* Tutti's public header: what a program may ask of Tutti beyond OpenCL 1.2.
 * See doc/extensions.md. */
#ifndef CL_TUTTI_H
#define CL_TUTTI_H

#include <CL/cl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* clGetDeviceInfo queries answered for every device of the Tutti platform. */
#define CL_DEVICE_TUTTI_RANK 0x4E10         /* cl_int: MPI rank that owns the device */
#define CL_DEVICE_TUTTI_HOST 0x4E11         /* char[]: host name of that rank */
#define CL_DEVICE_TUTTI_BACKEND 0x4E12      /* char[]: backend ("pocl", "nvidia", ...) */
#define CL_DEVICE_TUTTI_BACKEND_PLATFORM 0x4E13 /* char[]: the backend's platform name */
#define CL_DEVICE_TUTTI_ACTUAL 0x4E14       /* cl_bool: owned by the calling rank */

/* clGetPlatformInfo queries. */
#define CL_PLATFORM_TUTTI_RANKS 0x4E00      /* cl_int: ranks in the job */
#define CL_PLATFORM_TUTTI_RANK 0x4E01       /* cl_int: the calling rank */

/* cl_tutti_attach_buffer: SnuCL-D's clAttachBufferToDevice (section 3.6). Device d always
 * holds the newest copy of buffer m from now on: its contents are copied there now (zeros if
 * nothing was ever written); commands on other devices fetch from d before and write back to
 * it after, so attaching to the wrong device stays correct, only slower. Every rank calls it
 * at the same program step, like every OpenCL call. The suffixed form returns
 * CL_INVALID_MEM_OBJECT (not a buffer, or a sub-buffer) or CL_INVALID_DEVICE (not a device
 * of the buffer's context); the plain form, as in the paper, returns nothing. */
typedef cl_int (CL_API_CALL *clAttachBufferToDeviceTUTTI_fn)(cl_mem m, cl_device_id d);

#ifdef TUTTI_LINKED
/* The program links libtutti itself (-ltutti): the exported functions. */
extern CL_API_ENTRY cl_int CL_API_CALL clAttachBufferToDeviceTUTTI(cl_mem m, cl_device_id d);
extern CL_API_ENTRY void CL_API_CALL clAttachBufferToDevice(cl_mem m, cl_device_id d);
#else
/* The program links only the ICD loader (-lOpenCL): the function is found through the Tutti
 * platform, once. Without a Tutti platform it does nothing (CL_INVALID_PLATFORM). */
static inline cl_int clAttachBufferToDeviceTUTTI(cl_mem m, cl_device_id d)
{
  static clAttachBufferToDeviceTUTTI_fn fn;
  if (!fn) {
    cl_platform_id p[16];
    cl_uint n = 0;
    if (clGetPlatformIDs(16, p, &n) != CL_SUCCESS)
      return CL_INVALID_PLATFORM;
    for (cl_uint i = 0; i < n && i < 16 && !fn; i++)
      fn = (clAttachBufferToDeviceTUTTI_fn)clGetExtensionFunctionAddressForPlatform(
          p[i], "clAttachBufferToDeviceTUTTI");
  }
  return fn ? fn(m, d) : CL_INVALID_PLATFORM;
}

static inline void clAttachBufferToDevice(cl_mem m, cl_device_id d)
{
  (void)clAttachBufferToDeviceTUTTI(m, d);
}
#endif

#ifdef __cplusplus
}
#endif

#endif
