/* TUTTI_STATS=1: what each rank did, printed at exit (SnuCL-D's Table 6 and more). */
#ifndef TUTTI_STATS_H
#define TUTTI_STATS_H

#include <stdatomic.h>
#include <stdint.h>

struct tt_stats {
  atomic_uint_fast64_t commands;     /* All: every command enqueued on this rank */
  atomic_uint_fast64_t virtual_cmds; /* V: commands aimed at another rank's device */
  atomic_uint_fast64_t virtual_kept; /* VQO: of those (reads to host aside), the ones planned
                                      * rather than discarded by the queueing optimization */
  atomic_uint_fast64_t host_reads;   /* reads and maps whose bytes reach every rank */
  atomic_uint_fast64_t bytes_sent;   /* to other ranks (runtime/job/transport.c) */
  atomic_uint_fast64_t wait_ns;      /* time the host spent blocked in OpenCL calls */
  atomic_uint_fast64_t rebalanced;   /* split kernels given new weights (every rank alike;
                                      * runtime/command/balance.c), a digest of the weights */
  atomic_uint_fast64_t balance_digest;
  atomic_uint_fast64_t polled, poll_fired; /* Tutti's callbacks on native events the poller
                                          * watched, and those it ran before the backend
                                          * did (runtime/job/callback.c) */
  atomic_uint_fast64_t access_markers;  /* markers made so that another queue or the host could
                                          * wait for an earlier command that had no event
                                          * (runtime/order/order.c, access_event) */
  atomic_uint_fast64_t evictions_digest; /* a hash of every eviction so far and the holders
                                          * each left (runtime/memory/window.c): equal on every rank */
};

extern struct tt_stats tt_stats;

/* Per device of the job (by global index), for split launches: parts run on it (its owner
 * counts), bytes its parts fetched from other devices (halos, its owner), bytes of partial
 * reduction results combined on it, window bytes (every rank counts). */
struct tt_stats_device {
  atomic_uint_fast64_t parts, groups, halo_bytes, reduce_bytes; /* groups: work-groups of parts */
  /* Bytes of windows of windowed buffers held in the device's domain (a domain's windows
   * count for its first device): now, and at most. */
  atomic_uint_fast64_t window_bytes, window_peak;
  /* Spilling (runtime/memory/window.h; every rank counts every device, alike, but files): windows
   * taken off the device and their bytes, bytes of them read into host memory first (the
   * device alone held their newest copy), bytes written back into the device from there
   * (prefetched: those of them brought back ahead of use, TUTTI_LOOKAHEAD), bytes of host
   * copies that went to files (TUTTI_HOST_MEM, the owner); of the bytes written back, those
   * a clean copy held already, nothing read (the owner). */
  atomic_uint_fast64_t evictions, evicted, written_back, refetched, prefetched, to_files, clean;
};
struct tt_stats_device *tt_stats_device(unsigned index);

/* At exit: this rank's line on stderr when TUTTI_STATS is set, and the objects the program
 * left alive when TUTTI_DEBUG contains "leak" (registered once). */
void tt_stats_start(void);

uint64_t tt_stats_now_ns(void);

/* A launch of kernel `kernel` that had no written annotation (runtime/command/split.c), by
 * how it ran: 0 whole, 1 derived regions, 2 merged writes. */
void tt_stats_split_launch(const char *kernel, int tier);

#endif
