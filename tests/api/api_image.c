/* Images and samplers: every entry point's results and error codes, each image type made,
 * written, read, copied, filled, mapped and described, on every device of the fixture (a
 * context without image support, the aggregate device's, refuses them). */
#include "tests/api/check.h"

static const cl_image_format rgba8 = {CL_RGBA, CL_UNORM_INT8};

static cl_mem image(struct fixture *f, cl_mem_flags flags, cl_mem_object_type type, size_t w,
                    size_t h, size_t d, size_t layers, cl_mem buffer, void *host, cl_int *err)
{
  cl_image_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.image_type = type;
  desc.image_width = w;
  desc.image_height = h;
  desc.image_depth = d;
  desc.image_array_size = layers;
  desc.buffer = buffer;
  return clCreateImage(f->ctx, flags, &rgba8, &desc, host, err);
}

/* Errors of image creation and of the format list. */
static void creation_errors(struct fixture *f)
{
  cl_int err;
  cl_image_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = desc.image_height = 8;
  cl_image_format bad = {0x1234, CL_UNORM_INT8}, odd = {CL_RGBA, CL_UNORM_SHORT_565};
  CHECK(!clCreateImage(NULL, 0, &rgba8, &desc, NULL, &err) && err == CL_INVALID_CONTEXT);
  CHECK(!clCreateImage(f->ctx, 1u << 30, &rgba8, &desc, NULL, &err) && err == CL_INVALID_VALUE);
  CHECK(!clCreateImage(f->ctx, 0, NULL, &desc, NULL, &err) &&
        err == CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
  CHECK(!clCreateImage(f->ctx, 0, &bad, &desc, NULL, &err) &&
        err == CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
  CHECK(!clCreateImage(f->ctx, 0, &odd, &desc, NULL, &err) &&
        err == CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
  CHECK(!clCreateImage(f->ctx, 0, &rgba8, NULL, NULL, &err) && err == CL_INVALID_IMAGE_DESCRIPTOR);
  cl_image_desc d2 = desc;
  d2.image_width = 0;
  CHECK(!clCreateImage(f->ctx, 0, &rgba8, &d2, NULL, &err) && err == CL_INVALID_IMAGE_DESCRIPTOR);
  d2 = desc;
  d2.num_mip_levels = 1;
  CHECK(!clCreateImage(f->ctx, 0, &rgba8, &d2, NULL, &err) && err == CL_INVALID_IMAGE_DESCRIPTOR);
  d2 = desc;
  d2.image_row_pitch = 64; /* a pitch without host memory */
  CHECK(!clCreateImage(f->ctx, 0, &rgba8, &d2, NULL, &err) && err == CL_INVALID_IMAGE_DESCRIPTOR);
  unsigned char host[8 * 8 * 4 * 2];
  d2.image_row_pitch = 30; /* less than a row, not whole pixels */
  CHECK(!clCreateImage(f->ctx, CL_MEM_COPY_HOST_PTR, &rgba8, &d2, host, &err) &&
        err == CL_INVALID_IMAGE_DESCRIPTOR);
  d2.image_type = 0x4242;
  CHECK(!clCreateImage(f->ctx, 0, &rgba8, &d2, NULL, &err) && err == CL_INVALID_IMAGE_DESCRIPTOR);
  CHECK(!clCreateImage(f->ctx, CL_MEM_COPY_HOST_PTR, &rgba8, &desc, NULL, &err) &&
        err == CL_INVALID_HOST_PTR);
  CHECK(!clCreateImage(f->ctx, 0, &rgba8, &desc, host, &err) && err == CL_INVALID_HOST_PTR);
  d2 = desc;
  d2.image_width = (size_t)1 << 40;
  CHECK(!clCreateImage(f->ctx, 0, &rgba8, &d2, NULL, &err) && err == CL_INVALID_IMAGE_SIZE);
  CHECK(!clCreateImage3D(f->ctx, 0, &rgba8, 4, 4, 1, 0, 0, NULL, &err) &&
        err == CL_INVALID_IMAGE_SIZE);
  /* The format list: the minimum OpenCL 1.2 asks for is there. */
  cl_uint n = 0;
  OK(clGetSupportedImageFormats(f->ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 0, NULL, &n));
  cl_image_format list[256];
  OK(clGetSupportedImageFormats(f->ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 256, list, NULL));
  int found = 0;
  for (cl_uint i = 0; i < n && i < 256; i++)
    found += !memcmp(&list[i], &rgba8, sizeof rgba8);
  CHECK(n > 0 && found == 1);
  CHECK_ERR(CL_INVALID_CONTEXT, clGetSupportedImageFormats(NULL, 0, CL_MEM_OBJECT_IMAGE2D, 0, NULL, &n));
  CHECK_ERR(CL_INVALID_VALUE, clGetSupportedImageFormats(f->ctx, 1u << 30, CL_MEM_OBJECT_IMAGE2D, 0, NULL, &n));
  CHECK_ERR(CL_INVALID_VALUE, clGetSupportedImageFormats(f->ctx, 0, CL_MEM_OBJECT_BUFFER, 0, NULL, &n));
  CHECK_ERR(CL_INVALID_VALUE, clGetSupportedImageFormats(f->ctx, 0, CL_MEM_OBJECT_IMAGE2D, 0, list, &n));
}

/* Each type made with bytes, described, and read back whole and as a region on every device. */
static void every_type(struct fixture *f)
{
  enum { W = 9, H = 5, D = 3 };
  static unsigned char in[W * H * D * 4], out[W * H * D * 4];
  for (size_t i = 0; i < sizeof in; i++)
    in[i] = (unsigned char)(i * 7 + 3);
  cl_int err;
  cl_mem buf = clCreateBuffer(f->ctx, CL_MEM_COPY_HOST_PTR, W * 4, in, &err);
  OK(err);
  const struct {
    cl_mem_object_type type;
    size_t w, h, d, layers, region[3], slice;
  } t[] = {
      {CL_MEM_OBJECT_IMAGE1D, W, 0, 0, 0, {W, 1, 1}, 0},
      {CL_MEM_OBJECT_IMAGE1D_BUFFER, W, 0, 0, 0, {W, 1, 1}, 0},
      {CL_MEM_OBJECT_IMAGE1D_ARRAY, W, 0, 0, D, {W, D, 1}, W * 4},
      {CL_MEM_OBJECT_IMAGE2D, W, H, 0, 0, {W, H, 1}, 0},
      {CL_MEM_OBJECT_IMAGE2D_ARRAY, W, H, 0, D, {W, H, D}, W * H * 4},
      {CL_MEM_OBJECT_IMAGE3D, W, H, D, 0, {W, H, D}, W * H * 4},
  };
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
    bool from_buffer = t[i].type == CL_MEM_OBJECT_IMAGE1D_BUFFER;
    cl_mem m = image(f, from_buffer ? 0 : CL_MEM_COPY_HOST_PTR, t[i].type, t[i].w, t[i].h, t[i].d,
                     t[i].layers, from_buffer ? buf : NULL, from_buffer ? NULL : in, &err);
    OK(err);
    if (!m)
      continue;
    size_t v = 0, bytes = t[i].region[0] * t[i].region[1] * t[i].region[2] * 4;
    cl_mem_object_type type = 0;
    cl_image_format fmt;
    OK(clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof type, &type, NULL));
    CHECK(type == t[i].type);
    OK(clGetImageInfo(m, CL_IMAGE_FORMAT, sizeof fmt, &fmt, NULL));
    CHECK(!memcmp(&fmt, &rgba8, sizeof fmt));
    OK(clGetImageInfo(m, CL_IMAGE_ELEMENT_SIZE, sizeof v, &v, NULL));
    CHECK(v == 4);
    OK(clGetImageInfo(m, CL_IMAGE_ROW_PITCH, sizeof v, &v, NULL));
    CHECK(v == W * 4);
    OK(clGetImageInfo(m, CL_IMAGE_SLICE_PITCH, sizeof v, &v, NULL));
    CHECK(v == t[i].slice);
    OK(clGetImageInfo(m, CL_IMAGE_HEIGHT, sizeof v, &v, NULL));
    CHECK(v == t[i].h);
    OK(clGetImageInfo(m, CL_IMAGE_DEPTH, sizeof v, &v, NULL));
    CHECK(v == t[i].d);
    OK(clGetImageInfo(m, CL_IMAGE_ARRAY_SIZE, sizeof v, &v, NULL));
    CHECK(v == t[i].layers);
    cl_mem b = NULL;
    OK(clGetImageInfo(m, CL_IMAGE_BUFFER, sizeof b, &b, NULL));
    CHECK(b == (from_buffer ? buf : NULL));
    CHECK_ERR(CL_INVALID_VALUE, clGetImageInfo(m, 0x1234, sizeof v, &v, NULL));
    size_t zero[3] = {0, 0, 0};
    for (cl_uint q = 0; q < f->ndevs; q++) {
      memset(out, 0, sizeof out);
      OK(clEnqueueReadImage(f->q[q], m, CL_TRUE, zero, t[i].region, 0, 0, out, 0, NULL, NULL));
      CHECK(!memcmp(out, in, bytes));
    }
    OK(clReleaseMemObject(m));
  }
  OK(clReleaseMemObject(buf));
}

/* The commands' results between devices, and their error codes. */
static void commands(struct fixture *f)
{
  enum { W = 16, H = 8 };
  static unsigned char in[W * H * 4], out[W * H * 4];
  for (size_t i = 0; i < sizeof in; i++)
    in[i] = (unsigned char)(i % 251);
  cl_int err;
  cl_command_queue q0 = f->q[0], q1 = f->q[f->ndevs - 1];
  cl_mem a = image(f, CL_MEM_COPY_HOST_PTR, CL_MEM_OBJECT_IMAGE2D, W, H, 0, 0, NULL, in, &err);
  OK(err);
  cl_mem b = image(f, 0, CL_MEM_OBJECT_IMAGE2D, W, H, 0, 0, NULL, NULL, &err);
  OK(err);
  size_t zero[3] = {0, 0, 0}, all[3] = {W, H, 1}, org[3] = {3, 2, 0}, reg[3] = {5, 4, 1};
  /* Copy on one device, read on the other; a region with a row pitch of its own. */
  OK(clEnqueueCopyImage(q0, a, b, zero, zero, all, 0, NULL, NULL));
  OK(clFinish(q0));
  OK(clEnqueueReadImage(q1, b, CL_TRUE, zero, all, 0, 0, out, 0, NULL, NULL));
  CHECK(!memcmp(in, out, sizeof in));
  unsigned char part[8 * 4 * 4];
  OK(clEnqueueReadImage(q1, b, CL_TRUE, org, reg, 8 * 4, 0, part, 0, NULL, NULL));
  for (size_t y = 0; y < 4; y++)
    CHECK(!memcmp(part + y * 32, in + ((2 + y) * W + 3) * 4, 5 * 4));
  /* A fill of a region, a map for writing of another with its pitch. */
  float color[4] = {1, 0, 0, 1};
  OK(clEnqueueFillImage(q1, b, color, org, reg, 0, NULL, NULL));
  OK(clFinish(q1));
  size_t row = 0, morg[3] = {10, 5, 0}, mreg[3] = {4, 2, 1};
  unsigned char *p = clEnqueueMapImage(q0, b, CL_TRUE, CL_MAP_WRITE, morg, mreg, &row, NULL, 0,
                                       NULL, NULL, &err);
  OK(err);
  CHECK(p && row >= 4 * 4);
  for (size_t y = 0; p && y < 2; y++)
    memset(p + y * row, 0x77, 4 * 4);
  if (p)
    OK(clEnqueueUnmapMemObject(q0, b, p, 0, NULL, NULL));
  OK(clFinish(q0));
  OK(clEnqueueReadImage(q1, b, CL_TRUE, zero, all, 0, 0, out, 0, NULL, NULL));
  CHECK(out[((2 * W) + 3) * 4] == 255 && out[((2 * W) + 3) * 4 + 1] == 0);
  CHECK(out[((5 * W) + 10) * 4] == 0x77 && out[((6 * W) + 13) * 4 + 3] == 0x77);
  CHECK(out[0] == in[0] && out[sizeof out - 1] == in[sizeof in - 1]);
  /* To a buffer and back. */
  cl_mem buf = clCreateBuffer(f->ctx, 0, sizeof in, NULL, &err);
  OK(err);
  OK(clEnqueueCopyImageToBuffer(q0, a, buf, zero, all, 0, 0, NULL, NULL));
  OK(clFinish(q0));
  OK(clEnqueueCopyBufferToImage(q1, buf, b, 0, zero, all, 0, NULL, NULL));
  OK(clEnqueueReadImage(q1, b, CL_TRUE, zero, all, 0, 0, out, 0, NULL, NULL));
  CHECK(!memcmp(in, out, sizeof in));
  /* Errors. */
  size_t big[3] = {W + 1, H, 1}, deep[3] = {W, H, 2}, none[3] = {0, 1, 1};
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueReadImage(q0, a, CL_TRUE, zero, big, 0, 0, out, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueReadImage(q0, a, CL_TRUE, zero, deep, 0, 0, out, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueReadImage(q0, a, CL_TRUE, zero, none, 0, 0, out, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueReadImage(q0, a, CL_TRUE, NULL, all, 0, 0, out, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueReadImage(q0, a, CL_TRUE, zero, all, 0, 0, NULL, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueReadImage(q0, a, CL_TRUE, zero, all, 4, 0, out, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_MEM_OBJECT, clEnqueueReadImage(q0, buf, CL_TRUE, zero, all, 0, 0, out, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_MEM_OBJECT, clEnqueueReadBuffer(q0, a, CL_TRUE, 0, 4, out, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_COMMAND_QUEUE, clEnqueueWriteImage(NULL, a, CL_TRUE, zero, all, 0, 0, in, 0, NULL, NULL));
  CHECK_ERR(CL_MEM_COPY_OVERLAP, clEnqueueCopyImage(q0, a, a, zero, (size_t[3]){1, 1, 0}, reg, 0, NULL, NULL));
  cl_image_format rf = {CL_R, CL_FLOAT};
  cl_mem other = clCreateImage2D(f->ctx, 0, &rf, W, H, 0, NULL, &err);
  OK(err);
  CHECK_ERR(CL_IMAGE_FORMAT_MISMATCH, clEnqueueCopyImage(q0, a, other, zero, zero, all, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueFillImage(q0, a, NULL, zero, all, 0, NULL, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clEnqueueCopyImageToBuffer(q0, a, buf, zero, all, 4, 0, NULL, NULL));
  CHECK(!clEnqueueMapImage(q0, a, CL_TRUE, CL_MAP_READ, zero, all, NULL, NULL, 0, NULL, NULL, &err) &&
        err == CL_INVALID_VALUE);
  cl_mem hidden = image(f, CL_MEM_HOST_NO_ACCESS, CL_MEM_OBJECT_IMAGE2D, W, H, 0, 0, NULL, NULL, &err);
  OK(err);
  CHECK_ERR(CL_INVALID_OPERATION, clEnqueueReadImage(q0, hidden, CL_TRUE, zero, all, 0, 0, out, 0, NULL, NULL));
  cl_buffer_region r = {0, 4};
  CHECK(!clCreateSubBuffer(a, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err) &&
        err == CL_INVALID_MEM_OBJECT);
  OK(clFinish(q0));
  OK(clFinish(q1));
  OK(clReleaseMemObject(hidden));
  OK(clReleaseMemObject(other));
  OK(clReleaseMemObject(buf));
  OK(clReleaseMemObject(a));
  OK(clReleaseMemObject(b));
}

/* Samplers: made, described, counted, refused; image and sampler kernel arguments. */
static void samplers(struct fixture *f)
{
  cl_int err;
  cl_sampler s = clCreateSampler(f->ctx, CL_TRUE, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR, &err);
  OK(err);
  cl_uint u = 0;
  cl_bool norm = CL_FALSE;
  cl_addressing_mode am = 0;
  cl_filter_mode fm = 0;
  cl_context c = NULL;
  OK(clGetSamplerInfo(s, CL_SAMPLER_NORMALIZED_COORDS, sizeof norm, &norm, NULL));
  OK(clGetSamplerInfo(s, CL_SAMPLER_ADDRESSING_MODE, sizeof am, &am, NULL));
  OK(clGetSamplerInfo(s, CL_SAMPLER_FILTER_MODE, sizeof fm, &fm, NULL));
  OK(clGetSamplerInfo(s, CL_SAMPLER_CONTEXT, sizeof c, &c, NULL));
  CHECK(norm == CL_TRUE && am == CL_ADDRESS_REPEAT && fm == CL_FILTER_LINEAR && c == f->ctx);
  OK(clRetainSampler(s));
  OK(clGetSamplerInfo(s, CL_SAMPLER_REFERENCE_COUNT, sizeof u, &u, NULL));
  CHECK(u == 2);
  OK(clReleaseSampler(s));
  CHECK_ERR(CL_INVALID_VALUE, clGetSamplerInfo(s, 0x4242, sizeof u, &u, NULL));
  CHECK(!clCreateSampler(f->ctx, CL_FALSE, CL_ADDRESS_REPEAT, CL_FILTER_NEAREST, &err) &&
        err == CL_INVALID_VALUE);
  CHECK(!clCreateSampler(f->ctx, CL_FALSE, CL_ADDRESS_NONE, 0x7777, &err) && err == CL_INVALID_VALUE);
  CHECK(!clCreateSampler(NULL, CL_FALSE, CL_ADDRESS_NONE, CL_FILTER_NEAREST, &err) &&
        err == CL_INVALID_CONTEXT);
  CHECK_ERR(CL_INVALID_SAMPLER, clRetainSampler(NULL));
  CHECK_ERR(CL_INVALID_SAMPLER, clReleaseSampler((cl_sampler)f->ctx));
  /* Kernel arguments: an image where a buffer is declared and the other way round, no
   * sampler where one is declared. */
  cl_program p = build_source(f, "__kernel void k(read_only image2d_t i, sampler_t s, "
                                 "__global float4 *o) { o[0] = read_imagef(i, s, (int2)(0, 0)); }\n");
  cl_kernel k = clCreateKernel(p, "k", &err);
  OK(err);
  cl_mem img = image(f, 0, CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0, NULL, NULL, &err);
  OK(err);
  cl_mem buf = clCreateBuffer(f->ctx, 0, 16, NULL, &err);
  OK(err);
  OK(clSetKernelArg(k, 0, sizeof img, &img));
  OK(clSetKernelArg(k, 1, sizeof s, &s));
  OK(clSetKernelArg(k, 2, sizeof buf, &buf));
  CHECK_ERR(CL_INVALID_MEM_OBJECT, clSetKernelArg(k, 0, sizeof buf, &buf));
  CHECK_ERR(CL_INVALID_MEM_OBJECT, clSetKernelArg(k, 2, sizeof img, &img));
  CHECK_ERR(CL_INVALID_SAMPLER, clSetKernelArg(k, 1, sizeof buf, &buf));
  OK(clReleaseMemObject(buf));
  OK(clReleaseMemObject(img));
  OK(clReleaseKernel(k));
  OK(clReleaseProgram(p));
  OK(clReleaseSampler(s));
}

void test_image(struct fixture *f)
{
  cl_bool any = CL_FALSE;
  for (cl_uint i = 0; i < f->ndevs; i++) {
    cl_bool yes = CL_FALSE;
    OK(clGetDeviceInfo(f->devs[i], CL_DEVICE_IMAGE_SUPPORT, sizeof yes, &yes, NULL));
    any |= yes;
  }
  cl_int err;
  if (!any) {
    /* No device with images: none can be made, no format is listed. */
    cl_uint n = 99;
    OK(clGetSupportedImageFormats(f->ctx, 0, CL_MEM_OBJECT_IMAGE2D, 0, NULL, &n));
    CHECK(n == 0);
    CHECK(!clCreateImage2D(f->ctx, 0, &rgba8, 4, 4, 0, NULL, &err) && err == CL_INVALID_OPERATION);
    CHECK(!clCreateSampler(f->ctx, CL_FALSE, CL_ADDRESS_NONE, CL_FILTER_NEAREST, &err) &&
          err == CL_INVALID_OPERATION);
    return;
  }
  creation_errors(f);
  every_type(f);
  commands(f);
  samplers(f);
}
