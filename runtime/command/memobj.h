/* Buffer objects (runtime/command/memobj.c): their bodies behind icd/mem.c's checks, and
 * Tutti's own buffers (split launches' partial results, the collectives' scratch). */
#ifndef TUTTI_COMMAND_MEMOBJ_H
#define TUTTI_COMMAND_MEMOBJ_H

#include <stdbool.h>

#include "runtime/base/tutti_internal.h"

#include "CL/tutti.h"

#define TT_MEM_ACCESS_FLAGS (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY)
#define TT_MEM_HOST_PTR_FLAGS (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)
#define TT_MEM_HOST_ACCESS_FLAGS \
  (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)

/* A memory object of context with flags and size, no native memory yet (an image's own are
 * runtime/command/image.c's). */
cl_mem tt_mem_alloc(cl_context context, cl_mem_flags flags, size_t size);
/* A buffer of context, flags and size as clCreateBuffer checked them; spread: windowed
 * from the start. */
cl_mem tt_buffer_new(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr,
                     bool spread, cl_int *errcode_ret);
/* A sub-buffer of region r of buffer, its flags checked (clCreateSubBuffer); unspecified
 * access and host-access flags are inherited. */
cl_mem tt_sub_buffer_new(cl_mem buffer, cl_mem_flags flags, const cl_buffer_region *r,
                         cl_int *errcode_ret);
/* A destructor callback of memobj (run newest first once every native buffer is gone). */
cl_int tt_buffer_destructor_add(cl_mem memobj, void (CL_CALLBACK *pfn_notify)(cl_mem, void *),
                                void *user_data);
/* Drops m's distribution (clSetBufferDistributionTUTTI; plan lock). */
void tt_buffer_dist_free(cl_mem m);

/* clSetBufferDistributionTUTTI once divergence-checked: its checks, then the buffer's
 * distribution (NULL: none) set and its windows enabled. */
cl_int tt_buffer_distribute(cl_mem buffer, const cl_tutti_distribution *d);

#endif
