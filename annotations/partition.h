/* Partitioning a split launch's work-groups over queues (doc/split.md, "Parts"): the ranges of
 * groups along the split dimension that each queue runs, from equal shares, measured weights
 * (runtime/command/balance.c) or a buffer's distribution. Pure functions of numbers, no OpenCL or
 * MPI: every rank computes the same parts from the same inputs (runtime/command/split.c). */
#ifndef TUTTI_PARTITION_H
#define TUTTI_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Groups [g0, g1) along the split dimension, run on queue `queue`. */
struct tt_part {
  unsigned queue;
  size_t g0, g1;
};

/* Sets *p field by field: the divergence check hashes the parts' bytes, whose padding stays
 * calloc's zeros. */
void tt_part_set(struct tt_part *p, unsigned queue, size_t g0, size_t g1);

/* Equal shares: bounds[0 .. nq] of G groups over nq queues (bounds[q] = q * G / nq). */
void tt_part_equal_bounds(unsigned nq, size_t G, size_t *bounds);

/* Shares in proportion to weights w[0 .. nq) that add up to `one`: bounds[0 .. nq], the last
 * bound G, each share at least one group (G >= nq). */
void tt_part_weighted_bounds(unsigned nq, const uint64_t *w, uint64_t one, size_t G,
                             size_t *bounds);

/* Whether parts a[0 .. n) and b[0 .. n) are the same, field by field (their padding is no
 * part of them). */
bool tt_part_equal(const struct tt_part *a, const struct tt_part *b, size_t n);

/* The parts of bounds[0 .. nq] (out: room for nq), empty shares left out. Returns the count. */
size_t tt_part_from_bounds(unsigned nq, const size_t *bounds, struct tt_part *out);

/* Parts that follow a block or cyclic distribution of E elements along axis 0 over ndev
 * devices (block: ceil(E / ndev) elements a chunk; cyclic: `chunk` each, chunk s on device
 * s % ndev), device d's queue being queue_of[d] (-1: none): each chunk's proportional range
 * of the G groups, rounded alike at both ends of neighbours (no gap, no overlap), empty
 * ones left out. Returns the count and *out (calloc'd); 0 when a chunk's device has no
 * queue, E or chunk is 0, or memory ran out. */
size_t tt_part_distribution(bool block, size_t E, size_t chunk, unsigned ndev,
                            const int *queue_of, size_t G, struct tt_part **out);

/* Edges first (doc/split.md, "Edges first"): how many work-groups at the edge of a part of
 * `groups` groups that reads len bytes, both of which its neighbour reads too: half of the
 * shared bytes, in the part's groups of reading, rounded up; at least one when anything is
 * shared, 0 when nothing is (or the part reads nothing). */
size_t tt_part_edge_width(size_t both, size_t len, size_t groups);

/* parts[0 .. n) with an edge of edge[p] groups on both sides of each boundary p (between
 * parts p and p + 1; 0: none, and none where it is not narrower than both parts) split into
 * their edges, which come first, then their interiors; a part too thin for both of its
 * edges goes whole among the edges. out: room for 3 n. Returns the count, 0 when no
 * boundary has an edge (the parts stay as they are). */
size_t tt_part_edges_first(const struct tt_part *parts, size_t n, const size_t *edge,
                           struct tt_part *out);

/* The bytes of one buffer that two neighbouring parts both read (their halo), for edges
 * first: the reads of each (a[0 .. na), b[0 .. nb)) of a buffer of `size` bytes. Returns the
 * bytes both read, counted pair by pair, and *len the bytes a reads; 0 when either reads
 * the buffer whole (a replicated input, no halo). */
struct tt_part_range {
  size_t off, len;
};
size_t tt_part_shared_reads(const struct tt_part_range *a, size_t na,
                            const struct tt_part_range *b, size_t nb, size_t size, size_t *len);

/* A write of part `part`: bytes [off, end) of buffer `buffer` (an id of its root, offsets in
 * the root). Whether writes of different parts share a byte (a split launch whose parts
 * would race runs whole). Sorts w. */
struct tt_part_write {
  uint64_t buffer;
  size_t off, end;
  size_t part;
};
bool tt_part_writes_overlap(struct tt_part_write *w, size_t n);

/* Balancing (doc/split.md, "Balancing"): the weights of a kernel's next launches over n
 * queues from one measured launch, where part p ran groups[p] work-groups in ns[p]
 * nanoseconds. Weights add up to `one`; old: those the measured launch ran with (NULL: equal
 * shares). Each new weight is a quarter of the old one and three quarters of the part's
 * share of the measured speeds (groups per nanosecond), the rounding going to the last.
 * Returns false, out untouched, when the parts ended within 5% of each other or a time is 0:
 * the weights stay. */
bool tt_part_reweigh(unsigned n, const size_t *groups, const uint64_t *ns, const uint64_t *old,
                     uint64_t one, uint64_t *out);

#endif
