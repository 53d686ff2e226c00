/* Images (runtime/command/image.h): made in every actual domain of their context, their
 * formats as every device of the context supports them, and the bodies of the image commands,
 * each described to the one command driver (runtime/command/driver.h) with the whole rows it
 * uses (runtime/memory/image.h): the planner moves an image's rows between domains and ranks
 * as it moves a buffer's bytes. */
#include "config.h"

#include "runtime/command/image.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/base/log.h"
#include "runtime/base/rangemap.h"
#include "runtime/command/driver.h"
#include "runtime/command/memobj.h"
#include "runtime/job/cluster_share.h"
#include "runtime/memory/image.h"
#include "runtime/memory/window.h"
#include "runtime/order/order.h"

/* The native image of m in actual domain i (a 1D image of a buffer: of the buffer's native
 * memory there). A program's memory is copied (CL_MEM_USE_HOST_PTR too: doc/opencl.md). */
static cl_mem native_image(cl_mem m, cl_uint i, void *host_ptr, cl_int *err)
{
  struct tt_domain *dm = &m->context->domains[i];
  cl_image_desc d = m->image->desc;
  cl_mem_flags flags = m->flags & ~(cl_mem_flags)TT_MEM_HOST_PTR_FLAGS;
  if (host_ptr)
    flags |= CL_MEM_COPY_HOST_PTR;
  else
    d.image_row_pitch = d.image_slice_pitch = 0;
  if (d.buffer) {
    struct tt_place whole;
    cl_mem b = d.buffer;
    tt_plan_lock();
    *err = tt_window_place(b, i, 0, b->size, &whole);
    tt_plan_unlock();
    if (*err != CL_SUCCESS)
      return NULL;
    d.buffer = whole.native;
  }
  return dm->bp->d->clCreateImage(dm->native, flags, &m->image->format, &d, host_ptr, err);
}

cl_mem tt_image_new(cl_context context, cl_mem_flags flags, const cl_image_format *format,
                    const cl_image_desc *desc, void *host_ptr, cl_int *errcode_ret)
{
  cl_int err = CL_SUCCESS;
  struct tt_image *im = calloc(1, sizeof *im);
  cl_mem m = NULL;
  TT_GOTO_IF(!im, CL_OUT_OF_HOST_MEMORY);
  im->format = *format;
  im->desc = *desc;
  tt_image_layout(im);
  m = tt_mem_alloc(context, flags ? flags : CL_MEM_READ_WRITE, im->slice * im->slices);
  if (!m)
    free(im);
  TT_GOTO_IF(!m, CL_OUT_OF_HOST_MEMORY);
  m->image = im;
  if (flags & CL_MEM_USE_HOST_PTR)
    m->host_ptr = host_ptr;
  cl_mem b = desc->buffer;
  if (b) {
    /* It shares the buffer's bytes: the buffer's root keeps them. */
    m->parent = b;
    TT_RETAIN(b);
    m->root = b->root;
    m->origin = b->origin;
    atomic_fetch_add(&b->root->nsubs, 1);
  } else {
    m->written = host_ptr != NULL;
    m->latest = tt_rangemap_new(m->size, context->ndomains, 1);
    TT_GOTO_IF(!m->latest, CL_OUT_OF_HOST_MEMORY);
  }
  for (cl_uint i = 0; i < context->ndomains; i++) {
    struct tt_domain *dm = &context->domains[i];
    if (!dm->actual)
      continue;
    m->native[i] = native_image(m, i, b ? NULL : host_ptr, &err);
    if (!m->native[i]) {
      TT_LOG(TT_LOG_ERR, "clCreateImage: %zux%zux%zu on %s: %s", desc->image_width,
             desc->image_height, desc->image_depth, dm->bp->short_name, tt_error_name(err));
      TT_GOTO_IF(1, err != CL_SUCCESS ? err : CL_MEM_OBJECT_ALLOCATION_FAILURE);
    }
  }
out:
  tt_set_err(errcode_ret, err);
  if (err != CL_SUCCESS && m) {
    TT_RELEASE(m);
    m = NULL;
  }
  return m;
}

/* The formats of one domain of the context for flags and type (at most cap), from its owner:
 * every rank makes the same call. */
static cl_uint domain_formats(cl_context ctx, cl_uint i, cl_mem_flags flags,
                              cl_mem_object_type type, cl_image_format *out, cl_uint cap)
{
  struct tt_domain *dm = &ctx->domains[i];
  cl_int err = CL_SUCCESS;
  cl_uint n = 0;
  if (dm->actual) {
    /* No access flag is read and write (NVIDIA lists nothing for 0). */
    if (!(flags & TT_MEM_ACCESS_FLAGS))
      flags |= CL_MEM_READ_WRITE;
    err = dm->bp->d->clGetSupportedImageFormats(dm->native, flags, type, cap, out, &n);
    if (err != CL_SUCCESS)
      n = 0;
    n = n < cap ? n : cap;
  }
  size_t len = n * sizeof *out;
  if (tt_cluster_share_answer(dm->rank, &err, out, &len, cap * sizeof *out) != 0)
    return 0;
  return err == CL_SUCCESS ? (cl_uint)(len / sizeof *out) : 0;
}

cl_int tt_image_formats(cl_context ctx, cl_mem_flags flags, cl_mem_object_type type,
                        cl_uint num_entries, cl_image_format *formats, cl_uint *num_formats)
{
  enum { CAP = 256 };
  cl_image_format *all = malloc(2 * CAP * sizeof *all), *one = all + CAP;
  TT_RETURN_IF(!all, CL_OUT_OF_HOST_MEMORY);
  /* Those of the first domain that every other domain has too. */
  cl_uint n = domain_formats(ctx, 0, flags, type, all, CAP);
  for (cl_uint i = 1; i < ctx->ndomains; i++) {
    cl_uint m = domain_formats(ctx, i, flags, type, one, CAP), k = 0;
    for (cl_uint a = 0; a < n; a++)
      for (cl_uint b = 0; b < m; b++)
        if (!memcmp(&all[a], &one[b], sizeof *one)) {
          all[k++] = all[a];
          break;
        }
    n = k;
  }
  if (formats)
    memcpy(formats, all, (num_entries < n ? num_entries : n) * sizeof *formats);
  if (num_formats)
    *num_formats = n;
  free(all);
  return CL_SUCCESS;
}

bool tt_image_format_supported(cl_context ctx, cl_mem_flags flags, cl_mem_object_type type,
                               const cl_image_format *f)
{
  cl_uint n = 0;
  cl_image_format list[256];
  if (tt_image_formats(ctx, flags & TT_MEM_ACCESS_FLAGS, type, 256, list, &n) != CL_SUCCESS)
    return false;
  for (cl_uint i = 0; i < n && i < 256; i++)
    if (!memcmp(&list[i], f, sizeof *f))
      return true;
  return false;
}

/* The whole rows of image a region lies in, as a use (a write of part of a row also reads). */
static struct tt_cmd_use rows_use(cl_mem image, const size_t *origin, const size_t *region,
                                  bool reads, bool writes)
{
  size_t off, len;
  bool exact = tt_image_rows(image->image, origin, region, &off, &len);
  return (struct tt_cmd_use){image, off, len, reads || (writes && !exact), writes};
}

/* Bytes of the region packed (a 1D array's layers are region[1]). */
static size_t packed(const struct tt_image *im, const size_t *region)
{
  return region[0] * im->pixel * region[1] * region[2];
}

/* The span of host memory a region occupies with the program's pitches (0: packed). */
static size_t host_span(const struct tt_image *im, const size_t *region, size_t row,
                        size_t slice)
{
  bool array1d = im->desc.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  size_t h = array1d ? 1 : region[1], nz = array1d ? region[1] : region[2];
  row = row ? row : region[0] * im->pixel;
  slice = slice ? slice : row * h;
  return (nz - 1) * slice + (h - 1) * row + region[0] * im->pixel;
}

cl_int tt_cmd_read_image(cl_command_queue q, cl_mem image, cl_bool blocking,
                         const size_t *origin, const size_t *region, size_t row_pitch,
                         size_t slice_pitch, void *ptr, cl_uint nwait, const cl_event *wait,
                         cl_event *event)
{
  /* Its bytes reach every rank (the span's gaps hold the same bytes everywhere). */
  struct tt_cmd_work w = {
      .op = TT_OP_READ_IMAGE, .entry = "tt_clEnqueueReadImage", .type = CL_COMMAND_READ_IMAGE,
      .blocking = blocking, .use = {rows_use(image, origin, region, true, false)}, .nuse = 1,
      .host = ptr, .host_len = host_span(image->image, region, row_pitch, slice_pitch),
      .ptr = ptr, .origin = {origin}, .region = region, .pitch = {row_pitch, slice_pitch}};
  return tt_cmd_drive(q, &w, nwait, wait, event);
}

cl_int tt_cmd_write_image(cl_command_queue q, cl_mem image, cl_bool blocking,
                          const size_t *origin, const size_t *region, size_t row_pitch,
                          size_t slice_pitch, const void *ptr, cl_uint nwait,
                          const cl_event *wait, cl_event *event)
{
  struct tt_cmd_work w = {
      .op = TT_OP_WRITE_IMAGE, .entry = "tt_clEnqueueWriteImage", .type = CL_COMMAND_WRITE_IMAGE,
      .blocking = blocking, .discardable = true,
      .use = {rows_use(image, origin, region, false, true)}, .nuse = 1, .cptr = ptr,
      .origin = {origin}, .region = region, .pitch = {row_pitch, slice_pitch}};
  return tt_cmd_drive(q, &w, nwait, wait, event);
}

cl_int tt_cmd_copy_image(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *src_origin,
                         const size_t *dst_origin, const size_t *region, cl_uint nwait,
                         const cl_event *wait, cl_event *event)
{
  struct tt_cmd_work w = {
      .op = TT_OP_COPY_IMAGE, .entry = "tt_clEnqueueCopyImage", .type = CL_COMMAND_COPY_IMAGE,
      .discardable = true,
      .use = {rows_use(src, src_origin, region, true, false),
              rows_use(dst, dst_origin, region, false, true)},
      .nuse = 2, .origin = {src_origin, dst_origin}, .region = region};
  return tt_cmd_drive(q, &w, nwait, wait, event);
}

cl_int tt_cmd_fill_image(cl_command_queue q, cl_mem image, const void *color,
                         const size_t *origin, const size_t *region, cl_uint nwait,
                         const cl_event *wait, cl_event *event)
{
  struct tt_cmd_work w = {
      .op = TT_OP_FILL_IMAGE, .entry = "tt_clEnqueueFillImage", .type = CL_COMMAND_FILL_IMAGE,
      .discardable = true, .use = {rows_use(image, origin, region, false, true)}, .nuse = 1,
      .cptr = color, .origin = {origin}, .region = region};
  return tt_cmd_drive(q, &w, nwait, wait, event);
}

cl_int tt_cmd_image_to_buffer(cl_command_queue q, cl_mem image, cl_mem buffer,
                              const size_t *origin, const size_t *region, size_t offset,
                              cl_uint nwait, const cl_event *wait, cl_event *event)
{
  size_t n = packed(image->image, region);
  struct tt_cmd_work w = {
      .op = TT_OP_IMAGE_TO_BUFFER, .entry = "tt_clEnqueueCopyImageToBuffer",
      .type = CL_COMMAND_COPY_IMAGE_TO_BUFFER, .discardable = true,
      .use = {rows_use(image, origin, region, true, false), {buffer, offset, n, false, true}},
      .nuse = 2, .origin = {origin}, .region = region, .off = {offset}, .size = n};
  return tt_cmd_drive(q, &w, nwait, wait, event);
}

cl_int tt_cmd_buffer_to_image(cl_command_queue q, cl_mem buffer, cl_mem image, size_t offset,
                              const size_t *origin, const size_t *region, cl_uint nwait,
                              const cl_event *wait, cl_event *event)
{
  size_t n = packed(image->image, region);
  struct tt_cmd_work w = {
      .op = TT_OP_BUFFER_TO_IMAGE, .entry = "tt_clEnqueueCopyBufferToImage",
      .type = CL_COMMAND_COPY_BUFFER_TO_IMAGE, .discardable = true,
      .use = {rows_use(image, origin, region, false, true), {buffer, offset, n, true, false}},
      .nuse = 2, .origin = {origin}, .region = region, .off = {0, offset}, .size = n};
  return tt_cmd_drive(q, &w, nwait, wait, event);
}

size_t tt_image_packed(const struct tt_image *im, const size_t *region)
{
  return packed(im, region);
}

struct tt_cmd_use tt_image_rows_use(cl_mem image, const size_t *origin, const size_t *region,
                                    bool reads, bool writes)
{
  return rows_use(image, origin, region, reads, writes);
}
