/* What each part of a split launch uses (annotations/parts.h). */
#include "annotations/parts.h"

#include <stdio.h>
#include <stdlib.h>

/* Appends to a growing array of n elements of `size` bytes (cap: its room). */
static void *grow(void *v, size_t n, size_t *cap, size_t size)
{
  if (n < *cap)
    return v;
  size_t c = *cap ? *cap * 2 : 16;
  void *g = realloc(v, c * size);
  if (g)
    *cap = c;
  return g;
}

static int use_add(struct tt_part_use **u, size_t *n, size_t *cap, struct tt_part_use x)
{
  struct tt_part_use *g = grow(*u, *n, cap, sizeof **u);
  if (!g)
    return -2;
  *u = g;
  g[(*n)++] = x;
  return 0;
}

int tt_parts_uses(const struct tt_ann *a, const struct tt_ann_launch *l,
                  const struct tt_part *parts, size_t nparts, const struct tt_part_buffer *b,
                  size_t nb, size_t max_reads, struct tt_part_use **uses, size_t *nuses,
                  struct tt_ann_ranges *reduce, char *why, size_t whylen)
{
  size_t nrules = tt_ann_nrules(a);
  struct tt_part_write *w = NULL;
  size_t nw = 0, capw = 0;
  int rc = 0;
  for (size_t p = 0; p < nparts; p++) {
    uses[p] = NULL;
    nuses[p] = 0;
  }
  for (size_t p = 0; p < nparts && !rc; p++) {
    struct tt_ann_part part;
    for (unsigned d = 0; d < 3; d++) {
      part.group_lo[d] = 0;
      part.group_hi[d] = d < l->work_dim ? l->global[d] / l->local[d] : 1;
    }
    part.group_lo[l->work_dim - 1] = parts[p].g0;
    part.group_hi[l->work_dim - 1] = parts[p].g1;
    size_t cap = 0;
    for (size_t i = 0; i < nb && !rc; i++) {
      struct tt_ann_ranges reads = {0}, writes = {0};
      struct tt_ann_buffer ab = {b[i].param, b[i].size, b[i].writable};
      bool named = false;
      rc = tt_ann_part_uses(a, l, &part, &ab, max_reads, &reads, &writes,
                            &reduce[p * nrules], &named, why, whylen);
      if (rc || tt_ann_reduce_rule(a, b[i].param) != SIZE_MAX) {
        tt_ann_ranges_free(&reads);
        tt_ann_ranges_free(&writes);
        continue;
      }
      if (!named) {
        /* Unannotated: the whole buffer, one use, written unless const or read-only. */
        rc = use_add(&uses[p], &nuses[p], &cap,
                     (struct tt_part_use){i, 0, b[i].size, true, b[i].writable});
      } else {
        for (size_t j = 0; j < reads.n && !rc; j++)
          rc = use_add(&uses[p], &nuses[p], &cap,
                       (struct tt_part_use){i, reads.r[j].off, reads.r[j].len, true, false});
        for (size_t j = 0; j < writes.n && !rc; j++)
          rc = use_add(&uses[p], &nuses[p], &cap,
                       (struct tt_part_use){i, writes.r[j].off, writes.r[j].len, false, true});
      }
      for (size_t j = 0; j < writes.n && !rc; j++) {
        struct tt_part_write *g = grow(w, nw, &capw, sizeof *w);
        if (!g) {
          rc = -2;
          break;
        }
        w = g;
        size_t o = b[i].origin + writes.r[j].off;
        w[nw++] = (struct tt_part_write){b[i].root, o, o + writes.r[j].len, p};
      }
      tt_ann_ranges_free(&reads);
      tt_ann_ranges_free(&writes);
    }
  }
  if (!rc && nparts > 1 && tt_part_writes_overlap(w, nw)) {
    snprintf(why, whylen, "the write regions of its parts overlap");
    rc = -1;
  }
  free(w);
  if (rc)
    for (size_t p = 0; p < nparts; p++) {
      free(uses[p]);
      uses[p] = NULL;
      nuses[p] = 0;
    }
  return rc;
}
