/* TUTTI_TRACE=file: one Chrome/Perfetto trace (JSON trace events) of the whole job, written
 * by rank 0 at exit. Every rank records what it did; at exit the records travel to rank 0,
 * which merges them onto its clock (offsets measured at start-up):
 *   - one process per rank, one track per device with every command its rank executed (the
 *     backend's own start and end times, moved onto the host clock): the program's, and
 *     Tutti's own that move bytes for them (category "internal");
 *   - per rank a "host" track with every enqueue, marked actual, virtual or dropped (the
 *     queueing optimization), and tracks of the bytes sent to and received from other
 *     ranks, each send joined to its receive by a flow arrow.
 * doc/cluster.md ("Traces") shows how to read one. */
#ifndef TUTTI_TRACE_H
#define TUTTI_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/base/tutti_internal.h"

/* Whether this job records a trace (TUTTI_TRACE set; read once the job starts). */
extern bool tt_trace_on;

/* At the job's start, on every rank at once: clocks are measured against rank 0's. */
void tt_trace_start(void);

/* What a device executed: the program's kernels and other commands, and Tutti's own commands
 * that move bytes for them (reads into and writes from host memory, maps of pieces). */
enum tt_trace_cat { TT_TRACE_KERNEL, TT_TRACE_COMMAND, TT_TRACE_INTERNAL };

/* A native command issued on an actual device (`native` is retained until it completes);
 * cmd: the program's command it belongs to. */
void tt_trace_command(cl_device_id device, const char *name, enum tt_trace_cat cat, uint64_t cmd,
                      cl_event native, const cl_icd_dispatch *d);

/* Work Tutti did for a command on this rank's device outside the backend (a copy by CUDA's
 * copy engines), timed on the host clock: from t0 to t1 (tt_stats_now_ns). */
void tt_trace_host_slice(cl_device_id device, const char *name, uint64_t cmd, uint64_t t0,
                         uint64_t t1);

/* An enqueue as the host program made it: on this rank's device (actual), for another
 * rank's device (virtual), or dropped by the queueing optimization. */
void tt_trace_enqueue(cl_device_id device, const char *name, uint64_t cmd, bool actual,
                      bool dropped);

/* The plan's note of a transfer between ranks: buffer `mem`, bytes [off, off+len), carried
 * by message ids [first, first+n) of the pair (src, dst). */
void tt_trace_transfer_plan(int src, int dst, uint64_t first, uint64_t n, uint64_t mem,
                            size_t off, size_t len);

/* The transport's messages of bytes (channel, peer, id): posted at t0, done at t1
 * (tt_stats_now_ns). */
void tt_trace_message(int channel, bool send, int peer, uint64_t id, size_t len, uint64_t t0,
                      uint64_t t1);

/* At exit, on every rank: rank 0 gathers and writes the file. */
void tt_trace_finish(void);

#endif
