/* Broadcasts of host memory (runtime/transfer/broadcast.h). */
#include "config.h"

#include "runtime/transfer/broadcast.h"

#include <stdlib.h>

#include "runtime/base/backend.h"
#include "runtime/base/log.h"
#include "runtime/job/callback.h"
#include "runtime/job/cluster.h"
#include "runtime/job/transport.h"
#include "runtime/order/event.h"
#include "runtime/transfer/route.h"

/* At this size and above, with three ranks or more, a broadcast goes along a chain. */
#define CHAIN_FROM ((size_t)1 << 20)

size_t tt_broadcast_pieces(size_t len)
{
  return len ? (len + TT_BROADCAST_PIECE - 1) / TT_BROADCAST_PIECE : 1;
}

bool tt_broadcast_chains(size_t len)
{
  return tt_cluster_size() > 2 && len >= CHAIN_FROM;
}

uint64_t tt_broadcast_ids(size_t len)
{
  return tt_cluster_next_ids(tt_broadcast_pieces(len));
}

void tt_broadcast_piece(size_t len, size_t i, size_t *off, size_t *n)
{
  *off = i * TT_BROADCAST_PIECE;
  *n = len - *off < TT_BROADCAST_PIECE ? len - *off : TT_BROADCAST_PIECE;
}

struct flight;
struct piece {
  struct flight *f;
  size_t index;
};

/* One rank's part of a broadcast under way. */
struct flight {
  cl_event done;
  cl_event sent;
  char *ptr;
  size_t len;
  uint64_t id;        /* of piece 0; piece i has id + i */
  struct tt_hop hop;  /* where pieces come from and go on to */
  atomic_int pending; /* sends and receives of this rank still under way */
  cl_int status;
  struct piece *pieces;
};

static void op_done(struct flight *f, int ok)
{
  if (!ok)
    f->status = CL_OUT_OF_RESOURCES;
  if (atomic_fetch_sub(&f->pending, 1) == 1) {
    if (f->sent)
      tt_user_event_end(f->sent, true); /* ordering only: later commands may touch the bytes */
    if (f->done->owner == tt_cluster_rank())
      tt_event_complete(f->done, f->status);
    else
      tt_event_bytes_here(f->done, f->status);
    TT_RELEASE(f->done);
    free(f->pieces);
    free(f);
  }
}

static void piece_sent(void *arg, int ok)
{
  op_done(((struct piece *)arg)->f, ok);
}

/* Sends piece i on from this rank: to the next rank of the chain, or from the owner of a
 * direct broadcast to every other rank. */
static void send_piece(struct flight *f, size_t i)
{
  struct piece *p = &f->pieces[i];
  size_t off, len;
  tt_broadcast_piece(f->len, i, &off, &len);
  int me = tt_cluster_rank(), n = tt_cluster_size();
  /* f may be gone once the last send is done. */
  struct tt_hop hop = f->hop;
  char *from = f->ptr + off;
  uint64_t id = f->id + i;
  for (int r = 0; r < n; r++) {
    if (tt_hop_to(&hop, me, r) &&
        tt_transport_isend(TT_CH_HOST, from, len, r, id, piece_sent, p) != 0) {
      TT_WARN("sending %zu bytes of host memory to rank %d failed", len, r);
      op_done(f, 0);
    }
  }
}

/* Owner: the native read that fills piece i is done. */
static void CL_CALLBACK piece_ready(cl_event native, cl_int status, void *arg)
{
  struct piece *p = arg;
  struct flight *f = p->f;
  if (status < 0)
    f->status = status;
  send_piece(f, p->index);
  tt_transport_promise(-1);
}

/* Elsewhere: piece i arrived; along a chain it goes on to the next rank. */
static void piece_received(void *arg, int ok)
{
  struct piece *p = arg;
  struct flight *f = p->f;
  if (ok && f->hop.next >= 0) {
    send_piece(f, p->index);
    tt_transport_promise(-1);
  } else if (f->hop.next >= 0) {
    op_done(f, 0); /* the forward that will not happen */
    tt_transport_promise(-1);
  }
  op_done(f, ok);
}

void tt_broadcast_start(const struct tt_broadcast *b)
{
  struct flight *f = calloc(1, sizeof *f);
  size_t npieces = tt_broadcast_pieces(b->len);
  struct piece *pieces = f ? calloc(npieces, sizeof *pieces) : NULL;
  if (!pieces) {
    free(f);
    TT_WARN("out of memory for a broadcast of %zu bytes of a read", b->len);
    if (b->sent)
      tt_user_event_end(b->sent, true);
    tt_event_complete(b->done, CL_OUT_OF_HOST_MEMORY);
    return;
  }
  int me = tt_cluster_rank(), n = tt_cluster_size();
  TT_RETAIN(b->done);
  *f = (struct flight){.done = b->done, .ptr = b->ptr, .len = b->len, .id = b->id,
                       .status = CL_COMPLETE, .pieces = pieces};
  for (size_t i = 0; i < npieces; i++)
    pieces[i] = (struct piece){f, i};
  tt_route_broadcast(me, n, b->owner, tt_broadcast_chains(b->len), &f->hop);
  if (me == b->owner) {
    atomic_init(&f->pending, (int)npieces * f->hop.sends);
    if (b->from) {
      /* The bytes are at hand: every piece leaves now. */
      f->ptr = (char *)b->from;
      f->sent = b->sent;
      for (size_t i = 0; i < npieces; i++)
        send_piece(f, i);
      return;
    }
    for (size_t i = 0; i < npieces; i++) {
      cl_event ready = b->ready[i < b->nready ? i : b->nready - 1];
      tt_transport_promise(1);
      if (tt_native_callback(ready, CL_COMPLETE, piece_ready, &pieces[i]) != CL_SUCCESS) {
        TT_NATIVE_DISPATCH(ready)->clWaitForEvents(1, &ready);
        piece_ready(ready, CL_COMPLETE, &pieces[i]);
      }
    }
    return;
  }
  int from = f->hop.from;
  atomic_init(&f->pending, (int)npieces * (f->hop.sends + 1));
  for (size_t i = 0; i < npieces; i++) {
    size_t off, len;
    tt_broadcast_piece(f->len, i, &off, &len);
    if (f->hop.next >= 0)
      tt_transport_promise(1);
    if (tt_transport_irecv(TT_CH_HOST, f->ptr + off, len, from, f->id + i, piece_received,
                           &pieces[i]) != 0) {
      TT_WARN("receiving %zu bytes of host memory from rank %d failed", len, from);
      piece_received(&pieces[i], 0);
    }
  }
}
