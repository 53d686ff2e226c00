/* The one command driver (runtime/command/driver.c): every buffer command goes through
 * tt_cmd_drive, which walks it through the steps of runtime/command/command.h (numbered, the
 * queueing optimization, the plan lock and wait list, each buffer use planned, the native
 * work on the owner, the end) so that a command kind is its checks (icd/enqueue.c), its uses
 * (runtime/command/buffer.c) and its native work here, and nothing else. */
#ifndef TUTTI_COMMAND_DRIVER_H
#define TUTTI_COMMAND_DRIVER_H

#include "runtime/command/command.h"

/* The native work of a command kind. */
enum tt_cmd_op {
  TT_OP_READ,
  TT_OP_WRITE,
  TT_OP_COPY,
  TT_OP_READ_RECT,
  TT_OP_WRITE_RECT,
  TT_OP_COPY_RECT,
  TT_OP_FILL,
  TT_OP_MIGRATE,
  TT_OP_LAUNCH,  /* a kernel */
  TT_OP_FETCH,   /* a split launch's fetch: its uses' bytes brought, nothing else */
  TT_OP_MARKER,
  TT_OP_BARRIER,
  TT_OP_MAP,
  TT_OP_UNMAP,
  /* Images (runtime/command/image.c): origin[0] and region in the image (a copy's source
   * first), pitch[0..1] the host's row and slice pitches; off[0] a buffer's offset. */
  TT_OP_READ_IMAGE,
  TT_OP_WRITE_IMAGE,
  TT_OP_COPY_IMAGE,
  TT_OP_FILL_IMAGE,        /* cptr: the fill color */
  TT_OP_IMAGE_TO_BUFFER,
  TT_OP_BUFFER_TO_IMAGE,
  TT_OP_MAP_IMAGE,         /* read into Tutti's copy ptr, packed (unless it invalidates) */
  TT_OP_UNMAP_IMAGE,       /* the region written back from ptr (a map for writing) */
  /* A native kernel (runtime/command/launch.c): func called with ptr (size bytes, Tutti's
   * copy of the program's arguments) where arg_offsets[i] is the place of mems[i]. */
  TT_OP_NATIVE_KERNEL,
};

/* One command as its body describes it to the driver. */
struct tt_cmd_work {
  enum tt_cmd_op op;
  const char *entry;    /* its entry point's name, "tt_clEnqueue..." (messages, traces) */
  cl_command_type type;
  bool blocking;
  /* Whether the queueing optimization may drop it (not reads: they leave bytes on every
   * rank), looking at the buffers it uses; a migration's buffers. */
  bool discardable;
  const cl_mem *mems;
  cl_uint nmems;
  /* The buffer ranges it uses, planned in order (a copy's source is left out when the GPUs
   * copy it straight into the destination: tt_cmd_copy_into); a migration's come from mems;
   * uses, when set, holds longer lists (a launch's). */
  struct tt_cmd_use use[2];
  const struct tt_cmd_use *uses;
  cl_uint nuse;
  /* Bytes the command leaves in host memory on every rank (reads). */
  void *host;
  size_t host_len;
  /* The kind's own arguments: offsets in the buffers (a copy: source, destination) and size;
   * host memory; a rectangle's origins, region and pitches (row, slice; buffer or source
   * first); a fill's pattern; a migration's flags. */
  size_t off[2], size;
  void *ptr;
  const void *cptr;
  const size_t *origin[2], *region;
  size_t pitch[4];
  size_t pattern_size;
  cl_mem_migration_flags flags;
  /* A native kernel: its function and where each memory object's handle is in ptr. */
  void (CL_CALLBACK *func)(void *);
  const size_t *arg_offsets;
  /* A launch: the kernel and its range (global offset, global and local sizes). */
  cl_kernel kernel;
  cl_uint dim;
  const size_t *range[3];
  /* A marker that only tells when the queue reaches it: a user event of the backend set
   * then (clFinish), retained into *reached. */
  cl_event *reached;
  /* A map: its flags; the mapped memory (ptr, also an unmap's), and whether it is Tutti's
   * own copy (a rank that does not hold the buffer, which has no host memory). */
  cl_map_flags map_flags;
  bool owned;
  /* The event the command's end hands out in place of the program's (a hook's choice). */
  cl_event *end_event;
  /* Kinds with steps of their own (launches): after the command is made, after its uses are
   * planned, and after its native work (whatever happened, also when the queueing
   * optimization dropped it; before its end); state: theirs. */
  cl_int (*setup)(struct tt_cmd *c, struct tt_cmd_work *w);
  cl_int (*prepare)(struct tt_cmd *c, struct tt_cmd_work *w);
  void (*issued)(struct tt_cmd *c, struct tt_cmd_work *w, cl_int err, cl_event ev);
  void *state;
};

/* Drives command w on q (wait list and event as the entry point's). */
cl_int tt_cmd_drive(cl_command_queue q, struct tt_cmd_work *w, cl_uint nwait,
                    const cl_event *wait, cl_event *event);

#endif
