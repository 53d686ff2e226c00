/* What the files of split launches share (runtime/command/split.c: planning and running a
 * split launch, its checks; runtime/command/split_variant.c: programs built for split
 * launches). Nothing else includes it: the rest of Tutti calls the functions
 * runtime/command/compound.h declares. */
#ifndef TUTTI_SPLIT_IMPL_H
#define TUTTI_SPLIT_IMPL_H

#include "runtime/command/compound.h"

#include "annotations/annotation.h"

/* Whether a program's source uses the whole launch's builtins (group id, global size, number
 * of groups, global offset): its parts then run a variant whose prelude answers them. */
bool tt_split_whole_builtins(const char *src);

/* The kernel a part runs for launch shape (dim, off, gws, lws) with windows taken by the parameters
 * of `rebase` (runtime/command/split_variant.c): the kernel itself, or a variant built once per
 * shape. */
cl_int tt_split_variant(cl_kernel k, cl_uint dim, const size_t *off, const size_t *gws,
                        const size_t *lws, bool prelude, uint64_t *rebase, cl_kernel *out);

/* The kernel that combines a part's copy of a reduced or merged parameter into the buffer
 * (arguments: dst, src, the first element, and for merges the twin and a flag set when two
 * parts changed a byte differently, or NULL); unit: a merge's granularity in bytes (4 or 1). */
cl_int tt_split_combine_kernel(cl_kernel k, struct tt_ann_rule_info ri, size_t unit,
                               cl_kernel *out);

/* The identity of op for parameter prm's element type, as its bytes. */
void tt_split_identity(const struct tt_ann_param *prm, enum tt_ann_op op, unsigned char *out);

#endif
