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
};

/* One command as its body describes it to the driver. */
struct tt_cmd_work {
  enum tt_cmd_op op;
  const char *entry;    /* its entry point's name, "tt_clEnqueue..." (messages, traces) */
  cl_command_type type;
  bool blocking;
  /* The buffers the queueing optimization looks at (NULL: the command is never dropped:
   * reads leave bytes on every rank), and a migration's buffers. */
  const cl_mem *mems;
  cl_uint nmems;
  /* The buffer ranges it uses, planned in order (a copy's source is left out when the GPUs
   * copy it straight into the destination: tt_cmd_copy_into); a migration's come from mems. */
  struct tt_cmd_use use[2];
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
};

/* Drives command w on q (wait list and event as the entry point's). */
cl_int tt_cmd_drive(cl_command_queue q, struct tt_cmd_work *w, cl_uint nwait,
                    const cl_event *wait, cl_event *event);

#endif
