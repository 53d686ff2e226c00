/* Copies between GPUs of one host by CUDA's copy engines (runtime/transfer/gpu.c), within
 * runtime/transfer/ only. */
#ifndef TUTTI_TRANSFER_GPU_H
#define TUTTI_TRANSFER_GPU_H

#include "runtime/transfer/moves.h"

/* Whether bytes of root move between domains a and b by the GPUs' copy engines (both
 * CUDA domains of one host, the native buffers holding byte `at` of root CUDA's at both ends;
 * every rank alike), and such a copy:
 * LOCAL from domain src of this rank into f->dom, SEND from src here to rank peer, RECV from
 * rank peer into f->dom (into f->into's bytes there when set). tt_gpu_run returns -1 when a
 * LOCAL copy cannot take this path (the caller copies through the host), else whether
 * planning must stop. */
enum gpu_role { GPU_LOCAL, GPU_SEND, GPU_RECV };
bool tt_gpu_pair(cl_context ctx, cl_uint a, cl_uint b, cl_mem root, size_t at);
/* The same with the bytes in root ra at byte ata in a and in root rb at byte atb in b. */
bool tt_gpu_pair_of(cl_context ctx, cl_uint a, cl_mem ra, size_t ata, cl_uint b, cl_mem rb,
                    size_t atb);
int tt_gpu_run(struct fetch *f, enum gpu_role role, cl_uint src, size_t off, size_t len,
               int peer, uint64_t id);

#endif
