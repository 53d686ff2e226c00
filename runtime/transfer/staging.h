/* Moves through pinned staging and host copies (runtime/transfer/staging.c), within
 * runtime/transfer/ only. */
#ifndef TUTTI_TRANSFER_STAGING_H
#define TUTTI_TRANSFER_STAGING_H

#include "runtime/transfer/moves.h"

/* The slots of one transfer's pieces in a domain's pinned staging. */
struct chains;

/* Slots for a transfer of npieces pieces of domain dom's staging (those free now), or NULL:
 * none free (the pieces are mapped instead). */
struct chains *tt_stage_chains_new(cl_context ctx, cl_uint dom, size_t npieces);
/* Its slots, m: piece i takes slot i % m. */
int tt_stage_chain_slots(const struct chains *ch);
/* How many of the first n pieces take slot k of m. */
size_t tt_stage_pieces_in_slot(size_t n, int k, int m);
/* The planning loop's reference dropped; n pieces of slot k that will never be made. */
void tt_stage_chains_put(struct chains *ch);
void tt_stage_chain_leave(struct chains *ch, int k, int n);
/* One piece of a transfer between ranks through slot k of ch (after: its turn there comes
 * after the transfer's piece before it in the slot; before: a piece follows it there), or
 * with host memory of its own (ch NULL): sent or received. Whether it was issued (a piece
 * issued may still have failed: f->err says). */
bool tt_stage_piece(struct fetch *f, cl_uint dom, size_t off, size_t n, bool send, int peer,
                    uint64_t id, struct chains *ch, int k, bool after, bool before);
/* Bytes [off, off+len) from this rank's domain src into the command's, through the host
 * (staging slots, or memory of the copy's own). 0, or nonzero with f->err. */
int tt_stage_copy_local(struct fetch *f, cl_uint src, size_t off, size_t len);
/* The domain's pinned staging given back. */
void tt_stage_release(struct tt_domain *dm);

#endif
