/* Images and samplers: the checks of their entry points (the specification's clauses), the
 * divergence check, then their bodies (runtime/command/image.h, runtime/command/buffer.h for
 * maps, runtime/program/program.h for samplers). */
#include "config.h"

#include "icd/icd.h"

#include "runtime/job/check.h"
#include "runtime/job/turns.h"

#include <stddef.h>
#include <stdlib.h>

#include "runtime/command/image.h"
#include "runtime/memory/image.h"

/* Whether some device of the context supports images. */
static bool images_in(cl_context ctx)
{
  for (cl_uint i = 0; i < ctx->ndevices; i++) {
    cl_bool yes = CL_FALSE;
    tt_device_info(ctx->devices[i], CL_DEVICE_IMAGE_SUPPORT, sizeof yes, &yes, NULL);
    if (yes)
      return true;
  }
  return false;
}

/* The largest of a size limit over the context's devices. */
static size_t limit(cl_context ctx, cl_device_info what)
{
  size_t most = 0;
  for (cl_uint i = 0; i < ctx->ndevices; i++) {
    size_t v = 0;
    tt_device_info(ctx->devices[i], what, sizeof v, &v, NULL);
    most = v > most ? v : most;
  }
  return most;
}

/* CL_INVALID_IMAGE_DESCRIPTOR if values specified in image_desc are not valid or if
 * image_desc is NULL (pitches as OpenCL 1.2, 5.3.1.2 says for a host_ptr given or not). */
static cl_int check_desc(const cl_image_desc *d, size_t pixel, const void *host_ptr)
{
  TT_RETURN_IF(!d || d->num_mip_levels || d->num_samples || !d->image_width,
               CL_INVALID_IMAGE_DESCRIPTOR);
  cl_mem_object_type t = d->image_type;
  bool rows = t == CL_MEM_OBJECT_IMAGE2D || t == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
              t == CL_MEM_OBJECT_IMAGE3D;
  bool slices = t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
                t == CL_MEM_OBJECT_IMAGE3D;
  TT_RETURN_IF(t < CL_MEM_OBJECT_IMAGE2D || t > CL_MEM_OBJECT_IMAGE1D_BUFFER,
               CL_INVALID_IMAGE_DESCRIPTOR);
  TT_RETURN_IF(rows && !d->image_height, CL_INVALID_IMAGE_DESCRIPTOR);
  TT_RETURN_IF(t == CL_MEM_OBJECT_IMAGE3D && !d->image_depth, CL_INVALID_IMAGE_DESCRIPTOR);
  TT_RETURN_IF((t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D_ARRAY) &&
                   !d->image_array_size,
               CL_INVALID_IMAGE_DESCRIPTOR);
  TT_RETURN_IF((t == CL_MEM_OBJECT_IMAGE1D_BUFFER) != (d->buffer != NULL),
               CL_INVALID_IMAGE_DESCRIPTOR);
  TT_RETURN_IF(d->buffer && (!tt_object_valid(d->buffer, TT_MEM) || d->buffer->image),
               CL_INVALID_IMAGE_DESCRIPTOR);
  /* Pitches: 0 without host memory; else 0 or at least a row (a slice), in whole pixels (rows). */
  TT_RETURN_IF(!host_ptr && (d->image_row_pitch || d->image_slice_pitch),
               CL_INVALID_IMAGE_DESCRIPTOR);
  size_t row = d->image_row_pitch ? d->image_row_pitch : d->image_width * pixel;
  TT_RETURN_IF(d->image_row_pitch &&
                   (d->image_row_pitch < d->image_width * pixel || d->image_row_pitch % pixel),
               CL_INVALID_IMAGE_DESCRIPTOR);
  size_t slice = row * (rows ? d->image_height : 1);
  TT_RETURN_IF(d->image_slice_pitch && slices &&
                   (d->image_slice_pitch < slice || d->image_slice_pitch % row),
               CL_INVALID_IMAGE_DESCRIPTOR);
  return CL_SUCCESS;
}

/* CL_INVALID_IMAGE_SIZE if the image dimensions exceed the maximum values of every device in
 * context. */
static cl_int check_size(cl_context ctx, const cl_image_desc *d, size_t pixel)
{
  bool three = d->image_type == CL_MEM_OBJECT_IMAGE3D;
  size_t w = limit(ctx, three ? CL_DEVICE_IMAGE3D_MAX_WIDTH : CL_DEVICE_IMAGE2D_MAX_WIDTH);
  size_t h = limit(ctx, three ? CL_DEVICE_IMAGE3D_MAX_HEIGHT : CL_DEVICE_IMAGE2D_MAX_HEIGHT);
  if (d->image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
    w = limit(ctx, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE);
    TT_RETURN_IF(d->image_width * pixel > d->buffer->size, CL_INVALID_IMAGE_SIZE);
  }
  TT_RETURN_IF(d->image_width > w, CL_INVALID_IMAGE_SIZE);
  TT_RETURN_IF(d->image_height > h, CL_INVALID_IMAGE_SIZE);
  TT_RETURN_IF(three && d->image_depth > limit(ctx, CL_DEVICE_IMAGE3D_MAX_DEPTH),
               CL_INVALID_IMAGE_SIZE);
  bool array = d->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ||
               d->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY;
  TT_RETURN_IF(array && d->image_array_size > limit(ctx, CL_DEVICE_IMAGE_MAX_ARRAY_SIZE),
               CL_INVALID_IMAGE_SIZE);
  return CL_SUCCESS;
}

/* clCreateImage's checks and body, once the call took its turn and was hashed. */
static cl_mem create_image(cl_context context, cl_mem_flags flags, const cl_image_format *format,
                           const cl_image_desc *desc, void *host_ptr, cl_int *errcode_ret)
{
  cl_int err = CL_SUCCESS;
  /* CL_INVALID_CONTEXT if context is not a valid context. */
  TT_GOTO_IF(!tt_object_valid(context, TT_CONTEXT), CL_INVALID_CONTEXT);
  /* CL_INVALID_VALUE if values specified in flags are not valid. */
  TT_GOTO_IF(!tt_mem_flags_valid(flags), CL_INVALID_VALUE);
  /* CL_INVALID_IMAGE_FORMAT_DESCRIPTOR if values specified in image_format are not valid or
   * if image_format is NULL. */
  size_t pixel = format ? tt_image_pixel(format) : 0;
  TT_GOTO_IF(!pixel, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
  if ((err = check_desc(desc, pixel, host_ptr)) != CL_SUCCESS)
    goto out;
  /* CL_INVALID_VALUE for an image of a buffer with host memory flags, or access flags the
   * buffer's do not allow. */
  TT_GOTO_IF(desc->buffer && (flags & TT_MEM_HOST_PTR_FLAGS), CL_INVALID_VALUE);
  TT_GOTO_IF(desc->buffer && desc->buffer->context != context, CL_INVALID_IMAGE_DESCRIPTOR);
  TT_GOTO_IF(desc->buffer && (desc->buffer->flags & CL_MEM_READ_ONLY) &&
                 (flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY)),
             CL_INVALID_VALUE);
  /* CL_INVALID_OPERATION if there are no devices in context that support images. */
  TT_GOTO_IF(!images_in(context), CL_INVALID_OPERATION);
  if ((err = check_size(context, desc, pixel)) != CL_SUCCESS)
    goto out;
  /* CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or CL_MEM_COPY_HOST_PTR
   * are set in flags, or if host_ptr is not NULL but they are not set. */
  bool wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
  TT_GOTO_IF(wants_ptr != (host_ptr != NULL), CL_INVALID_HOST_PTR);
  /* CL_IMAGE_FORMAT_NOT_SUPPORTED if the image_format is not supported (by every device of
   * the context: an image lives on each of them). */
  TT_GOTO_IF(!tt_image_format_supported(context, flags, desc->image_type, format),
             CL_IMAGE_FORMAT_NOT_SUPPORTED);
  return tt_image_new(context, flags, format, desc, host_ptr, errcode_ret);
out:
  tt_set_err(errcode_ret, err);
  return NULL;
}

/* The values the divergence check hashes of an image's creation. */
#define IMAGE_HASH(context, flags, format, desc, host_ptr)                                        \
  tt_check_id(context), flags, tt_check_bytes(format, format ? sizeof *format : 0),              \
      tt_check_bytes(desc, desc ? offsetof(cl_image_desc, buffer) : 0),                           \
      tt_check_id(desc ? desc->buffer : NULL), host_ptr != NULL

cl_mem CL_API_CALL tt_clCreateImage(cl_context context, cl_mem_flags flags,
                                    const cl_image_format *image_format,
                                    const cl_image_desc *image_desc, void *host_ptr,
                                    cl_int *errcode_ret)
{
  TT_TURN_CHECK(IMAGE_HASH(context, flags, image_format, image_desc, host_ptr));
  return create_image(context, flags, image_format, image_desc, host_ptr, errcode_ret);
}

cl_mem CL_API_CALL tt_clCreateImage2D(cl_context context, cl_mem_flags flags,
                                      const cl_image_format *image_format, size_t w, size_t h,
                                      size_t pitch, void *host_ptr, cl_int *errcode_ret)
{
  cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = w,
                     .image_height = h, .image_row_pitch = pitch};
  const cl_image_desc *desc = &d;
  TT_TURN_CHECK(IMAGE_HASH(context, flags, image_format, desc, host_ptr));
  return create_image(context, flags, image_format, desc, host_ptr, errcode_ret);
}

cl_mem CL_API_CALL tt_clCreateImage3D(cl_context context, cl_mem_flags flags,
                                      const cl_image_format *image_format, size_t w, size_t h,
                                      size_t depth, size_t rp, size_t sp, void *host_ptr,
                                      cl_int *errcode_ret)
{
  cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE3D, .image_width = w,
                     .image_height = h, .image_depth = depth, .image_row_pitch = rp,
                     .image_slice_pitch = sp};
  const cl_image_desc *desc = &d;
  TT_TURN_CHECK(IMAGE_HASH(context, flags, image_format, desc, host_ptr));
  /* CL_INVALID_IMAGE_SIZE: a 3D image of clCreateImage3D has a depth of 2 or more. */
  if (tt_object_valid(context, TT_CONTEXT) && depth < 2) {
    tt_set_err(errcode_ret, CL_INVALID_IMAGE_SIZE);
    return NULL;
  }
  return create_image(context, flags, image_format, desc, host_ptr, errcode_ret);
}

cl_int CL_API_CALL tt_clGetSupportedImageFormats(cl_context context, cl_mem_flags flags,
                                                 cl_mem_object_type image_type,
                                                 cl_uint num_entries,
                                                 cl_image_format *image_formats,
                                                 cl_uint *num_image_formats)
{
  TT_TURN_CHECK(tt_check_id(context), flags, image_type, num_entries, image_formats != NULL);
  /* CL_INVALID_CONTEXT if context is not a valid context. */
  TT_RETURN_IF(!tt_object_valid(context, TT_CONTEXT), CL_INVALID_CONTEXT);
  /* CL_INVALID_VALUE if flags or image_type are not valid, or if num_entries is 0 and
   * image_formats is not NULL. */
  TT_RETURN_IF(!tt_mem_flags_valid(flags), CL_INVALID_VALUE);
  TT_RETURN_IF(num_entries == 0 && image_formats != NULL, CL_INVALID_VALUE);
  TT_RETURN_IF(image_type < CL_MEM_OBJECT_IMAGE2D || image_type > CL_MEM_OBJECT_IMAGE1D_BUFFER,
               CL_INVALID_VALUE);
  if (!images_in(context)) {
    if (num_image_formats)
      *num_image_formats = 0;
    return CL_SUCCESS;
  }
  return tt_image_formats(context, flags, image_type, num_entries, image_formats,
                          num_image_formats);
}

cl_int CL_API_CALL tt_clGetImageInfo(cl_mem image, cl_image_info param_name,
                                     size_t param_value_size, void *param_value,
                                     size_t *param_value_size_ret)
{
  /* CL_INVALID_MEM_OBJECT if image is not a valid image object. */
  TT_RETURN_IF(!tt_object_valid(image, TT_MEM) || !image->image, CL_INVALID_MEM_OBJECT);
  const struct tt_image *im = image->image;
  const cl_image_desc *d = &im->desc;
  cl_mem_object_type t = d->image_type;
  bool rows = t == CL_MEM_OBJECT_IMAGE2D || t == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
              t == CL_MEM_OBJECT_IMAGE3D;
  size_t zero = 0, v;
  cl_uint none = 0;
  switch (param_name) {
  case CL_IMAGE_FORMAT:
    return TT_INFO(im->format);
  case CL_IMAGE_ELEMENT_SIZE:
    return TT_INFO(im->pixel);
  case CL_IMAGE_ROW_PITCH:
    return TT_INFO(im->row);
  case CL_IMAGE_SLICE_PITCH:
    v = t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
                t == CL_MEM_OBJECT_IMAGE3D
            ? im->slice
            : 0;
    return TT_INFO(v);
  case CL_IMAGE_WIDTH:
    return TT_INFO(d->image_width);
  case CL_IMAGE_HEIGHT:
    return rows ? TT_INFO(d->image_height) : TT_INFO(zero);
  case CL_IMAGE_DEPTH:
    return t == CL_MEM_OBJECT_IMAGE3D ? TT_INFO(d->image_depth) : TT_INFO(zero);
  case CL_IMAGE_ARRAY_SIZE:
    return t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D_ARRAY
               ? TT_INFO(d->image_array_size)
               : TT_INFO(zero);
  case CL_IMAGE_BUFFER:
    return TT_INFO(d->buffer);
  case CL_IMAGE_NUM_MIP_LEVELS:
  case CL_IMAGE_NUM_SAMPLES:
    return TT_INFO(none);
  default:
    /* CL_INVALID_VALUE if param_name is not valid. */
    return CL_INVALID_VALUE;
  }
}

/* --- commands ------------------------------------------------------------------------------ */

/* An image argument of a command of q: valid, of q's context, on a device with images. */
static cl_int check_image(cl_command_queue q, cl_mem m)
{
  /* CL_INVALID_MEM_OBJECT if the image is not a valid image object. */
  TT_RETURN_IF(!tt_object_valid(m, TT_MEM) || !m->image, CL_INVALID_MEM_OBJECT);
  /* CL_INVALID_CONTEXT if the context of command_queue and the image are not the same. */
  TT_RETURN_IF(m->context != q->context, CL_INVALID_CONTEXT);
  /* CL_INVALID_OPERATION if the device of command_queue does not support images. */
  cl_bool yes = CL_FALSE;
  tt_device_info(q->device, CL_DEVICE_IMAGE_SUPPORT, sizeof yes, &yes, NULL);
  TT_RETURN_IF(!yes, CL_INVALID_OPERATION);
  return CL_SUCCESS;
}

/* CL_INVALID_VALUE if the region being read or written specified by origin and region is out
 * of bounds or if origin or region is NULL, or a coordinate the image type has not is not 0
 * (its size not 1). */
static cl_int check_region(cl_mem m, const size_t *origin, const size_t *region)
{
  TT_RETURN_IF(!origin || !region, CL_INVALID_VALUE);
  const cl_image_desc *d = &m->image->desc;
  size_t size[3] = {d->image_width, 1, 1};
  switch (d->image_type) {
  case CL_MEM_OBJECT_IMAGE1D_ARRAY:
    size[1] = d->image_array_size;
    break;
  case CL_MEM_OBJECT_IMAGE2D:
    size[1] = d->image_height;
    break;
  case CL_MEM_OBJECT_IMAGE2D_ARRAY:
    size[1] = d->image_height, size[2] = d->image_array_size;
    break;
  case CL_MEM_OBJECT_IMAGE3D:
    size[1] = d->image_height, size[2] = d->image_depth;
    break;
  default:
    break;
  }
  for (int i = 0; i < 3; i++)
    TT_RETURN_IF(!region[i] || origin[i] > size[i] || region[i] > size[i] - origin[i],
                 CL_INVALID_VALUE);
  return CL_SUCCESS;
}

/* CL_INVALID_VALUE if a host pitch is not 0 and below a row (a slice) of the region. */
static cl_int check_pitches(cl_mem m, const size_t *region, size_t row, size_t slice)
{
  size_t packed_row = region[0] * m->image->pixel;
  bool array1d = m->image->desc.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  TT_RETURN_IF(row && row < packed_row, CL_INVALID_VALUE);
  size_t r = row ? row : packed_row;
  TT_RETURN_IF(slice && slice < r * (array1d ? 1 : region[1]), CL_INVALID_VALUE);
  return CL_SUCCESS;
}

/* A read or write of an image region from or to host memory: the queue, the image, its
 * region, the host's pitches, ptr (CL_INVALID_VALUE if NULL) and the image's host access
 * (CL_INVALID_OPERATION when it has one of the flags `forbidden`). */
static cl_int check_host_copy(cl_command_queue q, cl_mem image, const size_t *origin,
                              const size_t *region, size_t row_pitch, size_t slice_pitch,
                              const void *ptr, cl_mem_flags forbidden)
{
  CHECK_QUEUE(q);
  TT_TRY(check_image(q, image));
  TT_TRY(check_region(image, origin, region));
  TT_TRY(check_pitches(image, region, row_pitch, slice_pitch));
  TT_RETURN_IF(!ptr, CL_INVALID_VALUE);
  TT_RETURN_IF(image->flags & forbidden, CL_INVALID_OPERATION);
  return CL_SUCCESS;
}

#define REGION_HASH(o, r) tt_check_bytes(o, o ? 3 * sizeof(size_t) : 0), \
                          tt_check_bytes(r, r ? 3 * sizeof(size_t) : 0)

cl_int CL_API_CALL tt_clEnqueueReadImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                         const size_t *origin, const size_t *region,
                                         size_t row_pitch, size_t slice_pitch, void *ptr,
                                         cl_uint n, const cl_event *wait, cl_event *e)
{
  /* CL_INVALID_OPERATION for an image created with CL_MEM_HOST_WRITE_ONLY or
   * CL_MEM_HOST_NO_ACCESS. */
  TT_TRY(check_host_copy(q, image, origin, region, row_pitch, slice_pitch, ptr,
                         CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS));
  TT_TURN_CHECK(q->obj.id, image->obj.id, blocking, REGION_HASH(origin, region), row_pitch,
                slice_pitch, n, e != NULL);
  return tt_cmd_read_image(q, image, blocking, origin, region, row_pitch, slice_pitch, ptr, n,
                           wait, e);
}

cl_int CL_API_CALL tt_clEnqueueWriteImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                          const size_t *origin, const size_t *region,
                                          size_t row_pitch, size_t slice_pitch, const void *ptr,
                                          cl_uint n, const cl_event *wait, cl_event *e)
{
  /* CL_INVALID_OPERATION for an image created with CL_MEM_HOST_READ_ONLY or
   * CL_MEM_HOST_NO_ACCESS. */
  TT_TRY(check_host_copy(q, image, origin, region, row_pitch, slice_pitch, ptr,
                         CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS));
  TT_TURN_CHECK(q->obj.id, image->obj.id, blocking, REGION_HASH(origin, region), row_pitch,
                slice_pitch, n, e != NULL);
  return tt_cmd_write_image(q, image, blocking, origin, region, row_pitch, slice_pitch, ptr, n,
                            wait, e);
}

/* Whether two regions of one image overlap. */
static bool overlap(const size_t *a, const size_t *b, const size_t *r)
{
  for (int i = 0; i < 3; i++)
    if (a[i] + r[i] <= b[i] || b[i] + r[i] <= a[i])
      return false;
  return true;
}

cl_int CL_API_CALL tt_clEnqueueCopyImage(cl_command_queue q, cl_mem src, cl_mem dst,
                                         const size_t *src_origin, const size_t *dst_origin,
                                         const size_t *region, cl_uint n, const cl_event *wait,
                                         cl_event *e)
{
  CHECK_QUEUE(q);
  TT_TRY(check_image(q, src));
  TT_TRY(check_image(q, dst));
  /* CL_IMAGE_FORMAT_MISMATCH if src_image and dst_image do not use the same image format. */
  TT_RETURN_IF(memcmp(&src->image->format, &dst->image->format, sizeof src->image->format),
               CL_IMAGE_FORMAT_MISMATCH);
  TT_TRY(check_region(src, src_origin, region));
  TT_TRY(check_region(dst, dst_origin, region));
  /* CL_MEM_COPY_OVERLAP if src_image and dst_image are the same image object and the source
   * and destination regions overlap. */
  TT_RETURN_IF(src == dst && overlap(src_origin, dst_origin, region), CL_MEM_COPY_OVERLAP);
  TT_TURN_CHECK(q->obj.id, src->obj.id, dst->obj.id, REGION_HASH(src_origin, region),
                tt_check_bytes(dst_origin, 3 * sizeof(size_t)), n, e != NULL);
  return tt_cmd_copy_image(q, src, dst, src_origin, dst_origin, region, n, wait, e);
}

cl_int CL_API_CALL tt_clEnqueueFillImage(cl_command_queue q, cl_mem image, const void *color,
                                         const size_t *origin, const size_t *region, cl_uint n,
                                         const cl_event *wait, cl_event *e)
{
  CHECK_QUEUE(q);
  TT_TRY(check_image(q, image));
  /* CL_INVALID_VALUE if fill_color is NULL. */
  TT_RETURN_IF(!color, CL_INVALID_VALUE);
  TT_TRY(check_region(image, origin, region));
  /* The color is four values of 4 bytes (float, int or uint by the channel type). */
  TT_TURN_CHECK(q->obj.id, image->obj.id, tt_check_bytes(color, 16), REGION_HASH(origin, region),
                n, e != NULL);
  return tt_cmd_fill_image(q, image, color, origin, region, n, wait, e);
}

/* A buffer argument of an image copy: valid, not an image, of q's context, the bytes
 * [off, off + len) within it. */
static cl_int check_copy_buffer(cl_command_queue q, cl_mem b, size_t off, size_t len)
{
  /* CL_INVALID_MEM_OBJECT if the buffer is not a valid buffer object. */
  TT_RETURN_IF(!tt_object_valid(b, TT_MEM) || b->image, CL_INVALID_MEM_OBJECT);
  TT_RETURN_IF(b->context != q->context, CL_INVALID_CONTEXT);
  /* CL_INVALID_VALUE if the region of the buffer is out of bounds. */
  TT_RETURN_IF(off > b->size || len > b->size - off, CL_INVALID_VALUE);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clEnqueueCopyImageToBuffer(cl_command_queue q, cl_mem src, cl_mem dst,
                                                 const size_t *origin, const size_t *region,
                                                 size_t off, cl_uint n, const cl_event *wait,
                                                 cl_event *e)
{
  CHECK_QUEUE(q);
  TT_TRY(check_image(q, src));
  TT_TRY(check_region(src, origin, region));
  TT_TRY(check_copy_buffer(q, dst, off, tt_image_packed(src->image, region)));
  TT_TURN_CHECK(q->obj.id, src->obj.id, dst->obj.id, REGION_HASH(origin, region), off, n,
                e != NULL);
  return tt_cmd_image_to_buffer(q, src, dst, origin, region, off, n, wait, e);
}

cl_int CL_API_CALL tt_clEnqueueCopyBufferToImage(cl_command_queue q, cl_mem src, cl_mem dst,
                                                 size_t off, const size_t *origin,
                                                 const size_t *region, cl_uint n,
                                                 const cl_event *wait, cl_event *e)
{
  CHECK_QUEUE(q);
  TT_TRY(check_image(q, dst));
  TT_TRY(check_region(dst, origin, region));
  TT_TRY(check_copy_buffer(q, src, off, tt_image_packed(dst->image, region)));
  TT_TURN_CHECK(q->obj.id, src->obj.id, dst->obj.id, off, REGION_HASH(origin, region), n,
                e != NULL);
  return tt_cmd_buffer_to_image(q, src, dst, off, origin, region, n, wait, e);
}

/* clEnqueueMapImage's checks (its errors go through errcode_ret). */
static cl_int check_map(cl_command_queue q, cl_mem image, cl_map_flags flags,
                        const size_t *origin, const size_t *region, size_t *row_pitch,
                        size_t *slice_pitch)
{
  CHECK_QUEUE(q);
  TT_TRY(check_image(q, image));
  TT_TRY(check_region(image, origin, region));
  /* CL_INVALID_VALUE if values in map_flags are not valid, or image_row_pitch is NULL, or
   * image_slice_pitch is NULL for a 3D image, a 1D or 2D image array. */
  const cl_map_flags all = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
  TT_RETURN_IF(flags & ~all, CL_INVALID_VALUE);
  TT_RETURN_IF((flags & CL_MAP_WRITE_INVALIDATE_REGION) && (flags & (CL_MAP_READ | CL_MAP_WRITE)),
               CL_INVALID_VALUE);
  TT_RETURN_IF(!row_pitch, CL_INVALID_VALUE);
  TT_RETURN_IF(!slice_pitch && image->image->slices > 1, CL_INVALID_VALUE);
  /* CL_INVALID_OPERATION for host access flags that forbid the map. */
  TT_RETURN_IF((flags & CL_MAP_READ) &&
                   (image->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)),
               CL_INVALID_OPERATION);
  TT_RETURN_IF((flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) &&
                   (image->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)),
               CL_INVALID_OPERATION);
  return CL_SUCCESS;
}

void *CL_API_CALL tt_clEnqueueMapImage(cl_command_queue q, cl_mem image, cl_bool blocking,
                                       cl_map_flags flags, const size_t *origin,
                                       const size_t *region, size_t *row_pitch,
                                       size_t *slice_pitch, cl_uint n, const cl_event *wait,
                                       cl_event *e, cl_int *errcode_ret)
{
  cl_int err = check_map(q, image, flags, origin, region, row_pitch, slice_pitch);
  if (err != CL_SUCCESS) {
    tt_set_err(errcode_ret, err);
    return NULL;
  }
  TT_TURN_CHECK(q->obj.id, image->obj.id, blocking, flags, REGION_HASH(origin, region), n,
                e != NULL);
  void *p = tt_cmd_map_image(q, image, blocking, flags, origin, region, row_pitch, slice_pitch,
                             n, wait, e, &err);
  tt_set_err(errcode_ret, err);
  return p;
}

/* --- samplers ------------------------------------------------------------------------------ */

cl_sampler CL_API_CALL tt_clCreateSampler(cl_context context, cl_bool normalized_coords,
                                          cl_addressing_mode addressing_mode,
                                          cl_filter_mode filter_mode, cl_int *errcode_ret)
{
  TT_TURN_CHECK(tt_check_id(context), normalized_coords, addressing_mode, filter_mode);
  cl_int err = CL_SUCCESS;
  /* CL_INVALID_CONTEXT if context is not a valid context. */
  TT_GOTO_IF(!tt_object_valid(context, TT_CONTEXT), CL_INVALID_CONTEXT);
  /* CL_INVALID_VALUE if addressing_mode, filter_mode or normalized_coords or a combination of
   * these argument values are not valid. */
  TT_GOTO_IF(normalized_coords != CL_TRUE && normalized_coords != CL_FALSE, CL_INVALID_VALUE);
  TT_GOTO_IF(addressing_mode < CL_ADDRESS_NONE || addressing_mode > CL_ADDRESS_MIRRORED_REPEAT,
             CL_INVALID_VALUE);
  TT_GOTO_IF(filter_mode != CL_FILTER_NEAREST && filter_mode != CL_FILTER_LINEAR,
             CL_INVALID_VALUE);
  TT_GOTO_IF(!normalized_coords && (addressing_mode == CL_ADDRESS_REPEAT ||
                                    addressing_mode == CL_ADDRESS_MIRRORED_REPEAT),
             CL_INVALID_VALUE);
  /* CL_INVALID_OPERATION if images are not supported by any device associated with
   * context. */
  TT_GOTO_IF(!images_in(context), CL_INVALID_OPERATION);
  return tt_sampler_new(context, normalized_coords, addressing_mode, filter_mode, errcode_ret);
out:
  tt_set_err(errcode_ret, err);
  return NULL;
}

cl_int CL_API_CALL tt_clRetainSampler(cl_sampler sampler)
{
  /* CL_INVALID_SAMPLER if sampler is not a valid sampler object. */
  TT_RETURN_IF(!tt_object_valid(sampler, TT_SAMPLER), CL_INVALID_SAMPLER);
  TT_RETAIN(sampler);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clReleaseSampler(cl_sampler sampler)
{
  TT_TURN();
  /* CL_INVALID_SAMPLER if sampler is not a valid sampler object. */
  TT_RETURN_IF(!tt_object_valid(sampler, TT_SAMPLER), CL_INVALID_SAMPLER);
  TT_RELEASE(sampler);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clGetSamplerInfo(cl_sampler sampler, cl_sampler_info param_name,
                                       size_t param_value_size, void *param_value,
                                       size_t *param_value_size_ret)
{
  /* CL_INVALID_SAMPLER if sampler is a not a valid sampler object. */
  TT_RETURN_IF(!tt_object_valid(sampler, TT_SAMPLER), CL_INVALID_SAMPLER);
  cl_uint refs;
  switch (param_name) {
  case CL_SAMPLER_REFERENCE_COUNT:
    refs = (cl_uint)atomic_load(&sampler->obj.refcount);
    return TT_INFO(refs);
  case CL_SAMPLER_CONTEXT:
    return TT_INFO(sampler->context);
  case CL_SAMPLER_NORMALIZED_COORDS:
    return TT_INFO(sampler->normalized);
  case CL_SAMPLER_ADDRESSING_MODE:
    return TT_INFO(sampler->addressing);
  case CL_SAMPLER_FILTER_MODE:
    return TT_INFO(sampler->filter);
  default:
    /* CL_INVALID_VALUE if param_name is not valid. */
    return CL_INVALID_VALUE;
  }
}
