/* Sub-devices (clCreateSubDevices): made of any device of the job that offers partitions,
 * listed alike on every rank, described, counted, used in a context of their own; the error
 * codes. */
#include "tests/api/check.h"

/* A kernel run on each device of a context of sub-devices: every element increased once per
 * device, read back exact. */
static void use(cl_device_id *subs, cl_uint n)
{
  cl_int err;
  cl_context ctx = clCreateContext(NULL, n, subs, NULL, NULL, &err);
  OK(err);
  if (!ctx)
    return;
  const char *src = "__kernel void inc(__global int *x) { x[get_global_id(0)] += 1; }";
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  OK(err);
  OK(clBuildProgram(p, 0, NULL, NULL, NULL, NULL));
  cl_kernel k = clCreateKernel(p, "inc", &err);
  OK(err);
  enum { N = 257 };
  int host[N] = {0};
  cl_mem m = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  OK(err);
  OK(clSetKernelArg(k, 0, sizeof m, &m));
  for (cl_uint i = 0; i < n; i++) {
    cl_command_queue q = clCreateCommandQueue(ctx, subs[i], 0, &err);
    OK(err);
    size_t g = N;
    OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    OK(clFinish(q));
    OK(clReleaseCommandQueue(q));
  }
  cl_command_queue q = clCreateCommandQueue(ctx, subs[0], 0, &err);
  OK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += host[i] != (int)n;
  CHECK(bad == 0);
  OK(clReleaseCommandQueue(q));
  OK(clReleaseMemObject(m));
  OK(clReleaseKernel(k));
  OK(clReleaseProgram(p));
  OK(clReleaseContext(ctx));
}

void test_subdevices(struct fixture *f)
{
  cl_device_id bad = (cl_device_id)f->ctx;
  const cl_device_partition_property equally[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
  CHECK_ERR(CL_INVALID_DEVICE, clCreateSubDevices(bad, equally, 0, NULL, NULL));
  for (cl_uint d = 0; d < f->ndevs; d++) {
    cl_device_id dev = f->devs[d];
    cl_device_partition_property kinds[8] = {0};
    size_t size = 0;
    cl_uint max = 0, n = 0;
    OK(clGetDeviceInfo(dev, CL_DEVICE_PARTITION_PROPERTIES, sizeof kinds, kinds, &size));
    OK(clGetDeviceInfo(dev, CL_DEVICE_PARTITION_MAX_SUB_DEVICES, sizeof max, &max, NULL));
    cl_device_id parent = dev;
    OK(clGetDeviceInfo(dev, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, NULL));
    CHECK(parent == NULL);
    bool equal = false;
    for (size_t i = 0; i < size / sizeof *kinds; i++)
      equal |= kinds[i] == CL_DEVICE_PARTITION_EQUALLY;
    if (!equal || max < 2) {
      CHECK_ERR(CL_INVALID_VALUE, clCreateSubDevices(dev, equally, 0, NULL, &n));
      continue;
    }
    /* Errors first: no list, an unknown kind, an unterminated list, too little room. */
    const cl_device_partition_property unknown[] = {0x7777, 1, 0};
    const cl_device_partition_property counts_open[] = {CL_DEVICE_PARTITION_BY_COUNTS, 1, 1, 1,
                                                        1, 1, 1, 1};
    CHECK_ERR(CL_INVALID_VALUE, clCreateSubDevices(dev, NULL, 0, NULL, &n));
    CHECK_ERR(CL_INVALID_VALUE, clCreateSubDevices(dev, unknown, 0, NULL, &n));
    CHECK_ERR(CL_INVALID_VALUE, clCreateSubDevices(dev, counts_open, 0, NULL, &n));
    cl_device_id subs[64];
    CHECK_ERR(CL_INVALID_VALUE, clCreateSubDevices(dev, equally, 0, subs, NULL));
    OK(clCreateSubDevices(dev, equally, 0, NULL, &n));
    CHECK(n == max);
    if (n < 2 || n > 64)
      continue;
    CHECK_ERR(CL_INVALID_VALUE, clCreateSubDevices(dev, equally, 1, subs, NULL));
    cl_uint made = 0;
    OK(clCreateSubDevices(dev, equally, n, subs, &made));
    CHECK(made == n);
    fprintf(stderr, "# device %u: %u sub-devices of one compute unit\n", d, made);
    /* Described: parent, partition, count; never listed by clGetDeviceIDs. */
    cl_device_partition_property type[4] = {0};
    OK(clGetDeviceInfo(subs[0], CL_DEVICE_PARTITION_TYPE, sizeof type, type, &size));
    CHECK(size == 3 * sizeof *type && type[0] == CL_DEVICE_PARTITION_EQUALLY && type[1] == 1);
    OK(clGetDeviceInfo(subs[n - 1], CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, NULL));
    CHECK(parent == dev);
    cl_uint units = 0, refs = 0;
    OK(clGetDeviceInfo(subs[0], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL));
    CHECK(units == 1);
    OK(clRetainDevice(subs[0]));
    OK(clGetDeviceInfo(subs[0], CL_DEVICE_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    CHECK(refs == 2);
    OK(clReleaseDevice(subs[0]));
    cl_uint listed = 0;
    cl_device_id all[64];
    OK(clGetDeviceIDs(f->platform, CL_DEVICE_TYPE_ALL, 64, all, &listed));
    for (cl_uint i = 0; i < listed && i < 64; i++)
      for (cl_uint j = 0; j < n; j++)
        CHECK(all[i] != subs[j]);
    use(subs, n);
    /* By counts: one device of one unit. */
    const cl_device_partition_property one[] = {CL_DEVICE_PARTITION_BY_COUNTS, 1,
                                                CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
    cl_device_id single;
    OK(clCreateSubDevices(dev, one, 1, &single, &made));
    CHECK(made == 1);
    use(&single, 1);
    OK(clReleaseDevice(single));
    for (cl_uint j = 0; j < n; j++)
      OK(clReleaseDevice(subs[j]));
    CHECK_ERR(CL_INVALID_DEVICE, clRetainDevice(subs[0]));
  }
}
