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

#ifdef __cplusplus
}
#endif

#endif
