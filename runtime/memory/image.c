/* Images as bytes (runtime/memory/image.h). */
#include "config.h"

#include "runtime/memory/image.h"

size_t tt_image_pixel(const cl_image_format *f)
{
  size_t channels;
  switch (f->image_channel_order) {
  case CL_R: case CL_A: case CL_INTENSITY: case CL_LUMINANCE: case CL_Rx:
    channels = 1;
    break;
  case CL_RG: case CL_RA: case CL_RGx:
    channels = 2;
    break;
  case CL_RGB: case CL_RGBx:
    channels = 3;
    break;
  case CL_RGBA: case CL_BGRA: case CL_ARGB:
    channels = 4;
    break;
  default:
    return 0;
  }
  bool rgb = f->image_channel_order == CL_RGB || f->image_channel_order == CL_RGBx;
  switch (f->image_channel_data_type) {
  case CL_UNORM_SHORT_565: case CL_UNORM_SHORT_555:
    return rgb ? 2 : 0;
  case CL_UNORM_INT_101010:
    return rgb ? 4 : 0;
  case CL_SNORM_INT8: case CL_UNORM_INT8: case CL_SIGNED_INT8: case CL_UNSIGNED_INT8:
    return channels;
  case CL_SNORM_INT16: case CL_UNORM_INT16: case CL_SIGNED_INT16: case CL_UNSIGNED_INT16:
  case CL_HALF_FLOAT:
    return 2 * channels;
  case CL_SIGNED_INT32: case CL_UNSIGNED_INT32: case CL_FLOAT:
    return 4 * channels;
  default:
    return 0;
  }
}

bool tt_image_layout(struct tt_image *im)
{
  const cl_image_desc *d = &im->desc;
  im->pixel = tt_image_pixel(&im->format);
  im->row = d->image_width * im->pixel;
  switch (d->image_type) {
  case CL_MEM_OBJECT_IMAGE1D:
  case CL_MEM_OBJECT_IMAGE1D_BUFFER:
    im->rows = 1, im->slices = 1;
    break;
  case CL_MEM_OBJECT_IMAGE1D_ARRAY:
    im->rows = 1, im->slices = d->image_array_size;
    break;
  case CL_MEM_OBJECT_IMAGE2D:
    im->rows = d->image_height, im->slices = 1;
    break;
  case CL_MEM_OBJECT_IMAGE2D_ARRAY:
    im->rows = d->image_height, im->slices = d->image_array_size;
    break;
  case CL_MEM_OBJECT_IMAGE3D:
    im->rows = d->image_height, im->slices = d->image_depth;
    break;
  default:
    return false;
  }
  im->slice = im->row * im->rows;
  return true;
}

size_t tt_image_slice_pitch(const struct tt_image *im, size_t slice)
{
  cl_mem_object_type t = im->desc.image_type;
  return t == CL_MEM_OBJECT_IMAGE1D || t == CL_MEM_OBJECT_IMAGE1D_BUFFER ||
                 t == CL_MEM_OBJECT_IMAGE2D
             ? 0
             : slice;
}

/* A region's rows and slices in the packed layout: a 1D array's layers are its slices (its
 * region's second number), a 2D array's its third. */
static void rows_slices(const struct tt_image *im, const size_t *origin, const size_t *region,
                        size_t *y, size_t *h, size_t *z, size_t *dz)
{
  if (im->desc.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY) {
    *y = 0, *h = 1, *z = origin[1], *dz = region[1];
  } else {
    *y = origin[1], *h = region[1], *z = origin[2], *dz = region[2];
  }
}

bool tt_image_rows(const struct tt_image *im, const size_t *origin, const size_t *region,
                   size_t *off, size_t *len)
{
  size_t y, h, z, dz;
  rows_slices(im, origin, region, &y, &h, &z, &dz);
  if (dz == 1) {
    *off = z * im->slice + y * im->row;
    *len = h * im->row;
  } else {
    *off = z * im->slice;
    *len = dz * im->slice;
  }
  bool full_rows = origin[0] == 0 && region[0] == im->desc.image_width;
  return full_rows && (dz == 1 || (y == 0 && h == im->rows));
}

/* The region of n whole rows from row r of slice z, in the image's own coordinates. */
static void region_of(const struct tt_image *im, size_t r, size_t z, size_t n, size_t nz,
                      size_t *origin, size_t *region)
{
  origin[0] = 0, region[0] = im->desc.image_width;
  if (im->desc.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY) {
    origin[1] = z, region[1] = nz, origin[2] = 0, region[2] = 1;
  } else {
    origin[1] = r, region[1] = n, origin[2] = z, region[2] = nz;
  }
}

cl_int tt_image_rows_io(const cl_icd_dispatch *d, cl_command_queue q, const struct tt_image *im,
                        cl_mem native, bool write, size_t off, size_t len, void *host,
                        cl_uint nwait, const cl_event *wait, cl_event *ev)
{
  size_t first = off / im->row, last = (off + len) / im->row; /* rows [first, last) overall */
  unsigned char *at = host;
  cl_int err = CL_SUCCESS;
  cl_event prev = NULL;
  while (first < last && err == CL_SUCCESS) {
    size_t z = first / im->rows, r = first % im->rows, n, nz = 1;
    if (r || last - first < im->rows) {
      n = im->rows - r < last - first ? im->rows - r : last - first; /* rows within slice z */
    } else {
      nz = (last - first) / im->rows; /* whole slices */
      n = im->rows;
    }
    size_t origin[3], region[3];
    region_of(im, r, z, n, nz, origin, region);
    cl_event e = NULL;
    /* Each after the one before (q may be out of order). */
    size_t slice = tt_image_slice_pitch(im, im->slice);
    err = write ? d->clEnqueueWriteImage(q, native, CL_FALSE, origin, region, im->row, slice, at,
                                         prev ? 1 : nwait, prev ? &prev : wait, &e)
                : d->clEnqueueReadImage(q, native, CL_FALSE, origin, region, im->row, slice, at,
                                        prev ? 1 : nwait, prev ? &prev : wait, &e);
    if (prev)
      d->clReleaseEvent(prev);
    prev = err == CL_SUCCESS ? e : NULL;
    at += n * nz * im->row;
    first += n * nz;
  }
  if (prev && ev)
    *ev = prev;
  else if (prev)
    d->clReleaseEvent(prev);
  return err;
}
