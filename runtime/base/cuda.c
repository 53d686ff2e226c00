/* The CUDA fast path (runtime/base/cuda.h): libcuda through dlopen, buffers in CUDA memory
 * imported into NVIDIA's OpenCL, and one copy thread that moves bytes between GPUs. */
#include "config.h"

#include "runtime/base/cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/base/backend.h"
#include "runtime/base/env.h"
#include "runtime/base/log.h"
#include "runtime/base/object.h"
#include "runtime/base/tutti_internal.h"

#include <CL/cl_ext.h>

#ifndef CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR
#define CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR 0x2060
#endif
#ifndef CL_MEM_DEVICE_HANDLE_LIST_KHR
#define CL_MEM_DEVICE_HANDLE_LIST_KHR 0x2051
#define CL_MEM_DEVICE_HANDLE_LIST_END_KHR 0
#endif
#ifndef CL_DEVICE_UUID_KHR
#define CL_DEVICE_UUID_KHR 0x106A
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* The few types of the CUDA driver API Tutti uses, as its ABI defines them (cuda.h is not
 * needed to build). */
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemhandle;
typedef struct {
  int type; /* 1: a device */
  int id;
} CUmemLocation;
typedef struct {
  int type;                 /* 1: pinned device memory */
  int requestedHandleTypes; /* 1: a POSIX file descriptor */
  CUmemLocation location;
  void *win32HandleMetaData;
  struct {
    unsigned char compressionType, gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
} CUmemAllocationProp;
typedef struct {
  CUmemLocation location;
  int flags; /* 3: read and write */
} CUmemAccessDesc;
_Static_assert(sizeof(CUmemAllocationProp) == 32, "CUmemAllocationProp as in cuda.h");
_Static_assert(sizeof(CUmemAccessDesc) == 12, "CUmemAccessDesc as in cuda.h");
enum { CU_POSIX_FD = 1, CU_PINNED = 1, CU_LOC_DEVICE = 1, CU_PROT_RW = 3, CU_NONBLOCKING = 1 };

static struct {
  CUresult (*Init)(unsigned);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetUuid)(unsigned char *, CUdevice);
  CUresult (*DeviceCanAccessPeer)(int *, CUdevice, CUdevice);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*StreamCreate)(CUstream *, unsigned);
  CUresult (*StreamSynchronize)(CUstream);
  CUresult (*MemGetAllocationGranularity)(size_t *, const CUmemAllocationProp *, int);
  CUresult (*MemCreate)(CUmemhandle *, size_t, const CUmemAllocationProp *, unsigned long long);
  CUresult (*MemRelease)(CUmemhandle);
  CUresult (*MemAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
  CUresult (*MemAddressFree)(CUdeviceptr, size_t);
  CUresult (*MemMap)(CUdeviceptr, size_t, size_t, CUmemhandle, unsigned long long);
  CUresult (*MemUnmap)(CUdeviceptr, size_t);
  CUresult (*MemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
  CUresult (*MemExportToShareableHandle)(void *, CUmemhandle, int, unsigned long long);
  CUresult (*MemImportFromShareableHandle)(CUmemhandle *, void *, int);
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*GetErrorString)(CUresult, const char **);
} cu;

#define MAX_DEVICES 16
static int ndevices;
static CUcontext contexts[MAX_DEVICES];
static CUstream streams[MAX_DEVICES];     /* the copy threads' */
static CUstream now_streams[MAX_DEVICES]; /* copies on the calling thread (tt_cuda_copy_now) */
static unsigned char uuids[MAX_DEVICES][16];
/* Bit j of peer_access[i]: devices i and j reach each other's memory (cuDeviceCanAccessPeer both
 * ways), so either's copy engines copy between them; bit i is set. */
static uint32_t peer_access[MAX_DEVICES];
static bool loaded;
static char load_why[128]; /* why libcuda cannot serve, once load() failed */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static const char *cu_error(CUresult r)
{
  const char *s = NULL;
  if (cu.GetErrorString)
    cu.GetErrorString(r, &s);
  return s ? s : "unknown CUDA error";
}

#define CU_OK(call) cu_ok((call), #call)
static bool cu_ok(CUresult r, const char *what)
{
  if (r != 0)
    TT_WARN("CUDA: %s failed: %s (%d)", what, cu_error(r), r);
  return r == 0;
}

/* Why the fast path is not taken: a warning where TUTTI_CUDA=on asked for it, a
 * TUTTI_DEBUG=backend line under the default (auto). */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (tt_env()->cuda == TT_CUDA_ON)
    TT_WARN("%s (TUTTI_CUDA=on)", msg);
  else
    TT_LOG(TT_LOG_BACKEND, "%s", msg);
}

static void load(void)
{
  void *dl = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    snprintf(load_why, sizeof load_why, "no libcuda.so.1");
    say("CUDA: no libcuda.so.1 (%s): GPU copies go through host memory", dlerror());
    return;
  }
  static const struct {
    const char *name;
    size_t at;
  } syms[] = {
#define SYM(field, name) {name, offsetof(__typeof__(cu), field)}
      SYM(Init, "cuInit"),
      SYM(DeviceGetCount, "cuDeviceGetCount"),
      SYM(DeviceGet, "cuDeviceGet"),
      SYM(DeviceGetUuid, "cuDeviceGetUuid_v2"),
      SYM(DeviceCanAccessPeer, "cuDeviceCanAccessPeer"),
      SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
      SYM(CtxSetCurrent, "cuCtxSetCurrent"),
      SYM(StreamCreate, "cuStreamCreate"),
      SYM(StreamSynchronize, "cuStreamSynchronize"),
      SYM(MemGetAllocationGranularity, "cuMemGetAllocationGranularity"),
      SYM(MemCreate, "cuMemCreate"),
      SYM(MemRelease, "cuMemRelease"),
      SYM(MemAddressReserve, "cuMemAddressReserve"),
      SYM(MemAddressFree, "cuMemAddressFree"),
      SYM(MemMap, "cuMemMap"),
      SYM(MemUnmap, "cuMemUnmap"),
      SYM(MemSetAccess, "cuMemSetAccess"),
      SYM(MemExportToShareableHandle, "cuMemExportToShareableHandle"),
      SYM(MemImportFromShareableHandle, "cuMemImportFromShareableHandle"),
      SYM(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
      SYM(MemcpyHtoD, "cuMemcpyHtoD_v2"),
      SYM(GetErrorString, "cuGetErrorString"),
#undef SYM
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    void *f = dlsym(dl, syms[i].name);
    if (!f) {
      snprintf(load_why, sizeof load_why, "libcuda lacks %s", syms[i].name);
      say("CUDA: libcuda lacks %s: GPU copies go through host memory", syms[i].name);
      return;
    }
    memcpy((char *)&cu + syms[i].at, &f, sizeof f);
  }
  CUresult r = cu.Init(0);
  if (r == 0)
    r = cu.DeviceGetCount(&ndevices);
  if (r != 0) {
    snprintf(load_why, sizeof load_why, "cuInit failed: %s", cu_error(r));
    say("CUDA: cuInit failed (%s): GPU copies go through host memory", cu_error(r));
    return;
  }
  if (ndevices > MAX_DEVICES)
    ndevices = MAX_DEVICES;
  CUdevice devs[MAX_DEVICES];
  for (int i = 0; i < ndevices; i++)
    if (cu.DeviceGet(&devs[i], i) != 0 || cu.DeviceGetUuid(uuids[i], devs[i]) != 0) {
      devs[i] = -1; /* matches no OpenCL device, and reaches none */
      memset(uuids[i], 0, sizeof uuids[i]);
    }
  for (int i = 0; i < ndevices; i++) {
    peer_access[i] |= 1u << i;
    for (int j = i + 1; j < ndevices; j++) {
      int ij = 0, ji = 0;
      if (devs[i] >= 0 && devs[j] >= 0 && cu.DeviceCanAccessPeer(&ij, devs[i], devs[j]) == 0 &&
          cu.DeviceCanAccessPeer(&ji, devs[j], devs[i]) == 0 && ij && ji) {
        peer_access[i] |= 1u << j;
        peer_access[j] |= 1u << i;
      }
    }
  }
  loaded = true;
}

static bool ready(void)
{
  pthread_once(&load_once, load);
  return loaded;
}

/* The primary context of device i, current on this thread, and its stream. */
static bool enter(int i)
{
  if (!ready() || i < 0 || i >= ndevices)
    return false;
  if (!contexts[i]) {
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    CUdevice d;
    if (!contexts[i] && CU_OK(cu.DeviceGet(&d, i)))
      CU_OK(cu.DevicePrimaryCtxRetain(&contexts[i], d));
    if (contexts[i] && !streams[i] && CU_OK(cu.CtxSetCurrent(contexts[i]))) {
      if (!now_streams[i])
        CU_OK(cu.StreamCreate(&now_streams[i], CU_NONBLOCKING));
      if (now_streams[i])
        CU_OK(cu.StreamCreate(&streams[i], CU_NONBLOCKING));
    }
    pthread_mutex_unlock(&lock);
  }
  return contexts[i] && streams[i] && CU_OK(cu.CtxSetCurrent(contexts[i]));
}

int tt_cuda_device_of(struct tt_backend_platform *bp, cl_device_id native, char *why,
                      size_t cap, uint32_t *reach)
{
  *reach = 0;
  if (strcmp(bp->short_name, "nvidia") != 0) {
    snprintf(why, cap, "through host memory: not an NVIDIA device");
    return -1;
  }
  if (tt_env()->cuda == TT_CUDA_OFF) {
    snprintf(why, cap, "through host memory: TUTTI_CUDA=off");
    return -1;
  }
  char ext[8192] = "", name[128] = "";
  unsigned char uuid[16];
  TT_NCALL(bp, clGetDeviceInfo, native, CL_DEVICE_NAME, sizeof name, name, NULL);
  if (TT_NCALL(bp, clGetDeviceInfo, native, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL) !=
          CL_SUCCESS ||
      !strstr(ext, "cl_khr_external_memory_opaque_fd") || !strstr(ext, "cl_khr_device_uuid") ||
      !bp->d->clCreateBufferWithProperties ||
      TT_NCALL(bp, clGetDeviceInfo, native, CL_DEVICE_UUID_KHR, sizeof uuid, uuid, NULL) !=
          CL_SUCCESS) {
    snprintf(why, cap, "through host memory: the driver lacks cl_khr_external_memory_opaque_fd "
             "or cl_khr_device_uuid");
    say("CUDA: %s without cl_khr_external_memory_opaque_fd or cl_khr_device_uuid: its copies "
        "go through host memory", name);
    return -1;
  }
  if (!ready()) {
    snprintf(why, cap, "through host memory: %s", load_why);
    return -1;
  }
  for (int i = 0; i < ndevices; i++)
    if (!memcmp(uuids[i], uuid, sizeof uuid)) {
      /* The CUDA devices it has no peer access with, by number. */
      char lacks[64] = "";
      size_t at = 0;
      for (int j = 0; j < ndevices && at < sizeof lacks; j++)
        if (!(peer_access[i] >> j & 1))
          at += (size_t)snprintf(lacks + at, sizeof lacks - at, " %d", j);
      snprintf(why, cap, "copy engines of CUDA device %d%s%s", i,
               at ? ", without peer access to CUDA devices" : "", lacks);
      TT_LOG(TT_LOG_BACKEND, "CUDA: %s is CUDA device %d: its copies to and from the other "
             "such GPUs of this host go by the copy engines%s%s", name, i,
             at ? ", but for CUDA devices without peer access, through host memory:" : "",
             lacks);
      *reach = peer_access[i];
      return i;
    }
  snprintf(why, cap, "through host memory: no CUDA device has its UUID");
  say("CUDA: no CUDA device has the UUID of %s: its copies go through host memory", name);
  return -1;
}

/* --- buffers ------------------------------------------------------------------------- */

struct cuda_mem {
  struct cuda_mem *next;
  cl_mem native;
  CUdeviceptr va;
  CUmemhandle handle;
  size_t size; /* allocated (a multiple of the granularity) */
  int fd;
  int device;
  uint64_t serial;
};

static pthread_mutex_t mems_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cuda_mem *mems;
static atomic_uint_fast64_t next_serial = 1;

static void mem_free(struct cuda_mem *c)
{
  if (c->va) {
    cu.MemUnmap(c->va, c->size);
    cu.MemAddressFree(c->va, c->size);
  }
  if (c->handle)
    cu.MemRelease(c->handle);
  if (c->fd >= 0)
    close(c->fd);
  free(c);
}

static void CL_CALLBACK mem_gone(cl_mem native, void *arg)
{
  (void)native;
  struct cuda_mem *c = arg;
  pthread_mutex_lock(&mems_lock);
  for (struct cuda_mem **p = &mems; *p; p = &(*p)->next)
    if (*p == c) {
      *p = c->next;
      break;
    }
  pthread_mutex_unlock(&mems_lock);
  mem_free(c);
}

cl_mem tt_cuda_buffer_new(struct tt_backend_platform *bp, cl_context ctx, cl_device_id ndev,
                          int device, cl_mem_flags flags, size_t size, const void *init,
                          cl_int *err)
{
  struct cuda_mem *c = calloc(1, sizeof *c);
  if (!c || !enter(device)) {
    free(c);
    *err = c ? CL_OUT_OF_RESOURCES : CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  c->fd = -1;
  c->device = device;
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof prop);
  prop.type = CU_PINNED;
  prop.requestedHandleTypes = CU_POSIX_FD;
  prop.location.type = CU_LOC_DEVICE;
  prop.location.id = device;
  size_t gran = 0;
  bool ok = CU_OK(cu.MemGetAllocationGranularity(&gran, &prop, 0)) && gran;
  if (ok) {
    c->size = (size + gran - 1) / gran * gran;
    CUresult r = cu.MemCreate(&c->handle, c->size, &prop, 0);
    if (r != 0) {
      /* Out of device memory: the error the backend would give. */
      TT_LOG(TT_LOG_MM, "CUDA: cuMemCreate of %zu bytes on device %d: %s", c->size, device,
             cu_error(r));
      c->handle = 0;
      mem_free(c);
      *err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
      return NULL;
    }
  }
  ok = ok && CU_OK(cu.MemAddressReserve(&c->va, c->size, 0, 0, 0));
  if (ok && !CU_OK(cu.MemMap(c->va, c->size, 0, c->handle, 0))) {
    cu.MemAddressFree(c->va, c->size);
    c->va = 0;
    ok = false;
  }
  /* Every device that can reach it reads and writes it (copies between GPUs of a rank). */
  CUmemAccessDesc access[MAX_DEVICES];
  size_t naccess = 0;
  for (int i = 0; ok && i < ndevices; i++)
    if (peer_access[device] >> i & 1)
      access[naccess++] = (CUmemAccessDesc){{CU_LOC_DEVICE, i}, CU_PROT_RW};
  ok = ok && CU_OK(cu.MemSetAccess(c->va, c->size, access, naccess));
  ok = ok && CU_OK(cu.MemExportToShareableHandle(&c->fd, c->handle, CU_POSIX_FD, 0));
  if (ok && init)
    ok = CU_OK(cu.MemcpyHtoD(c->va, init, size));
  cl_mem m = NULL;
  /* An import takes its descriptor over (as Vulkan's does: NVIDIA's closes it): it gets a
   * copy, Tutti keeps the one it shares with other ranks. */
  int import_fd = ok ? dup(c->fd) : -1;
  if (import_fd >= 0) {
    cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, (cl_mem_properties)import_fd,
                                 CL_MEM_DEVICE_HANDLE_LIST_KHR, (cl_mem_properties)(uintptr_t)ndev,
                                 CL_MEM_DEVICE_HANDLE_LIST_END_KHR, 0};
    flags &= CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY;
    m = bp->d->clCreateBufferWithProperties(ctx, props, flags, size, NULL, err);
    if (!m) {
      close(import_fd);
      TT_WARN("CUDA: NVIDIA's OpenCL refused to import %zu bytes of CUDA memory: %s (set "
              "TUTTI_CUDA=off to leave NVIDIA devices' memory to OpenCL)", size,
              tt_error_name(*err));
    }
  } else {
    *err = CL_OUT_OF_RESOURCES;
  }
  if (m && (*err = bp->d->clSetMemObjectDestructorCallback(m, mem_gone, c)) != CL_SUCCESS) {
    bp->d->clReleaseMemObject(m);
    m = NULL;
  }
  if (!m) {
    mem_free(c);
    return NULL;
  }
  c->native = m;
  c->serial = atomic_fetch_add(&next_serial, 1);
  pthread_mutex_lock(&mems_lock);
  c->next = mems;
  mems = c;
  pthread_mutex_unlock(&mems_lock);
  TT_LOG(TT_LOG_MM, "CUDA: %zu bytes on CUDA device %d (allocation %llu)", size, device,
         (unsigned long long)c->serial);
  return m;
}

static bool lookup(cl_mem native, struct cuda_mem *out)
{
  pthread_mutex_lock(&mems_lock);
  struct cuda_mem *c = mems;
  while (c && c->native != native)
    c = c->next;
  if (c)
    *out = *c;
  pthread_mutex_unlock(&mems_lock);
  return c != NULL;
}

bool tt_cuda_describe(cl_mem native, size_t at, struct tt_cuda_desc *d)
{
  struct cuda_mem c;
  memset(d, 0, sizeof *d);
  if (!lookup(native, &c))
    return false;
  d->pid = (int32_t)getpid();
  d->fd = c.fd;
  d->serial = c.serial;
  d->size = c.size;
  d->at = at;
  d->ok = 1;
  return true;
}

uint64_t tt_cuda_address(cl_mem native, size_t at)
{
  struct cuda_mem c;
  return lookup(native, &c) ? c.va + at : 0;
}

/* --- memory of other ranks of the host (copy threads, under peers_lock) ----------------- */

/* Imported allocations of peers, most recently used first; the oldest goes beyond PEERS
 * (it may still hold memory its owner released). An import is mapped once and made
 * reachable from each device of this rank that copies from it, as one first does: a copy
 * by a device without access fails with "invalid argument". */
#define PEERS 32
static struct peer {
  int32_t pid;
  uint64_t serial;
  CUdeviceptr va;
  size_t size;
  CUmemhandle handle;
  uint32_t reach; /* bit i: device i may access it */
} peers[PEERS];
static int npeers;

static void peer_drop(struct peer *p)
{
  cu.MemUnmap(p->va, p->size);
  cu.MemAddressFree(p->va, p->size);
  cu.MemRelease(p->handle);
}

/* Lets device reach import p (a device of this rank; at most one call per pair). */
static bool peer_reach(struct peer *p, int device)
{
  if (p->reach & (1u << device))
    return true;
  CUmemAccessDesc access = {{CU_LOC_DEVICE, device}, CU_PROT_RW};
  if (!CU_OK(cu.MemSetAccess(p->va, p->size, &access, 1)))
    return false;
  p->reach |= 1u << device;
  return true;
}

static CUdeviceptr peer_address(const struct tt_cuda_desc *d, int device)
{
  for (int i = 0; i < npeers; i++)
    if (peers[i].pid == d->pid && peers[i].serial == d->serial) {
      struct peer p = peers[i];
      memmove(&peers[1], &peers[0], (size_t)i * sizeof peers[0]);
      peers[0] = p;
      return peer_reach(&peers[0], device) ? p.va + d->at : 0;
    }
  int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)d->pid, 0);
  int fd = pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pidfd, d->fd, 0) : -1;
  if (pidfd >= 0)
    close(pidfd);
  if (fd < 0) {
    TT_WARN("CUDA: cannot take the memory descriptor of process %d (pidfd_getfd: %m): "
            "ranks of one host must be allowed to (ptrace rules), or set TUTTI_CUDA=off",
            (int)d->pid);
    return 0;
  }
  struct peer p = {d->pid, d->serial, 0, d->size, 0, 0};
  bool ok = CU_OK(cu.MemImportFromShareableHandle(&p.handle, (void *)(intptr_t)fd, CU_POSIX_FD));
  close(fd);
  ok = ok && CU_OK(cu.MemAddressReserve(&p.va, p.size, 0, 0, 0));
  bool mapped = ok && CU_OK(cu.MemMap(p.va, p.size, 0, p.handle, 0));
  ok = mapped && peer_reach(&p, device);
  if (!ok) {
    if (mapped)
      cu.MemUnmap(p.va, p.size);
    if (p.va)
      cu.MemAddressFree(p.va, p.size);
    if (p.handle)
      cu.MemRelease(p.handle);
    return 0;
  }
  if (npeers == PEERS)
    peer_drop(&peers[--npeers]);
  memmove(&peers[1], &peers[0], (size_t)npeers * sizeof peers[0]);
  peers[0] = p;
  npeers++;
  return p.va + d->at;
}

/* --- the copy threads ------------------------------------------------------------------ */

/* Each copy runs on the copying (destination) device's stream and is synchronized before
 * its end is told. Each device has a thread of its own (TUTTI_CUDA_THREADS=gpu, the
 * default), so that copies into different GPUs of the rank overlap; with =one a single
 * thread takes every copy of the rank, one after another. The cache of other ranks' memory is shared: a copy from it holds
 * peers_lock from the lookup to its end, so that no import goes while a copy reads it. */
struct job {
  struct job *next;
  int device;
  CUdeviceptr dst, src;
  struct tt_cuda_desc peer;
  bool from_peer;
  size_t len;
  void (*done)(void *, int);
  void *arg;
};

/* The jobs of one thread: queue 0 takes every device's, or each device its own. */
struct jobs {
  struct job *head, **tail;
  pthread_cond_t cond;
  bool started;
};
static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t peers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct jobs queues[MAX_DEVICES];

static bool copy_on(CUstream s, CUdeviceptr dst, CUdeviceptr src, size_t len)
{
  return CU_OK(cu.MemcpyDtoDAsync(dst, src, len, s)) && CU_OK(cu.StreamSynchronize(s));
}

/* From src, or from the bytes a peer described (peer not NULL): its import is held from the
 * lookup to the copy's end. */
static bool copy_from(CUstream s, int device, CUdeviceptr dst, CUdeviceptr src,
                      const struct tt_cuda_desc *peer, size_t len)
{
  if (!peer)
    return copy_on(s, dst, src, len);
  pthread_mutex_lock(&peers_lock);
  bool ok = peer->ok && (src = peer_address(peer, device)) != 0 && copy_on(s, dst, src, len);
  pthread_mutex_unlock(&peers_lock);
  return ok;
}

static void *worker(void *arg)
{
  struct jobs *q = arg;
  for (;;) {
    pthread_mutex_lock(&jobs_lock);
    while (!q->head)
      pthread_cond_wait(&q->cond, &jobs_lock);
    struct job *j = q->head;
    q->head = j->next;
    if (!q->head)
      q->tail = &q->head;
    pthread_mutex_unlock(&jobs_lock);
    bool ok = enter(j->device) && copy_from(streams[j->device], j->device, j->dst, j->src,
                                            j->from_peer ? &j->peer : NULL, j->len);
    j->done(j->arg, ok);
    free(j);
  }
  return NULL;
}

int tt_cuda_copy(int device, uint64_t dst, uint64_t src, const struct tt_cuda_desc *peer,
                 size_t len, void (*done)(void *arg, int ok), void *arg)
{
  struct job *j = calloc(1, sizeof *j);
  if (!j || !ready() || device < 0 || device >= MAX_DEVICES)
    return free(j), -1;
  *j = (struct job){NULL, device, dst, src, {0}, peer != NULL, len, done, arg};
  if (peer)
    j->peer = *peer;
  struct jobs *q = &queues[tt_env()->cuda_thread_per_gpu ? device : 0];
  pthread_mutex_lock(&jobs_lock);
  if (!q->started) {
    q->head = NULL;
    q->tail = &q->head;
    pthread_cond_init(&q->cond, NULL);
    char name[16] = "tutti-cuda";
    if (tt_env()->cuda_thread_per_gpu)
      snprintf(name, sizeof name, "tutti-cuda%d", device);
    q->started = tt_thread_start(name, worker, q);
    if (!q->started) {
      pthread_cond_destroy(&q->cond);
      pthread_mutex_unlock(&jobs_lock);
      free(j);
      return -1;
    }
  }
  *q->tail = j;
  q->tail = &j->next;
  pthread_cond_signal(&q->cond);
  pthread_mutex_unlock(&jobs_lock);
  return 0;
}

bool tt_cuda_copy_now(int device, uint64_t dst, uint64_t src, const struct tt_cuda_desc *peer,
                      size_t len)
{
  return enter(device) && copy_from(now_streams[device], device, dst, src, peer, len);
}
