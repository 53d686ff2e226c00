/* bench/cuda_peer.h: the CUDA driver API through dlopen, no cuda.h needed to build. */
#include "bench/cuda_peer.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

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

double cuda_peer_copy(int from, int to, size_t bytes, int rounds, char *why, size_t cap)
{
  int n = 0, dev[2];
  void *ctx[2], *stream = NULL;
  CUdeviceptr mem[2] = {0, 0};
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
        cu.CtxSetCurrent(ctx[k]) || cu.MemAlloc(&mem[k], bytes) || cu.MemsetD8(mem[k], 1, bytes)) {
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
      cu.MemFree(mem[k]);
    }
  return result;
}
