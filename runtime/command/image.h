/* Images behind their entry points' checks (runtime/command/image.c): creation in every
 * actual domain, the formats every device of a context supports, and the image commands. */
#ifndef TUTTI_COMMAND_IMAGE_H
#define TUTTI_COMMAND_IMAGE_H

#include "runtime/command/command.h"

/* An image of context as clCreateImage checked it (a 1D image of a buffer shares the buffer's
 * bytes). */
cl_mem tt_image_new(cl_context context, cl_mem_flags flags, const cl_image_format *format,
                    const cl_image_desc *desc, void *host_ptr, cl_int *errcode_ret);

/* clGetSupportedImageFormats: the formats of the context's first domain that every other
 * domain supports too, for flags and type, from each domain's owner: alike on every rank,
 * every rank calling. */
cl_int tt_image_formats(cl_context ctx, cl_mem_flags flags, cl_mem_object_type type,
                        cl_uint num_entries, cl_image_format *formats, cl_uint *num_formats);
/* Whether format f is among them (for flags' access flags). */
bool tt_image_format_supported(cl_context ctx, cl_mem_flags flags, cl_mem_object_type type,
                               const cl_image_format *f);

/* Bytes of a region packed; the whole rows a region lies in, as a command's use. */
size_t tt_image_packed(const struct tt_image *im, const size_t *region);
struct tt_cmd_use tt_image_rows_use(cl_mem image, const size_t *origin, const size_t *region,
                                    bool reads, bool writes);

/* The image commands once checked (icd/image.c). */
cl_int tt_cmd_read_image(cl_command_queue q, cl_mem image, cl_bool blocking,
                         const size_t *origin, const size_t *region, size_t row_pitch,
                         size_t slice_pitch, void *ptr, cl_uint nwait, const cl_event *wait,
                         cl_event *event);
cl_int tt_cmd_write_image(cl_command_queue q, cl_mem image, cl_bool blocking,
                          const size_t *origin, const size_t *region, size_t row_pitch,
                          size_t slice_pitch, const void *ptr, cl_uint nwait,
                          const cl_event *wait, cl_event *event);
cl_int tt_cmd_copy_image(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *src_origin,
                         const size_t *dst_origin, const size_t *region, cl_uint nwait,
                         const cl_event *wait, cl_event *event);
cl_int tt_cmd_fill_image(cl_command_queue q, cl_mem image, const void *color,
                         const size_t *origin, const size_t *region, cl_uint nwait,
                         const cl_event *wait, cl_event *event);
cl_int tt_cmd_image_to_buffer(cl_command_queue q, cl_mem image, cl_mem buffer,
                              const size_t *origin, const size_t *region, size_t offset,
                              cl_uint nwait, const cl_event *wait, cl_event *event);
cl_int tt_cmd_buffer_to_image(cl_command_queue q, cl_mem buffer, cl_mem image, size_t offset,
                              const size_t *origin, const size_t *region, cl_uint nwait,
                              const cl_event *wait, cl_event *event);

#endif
