/* The memory of a domain (runtime/memory/domain.c): the device's own or the host's,
 * buffers in host memory of Tutti's (direct), pinned host memory for transfers. */
#ifndef TUTTI_MEMORY_DOMAIN_H
#define TUTTI_MEMORY_DOMAIN_H

#include "runtime/order/order.h"

/* Whether buffers of actual domain dom should live in host memory that Tutti allocates
 * (CL_MEM_USE_HOST_PTR): the context spans several ranks, the backend keeps buffers in host
 * memory (CL_DEVICE_HOST_UNIFIED_MEMORY), TUTTI_STAGING is auto, and a probe found the
 * backend's commands working on that very memory. Transfers between ranks then send from and
 * receive into it directly. Decided once per domain. */
bool tt_domain_direct_memory(cl_context ctx, cl_uint dom);

/* Whether actual domain dom's devices have memory of their own (not the host's): transfers
 * there go through pinned host memory. */
bool tt_domain_device_memory(cl_context ctx, cl_uint dom);

/* Pinned host memory of len bytes for a domain whose devices have memory of their own (a
 * buffer allocated with CL_MEM_ALLOC_HOST_PTR, mapped: transfers from and to it overlap
 * kernels), *buffer holding it; NULL (and *buffer NULL) for other domains or on failure.
 * Freed with tt_domain_pinned_free, once nothing uses it. */
void *tt_domain_pinned_new(cl_context ctx, cl_uint dom, size_t len, cl_mem *buffer);
void tt_domain_pinned_free(struct tt_domain *dm, cl_mem buffer, void *p);

/* The pinned map behind tt_domain_pinned_new, for a domain known to have memory of its own
 * (the transfers' staging): NULL with *err on failure. */
void *tt_domain_pinned_map(struct tt_domain *dm, size_t len, cl_mem *buffer, cl_int *err);

#endif
