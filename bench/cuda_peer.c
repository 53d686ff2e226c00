/* bench/cuda_peer.h: the CUDA driver API through dlopen, no cuda.h needed to build. */
#include "bench/cuda_peer.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemhandle;
/* As cuda.h lays them out (runtime/base/cuda.c checks the same sizes). */
typedef struct {
  int type, id;
} CUmemLocation;
typedef struct {
  int type, requestedHandleTypes;
  CUmemLocation location;
  void *win32HandleMetaData;
  unsigned char allocFlags[8];
} CUmemAllocationProp;
typedef struct {
  CUmemLocation location;
  int flags;
} CUmemAccessDesc;

static struct {
  CUresult (*Init)(unsigned);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(int *, int);
  CUresult (*DevicePrimaryCtxRetain)(void **, int);
  CUresult (*CtxSetCurrent)(void *);
  CUresult (*CtxEnablePeerAccess)(void *, unsigned);
  CUresult (*DeviceCanAccessPeer)(int *, int, int);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*StreamCreate)(void **, unsigned);
  CUresult (*StreamDestroy)(void *);
  CUresult (*StreamSynchronize)(void *);
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, void *);
  CUresult (*MemGetAllocationGranularity)(size_t *, const CUmemAllocationProp *, int);
  CUresult (*MemCreate)(CUmemhandle *, size_t, const CUmemAllocationProp *, unsigned long long);
  CUresult (*MemRelease)(CUmemhandle);
  CUresult (*MemAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
  CUresult (*MemAddressFree)(CUdeviceptr, size_t);
  CUresult (*MemMap)(CUdeviceptr, size_t, size_t, CUmemhandle, unsigned long long);
  CUresult (*MemUnmap)(CUdeviceptr, size_t);
  CUresult (*MemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
} cu;

static char failed[128]; /* why libcuda cannot be used */

static int load(void)
{
  static int state; /* 0: not tried, 1: loaded, -1: not there */
  if (state)
    return state;
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(failed, sizeof failed, "no libcuda.so.1");
    return state = -1;
  }
  struct {
    void **slot;
    const char *name;
  } syms[] = {
      {(void **)&cu.Init, "cuInit"},
      {(void **)&cu.DeviceGetCount, "cuDeviceGetCount"},
      {(void **)&cu.DeviceGet, "cuDeviceGet"},
      {(void **)&cu.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
      {(void **)&cu.CtxSetCurrent, "cuCtxSetCurrent"},
      {(void **)&cu.CtxEnablePeerAccess, "cuCtxEnablePeerAccess"},
      {(void **)&cu.DeviceCanAccessPeer, "cuDeviceCanAccessPeer"},
      {(void **)&cu.MemAlloc, "cuMemAlloc_v2"},
      {(void **)&cu.MemFree, "cuMemFree_v2"},
      {(void **)&cu.MemsetD8, "cuMemsetD8_v2"},
      {(void **)&cu.StreamCreate, "cuStreamCreate"},
      {(void **)&cu.StreamDestroy, "cuStreamDestroy_v2"},
      {(void **)&cu.StreamSynchronize, "cuStreamSynchronize"},
      {(void **)&cu.MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"},
      {(void **)&cu.MemGetAllocationGranularity, "cuMemGetAllocationGranularity"},
      {(void **)&cu.MemCreate, "cuMemCreate"},
      {(void **)&cu.MemRelease, "cuMemRelease"},
      {(void **)&cu.MemAddressReserve, "cuMemAddressReserve"},
      {(void **)&cu.MemAddressFree, "cuMemAddressFree"},
      {(void **)&cu.MemMap, "cuMemMap"},
      {(void **)&cu.MemUnmap, "cuMemUnmap"},
      {(void **)&cu.MemSetAccess, "cuMemSetAccess"},
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
    if (!(*syms[i].slot = dlsym(h, syms[i].name))) {
      snprintf(failed, sizeof failed, "libcuda lacks %s", syms[i].name);
      return state = -1;
    }
  if (cu.Init(0) != 0) {
    snprintf(failed, sizeof failed, "cuInit failed");
    return state = -1;
  }
  return state = 1;
}

/* Memory as Tutti allocates it (runtime/base/cuda.c): a physical allocation of `ordinal`'s
 * device, at the minimum granularity, mapped into a reserved range that both devices may
 * access. Returns the address, 0 on failure; *size: the mapped size. */
static CUdeviceptr vmm_alloc(int ordinal, const int both[2], size_t bytes, CUmemhandle *h,
                             size_t *size)
{
  CUmemAllocationProp prop = {1, 1, {1, ordinal}, NULL, {0}};
  size_t g = 0;
  CUdeviceptr va = 0;
  if (cu.MemGetAllocationGranularity(&g, &prop, 0) || !g)
    return 0;
  *size = (bytes + g - 1) / g * g;
  if (cu.MemCreate(h, *size, &prop, 0))
    return 0;
  CUmemAccessDesc access[2] = {{{1, both[0]}, 3}, {{1, both[1]}, 3}};
  if (cu.MemAddressReserve(&va, *size, 0, 0, 0) || cu.MemMap(va, *size, 0, *h, 0) ||
      cu.MemSetAccess(va, *size, access, 2)) {
    cu.MemRelease(*h);
    return 0;
  }
  return va;
}

double cuda_peer_copy(int from, int to, size_t bytes, int rounds, char *why, size_t cap)
{
  return cuda_peer_copy_of(from, to, bytes, rounds, CUDA_MEM_ALLOC, why, cap);
}

double cuda_peer_copy_of(int from, int to, size_t bytes, int rounds, enum cuda_mem_kind kind,
                         char *why, size_t cap)
{
  int n = 0, dev[2];
  void *ctx[2], *stream = NULL;
  CUdeviceptr mem[2] = {0, 0};
  CUmemhandle handle[2] = {0, 0};
  size_t mapped[2] = {0, 0};
  double result = -1;
  if (load() < 0) {
    snprintf(why, cap, "%s", failed);
    return -1;
  }
  if (cu.DeviceGetCount(&n) != 0 || n <= (from > to ? from : to)) {
    snprintf(why, cap, "CUDA shows %d GPU(s)", n);
    return -1;
  }
  int ends[2] = {from, to};
  for (int k = 0; k < 2; k++)
    if (cu.DeviceGet(&dev[k], ends[k]) || cu.DevicePrimaryCtxRetain(&ctx[k], dev[k]) ||
        cu.CtxSetCurrent(ctx[k]) ||
        (kind == CUDA_MEM_ALLOC
             ? cu.MemAlloc(&mem[k], bytes) != 0
             : !(mem[k] = vmm_alloc(ends[k], ends, bytes, &handle[k], &mapped[k]))) ||
        cu.MemsetD8(mem[k], 1, bytes)) {
      snprintf(why, cap, "allocating %zu bytes on CUDA device %d failed", bytes, ends[k]);
      goto out;
    }
  /* The destination copies, reading the source over the link where it can reach it. */
  int can = 0;
  cu.DeviceCanAccessPeer(&can, dev[1], dev[0]);
  cu.CtxSetCurrent(ctx[1]);
  if (can)
    cu.CtxEnablePeerAccess(ctx[0], 0); /* already enabled: an error that changes nothing */
  if (cu.StreamCreate(&stream, 0)) {
    snprintf(why, cap, "cuStreamCreate failed");
    goto out;
  }
  double *t = malloc((size_t)(rounds + 1) * sizeof *t);
  for (int r = 0; t && r <= rounds; r++) {
    if (kind == CUDA_MEM_VMM_IDLE)
      nanosleep(&(struct timespec){0, CUDA_IDLE_MS * 1000000L}, NULL);
    double t0 = now();
    if (cu.MemcpyDtoDAsync(mem[1], mem[0], bytes, stream) || cu.StreamSynchronize(stream)) {
      snprintf(why, cap, "cuMemcpyDtoDAsync failed");
      free(t);
      goto out;
    }
    t[r] = now() - t0; /* round 0 warms up */
  }
  if (t) {
    qsort(t + 1, (size_t)rounds, sizeof *t, cmp);
    result = rounds % 2 ? t[1 + rounds / 2] : (t[rounds / 2] + t[rounds / 2 + 1]) / 2;
    free(t);
  }
out:
  if (stream)
    cu.StreamDestroy(stream);
  for (int k = 0; k < 2; k++)
    if (mem[k]) {
      cu.CtxSetCurrent(ctx[k]);
      if (kind == CUDA_MEM_ALLOC) {
        cu.MemFree(mem[k]);
      } else {
        cu.MemUnmap(mem[k], mapped[k]);
        cu.MemAddressFree(mem[k], mapped[k]);
        cu.MemRelease(handle[k]);
      }
    }
  return result;
}
