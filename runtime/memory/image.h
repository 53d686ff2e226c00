/* Images as bytes (runtime/memory/image.c): the size of a format's pixel, an image's packed
 * layout (struct tt_image, runtime/base/tutti_internal.h), the whole rows a region lies in,
 * and moving whole rows between an image and host memory, for the transfers between memory
 * domains (runtime/transfer/) and the image commands (runtime/command/image.c). */
#ifndef TUTTI_MEMORY_IMAGE_H
#define TUTTI_MEMORY_IMAGE_H

#include "runtime/base/tutti_internal.h"

/* Bytes of a pixel of format f, or 0 when its order or type is not OpenCL 1.2's (or the two
 * do not go together: CL_UNORM_SHORT_565 and the like only with CL_RGB or CL_RGBx). */
size_t tt_image_pixel(const cl_image_format *f);

/* Fills im's layout from its format and description (type, sizes); false for a type that is
 * no image type. */
bool tt_image_layout(struct tt_image *im);

/* The bytes [*off, *off + *len) of the packed image holding the whole rows that region
 * (origin, region, in pixels, rows and slices) lies in; whether they are exactly the region's
 * bytes (the region spans whole rows, and whole slices unless it is one slice deep). */
bool tt_image_rows(const struct tt_image *im, const size_t *origin, const size_t *region,
                   size_t *off, size_t *len);

/* The slice pitch a command of the backend takes for im: slice, or 0 for the 1D and 2D images
 * whose commands must say 0 (NVIDIA refuses another). */
size_t tt_image_slice_pitch(const struct tt_image *im, size_t slice);

/* Reads (or writes) the whole rows [off, off + len) of a native image from (into) host
 * memory packed, on native queue q after wait: at most three commands of the backend (the
 * rows left of a first slice, whole slices, the rows of a last slice), in order on q; *ev
 * (unless NULL) the last one's event. */
cl_int tt_image_rows_io(const cl_icd_dispatch *d, cl_command_queue q, const struct tt_image *im,
                        cl_mem native, bool write, size_t off, size_t len, void *host,
                        cl_uint nwait, const cl_event *wait, cl_event *ev);

#endif
