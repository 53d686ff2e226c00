/* What each part of a split launch uses of the launch's buffer arguments (doc/split.md,
 * "Execution"): the walk over the arguments that runtime/command/split.c plans a launch by,
 * apart from OpenCL's types so that tables test it (tests/unit/unit_parts.c). */
#ifndef TUTTI_ANN_PARTS_H
#define TUTTI_ANN_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "annotations/annotation.h"
#include "annotations/partition.h"

/* A buffer argument of the launch: its parameter, its size, whether the kernel may write it
 * (not const, not read-only), and where its bytes lie (its root buffer's id, its offset there:
 * a sub-buffer's writes overlap its root's). */
struct tt_part_buffer {
  unsigned param;
  size_t size;
  bool writable;
  uint64_t root;
  size_t origin;
};

/* One use of a part: bytes [off, off + len) of buffer argument `buffer` (an index into the
 * buffers given), read and/or written. */
struct tt_part_use {
  size_t buffer;
  size_t off, len;
  bool reads, writes;
};

/* The uses of parts [0, nparts) of launch l under annotation a (work-groups along the last
 * dimension from parts[p].g0 to g1, all of the others), buffer by buffer in the order given:
 * a parameter no rule names whole, read and written when writable; a named one by its read
 * ranges (more than max_reads become their hull), then its write ranges; a reduced one not
 * at all, its regions in reduce[p * nrules + r] for rule r (nrules = tt_ann_nrules(a);
 * ranges the caller frees). uses[p] is malloc'd, nuses[p] its count. Returns 0; -1 with why
 * set when the parts cannot run apart (a region the annotation cannot name at this launch,
 * writes of two parts sharing a byte); -2 out of memory. On failure nothing is left to free
 * but reduce's ranges. */
int tt_parts_uses(const struct tt_ann *a, const struct tt_ann_launch *l,
                  const struct tt_part *parts, size_t nparts, const struct tt_part_buffer *b,
                  size_t nb, size_t max_reads, struct tt_part_use **uses, size_t *nuses,
                  struct tt_ann_ranges *reduce, char *why, size_t whylen);

#endif
