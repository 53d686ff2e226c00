/* The CUDA fast path for NVIDIA devices (doc/cluster.md, "Copies between GPUs of one host").
 *
 * NVIDIA's OpenCL moves bytes between two GPUs through host memory. Where its driver offers
 * cl_khr_external_memory_opaque_fd, the native buffers of an NVIDIA device are allocated by
 * the CUDA driver instead (cuMemCreate, exportable as a file descriptor) and imported into
 * the device's native context, where kernels use them unchanged; bytes then move between
 * GPUs of one host by the GPUs' own copy engines (NVLink or PCIe): between two devices of one
 * rank directly, between ranks of one host after the receiver imported the sender's memory
 * (its descriptor taken through pidfd_getfd). libcuda is opened at run time, never linked.
 *
 * Which devices take this path is decided once, by the node's first rank, and travels in the
 * device table (cl_device_id.cuda), so every rank plans the same transfers. Which buffers do
 * is decided from replicated facts too (tt_cuda_fits). */
#ifndef TUTTI_CUDA_H
#define TUTTI_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/base/cl.h"

struct tt_backend_platform;

/* The CUDA device of an NVIDIA OpenCL device (matched by UUID), or -1: not NVIDIA,
 * TUTTI_CUDA=off, no libcuda, or the device lacks cl_khr_device_uuid or
 * cl_khr_external_memory_opaque_fd. why: how its bytes move to other GPUs of its host
 * ("copy engines of CUDA device N", with ", without peer access to CUDA devices J K" where
 * some pairs lack it, or "through host memory: " and the reason), which
 * CL_DEVICE_TUTTI_GPU_COPIES answers and tutti-info prints; a TUTTI_DEBUG=backend line
 * says it too. reach: bit j set where CUDA device j and this one have peer access both
 * ways (its own bit too); 0 with -1. */
int tt_cuda_device_of(struct tt_backend_platform *bp, cl_device_id native, char *why,
                      size_t cap, uint32_t *reach);

/* Whether a native buffer of size bytes (a buffer's, or a window's of a distributed buffer:
 * runtime/memory/window.h) with the buffer's flags lives in CUDA memory on devices that take
 * the path: not for CL_MEM_USE_HOST_PTR, nor under TT_CUDA_MIN bytes (the driver's
 * granularity is 2 MiB a buffer), nor over TT_CUDA_MAX: NVIDIA's OpenCL kills its process
 * (SIGSEGV raised by itself) when it imports 512 MiB or more of CUDA memory (doc/cluster.md).
 * Every rank alike. */
#define TT_CUDA_MIN ((size_t)64 << 10)
#define TT_CUDA_MAX ((size_t)510 << 20)
static inline bool tt_cuda_fits(size_t size, cl_mem_flags flags)
{
  return size >= TT_CUDA_MIN && size <= TT_CUDA_MAX && !(flags & CL_MEM_USE_HOST_PTR);
}

/* Whether a new buffer of size bytes with these flags, in a context of gpus domains on the
 * path, is windowed from the start (runtime/memory/window.h, tt_window_cuda_new): its native
 * buffers could not be CUDA memory whole, where each GPU's windows of its parts can. */
static inline bool tt_cuda_windows(size_t size, cl_mem_flags flags, unsigned gpus)
{
  return gpus >= 2 && size > TT_CUDA_MAX && !(flags & CL_MEM_USE_HOST_PTR);
}

/* A native buffer of size bytes in CUDA memory of CUDA device `device`, imported into the
 * native context ctx of the OpenCL device ndev (bp's), holding init's bytes when init is not
 * NULL. Its CUDA memory goes with it. NULL and *err on failure (logged). */
cl_mem tt_cuda_buffer_new(struct tt_backend_platform *bp, cl_context ctx, cl_device_id ndev,
                          int device, cl_mem_flags flags, size_t size, const void *init,
                          cl_int *err);

/* Bytes of a CUDA buffer as another rank of the host sees them. */
struct tt_cuda_desc {
  int32_t pid, fd;      /* the owner's process and its descriptor of the memory */
  uint64_t serial;      /* the allocation, unique in that process */
  uint64_t size;        /* of the allocation */
  uint64_t at;          /* the bytes' offset in it */
  int32_t ok, pad;      /* 0: the owner could not describe them (the transfer fails) */
};

/* Fills d for bytes at `at` of native buffer `native` (made by tt_cuda_buffer_new); false
 * when it is not one. */
bool tt_cuda_describe(cl_mem native, size_t at, struct tt_cuda_desc *d);

/* The device address of byte `at` of native (0: not a CUDA buffer). */
uint64_t tt_cuda_address(cl_mem native, size_t at);

/* Copies len bytes to dst on CUDA device `device` from src (an address of this process), or
 * from bytes a peer described (peer not NULL; src ignored), on Tutti's copy thread; done(arg,
 * ok) runs on that thread once the bytes are there. 0, or -1 when it cannot start (done not
 * called). */
int tt_cuda_copy(int device, uint64_t dst, uint64_t src, const struct tt_cuda_desc *peer,
                 size_t len, void (*done)(void *arg, int ok), void *arg);

/* The same on the calling thread, at once (a stream of its own per device): whether the bytes
 * are there when it returns. For small copies whose turn has come where they are planned, or
 * on Tutti's poller or transport thread as their last wait ends: a copy thread's wake-up, and
 * a queue waiting for the copy's user event, cost more than such a copy
 * (runtime/transfer/gpu.c). */
bool tt_cuda_copy_now(int device, uint64_t dst, uint64_t src, const struct tt_cuda_desc *peer,
                      size_t len);

#endif
