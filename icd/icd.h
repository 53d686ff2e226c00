/* The face: entry points, argument checks and the helpers they share. Every entry point is
 * tt_<OpenCL name>, reached through the dispatch table (icd/dispatch_table.c). */
#ifndef TUTTI_ICD_H
#define TUTTI_ICD_H

#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/job/cluster.h"
#include "runtime/job/devices.h"
#include "runtime/program/program.h"
#include "runtime/command/compound.h"
#include "runtime/base/log.h"
#include "runtime/base/tutti_internal.h"
#include "runtime/command/buffer.h"
#include "runtime/command/launch.h"
#include "runtime/command/memobj.h"

#include "CL/tutti.h"

/* The table the ICD loader calls through (icd/dispatch_table.c); every object starts with it
 * (runtime/base/object.h: icd/platform.c hands it over when the library loads). */
extern const cl_icd_dispatch tt_dispatch;

/* The entry points, typed like the specification's prototypes. */
extern __typeof__(clGetPlatformIDs) tt_clGetPlatformIDs;
extern __typeof__(clGetPlatformInfo) tt_clGetPlatformInfo;
extern __typeof__(clGetDeviceIDs) tt_clGetDeviceIDs;
extern __typeof__(clGetDeviceInfo) tt_clGetDeviceInfo;
extern __typeof__(clCreateContext) tt_clCreateContext;
extern __typeof__(clCreateContextFromType) tt_clCreateContextFromType;
extern __typeof__(clRetainContext) tt_clRetainContext;
extern __typeof__(clReleaseContext) tt_clReleaseContext;
extern __typeof__(clGetContextInfo) tt_clGetContextInfo;
extern __typeof__(clCreateCommandQueue) tt_clCreateCommandQueue;
extern __typeof__(clRetainCommandQueue) tt_clRetainCommandQueue;
extern __typeof__(clReleaseCommandQueue) tt_clReleaseCommandQueue;
extern __typeof__(clGetCommandQueueInfo) tt_clGetCommandQueueInfo;
extern __typeof__(clSetCommandQueueProperty) tt_clSetCommandQueueProperty;
extern __typeof__(clCreateBuffer) tt_clCreateBuffer;
extern __typeof__(clCreateImage2D) tt_clCreateImage2D;
extern __typeof__(clCreateImage3D) tt_clCreateImage3D;
extern __typeof__(clRetainMemObject) tt_clRetainMemObject;
extern __typeof__(clReleaseMemObject) tt_clReleaseMemObject;
extern __typeof__(clGetSupportedImageFormats) tt_clGetSupportedImageFormats;
extern __typeof__(clGetMemObjectInfo) tt_clGetMemObjectInfo;
extern __typeof__(clGetImageInfo) tt_clGetImageInfo;
extern __typeof__(clCreateSampler) tt_clCreateSampler;
extern __typeof__(clRetainSampler) tt_clRetainSampler;
extern __typeof__(clReleaseSampler) tt_clReleaseSampler;
extern __typeof__(clGetSamplerInfo) tt_clGetSamplerInfo;
extern __typeof__(clCreateProgramWithSource) tt_clCreateProgramWithSource;
extern __typeof__(clCreateProgramWithBinary) tt_clCreateProgramWithBinary;
extern __typeof__(clRetainProgram) tt_clRetainProgram;
extern __typeof__(clReleaseProgram) tt_clReleaseProgram;
extern __typeof__(clBuildProgram) tt_clBuildProgram;
extern __typeof__(clUnloadCompiler) tt_clUnloadCompiler;
extern __typeof__(clGetProgramInfo) tt_clGetProgramInfo;
extern __typeof__(clGetProgramBuildInfo) tt_clGetProgramBuildInfo;
extern __typeof__(clCreateKernel) tt_clCreateKernel;
extern __typeof__(clCreateKernelsInProgram) tt_clCreateKernelsInProgram;
extern __typeof__(clRetainKernel) tt_clRetainKernel;
extern __typeof__(clReleaseKernel) tt_clReleaseKernel;
extern __typeof__(clSetKernelArg) tt_clSetKernelArg;
extern __typeof__(clGetKernelInfo) tt_clGetKernelInfo;
extern __typeof__(clGetKernelWorkGroupInfo) tt_clGetKernelWorkGroupInfo;
extern __typeof__(clWaitForEvents) tt_clWaitForEvents;
extern __typeof__(clGetEventInfo) tt_clGetEventInfo;
extern __typeof__(clRetainEvent) tt_clRetainEvent;
extern __typeof__(clReleaseEvent) tt_clReleaseEvent;
extern __typeof__(clGetEventProfilingInfo) tt_clGetEventProfilingInfo;
extern __typeof__(clFlush) tt_clFlush;
extern __typeof__(clFinish) tt_clFinish;
extern __typeof__(clEnqueueReadBuffer) tt_clEnqueueReadBuffer;
extern __typeof__(clEnqueueWriteBuffer) tt_clEnqueueWriteBuffer;
extern __typeof__(clEnqueueCopyBuffer) tt_clEnqueueCopyBuffer;
extern __typeof__(clEnqueueReadImage) tt_clEnqueueReadImage;
extern __typeof__(clEnqueueWriteImage) tt_clEnqueueWriteImage;
extern __typeof__(clEnqueueCopyImage) tt_clEnqueueCopyImage;
extern __typeof__(clEnqueueCopyImageToBuffer) tt_clEnqueueCopyImageToBuffer;
extern __typeof__(clEnqueueCopyBufferToImage) tt_clEnqueueCopyBufferToImage;
extern __typeof__(clEnqueueMapBuffer) tt_clEnqueueMapBuffer;
extern __typeof__(clEnqueueMapImage) tt_clEnqueueMapImage;
extern __typeof__(clEnqueueUnmapMemObject) tt_clEnqueueUnmapMemObject;
extern __typeof__(clEnqueueNDRangeKernel) tt_clEnqueueNDRangeKernel;
extern __typeof__(clEnqueueTask) tt_clEnqueueTask;
extern __typeof__(clEnqueueNativeKernel) tt_clEnqueueNativeKernel;
extern __typeof__(clEnqueueMarker) tt_clEnqueueMarker;
extern __typeof__(clEnqueueWaitForEvents) tt_clEnqueueWaitForEvents;
extern __typeof__(clEnqueueBarrier) tt_clEnqueueBarrier;
extern __typeof__(clGetExtensionFunctionAddress) tt_clGetExtensionFunctionAddress;
extern __typeof__(clSetEventCallback) tt_clSetEventCallback;
extern __typeof__(clCreateSubBuffer) tt_clCreateSubBuffer;
extern __typeof__(clSetMemObjectDestructorCallback) tt_clSetMemObjectDestructorCallback;
extern __typeof__(clCreateUserEvent) tt_clCreateUserEvent;
extern __typeof__(clSetUserEventStatus) tt_clSetUserEventStatus;
extern __typeof__(clEnqueueReadBufferRect) tt_clEnqueueReadBufferRect;
extern __typeof__(clEnqueueWriteBufferRect) tt_clEnqueueWriteBufferRect;
extern __typeof__(clEnqueueCopyBufferRect) tt_clEnqueueCopyBufferRect;
extern __typeof__(clCreateSubDevices) tt_clCreateSubDevices;
extern __typeof__(clRetainDevice) tt_clRetainDevice;
extern __typeof__(clReleaseDevice) tt_clReleaseDevice;
extern __typeof__(clCreateImage) tt_clCreateImage;
extern __typeof__(clCreateProgramWithBuiltInKernels) tt_clCreateProgramWithBuiltInKernels;
extern __typeof__(clCompileProgram) tt_clCompileProgram;
extern __typeof__(clLinkProgram) tt_clLinkProgram;
extern __typeof__(clUnloadPlatformCompiler) tt_clUnloadPlatformCompiler;
extern __typeof__(clGetKernelArgInfo) tt_clGetKernelArgInfo;
extern __typeof__(clEnqueueFillBuffer) tt_clEnqueueFillBuffer;
extern __typeof__(clEnqueueFillImage) tt_clEnqueueFillImage;
extern __typeof__(clEnqueueMigrateMemObjects) tt_clEnqueueMigrateMemObjects;
extern __typeof__(clEnqueueMarkerWithWaitList) tt_clEnqueueMarkerWithWaitList;
extern __typeof__(clEnqueueBarrierWithWaitList) tt_clEnqueueBarrierWithWaitList;
extern __typeof__(clGetExtensionFunctionAddressForPlatform) tt_clGetExtensionFunctionAddressForPlatform;

/* Extension functions (icd/extensions.c). */
cl_int CL_API_CALL tt_clAttachBufferToDeviceTUTTI(cl_mem buffer, cl_device_id device);
void CL_API_CALL tt_clAttachBufferToDevice(cl_mem buffer, cl_device_id device);

/* cl_tutti_collective (icd/collective.c). */
cl_int CL_API_CALL tt_clEnqueueAlltoAllBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *events);
cl_int CL_API_CALL tt_clEnqueueBroadcastBuffer(cl_command_queue *qs, cl_mem src, cl_uint n_dst, cl_mem *dst, size_t src_off, size_t *dst_off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *events);
cl_int CL_API_CALL tt_clEnqueueScatterBuffer(cl_command_queue *qs, cl_mem src, cl_uint n_dst, cl_mem *dst, size_t src_off, size_t *dst_off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *events);
cl_int CL_API_CALL tt_clEnqueueGatherBuffer(cl_command_queue q, cl_uint n_src, cl_mem *src, cl_mem dst, size_t *src_off, size_t dst_off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *event);
cl_int CL_API_CALL tt_clEnqueueAllGatherBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *events);
cl_int CL_API_CALL tt_clEnqueueReduceBuffer(cl_command_queue q, cl_uint n_src, cl_mem *src, cl_mem dst, size_t *src_off, size_t dst_off, size_t cb, cl_channel_type datatype, cl_uint nwait, const cl_event *wait, cl_event *event);
cl_int CL_API_CALL tt_clEnqueueAllReduceBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off, size_t cb, cl_channel_type datatype, cl_uint nwait, const cl_event *wait, cl_event *events);
cl_int CL_API_CALL tt_clEnqueueReduceScatterBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off, size_t cb, cl_channel_type datatype, cl_uint nwait, const cl_event *wait, cl_event *events);
cl_int CL_API_CALL tt_clEnqueueScanBuffer(cl_command_queue *qs, cl_uint n, cl_mem *src, cl_mem *dst, size_t *src_off, size_t *dst_off, size_t cb, cl_channel_type datatype, cl_uint nwait, const cl_event *wait, cl_event *events);

/* cl_tutti_split (icd/split_api.c). */
cl_int CL_API_CALL tt_clSetKernelAnnotationTUTTI(cl_kernel kernel, const char *annotation);
cl_int CL_API_CALL tt_clSetBufferDistributionTUTTI(cl_mem buffer, const cl_tutti_distribution *d);
cl_int CL_API_CALL tt_clEnqueueSplitNDRangeKernelTUTTI(cl_uint num_queues, const cl_command_queue *queues, cl_kernel kernel, cl_uint work_dim, const size_t *global_work_offset, const size_t *global_work_size, const size_t *local_work_size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event);


/* Slots Tutti does not implement (images, samplers, GL/D3D sharing, OpenCL 2.x). */
cl_int tt_unsupported(const char *name);
void *tt_unsupported_untyped(void);


/* Buffer flags: whether a cl_mem_flags value is valid (no unknown bits, no conflicts). */
bool tt_mem_flags_valid(cl_mem_flags flags);


#endif
