/* Checks of the bytes ranks send each other (runtime/job/wire.h). */
#include "config.h"

#include "runtime/job/wire.h"

#include <string.h>

#include "runtime/base/cuda.h"

/* Whether a fixed field of text ends within itself. */
static bool ends(const char *s, size_t size)
{
  return memchr(s, 0, size) != NULL;
}

const char *tt_wire_device_check(const unsigned char *p, size_t len, size_t *used)
{
  cl_uint total;
  struct tt_wire_device h;
  if (len < sizeof total + sizeof h)
    return "a device description shorter than its header";
  memcpy(&total, p, sizeof total);
  if (total < sizeof total + sizeof h || total > len)
    return "a device description whose length does not fit";
  memcpy(&h, p + sizeof total, sizeof h);
  if (!ends(h.gpu_copies, sizeof h.gpu_copies) || !ends(h.host, sizeof h.host) ||
      !ends(h.backend, sizeof h.backend) || !ends(h.backend_platform, sizeof h.backend_platform))
    return "a device description whose names do not end";
  size_t at = sizeof total + sizeof h;
  while (at < total) {
    cl_uint rec[2];
    if (total - at < sizeof rec)
      return "a device query's record cut short";
    memcpy(rec, p + at, sizeof rec);
    at += sizeof rec;
    if (rec[1] > total - at)
      return "a device query's answer longer than the description";
    at += rec[1];
  }
  *used = total;
  return NULL;
}

const unsigned char *tt_wire_device_answer(const unsigned char *desc, size_t len, cl_uint param,
                                           cl_uint *size)
{
  size_t at = sizeof(cl_uint) + sizeof(struct tt_wire_device);
  while (at + 2 * sizeof(cl_uint) <= len) {
    cl_uint rec[2];
    memcpy(rec, desc + at, sizeof rec);
    at += sizeof rec;
    if (rec[0] == param) {
      *size = rec[1];
      return desc + at;
    }
    at += rec[1];
  }
  return NULL;
}

/* count descriptions back to back, exactly len bytes. */
static const char *descriptions(const unsigned char *p, size_t len, cl_uint count)
{
  size_t at = 0;
  for (cl_uint i = 0; i < count; i++) {
    size_t used;
    const char *why = tt_wire_device_check(p + at, len - at, &used);
    if (why)
      return why;
    at += used;
  }
  return at == len ? NULL : "bytes after the last device description";
}

const char *tt_wire_devices_check(const unsigned char *p, size_t len, cl_uint *count)
{
  if (len < sizeof *count)
    return "a device list without its count";
  memcpy(count, p, sizeof *count);
  return descriptions(p + sizeof *count, len - sizeof *count, *count);
}

const char *tt_wire_catalogue_check(const unsigned char *p, size_t len, size_t backend_size,
                                    const size_t *name_fields, const size_t *name_sizes,
                                    size_t nnames)
{
  cl_uint nbp, ndev;
  if (len < sizeof nbp)
    return "a catalogue without its count of backends";
  memcpy(&nbp, p, sizeof nbp);
  size_t at = sizeof nbp;
  if (nbp > (len - at) / backend_size)
    return "a catalogue with more backends than bytes";
  for (cl_uint i = 0; i < nbp; i++, at += backend_size)
    for (size_t k = 0; k < nnames; k++)
      if (!ends((const char *)p + at + name_fields[k], name_sizes[k]))
        return "a catalogue whose backend names do not end";
  if (len - at < sizeof ndev)
    return "a catalogue without its count of devices";
  memcpy(&ndev, p + at, sizeof ndev);
  at += sizeof ndev;
  return descriptions(p + at, len - at, ndev);
}

const char *tt_wire_statuses_check(const void *p, size_t len, size_t count)
{
  if (count > SIZE_MAX / sizeof(cl_int) || len != count * sizeof(cl_int))
    return "statuses of another length than the commands they are for";
  for (size_t i = 0; i < count; i++) {
    cl_int s;
    memcpy(&s, (const unsigned char *)p + i * sizeof s, sizeof s);
    if (s > CL_COMPLETE)
      return "a final status that is neither CL_COMPLETE nor an error";
  }
  return NULL;
}

const char *tt_wire_batch_check(const void *p, size_t len, size_t count)
{
  if (count > SIZE_MAX / (sizeof(uint64_t) + sizeof(cl_int)) ||
      len != count * (sizeof(uint64_t) + sizeof(cl_int)))
    return "statuses of another number than the queue's commands";
  return tt_wire_statuses_check((const unsigned char *)p + count * sizeof(uint64_t),
                                count * sizeof(cl_int), count);
}

const char *tt_wire_turns_check(const void *p, size_t len, uint64_t seq, uint64_t max)
{
  uint64_t head[2];
  if (len < sizeof head)
    return "a batch of turns shorter than its header";
  memcpy(head, p, sizeof head);
  if (head[0] != seq)
    return "a batch of turns out of order";
  if (head[1] < 1 || head[1] > max || len != sizeof head + head[1] * sizeof(uint64_t))
    return "a batch of turns whose count does not match its length";
  return NULL;
}

const char *tt_wire_report_check(const void *p, size_t len)
{
  struct tt_wire_report r;
  if (len != sizeof r)
    return "a divergence report of another length";
  memcpy(&r, p, sizeof r);
  if (r.final > 2)
    return "a divergence report of an unknown state";
  return NULL;
}

const char *tt_wire_records_check(const void *p, size_t len, uint64_t count)
{
  const size_t rec = sizeof(struct tt_wire_record);
  if (len != sizeof(uint64_t) + count * rec)
    return "divergence records of another number than asked for";
  for (uint64_t i = 0; i < count; i++) {
    struct tt_wire_record w;
    memcpy(&w, (const unsigned char *)p + sizeof(uint64_t) + i * rec, sizeof w);
    if (!ends(w.name, sizeof w.name) || !ends(w.thread, sizeof w.thread) ||
        !ends(w.said, sizeof w.said))
      return "divergence records whose names do not end";
  }
  return NULL;
}

const char *tt_wire_build_results(const unsigned char *p, size_t len, uint64_t ndevices,
                                  void (*each)(void *arg, const uint64_t *rec, const char *log),
                                  void *arg)
{
  uint64_t rec[TT_WIRE_BUILD_FIELDS];
  /* Checked whole first: nothing is taken from results that are malformed further on. */
  for (int pass = 0; pass < 2; pass++)
    for (size_t at = 0; at < len;) {
      if (len - at < sizeof rec)
        return "build results cut short";
      memcpy(rec, p + at, sizeof rec);
      at += sizeof rec;
      if (rec[3] > len - at)
        return "a build log longer than the results";
      if (pass == 1 && rec[0] < ndevices)
        each(arg, rec, (const char *)p + at);
      at += rec[3];
    }
  return NULL;
}

const char *tt_wire_cuda_check(const void *p, size_t len, uint64_t need)
{
  struct tt_cuda_desc d;
  if (len != sizeof d)
    return "a GPU copy's description of another length";
  memcpy(&d, p, sizeof d);
  if (d.ok != 0 && d.ok != 1)
    return "a GPU copy's description of an unknown state";
  if (d.ok && (d.at > d.size || need > d.size - d.at))
    return "a GPU copy's description of bytes outside its allocation";
  return NULL;
}

const char *tt_wire_answer_check(const void *p, size_t len)
{
  int32_t a;
  if (len != sizeof a)
    return "a GPU copy's answer of another length";
  memcpy(&a, p, sizeof a);
  return a == 0 || a == 1 ? NULL : "a GPU copy's answer that is neither 0 nor 1";
}
