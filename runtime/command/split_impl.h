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

/* --- one split launch (runtime/command/split.c) ----------------------------------------------- */

/* The buffer uses of one part. */
struct uses {
  struct tt_launch_use *u;
  size_t n, cap;
};

/* The whole plan of one split launch (every rank computes the same). */
struct split {
  cl_kernel k;
  const struct tt_ann *ann;     /* the annotation planned by: k's, or its merged one */
  size_t nparts;
  struct tt_part *parts;
  struct uses *uses;            /* per part */
  struct tt_ann_ranges *reduce; /* per part and reduce rule: [part * nrules + rule] */
  size_t nrules;
  char why[256];                /* why the launch runs whole, when it does */
  struct tt_split_memo *memo;   /* the arrays above are the kernel's memo's (memo_done) */
  struct tt_part *given;           /* the parts before their edges went first, or NULL */
  size_t ngiven;
};

/* --- reductions and merges (runtime/command/split_combine.c) ---------------------------------- */

/* A buffer of `end` bytes private to a part (or a twin): windowed, so that it lives on its
 * part's device only, within that device's budget. */
cl_mem tt_split_private_copy(cl_context ctx, size_t end, cl_int *err);

/* Merge rule r's twin: the buffer own's bytes of every part's region, copied on q0's device
 * (the parts' copies are made from it). */
cl_int tt_split_merge_twin(struct split *s, size_t r, cl_command_queue q0, cl_mem own,
                           cl_mem *twin);

/* Combines rule r's part copies (partials[part * nrules + r]) into dst on q0 in part order:
 * reduce, dst = op(dst, part); merge, the bytes where a part's copy differs from the twin.
 * The commands' events go to evs. */
cl_int tt_split_combine(struct split *s, size_t r, cl_command_queue q0, cl_mem dst, cl_mem twin,
                        cl_mem *partials, cl_event *evs, size_t *nevs);

#endif
