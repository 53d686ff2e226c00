/* The bytes ranks send each other, and their checks. Every message a rank reads as more than
 * opaque bytes (a device's description, a command's status, a batch of turns, divergence
 * records, build results, a GPU copy's description) is checked here before it is read: a
 * rank that receives bytes it cannot read stops the job with a message naming the sender
 * (tt_transport_check), never reads past them. Pure C: no MPI, no OpenCL calls
 * (tests/fuzz/fuzz_wire.c feeds these checks arbitrary bytes).
 *
 * Each check returns NULL when the bytes are well formed, else what is wrong with them
 * (static text, for the message). */
#ifndef TUTTI_WIRE_H
#define TUTTI_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/base/cl.h"

/* A device's description: {u32 total, header, then for each answered device query
 * {u32 param, u32 size, size bytes}}, total counting all of it. */
struct tt_wire_device {
  cl_uint bp_index;
  cl_uint native_index; /* the device's place among its backend platform's devices */
  cl_device_type type;
  cl_uint on_cores; /* its kernels run on the host's cores (a CPU device, natively) */
  cl_int cuda;      /* its CUDA device, or -1 (runtime/base/cuda.h) */
  cl_uint cuda_peers;
  char gpu_copies[160];
  char host[64];
  char backend[32];
  char backend_platform[128];
};

/* One description at p (of at most len bytes): its total in *used. Its strings end within
 * their fields, its queries' records lie within it. */
const char *tt_wire_device_check(const unsigned char *p, size_t len, size_t *used);

/* The answer to device query param in a description of len bytes that passed
 * tt_wire_device_check: its bytes (*size of them), or NULL when the owner gave none. */
const unsigned char *tt_wire_device_answer(const unsigned char *desc, size_t len, cl_uint param,
                                           cl_uint *size);

/* {u32 count, count descriptions}, exactly len bytes: a rank's devices in the job's table,
 * or an owner's sub-devices. */
const char *tt_wire_devices_check(const unsigned char *p, size_t len, cl_uint *count);

/* The node's catalogue: {u32 nbp, nbp backends of backend_size bytes each (their strings
 * ending within: names at name_fields offsets of name_sizes bytes), u32 ndev, ndev
 * descriptions}, exactly len bytes. */
const char *tt_wire_catalogue_check(const unsigned char *p, size_t len, size_t backend_size,
                                    const size_t *name_fields, const size_t *name_sizes,
                                    size_t nnames);

/* Commands' final statuses (TT_CH_EVENT: one): len is count cl_ints, each CL_COMPLETE or an
 * error code (negative). */
const char *tt_wire_statuses_check(const void *p, size_t len, size_t count);

/* A queue's statuses (TT_CH_BATCH, runtime/order/event.c): count u64 times on the device,
 * then count statuses, exactly len bytes. */
const char *tt_wire_batch_check(const void *p, size_t len, size_t count);

/* A batch of turns (runtime/job/turns.c): {u64 seq, u64 n, n u64 thread ids}, exactly len
 * bytes, seq the expected one, n from 1 to max. */
const char *tt_wire_turns_check(const void *p, size_t len, uint64_t seq, uint64_t max);

/* Divergence checks (runtime/job/check.c): a report {calls, hash, final}; records asked for:
 * {u64 calls, count records}. */
struct tt_wire_report {
  uint64_t calls;
  uint64_t hash;
  uint64_t final; /* the rank's host program ended */
};
struct tt_wire_record {
  uint64_t hash;
  char name[40];   /* empty: this rank has no such call (not made yet, or no longer kept) */
  char thread[48]; /* whole: the host layer's names are shorter (host/preload_thread.c) */
  uint64_t said_key; /* the file queries answered before this call (tt_check_result) */
  char said[96];
};
const char *tt_wire_report_check(const void *p, size_t len);
const char *tt_wire_records_check(const void *p, size_t len, uint64_t count);

/* Build results (runtime/job/build.c): records {u64 device, status, binary type, log length,
 * creation status} each followed by its log, back to back over every rank's part. each() is
 * called for every record whose device is below ndevices, with its log (log_len bytes, not
 * NUL-terminated). */
#define TT_WIRE_BUILD_FIELDS 5
const char *tt_wire_build_results(const unsigned char *p, size_t len, uint64_t ndevices,
                                  void (*each)(void *arg, const uint64_t *rec, const char *log),
                                  void *arg);

/* A GPU copy's description (runtime/transfer/gpu.c: a struct tt_cuda_desc, len bytes): ok 0
 * or 1, and when 1, bytes [at, at + need) of its allocation. */
const char *tt_wire_cuda_check(const void *p, size_t len, uint64_t need);

/* A rank's answer to a GPU copy (TT_CH_ANSWER): 0 or 1. */
const char *tt_wire_answer_check(const void *p, size_t len);

#endif
