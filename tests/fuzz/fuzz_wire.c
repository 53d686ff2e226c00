/* The checks of the bytes ranks send each other (runtime/job/wire.h), on arbitrary bytes:
 * the first byte picks the message, the rest is the message. What a check accepts is then
 * read as the receiving code reads it (a device's query records walked, build results taken),
 * within a buffer of exactly the message's size. */
#include "config.h"

#include <stddef.h>

#include "runtime/base/cuda.h"
#include "runtime/job/wire.h"
#include "tests/fuzz/fuzz.h"

struct backend_rec {
  char short_name[32];
  char name[128];
  char library[256];
  cl_uint ndevices;
};

/* Asks an accepted description every device query the runtime asks, as
 * runtime/job/cluster.c answers one (tt_wire_device_answer): each answer lies within it. */
static void walk_device(const unsigned char *p, size_t total)
{
  static const cl_uint ranges[][2] = {{0x1000, 0x1080}, {0x4000, 0x4060}, {0x4190, 0x41a0}};
  struct tt_wire_device h;
  memcpy(&h, p + sizeof(cl_uint), sizeof h);
  FUZZ_ASSERT(strlen(h.host) < sizeof h.host && strlen(h.backend) < sizeof h.backend);
  volatile unsigned char sum = 0;
  for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
    for (cl_uint q = ranges[r][0]; q < ranges[r][1]; q++) {
      cl_uint n;
      const unsigned char *a = tt_wire_device_answer(p, total, q, &n);
      if (!a)
        continue;
      FUZZ_ASSERT(a >= p && n <= total && a - p <= (ptrdiff_t)(total - n));
      for (cl_uint i = 0; i < n; i++)
        sum += a[i];
    }
}

static void walk_devices(const unsigned char *p, size_t len, cl_uint count)
{
  size_t at = sizeof(cl_uint);
  for (cl_uint i = 0; i < count; i++) {
    cl_uint total;
    memcpy(&total, p + at, sizeof total);
    walk_device(p + at, total);
    at += total;
  }
  FUZZ_ASSERT(at == len);
}

static void take(void *arg, const uint64_t *rec, const char *log)
{
  size_t *seen = arg;
  volatile char c = 0;
  for (uint64_t i = 0; i < rec[3]; i++)
    c ^= log[i];
  (*seen)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (!size)
    return 0;
  unsigned kind = data[0] % 11;
  size_t len = size - 1;
  unsigned char *m = malloc(len ? len : 1);
  if (!m)
    return 0;
  memcpy(m, data + 1, len);
  const char *why = NULL;
  cl_uint count = 0;
  size_t used = 0, seen = 0;
  switch (kind) {
  case 0:
    if (!(why = tt_wire_device_check(m, len, &used))) {
      FUZZ_ASSERT(used <= len);
      walk_device(m, used);
    }
    break;
  case 1:
    if (!(why = tt_wire_devices_check(m, len, &count)))
      walk_devices(m, len, count);
    break;
  case 2: {
    static const size_t fields[] = {offsetof(struct backend_rec, short_name),
                                    offsetof(struct backend_rec, name),
                                    offsetof(struct backend_rec, library)};
    static const size_t sizes[] = {32, 128, 256};
    if (!(why = tt_wire_catalogue_check(m, len, sizeof(struct backend_rec), fields, sizes, 3))) {
      cl_uint nbp;
      memcpy(&nbp, m, sizeof nbp);
      size_t at = sizeof nbp + nbp * sizeof(struct backend_rec);
      for (cl_uint i = 0; i < nbp; i++) {
        struct backend_rec b;
        memcpy(&b, m + sizeof nbp + i * sizeof b, sizeof b);
        FUZZ_ASSERT(strlen(b.name) < sizeof b.name && strlen(b.library) < sizeof b.library);
      }
      memcpy(&count, m + at, sizeof count);
      walk_devices(m + at, len - at, count);
    }
    break;
  }
  case 3:
    why = tt_wire_statuses_check(m, len, len / sizeof(cl_int));
    break;
  case 4: {
    uint64_t seq = 1;
    if (!(why = tt_wire_turns_check(m, len, seq, 1024))) {
      uint64_t n;
      memcpy(&n, m + 8, sizeof n);
      FUZZ_ASSERT(n >= 1 && n <= 1024 && 16 + 8 * n == len);
    }
    break;
  }
  case 5:
    why = tt_wire_report_check(m, len);
    break;
  case 6: {
    uint64_t n = len >= 8 ? (len - 8) / sizeof(struct tt_wire_record) : 0;
    if (!(why = tt_wire_records_check(m, len, n)))
      for (uint64_t i = 0; i < n; i++) {
        struct tt_wire_record w;
        memcpy(&w, m + 8 + i * sizeof w, sizeof w);
        FUZZ_ASSERT(strlen(w.name) < sizeof w.name && strlen(w.said) < sizeof w.said);
      }
    break;
  }
  case 7:
    why = tt_wire_build_results(m, len, 4, take, &seen);
    FUZZ_ASSERT(!why || !seen); /* nothing taken from malformed results */
    break;
  case 8:
    if (!(why = tt_wire_cuda_check(m, len, 4096))) {
      struct tt_cuda_desc d;
      memcpy(&d, m, sizeof d);
      FUZZ_ASSERT(!d.ok || (d.at <= d.size && d.at + 4096 <= d.size));
    }
    break;
  case 9:
    why = tt_wire_answer_check(m, len);
    break;
  case 10:
    why = tt_wire_batch_check(m, len, len / (sizeof(uint64_t) + sizeof(cl_int)));
    break;
  }
  FUZZ_ASSERT(!why || *why);
  free(m);
  return 0;
}
