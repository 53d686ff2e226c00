/* Images and samplers across devices as a plain OpenCL 1.2 program uses them, each step on the
 * next device (devices of other ranks, or of other memory domains under TUTTI_DOMAINS=device),
 * every result checked exactly against the host's: a float image filtered by a kernel with a
 * sampler declared in the program, then scaled by a kernel with a sampler argument; a region
 * read with a row pitch; regions filled, copied image to image, image to buffer and back;
 * a region mapped and written; a region written and read elsewhere; a 3-D RGBA8 image read as
 * normalized floats; through Tutti, a launch reading an image split over every device (each
 * part reads the image whole). Prints "images: N checks passed" or names the first wrong
 * value. */
#include "tests/app.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define W 67
#define H 45

static const char *source =
    "const sampler_t edge = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE |\n"
    "                       CLK_FILTER_NEAREST;\n"
    "__kernel void blur(read_only image2d_t in, write_only image2d_t out) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  float s = 0;\n"
    "  for (int dy = -1; dy <= 1; dy++)\n"
    "    for (int dx = -1; dx <= 1; dx++)\n"
    "      s += read_imagef(in, edge, (int2)(x + dx, y + dy)).x;\n"
    "  write_imagef(out, (int2)(x, y), (float4)(s, 0, 0, 1));\n"
    "}\n"
    "__kernel void halve(read_only image2d_t in, sampler_t smp, __global float *out, int w) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  out[y * w + x] = 0.5f * read_imagef(in, smp, (int2)(2 * x, 2 * y)).x;\n"
    "}\n"
    "#pragma tutti global [x, y] => write out(h, w)[y, x]\n"
    "__kernel void shade(read_only image2d_t in, sampler_t smp, __global float *out, int w,\n"
    "                    int h) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  out[y * w + x] = 3.0f * read_imagef(in, smp, (int2)(x, y)).x;\n"
    "}\n"
    "__kernel void unorm(read_only image3d_t in, sampler_t smp, __global float4 *out) {\n"
    "  int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);\n"
    "  out[(z * get_global_size(1) + y) * get_global_size(0) + x] =\n"
    "      read_imagef(in, smp, (int4)(x, y, z, 0));\n"
    "}\n";

static int checks;

static void expect(bool ok, const char *what, size_t at, double got, double want)
{
  checks++;
  if (!ok) {
    printf("images: %s wrong at %zu: %g, not %g\n", what, at, got, want);
    exit(1);
  }
}

/* The host's blur: a 3x3 sum, clamped to the edge. */
static float blurred(const float *in, int x, int y)
{
  float s = 0;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++) {
      int cx = x + dx < 0 ? 0 : x + dx >= W ? W - 1 : x + dx;
      int cy = y + dy < 0 ? 0 : y + dy >= H ? H - 1 : y + dy;
      s += in[cy * W + cx];
    }
  return s;
}

static cl_kernel kernel(cl_program p, const char *name)
{
  cl_int err;
  cl_kernel k = clCreateKernel(p, name, &err);
  CHECK(err);
  return k;
}

int main(void)
{
  struct app a;
  app_open(&a);
  cl_command_queue q0 = a.qs[0], q1 = a.qs[a.ndev - 1], q2 = a.qs[a.ndev > 2 ? 1 : 0];
  cl_int err;
  cl_program prog = clCreateProgramWithSource(a.ctx, 1, &source, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 0, NULL, NULL, NULL, NULL));
  cl_image_format rf = {CL_R, CL_FLOAT};
  /* The input with a row pitch of its own (two floats more than a row). */
  size_t pitch = (W + 2) * sizeof(float);
  float *host = calloc((W + 2) * H, sizeof *host), in[W * H];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      host[y * (W + 2) + x] = in[y * W + x] = (float)((x * 7 + y * 13) % 29);
  cl_mem src = clCreateImage2D(a.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &rf, W, H, pitch,
                               host, &err);
  CHECK(err);
  cl_mem blur = clCreateImage2D(a.ctx, CL_MEM_READ_WRITE, &rf, W, H, 0, NULL, &err);
  CHECK(err);

  /* 1. The filter on the first device, with the program's sampler. */
  cl_kernel kb = kernel(prog, "blur");
  CHECK(clSetKernelArg(kb, 0, sizeof src, &src));
  CHECK(clSetKernelArg(kb, 1, sizeof blur, &blur));
  size_t g2[2] = {W, H};
  CHECK(clEnqueueNDRangeKernel(q0, kb, 2, NULL, g2, NULL, 0, NULL, NULL));
  CHECK(clFinish(q0));

  /* 2. Scaled to half on the last device, with a sampler argument. */
  cl_sampler smp = clCreateSampler(a.ctx, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST,
                                   &err);
  CHECK(err);
  enum { HW = W / 2, HH = H / 2 };
  cl_mem halfbuf = clCreateBuffer(a.ctx, CL_MEM_WRITE_ONLY, HW * HH * sizeof(float), NULL, &err);
  CHECK(err);
  cl_kernel kh = kernel(prog, "halve");
  int hw = HW;
  CHECK(clSetKernelArg(kh, 0, sizeof blur, &blur));
  CHECK(clSetKernelArg(kh, 1, sizeof smp, &smp));
  CHECK(clSetKernelArg(kh, 2, sizeof halfbuf, &halfbuf));
  CHECK(clSetKernelArg(kh, 3, sizeof hw, &hw));
  size_t gh[2] = {HW, HH};
  CHECK(clEnqueueNDRangeKernel(q1, kh, 2, NULL, gh, NULL, 0, NULL, NULL));
  float halves[HW * HH];
  CHECK(clEnqueueReadBuffer(q1, halfbuf, CL_TRUE, 0, sizeof halves, halves, 0, NULL, NULL));
  for (int i = 0; i < HW * HH; i++) {
    float want = 0.5f * blurred(in, 2 * (i % HW), 2 * (i / HW));
    expect(halves[i] == want, "half-size image", (size_t)i, halves[i], want);
  }

  /* 3. A region of the filtered image read on another device, with a row pitch of its own. */
  size_t org[3] = {5, 7, 0}, reg[3] = {20, 11, 1}, rp = 24 * sizeof(float);
  float part[24 * 11];
  memset(part, 0, sizeof part);
  CHECK(clEnqueueReadImage(q2, blur, CL_TRUE, org, reg, rp, 0, part, 0, NULL, NULL));
  for (size_t y = 0; y < reg[1]; y++)
    for (size_t x = 0; x < reg[0]; x++) {
      float want = blurred(in, (int)(org[0] + x), (int)(org[1] + y));
      expect(part[y * 24 + x] == want, "region read with a pitch", y * 24 + x, part[y * 24 + x],
             want);
    }

  /* 4. A region filled on the first device, copied image to image on the last, to a buffer
   * and back into the first image's corner on the first. */
  float color[4] = {-3.5f, 0, 0, 0};
  size_t forg[3] = {10, 10, 0}, freg[3] = {9, 6, 1}, zero[3] = {0, 0, 0};
  CHECK(clEnqueueFillImage(q0, blur, color, forg, freg, 0, NULL, NULL));
  CHECK(clFinish(q0)); /* each step on another queue: the program orders them */
  cl_mem copy = clCreateImage2D(a.ctx, CL_MEM_READ_WRITE, &rf, W, H, 0, NULL, &err);
  CHECK(err);
  CHECK(clEnqueueCopyImage(q1, blur, copy, zero, zero, (size_t[3]){W, H, 1}, 0, NULL, NULL));
  CHECK(clFinish(q1));
  cl_mem bytes = clCreateBuffer(a.ctx, CL_MEM_READ_WRITE, 9 * 6 * sizeof(float), NULL, &err);
  CHECK(err);
  CHECK(clEnqueueCopyImageToBuffer(q2, copy, bytes, forg, freg, 0, 0, NULL, NULL));
  CHECK(clFinish(q2));
  CHECK(clEnqueueCopyBufferToImage(q0, bytes, copy, 0, zero, freg, 0, NULL, NULL));
  CHECK(clFinish(q0));
  float whole[W * H];
  CHECK(clEnqueueReadImage(q1, copy, CL_TRUE, zero, (size_t[3]){W, H, 1}, 0, 0, whole, 0, NULL,
                           NULL));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      bool corner = x < 9 && y < 6, filled = x >= 10 && x < 19 && y >= 10 && y < 16;
      float want = corner || filled ? color[0] : blurred(in, x, y);
      expect(whole[y * W + x] == want, "fill, copies", (size_t)(y * W + x), whole[y * W + x],
             want);
    }

  /* 5. A region mapped for writing on the last device, written, then read on the first. */
  size_t morg[3] = {30, 20, 0}, mreg[3] = {8, 4, 1}, row = 0;
  float *m = clEnqueueMapImage(q1, copy, CL_TRUE, CL_MAP_WRITE, morg, mreg, &row, NULL, 0, NULL,
                               NULL, &err);
  CHECK(err);
  for (size_t y = 0; y < mreg[1]; y++)
    for (size_t x = 0; x < mreg[0]; x++)
      m[y * (row / sizeof(float)) + x] = (float)(1000 + y * 10 + x);
  CHECK(clEnqueueUnmapMemObject(q1, copy, m, 0, NULL, NULL));
  CHECK(clFinish(q1));
  /* 6. A region written on the middle device. */
  size_t worg[3] = {50, 30, 0}, wreg[3] = {3, 2, 1};
  float six[6] = {-1, -2, -3, -4, -5, -6};
  CHECK(clEnqueueWriteImage(q2, copy, CL_TRUE, worg, wreg, 0, 0, six, 0, NULL, NULL));
  CHECK(clEnqueueReadImage(q0, copy, CL_TRUE, zero, (size_t[3]){W, H, 1}, 0, 0, whole, 0, NULL,
                           NULL));
  for (size_t y = 0; y < mreg[1]; y++)
    for (size_t x = 0; x < mreg[0]; x++) {
      size_t at = (morg[1] + y) * W + morg[0] + x;
      expect(whole[at] == (float)(1000 + y * 10 + x), "mapped region", at, whole[at],
             (double)(1000 + y * 10 + x));
    }
  for (size_t i = 0; i < 6; i++) {
    size_t at = (worg[1] + i / 3) * W + worg[0] + i % 3;
    expect(whole[at] == six[i], "written region", at, whole[at], six[i]);
  }
  expect(whole[0] == color[0] && whole[H * W - 1] == blurred(in, W - 1, H - 1), "the rest", 0,
         whole[0], color[0]);

  /* 7. A 3-D RGBA8 image read as normalized floats on the last device. */
  enum { X = 5, Y = 4, Z = 3 };
  cl_image_format rgba = {CL_RGBA, CL_UNORM_INT8};
  unsigned char cube[X * Y * Z * 4];
  for (size_t i = 0; i < sizeof cube; i++)
    cube[i] = (unsigned char)(i * 37 % 256);
  cl_mem vol = clCreateImage3D(a.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &rgba, X, Y, Z,
                               0, 0, cube, &err);
  CHECK(err);
  cl_mem outv = clCreateBuffer(a.ctx, CL_MEM_WRITE_ONLY, sizeof cube * sizeof(float), NULL,
                               &err);
  CHECK(err);
  cl_kernel ku = kernel(prog, "unorm");
  CHECK(clSetKernelArg(ku, 0, sizeof vol, &vol));
  CHECK(clSetKernelArg(ku, 1, sizeof smp, &smp));
  CHECK(clSetKernelArg(ku, 2, sizeof outv, &outv));
  CHECK(clEnqueueNDRangeKernel(q1, ku, 3, NULL, (size_t[3]){X, Y, Z}, NULL, 0, NULL, NULL));
  CHECK(clFinish(q1));
  float got[X * Y * Z * 4];
  CHECK(clEnqueueReadBuffer(q0, outv, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
  for (size_t i = 0; i < sizeof cube; i++)
    expect(fabsf(got[i] - cube[i] / 255.0f) < 1e-6f, "3-D RGBA8 as floats", i, got[i],
           cube[i] / 255.0);

  /* 8. Through Tutti: the filtered image read by a launch split over every device. */
  clEnqueueSplitNDRangeKernelTUTTI_fn split = app_split_fn();
  if (split) {
    cl_mem shaded = clCreateBuffer(a.ctx, CL_MEM_WRITE_ONLY, W * H * sizeof(float), NULL, &err);
    CHECK(err);
    cl_kernel ks = kernel(prog, "shade");
    int w = W, h = H;
    CHECK(clSetKernelArg(ks, 0, sizeof blur, &blur));
    CHECK(clSetKernelArg(ks, 1, sizeof smp, &smp));
    CHECK(clSetKernelArg(ks, 2, sizeof shaded, &shaded));
    CHECK(clSetKernelArg(ks, 3, sizeof w, &w));
    CHECK(clSetKernelArg(ks, 4, sizeof h, &h));
    /* blur's corner and region were filled in step 4: read it back as it is. */
    float now[W * H];
    CHECK(clEnqueueReadImage(q0, blur, CL_TRUE, zero, (size_t[3]){W, H, 1}, 0, 0, now, 0, NULL,
                             NULL));
    CHECK(split(a.ndev, a.qs, ks, 2, NULL, g2, NULL, 0, NULL, NULL));
    float out[W * H];
    CHECK(clEnqueueReadBuffer(q1, shaded, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    for (int i = 0; i < W * H; i++)
      expect(out[i] == 3.0f * now[i], "split launch reading an image", (size_t)i, out[i],
             3.0f * now[i]);
    clReleaseKernel(ks);
    clReleaseMemObject(shaded);
  }

  printf("images: %d checks passed on %u device(s)\n", checks, a.ndev);
  clReleaseMemObject(vol);
  clReleaseMemObject(outv);
  clReleaseMemObject(bytes);
  clReleaseMemObject(copy);
  clReleaseMemObject(halfbuf);
  clReleaseMemObject(blur);
  clReleaseMemObject(src);
  clReleaseSampler(smp);
  clReleaseKernel(ku);
  clReleaseKernel(kh);
  clReleaseKernel(kb);
  clReleaseProgram(prog);
  app_close(&a);
  free(host);
  return 0;
}
