/* Sub-devices (runtime/job/devices.h): made by the owner's backend, described to every rank
 * and added to every rank's device table alike (runtime/job/cluster.h), and what a device
 * answers of its partitioning. */
#include "config.h"

#include "runtime/job/devices.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/base/log.h"
#include "runtime/job/cluster.h"
#include "runtime/job/cluster_share.h"
#include "runtime/job/cluster_start.h"
#include "runtime/job/wire.h"

/* The most sub-devices one partition makes, and the bytes their descriptions take. */
enum { MAX_SUBS = 256, ANSWER_CAP = 8 << 20 };

/* The last release of a sub-device: the entry stays in the table (its index is taken), no
 * longer a valid handle. Its native sub-device stays until the process ends: native contexts
 * over it may still be on their way out (a context's native release can follow its own by a
 * while), and PoCL crashed once when the sub-device went first (api-2dev.test in make
 * distcheck, a loaded machine). */
static void destroy_sub(struct tt_object *o)
{
  (void)o;
}

/* On the owner: the native sub-devices (made when out is wanted and num_devices suffice),
 * their count and descriptions appended to *buf. */
static cl_int owner_partition(cl_device_id in, const cl_device_partition_property *props,
                              cl_uint num_devices, bool make, unsigned char **buf, size_t *len,
                              size_t *cap, cl_device_id *natives)
{
  cl_uint n = 0;
  cl_int err = in->bp->d->clCreateSubDevices(in->native, props, 0, NULL, &n);
  if (err == CL_SUCCESS && n > MAX_SUBS)
    err = CL_OUT_OF_RESOURCES;
  /* CL_INVALID_VALUE if out_devices is not NULL and num_devices is less than the number of
   * sub-devices created by the partition scheme. */
  if (err == CL_SUCCESS && make && num_devices < n)
    err = CL_INVALID_VALUE;
  if (err == CL_SUCCESS && make)
    err = in->bp->d->clCreateSubDevices(in->native, props, n, natives, NULL);
  if (err != CL_SUCCESS)
    return err;
  *buf = malloc(*cap = 4096);
  if (!*buf)
    return CL_OUT_OF_HOST_MEMORY;
  memcpy(*buf, &n, sizeof n);
  *len = sizeof n;
  for (cl_uint i = 0; make && i < n; i++) {
    struct _cl_device_id sub = *in; /* its backend's, with the native sub-device */
    sub.native = natives[i];
    tt_cluster_describe(&sub, true, buf, len, cap);
  }
  return CL_SUCCESS;
}

/* Every rank: the sub-devices from their owner's answer (a count, then descriptions). */
static cl_int add_subs(cl_device_id in, const cl_device_partition_property *props,
                       const unsigned char *answer, size_t len, cl_device_id *natives,
                       cl_device_id *out, cl_uint *num_ret)
{
  cl_uint n = 0;
  memcpy(&n, answer, sizeof n);
  if (num_ret)
    *num_ret = n;
  size_t at = sizeof n, nprops = 0;
  while (props[nprops] && nprops < 7)
    nprops++;
  for (cl_uint i = 0; out && i < n && at + sizeof(cl_uint) <= len; i++) {
    cl_uint total;
    memcpy(&total, answer + at, sizeof total);
    cl_device_id d = calloc(1, sizeof *d);
    if (!d)
      return CL_OUT_OF_HOST_MEMORY;
    tt_cluster_from_description(d, answer + at, in->rank, in->actual);
    at += total;
    d->parent = in;
    memcpy(d->partition, props, nprops * sizeof *props);
    if (in->actual) {
      d->bp = in->bp;
      d->native = natives[i];
    }
    tt_object_init(&d->obj, TT_DEVICE, destroy_sub);
    if (tt_cluster_device_add(d) == UINT32_MAX)
      return CL_OUT_OF_HOST_MEMORY;
    out[i] = d;
  }
  return CL_SUCCESS;
}

cl_int tt_devices_partition(cl_device_id in, const cl_device_partition_property *props,
                            cl_uint num_devices, cl_device_id *out, cl_uint *num_ret)
{
  cl_device_id *natives = calloc(MAX_SUBS, sizeof *natives);
  unsigned char *answer = malloc(ANSWER_CAP), *mine = NULL;
  size_t len = 0, cap = 0;
  cl_int err = natives && answer ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
  if (err == CL_SUCCESS && in->actual)
    err = tt_cluster_device_load(in);
  if (err == CL_SUCCESS && in->actual)
    err = owner_partition(in, props, num_devices, out != NULL, &mine, &len, &cap, natives);
  if (err == CL_SUCCESS && in->actual && len > ANSWER_CAP)
    err = CL_OUT_OF_RESOURCES;
  if (err == CL_SUCCESS && in->actual)
    memcpy(answer, mine, len);
  free(mine);
  /* Every rank holds the owner's answer (a job of one rank: it is this one). */
  if (answer && tt_cluster_share_answer(in->rank, &err, answer, &len, ANSWER_CAP) != 0)
    err = CL_OUT_OF_RESOURCES;
  /* Only asked how many (no out): the count alone. */
  cl_uint count = 0;
  const char *why = err != CL_SUCCESS ? NULL
                    : out        ? tt_wire_devices_check(answer, len, &count)
                    : len < sizeof count ? "an answer without its count" : NULL;
  if (why) {
    TT_WARN("clCreateSubDevices: rank %d described sub-devices of device %u that cannot be read "
            "(%s)", in->rank, in->index, why);
    err = CL_OUT_OF_RESOURCES;
  }
  if (err == CL_SUCCESS)
    err = add_subs(in, props, answer, len, natives, out, num_ret);
  else
    TT_LOG(TT_LOG_ERR, "clCreateSubDevices of device %u: %s", in->index, tt_error_name(err));
  free(answer);
  free(natives);
  return err;
}

cl_int tt_devices_partition_info(cl_device_id device, cl_device_info param_name,
                                 size_t param_value_size, void *param_value,
                                 size_t *param_value_size_ret)
{
  cl_uint refs = 1;
  size_t n = 0;
  switch (param_name) {
  case CL_DEVICE_PARENT_DEVICE:
    return TT_INFO(device->parent);
  case CL_DEVICE_REFERENCE_COUNT:
    /* The table's devices are not counted. */
    if (device->parent)
      refs = (cl_uint)atomic_load(&device->obj.refcount);
    return TT_INFO(refs);
  case CL_DEVICE_PARTITION_TYPE:
    while (device->parent && device->partition[n])
      n++;
    return tt_info(param_value_size, param_value, param_value_size_ret, device->partition,
                   (n + 1) * sizeof *device->partition);
  default:
    /* How it can be partitioned: the backend's. */
    return tt_cluster_device_query(device, param_name, param_value_size, param_value,
                                   param_value_size_ret);
  }
}
