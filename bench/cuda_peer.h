/* The CUDA driver's own copy between two GPUs of this process, the baseline that Tutti's
 * copies between GPUs are measured against (bench/transfer.c). libcuda is opened at run
 * time, as Tutti's runtime/base/cuda.c does, so the benchmark runs on hosts without it. */
#ifndef TUTTI_BENCH_CUDA_PEER_H
#define TUTTI_BENCH_CUDA_PEER_H

#include <stddef.h>

/* The median time in seconds of `rounds` copies of `bytes` from CUDA device `from` to CUDA
 * device `to` (cuMemcpyDtoDAsync on a stream of the destination, then waiting for it, as
 * Tutti's copy thread does; peer access enabled where the pair has it), or a negative value
 * with a reason in why when it cannot be measured (no libcuda, fewer GPUs, a CUDA error). */
double cuda_peer_copy(int from, int to, size_t bytes, int rounds, char *why, size_t cap);

/* The same with memory of another kind: cuMemAlloc's (what cuda_peer_copy uses), or
 * physical allocations mapped for both devices as Tutti makes them (runtime/base/cuda.c):
 * whether Tutti's kind of memory copies slower than CUDA's usual one; and the latter with
 * the host idle for CUDA_IDLE_MS before each copy: a copy after the GPUs' link idled (after
 * a long kernel, say) takes longer (doc/testing.md). */
enum cuda_mem_kind { CUDA_MEM_ALLOC, CUDA_MEM_VMM, CUDA_MEM_VMM_IDLE };
#define CUDA_IDLE_MS 50
double cuda_peer_copy_of(int from, int to, size_t bytes, int rounds, enum cuda_mem_kind kind,
                         char *why, size_t cap);

#endif
