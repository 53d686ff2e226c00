/* Annotations derived from a kernel's own code (doc/split.md, "Automatic splitting"): what a
 * `#pragma tutti` would say of each kernel of a program, read by clang's front end
 * (annotations/clang.h) from the program's source with its build options. Pure C: no MPI, no
 * OpenCL calls, the same result on every rank from the same source, options and libclang. */
#ifndef TUTTI_ANN_DERIVE_H
#define TUTTI_ANN_DERIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "annotations/clang.h"

/* How a kernel's launches are split without a written annotation. */
enum tt_tier {
  TT_TIER_WHOLE = 0,   /* not split: `why` says what stops it */
  TT_TIER_REGIONS = 1, /* derived regions: every write bounded */
  TT_TIER_MERGED = 2,  /* some buffers merged: each part writes a copy, changed bytes merged */
};

struct tt_derived {
  char name[64];  /* the kernel */
  enum tt_tier tier;
  char *text;     /* the derived annotation, NULL when whole */
  char *merged;   /* the annotation that merges every written buffer instead (used when the
                   * parts' derived write regions overlap at a launch), NULL when not allowed */
  char why[256];  /* tier 2: why a buffer is merged; whole: why it runs whole */
};

/* Derives every kernel of `src` (its #pragma tutti lines removed) built with `options` (the
 * -D, -I and -cl-std options are passed on). Returns the number of kernels (*out malloc'd,
 * freed with tt_derived_free), or -1 with why set when the source does not parse. */
long tt_derive(const struct tt_clang *cx, const char *src, const char *options,
               struct tt_derived **out, char *why, size_t whylen);
void tt_derived_free(struct tt_derived *d, size_t n);

const char *tt_tier_name(enum tt_tier t);

#endif
