/* Broadcasts of host memory: the bytes a read (or a map) leaves in host memory on its
 * device's owner must end in every rank's host memory, since the host program runs on every
 * rank (SnuCL-D 3.1). The owner sends them a piece at a time, each once its native read is
 * done; with three ranks or more a large broadcast goes along a chain (the owner, then the
 * next ranks in turn, each forwarding a piece as it arrives), so that the owner's link
 * carries the bytes once, as in a pipelined broadcast; small ones go straight from the owner
 * to every rank. Every rank draws the same message ids (tt_broadcast_ids) in program order.
 *
 * The command's event completes on each rank only when this rank is through with the
 * program's memory: on the owner once every piece was sent, elsewhere once every piece
 * arrived and, along a chain, was sent on (doc/cluster.md, "When host memory is free
 * again"). */
#ifndef TUTTI_BROADCAST_H
#define TUTTI_BROADCAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/base/env.h"
#include "runtime/base/tutti_internal.h"

/* The size of a piece (TUTTI_PIECE). */
#define TT_BROADCAST_PIECE (tt_env()->piece)

/* How many pieces (and message ids) a broadcast of len bytes takes: at least one. */
size_t tt_broadcast_pieces(size_t len);
/* Whether a broadcast of len bytes goes along a chain (else from the owner to every rank). */
bool tt_broadcast_chains(size_t len);
/* Where piece i of a broadcast of len bytes lies. */
void tt_broadcast_piece(size_t len, size_t i, size_t *off, size_t *n);
/* The id of the first piece of a broadcast of len bytes, drawn alike on every rank. */
uint64_t tt_broadcast_ids(size_t len);

struct tt_broadcast {
  cl_event done;  /* the command's event, a managed one (retained by the broadcast): completed
                   * when this rank is through with every piece */
  char *ptr;      /* the program's memory: sent from on the owner, received into elsewhere */
  size_t len;
  uint64_t id;    /* tt_broadcast_ids */
  int owner;      /* the rank whose device holds the bytes */
  /* The owner's: where the bytes are at hand already (a copy from Tutti's memory, which runs
   * beside the sends): every piece leaves from there at once, and `sent`, a native user
   * event, is set once they are all sent (NULL: none). Taken over. */
  const unsigned char *from;
  cl_event sent;
  /* The owner's, without `from`: the native reads that fill the pieces (piece i waits for
   * ready[min(i, nready - 1)]); not taken over. */
  const cl_event *ready;
  size_t nready;
};

/* Starts this rank's part of broadcast b. */
void tt_broadcast_start(const struct tt_broadcast *b);

#endif
