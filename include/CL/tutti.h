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
#define CL_DEVICE_TUTTI_GPU_COPIES 0x4E15   /* char[]: how its bytes move to other GPUs of its
                                             * host: "copy engines of CUDA device N" (and
                                             * ", without peer access to CUDA devices J K"
                                             * where some pairs lack it), or "through host
                                             * memory: " and why */

/* clGetPlatformInfo queries. */
#define CL_PLATFORM_TUTTI_RANKS 0x4E00      /* cl_int: ranks in the job */
#define CL_PLATFORM_TUTTI_RANK 0x4E01       /* cl_int: the calling rank */
#define CL_PLATFORM_TUTTI_BACKENDS 0x4E02   /* char[]: the calling rank's backends, a line each:
                                               "short: platform name (library), N device(s)" */

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

/* cl_tutti_collective: SnuCL's collective buffer commands (doc/extensions.md). Offsets are
 * per buffer (NULL lists mean zeros), cb is a block's size in bytes. */
#define CL_COMMAND_ALLTOALL_BUFFER 0x1300
#define CL_COMMAND_BROADCAST_BUFFER 0x1301
#define CL_COMMAND_SCATTER_BUFFER 0x1302
#define CL_COMMAND_GATHER_BUFFER 0x1303
#define CL_COMMAND_ALLGATHER_BUFFER 0x1304
#define CL_COMMAND_REDUCE_BUFFER 0x1305
#define CL_COMMAND_ALLREDUCE_BUFFER 0x1306
#define CL_COMMAND_REDUCESCATTER_BUFFER 0x1307
#define CL_COMMAND_SCAN_BUFFER 0x1308
#ifndef CL_DOUBLE
#define CL_DOUBLE 0x10DF /* datatype of double elements (CL_SIGNED_INT32, CL_UNSIGNED_INT32, CL_FLOAT too) */
#endif

typedef cl_int (CL_API_CALL *clEnqueueAlltoAllBuffer_fn)(
    cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off,
    size_t cb, cl_uint nwait, const cl_event *wait, cl_event *events);
typedef cl_int (CL_API_CALL *clEnqueueBroadcastBuffer_fn)(
    cl_command_queue *qs, cl_mem src, cl_uint n_dst, cl_mem *dst, size_t src_off, size_t *dst_off,
    size_t cb, cl_uint nwait, const cl_event *wait, cl_event *events);
typedef clEnqueueBroadcastBuffer_fn clEnqueueScatterBuffer_fn;
typedef cl_int (CL_API_CALL *clEnqueueGatherBuffer_fn)(
    cl_command_queue q, cl_uint n_src, cl_mem *src, cl_mem dst, size_t *src_off, size_t dst_off,
    size_t cb, cl_uint nwait, const cl_event *wait, cl_event *event);
typedef clEnqueueAlltoAllBuffer_fn clEnqueueAllGatherBuffer_fn;
typedef cl_int (CL_API_CALL *clEnqueueReduceBuffer_fn)(
    cl_command_queue q, cl_uint n_src, cl_mem *src, cl_mem dst, size_t *src_off, size_t dst_off,
    size_t cb, cl_channel_type datatype, cl_uint nwait, const cl_event *wait, cl_event *event);
typedef cl_int (CL_API_CALL *clEnqueueAllReduceBuffer_fn)(
    cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off,
    size_t cb, cl_channel_type datatype, cl_uint nwait, const cl_event *wait, cl_event *events);
typedef clEnqueueAllReduceBuffer_fn clEnqueueReduceScatterBuffer_fn;
typedef clEnqueueAllReduceBuffer_fn clEnqueueScanBuffer_fn;

#ifdef TUTTI_LINKED
extern CL_API_ENTRY cl_int CL_API_CALL clEnqueueAlltoAllBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *events);
extern CL_API_ENTRY cl_int CL_API_CALL clEnqueueBroadcastBuffer(cl_command_queue *qs, cl_mem src, cl_uint n_dst, cl_mem *dst, size_t src_off, size_t *dst_off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *events);
extern CL_API_ENTRY cl_int CL_API_CALL clEnqueueScatterBuffer(cl_command_queue *qs, cl_mem src, cl_uint n_dst, cl_mem *dst, size_t src_off, size_t *dst_off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *events);
extern CL_API_ENTRY cl_int CL_API_CALL clEnqueueGatherBuffer(cl_command_queue q, cl_uint n_src, cl_mem *src, cl_mem dst, size_t *src_off, size_t dst_off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *event);
extern CL_API_ENTRY cl_int CL_API_CALL clEnqueueAllGatherBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *events);
extern CL_API_ENTRY cl_int CL_API_CALL clEnqueueReduceBuffer(cl_command_queue q, cl_uint n_src, cl_mem *src, cl_mem dst, size_t *src_off, size_t dst_off, size_t cb, cl_channel_type datatype, cl_uint nwait, const cl_event *wait, cl_event *event);
extern CL_API_ENTRY cl_int CL_API_CALL clEnqueueAllReduceBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off, size_t cb, cl_channel_type datatype, cl_uint nwait, const cl_event *wait, cl_event *events);
extern CL_API_ENTRY cl_int CL_API_CALL clEnqueueReduceScatterBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off, size_t cb, cl_channel_type datatype, cl_uint nwait, const cl_event *wait, cl_event *events);
extern CL_API_ENTRY cl_int CL_API_CALL clEnqueueScanBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off, size_t cb, cl_channel_type datatype, cl_uint nwait, const cl_event *wait, cl_event *events);
#else
/* Found through the Tutti platform, once per function. */
static inline void *tutti_extension(const char *name)
{
  cl_platform_id p[16];
  cl_uint n = 0;
  if (clGetPlatformIDs(16, p, &n) != CL_SUCCESS)
    return NULL;
  for (cl_uint i = 0; i < n && i < 16; i++) {
    void *f = clGetExtensionFunctionAddressForPlatform(p[i], name);
    if (f)
      return f;
  }
  return NULL;
}

static inline cl_int clEnqueueAlltoAllBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *events)
{
  static clEnqueueAlltoAllBuffer_fn fn;
  if (!fn)
    fn = (clEnqueueAlltoAllBuffer_fn)tutti_extension("clEnqueueAlltoAllBuffer");
  return fn ? fn(qs, n, src, dst, src_off, dst_off, cb, nwait, wait, events) : CL_INVALID_PLATFORM;
}

static inline cl_int clEnqueueBroadcastBuffer(cl_command_queue *qs, cl_mem src, cl_uint n_dst, cl_mem *dst, size_t src_off, size_t *dst_off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *events)
{
  static clEnqueueBroadcastBuffer_fn fn;
  if (!fn)
    fn = (clEnqueueBroadcastBuffer_fn)tutti_extension("clEnqueueBroadcastBuffer");
  return fn ? fn(qs, src, n_dst, dst, src_off, dst_off, cb, nwait, wait, events) : CL_INVALID_PLATFORM;
}

static inline cl_int clEnqueueScatterBuffer(cl_command_queue *qs, cl_mem src, cl_uint n_dst, cl_mem *dst, size_t src_off, size_t *dst_off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *events)
{
  static clEnqueueScatterBuffer_fn fn;
  if (!fn)
    fn = (clEnqueueScatterBuffer_fn)tutti_extension("clEnqueueScatterBuffer");
  return fn ? fn(qs, src, n_dst, dst, src_off, dst_off, cb, nwait, wait, events) : CL_INVALID_PLATFORM;
}

static inline cl_int clEnqueueGatherBuffer(cl_command_queue q, cl_uint n_src, cl_mem *src, cl_mem dst, size_t *src_off, size_t dst_off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *event)
{
  static clEnqueueGatherBuffer_fn fn;
  if (!fn)
    fn = (clEnqueueGatherBuffer_fn)tutti_extension("clEnqueueGatherBuffer");
  return fn ? fn(q, n_src, src, dst, src_off, dst_off, cb, nwait, wait, event) : CL_INVALID_PLATFORM;
}

static inline cl_int clEnqueueAllGatherBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *events)
{
  static clEnqueueAllGatherBuffer_fn fn;
  if (!fn)
    fn = (clEnqueueAllGatherBuffer_fn)tutti_extension("clEnqueueAllGatherBuffer");
  return fn ? fn(qs, n, src, dst, src_off, dst_off, cb, nwait, wait, events) : CL_INVALID_PLATFORM;
}

static inline cl_int clEnqueueReduceBuffer(cl_command_queue q, cl_uint n_src, cl_mem *src, cl_mem dst, size_t *src_off, size_t dst_off, size_t cb, cl_channel_type datatype, cl_uint nwait, const cl_event *wait, cl_event *event)
{
  static clEnqueueReduceBuffer_fn fn;
  if (!fn)
    fn = (clEnqueueReduceBuffer_fn)tutti_extension("clEnqueueReduceBuffer");
  return fn ? fn(q, n_src, src, dst, src_off, dst_off, cb, datatype, nwait, wait, event) : CL_INVALID_PLATFORM;
}

static inline cl_int clEnqueueAllReduceBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off, size_t cb, cl_channel_type datatype, cl_uint nwait, const cl_event *wait, cl_event *events)
{
  static clEnqueueAllReduceBuffer_fn fn;
  if (!fn)
    fn = (clEnqueueAllReduceBuffer_fn)tutti_extension("clEnqueueAllReduceBuffer");
  return fn ? fn(qs, n, src, dst, src_off, dst_off, cb, datatype, nwait, wait, events) : CL_INVALID_PLATFORM;
}

static inline cl_int clEnqueueReduceScatterBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off, size_t cb, cl_channel_type datatype, cl_uint nwait, const cl_event *wait, cl_event *events)
{
  static clEnqueueReduceScatterBuffer_fn fn;
  if (!fn)
    fn = (clEnqueueReduceScatterBuffer_fn)tutti_extension("clEnqueueReduceScatterBuffer");
  return fn ? fn(qs, n, src, dst, src_off, dst_off, cb, datatype, nwait, wait, events) : CL_INVALID_PLATFORM;
}

static inline cl_int clEnqueueScanBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off, size_t cb, cl_channel_type datatype, cl_uint nwait, const cl_event *wait, cl_event *events)
{
  static clEnqueueScanBuffer_fn fn;
  if (!fn)
    fn = (clEnqueueScanBuffer_fn)tutti_extension("clEnqueueScanBuffer");
  return fn ? fn(qs, n, src, dst, src_off, dst_off, cb, datatype, nwait, wait, events) : CL_INVALID_PLATFORM;
}
#endif

/* cl_tutti_split: one kernel launch split over the devices of several queues, from data-access
 * annotations (doc/split.md). Every rank calls these at the same program step. */
#define CL_TUTTI_DIST_BLOCK 1      /* contiguous chunks along axis 0, one per device in order */
#define CL_TUTTI_DIST_CYCLIC 2     /* chunks of chunk[] elements dealt round-robin */
#define CL_TUTTI_DIST_REPLICATED 3 /* a copy wherever read */

typedef struct {
  cl_uint kind;                /* CL_TUTTI_DIST_* */
  cl_uint ndims;               /* 1..3 */
  size_t elem_size;            /* bytes per element */
  size_t extents[3];           /* elements per axis, axis 0 slowest (row-major) */
  size_t chunk[3];             /* CYCLIC: elements per chunk per axis; else ignored */
  cl_uint num_devices;         /* 0: every device of the buffer's context, in order */
  const cl_device_id *devices;
} cl_tutti_distribution;

typedef cl_int (CL_API_CALL *clSetKernelAnnotationTUTTI_fn)(cl_kernel kernel,
                                                           const char *annotation);
typedef cl_int (CL_API_CALL *clSetBufferDistributionTUTTI_fn)(cl_mem buffer,
                                                             const cl_tutti_distribution *d);
typedef cl_int (CL_API_CALL *clEnqueueSplitNDRangeKernelTUTTI_fn)(
    cl_uint num_queues, const cl_command_queue *queues, cl_kernel kernel, cl_uint work_dim,
    const size_t *global_work_offset, const size_t *global_work_size,
    const size_t *local_work_size, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event);

#ifdef TUTTI_LINKED
extern CL_API_ENTRY cl_int CL_API_CALL clSetKernelAnnotationTUTTI(cl_kernel kernel, const char *annotation);
extern CL_API_ENTRY cl_int CL_API_CALL clSetBufferDistributionTUTTI(cl_mem buffer, const cl_tutti_distribution *d);
extern CL_API_ENTRY cl_int CL_API_CALL clEnqueueSplitNDRangeKernelTUTTI(cl_uint num_queues, const cl_command_queue *queues, cl_kernel kernel, cl_uint work_dim, const size_t *global_work_offset, const size_t *global_work_size, const size_t *local_work_size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event);
#else
static inline cl_int clSetKernelAnnotationTUTTI(cl_kernel kernel, const char *annotation)
{
  static clSetKernelAnnotationTUTTI_fn fn;
  if (!fn)
    fn = (clSetKernelAnnotationTUTTI_fn)tutti_extension("clSetKernelAnnotationTUTTI");
  return fn ? fn(kernel, annotation) : CL_INVALID_PLATFORM;
}

static inline cl_int clSetBufferDistributionTUTTI(cl_mem buffer, const cl_tutti_distribution *d)
{
  static clSetBufferDistributionTUTTI_fn fn;
  if (!fn)
    fn = (clSetBufferDistributionTUTTI_fn)tutti_extension("clSetBufferDistributionTUTTI");
  return fn ? fn(buffer, d) : CL_INVALID_PLATFORM;
}

static inline cl_int clEnqueueSplitNDRangeKernelTUTTI(cl_uint num_queues, const cl_command_queue *queues, cl_kernel kernel, cl_uint work_dim, const size_t *global_work_offset, const size_t *global_work_size, const size_t *local_work_size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event)
{
  static clEnqueueSplitNDRangeKernelTUTTI_fn fn;
  if (!fn)
    fn = (clEnqueueSplitNDRangeKernelTUTTI_fn)tutti_extension("clEnqueueSplitNDRangeKernelTUTTI");
  return fn ? fn(num_queues, queues, kernel, work_dim, global_work_offset, global_work_size,
                 local_work_size, num_events_in_wait_list, event_wait_list, event)
            : CL_INVALID_PLATFORM;
}
#endif

#ifdef __cplusplus
}
#endif

#endif
