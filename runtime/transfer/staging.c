/* Moves through host memory that take turns in pinned staging slots (runtime/transfer/staging.h):
 * copies between two domains of this rank, and the pieces of transfers between ranks that
 * go through staging or a host copy of their own. */
#include "config.h"

#include "runtime/memory/domain.h"
#include "runtime/transfer/staging.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/base/env.h"
#include "runtime/order/event.h"
#include "runtime/base/log.h"
#include "runtime/job/trace.h"
#include "runtime/job/transport.h"
#include "runtime/memory/window.h"

/* Backends that keep buffers in device memory (GPUs) move pieces through pinned host
 * memory of their own (a buffer allocated with CL_MEM_ALLOC_HOST_PTR and mapped once): their
 * reads and writes are then DMA at the link's speed, where a map of a device buffer is a
 * pageable copy. Up to 16 slots of a piece each, 64 MiB at most (2 slots at least). A
 * transfer takes the slots that are free when it is planned, as many as its pieces, and its
 * pieces take turns in them (struct chains); one that finds none free maps its pieces. */
#define STAGING_MAX_SLOTS 16
#define STAGING_BYTES ((size_t)64 << 20)

static int staging_slots(void)
{
  size_t n = STAGING_BYTES / PIECE_BYTES;
  return n < 2 ? 2 : n > STAGING_MAX_SLOTS ? STAGING_MAX_SLOTS : (int)n;
}

struct tt_staging {
  cl_mem buffer;
  unsigned char *host;
  struct tt_nqueue *q;
  pthread_mutex_t lock;
  uint32_t free_slots; /* bit i: slot i is free */
};

/* The slots of one transfer: piece i takes slot[i % m] once piece i - m let go of it (sent
 * it, or wrote it into the device): a piece's read into a slot waits for a user event that
 * the send before it sets; a piece's receive is posted once the write before it ended. A
 * slot goes back to the domain when the last of its pieces lets go of it. Referenced by the
 * planning loop and by each piece until it lets go. */
struct slot_chain {
  pthread_mutex_t lock;
  int left;               /* pieces of the transfer in this slot that have not let go */
  struct staged *head, *tail; /* receiving: the next pieces, their receives not posted yet */
  bool idle;              /* receiving: the last piece let go before the next was made */
  cl_event gate;          /* sending: what the next piece's read waits for (the loop's) */
};

struct chains {
  atomic_int refs;
  int m;
  struct tt_staging *st;
  int slot[STAGING_MAX_SLOTS];
  struct slot_chain c[STAGING_MAX_SLOTS];
};

struct staged {
  struct transfer_desc what; /* first: the transport describes operations by it */
  struct chains *ch;  /* its transfer's slots (its own is ch->slot[k]), or NULL: the piece
                       * has host memory of its own (own) */
  int k;
  cl_event next_gate;      /* sending: set once sent (the slot's next read waits for it) */
  struct staged *queued;   /* receiving: the piece after it in its slot's queue */
  struct tt_nqueue *rq;    /* sending: the queue of that read (referenced) */
  unsigned char *own;
  size_t len;
  int peer;
  uint64_t id;
  cl_event mirror;      /* receiving side: set when the bytes are in */
  struct tt_nqueue *wq; /* receiving side: the queue of the write (referenced) */
};

/* Up to want free slots of the domain's pinned staging (made on first use) into slots:
 * how many. */
static int staging_take(cl_context ctx, cl_uint dom, int want, int *slots,
                        struct tt_staging **out)
{
  struct tt_domain *dm = &ctx->domains[dom];
  if (!dm->staging) {
    struct tt_staging *st = calloc(1, sizeof *st);
    cl_int err = CL_OUT_OF_HOST_MEMORY;
    if (!st ||
        !(st->host = tt_domain_pinned_map(dm, staging_slots() * PIECE_BYTES, &st->buffer, &err))) {
      TT_LOG(TT_LOG_MM, "no pinned staging on %s: %s", dm->bp->short_name, tt_error_name(err));
      free(st);
      dm->host_unified = 1; /* do not try again: maps it is */
      return -1;
    }
    tt_nqueue_ref(dm->unmaps);
    st->q = dm->unmaps;
    pthread_mutex_init(&st->lock, NULL);
    st->free_slots = (1u << staging_slots()) - 1;
    dm->staging = st;
  }
  struct tt_staging *st = dm->staging;
  int n = 0;
  pthread_mutex_lock(&st->lock);
  while (n < want && st->free_slots) {
    slots[n] = __builtin_ctz(st->free_slots);
    st->free_slots &= ~(1u << slots[n++]);
  }
  pthread_mutex_unlock(&st->lock);
  *out = st;
  return n;
}

/* How many of the first n pieces of a transfer holding m slots go through slot k. */
int tt_stage_chain_slots(const struct chains *ch)
{
  return ch->m;
}

size_t tt_stage_pieces_in_slot(size_t n, int k, int m)
{
  return n > (size_t)k ? (n - (size_t)k + (size_t)m - 1) / (size_t)m : 0;
}

/* The slots a transfer of npieces pieces in domain dom takes: those free now, at most one a
 * piece (NULL: none free, or no staging; its pieces map instead). */
struct chains *tt_stage_chains_new(cl_context ctx, cl_uint dom, size_t npieces)
{
  struct chains *ch = calloc(1, sizeof *ch);
  if (!ch)
    return NULL;
  int want = npieces < STAGING_MAX_SLOTS ? (int)npieces : STAGING_MAX_SLOTS;
  ch->m = staging_take(ctx, dom, want, ch->slot, &ch->st);
  if (ch->m <= 0) {
    free(ch);
    return NULL;
  }
  atomic_init(&ch->refs, 1);
  for (int k = 0; k < ch->m; k++) {
    pthread_mutex_init(&ch->c[k].lock, NULL);
    ch->c[k].left = (int)tt_stage_pieces_in_slot(npieces, k, ch->m);
  }
  return ch;
}

static void slot_give_back(struct tt_staging *st, int slot)
{
  pthread_mutex_lock(&st->lock);
  st->free_slots |= 1u << slot;
  pthread_mutex_unlock(&st->lock);
}

/* Host memory that pieces of a copy within the rank went through: the copy's own (freed) or
 * one slot of a domain's pinned staging (given back), once every event that may still use
 * it ended. */
struct local_staging {
  unsigned char *own;
  struct tt_staging *st;
  int slot;
  atomic_int left;
};

static void CL_CALLBACK local_staging_end(cl_event ev, cl_int status, void *arg)
{
  (void)ev;
  (void)status;
  struct local_staging *e = arg;
  if (atomic_fetch_sub(&e->left, 1) != 1)
    return;
  if (e->own)
    free(e->own);
  else
    slot_give_back(e->st, e->slot);
  free(e);
}

/* Lets go of own (or the slot) once the n events (NULL ones left out) ended, and releases
 * them. */
static void local_staging_after(unsigned char *own, struct tt_staging *st, int slot,
                                cl_event *evs, int n)
{
  struct local_staging *e = malloc(sizeof *e);
  if (!e) { /* at worst the host waits */
    for (int i = 0; i < n; i++)
      if (evs[i])
        TT_NATIVE_DISPATCH(evs[i])->clWaitForEvents(1, &evs[i]);
    free(own);
    if (!own)
      slot_give_back(st, slot);
  } else {
    *e = (struct local_staging){own, st, slot, 1};
    for (int i = 0; i < n; i++)
      if (evs[i]) {
        atomic_fetch_add(&e->left, 1);
        if (tt_native_free_after(evs[i], local_staging_end, e) != CL_SUCCESS) {
          TT_NATIVE_DISPATCH(evs[i])->clWaitForEvents(1, &evs[i]);
          local_staging_end(NULL, CL_COMPLETE, e);
        }
      }
    local_staging_end(NULL, CL_COMPLETE, e);
  }
  for (int i = 0; i < n; i++)
    if (evs[i])
      TT_NATIVE_DISPATCH(evs[i])->clReleaseEvent(evs[i]);
}

/* A slot's next read waits for the write before it: a user event of the holder's domain set
 * once the write ended, the reads' queue flushed then where Tutti polls the backend (NVIDIA
 * starts a command whose user event was set only at a flush; its callbacks run on Tutti's
 * poller). */
struct slot_gate {
  cl_event ev;
  struct tt_nqueue *q;
};

static void CL_CALLBACK slot_gate_open(cl_event write, cl_int status, void *arg)
{
  (void)write;
  (void)status; /* ordering only */
  struct slot_gate *g = arg;
  const cl_icd_dispatch *d = TT_NATIVE_DISPATCH(g->ev);
  d->clSetUserEventStatus(g->ev, CL_COMPLETE);
  d->clReleaseEvent(g->ev);
  if (tt_backend_polled(TT_VENDOR_DISPATCH(g->q->native)))
    g->q->d->clFlush(g->q->native);
  tt_nqueue_unref(g->q);
  free(g);
}

/* The gate of the read after write, in domain dom whose reads go on q (retained). */
static cl_int slot_gate_new(cl_context ctx, cl_uint dom, struct tt_nqueue *q, cl_event write,
                            cl_event *out)
{
  struct tt_domain *dm = &ctx->domains[dom];
  struct slot_gate *g = malloc(sizeof *g);
  cl_int err = g ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
  cl_event ev = g ? dm->bp->d->clCreateUserEvent(dm->native, &err) : NULL;
  if (!ev) {
    free(g);
    return err != CL_SUCCESS ? err : CL_OUT_OF_RESOURCES;
  }
  dm->bp->d->clRetainEvent(ev); /* the callback's */
  tt_nqueue_ref(q);
  *g = (struct slot_gate){ev, q};
  if ((err = tt_native_callback(write, CL_COMPLETE, slot_gate_open, g)) != CL_SUCCESS) {
    dm->bp->d->clSetUserEventStatus(ev, CL_COMPLETE); /* nothing waits for it yet */
    dm->bp->d->clReleaseEvent(ev);
    dm->bp->d->clReleaseEvent(ev);
    tt_nqueue_unref(q);
    free(g);
    return err;
  }
  *out = ev;
  return CL_SUCCESS;
}

/* One copy through the host between two domains of this rank (copy_local): its pieces move
 * through pinned staging slots of one domain (or memory of its own), each read from the
 * source and written into this domain, a slot's next read after its last write. */
struct host_copy {
  struct fetch *f;
  cl_uint src;
  size_t off, len;
  struct tt_domain *sd, *dd;
  long sdom;                 /* the domain whose staging the pieces take, or -1 */
  struct tt_staging *st;
  int slot[STAGING_MAX_SLOTS], m;
  unsigned char *own;        /* memory of the copy's own, without staging */
  struct tt_nqueue *sq;
  struct tt_deps sdeps, ddeps;
  cl_mem sn, dn;
  size_t sat, dat, npieces, pieces;
  size_t piece;              /* TUTTI_PIECE; an image's rows move in one piece */
  cl_event read_ev, write_ev;             /* the last piece's */
  cl_event last[STAGING_MAX_SLOTS];       /* slots: the last event of each */
  cl_event gate[STAGING_MAX_SLOTS];       /* slots: the last write, bridged for the read */
};

/* The piece at `at`: read from the source into its slot (the first read waits for the
 * source's writers, the queue orders the others after it; in a slot, a read waits for the
 * write before it), then written into this domain after the read. */
static void copy_piece(struct host_copy *c, size_t at)
{
  struct fetch *f = c->f;
  size_t n = c->len - at < c->piece ? c->len - at : c->piece;
  int k = c->own ? 0 : (int)(c->pieces % (size_t)c->m);
  unsigned char *host = c->own ? c->own + at : c->st->host + (size_t)c->slot[k] * c->piece;
  cl_event r = NULL, bridge = NULL, w = NULL;
  cl_uint nwait = !at ? c->sdeps.n : c->gate[k] ? 1 : 0;
  const cl_event *wait = !at ? (c->sdeps.n ? c->sdeps.ev : NULL) : c->gate[k] ? &c->gate[k] : NULL;
  f->err = tt_transfer_io(f, c->sd->bp->d, c->sq->native, c->sn, false, c->sat + at, n, host,
                          nwait, wait, &r);
  if (c->gate[k]) {
    c->sd->bp->d->clReleaseEvent(c->gate[k]);
    c->gate[k] = NULL;
  }
  if (f->err == CL_SUCCESS) {
    c->sd->bp->d->clFlush(c->sq->native);
    if (c->read_ev)
      c->sd->bp->d->clReleaseEvent(c->read_ev);
    c->read_ev = r;
    f->err = tt_order_bridge(f->ctx, f->dom, r, true, &bridge);
  }
  if (f->err == CL_SUCCESS && !at) {
    f->err = tt_deps_take(&c->ddeps, bridge);
    bridge = NULL;
  }
  if (f->err == CL_SUCCESS)
    f->err = tt_transfer_io(f, c->dd->bp->d, f->nq->native, c->dn, true, c->dat + at, n, host,
                            at ? 1 : c->ddeps.n, at ? &bridge : c->ddeps.ev, &w);
  if (bridge)
    c->dd->bp->d->clReleaseEvent(bridge);
  cl_event newest = w ? w : r;
  if (!c->own && newest) {
    TT_NATIVE_DISPATCH(newest)->clRetainEvent(newest);
    if (c->last[k])
      TT_NATIVE_DISPATCH(c->last[k])->clReleaseEvent(c->last[k]);
    c->last[k] = newest;
  }
  if (w) {
    if (c->write_ev)
      c->dd->bp->d->clReleaseEvent(c->write_ev);
    c->write_ev = w;
    /* The slot's next piece reads into it once this write is through. */
    if (!c->own && c->pieces + (size_t)c->m < c->npieces)
      f->err = slot_gate_new(f->ctx, c->src, c->sq, w, &c->gate[k]);
  }
}

/* The copy's end: its slots (or memory) given back after their last events; its accesses
 * recorded and its last write taken as the fetch's dependency. Returns copy_local's value. */
static int copy_done(struct host_copy *c)
{
  struct fetch *f = c->f;
  tt_deps_release(&c->sdeps);
  tt_deps_release(&c->ddeps);
  for (int k = 0; k < c->m; k++) {
    if (c->gate[k])
      c->sd->bp->d->clReleaseEvent(c->gate[k]);
    /* A slot is through after its last event (a later one of its chain waits for it). */
    local_staging_after(NULL, c->st, c->slot[k], &c->last[k], 1);
  }
  bool ok = f->err == CL_SUCCESS;
  if (c->own) {
    /* Reads follow reads and writes writes: the last of each ends after the others. */
    cl_event ends[2] = {c->read_ev, c->write_ev};
    for (int i = 0; i < 2 && ok; i++)
      if (ends[i])
        TT_NATIVE_DISPATCH(ends[i])->clRetainEvent(ends[i]);
    local_staging_after(c->own, NULL, 0, ends, 2);
  } else if (!ok) {
    if (c->read_ev)
      c->sd->bp->d->clReleaseEvent(c->read_ev);
    if (c->write_ev)
      c->dd->bp->d->clReleaseEvent(c->write_ev);
  }
  if (!ok) {
    TT_LOG(TT_LOG_ERR, "transfer of buffer #%llu bytes %zu+%zu from %s (domain %u) to %s "
           "(domain %u) failed: %s", (unsigned long long)f->root->obj.id, c->off, c->len,
           c->sd->bp->short_name, c->src, c->dd->bp->short_name, f->dom, tt_error_name(f->err));
    return 1;
  }
  TT_LOG(TT_LOG_PLAN, "buffer #%llu bytes %zu+%zu: %s (domain %u) -> %s (domain %u) through "
         "the host in %zu piece(s)%s", (unsigned long long)f->root->obj.id, c->off, c->len,
         c->sd->bp->short_name, c->src, c->dd->bp->short_name, f->dom, c->pieces,
         c->own                  ? ""
         : c->sdom == (long)c->src ? ", the holder's pinned staging"
                                   : ", this domain's pinned staging");
  tt_order_trace_internal(c->sd, false, "copy through host: read", c->read_ev, tt_plan_cur.cmd);
  tt_order_trace_internal(c->dd, true, "copy through host: write", c->write_ev, tt_plan_cur.cmd);
  /* The read must stay ordered before later writers of these bytes in the source. */
  tt_order_access_record(f->root, c->off, c->len, false, c->src, c->sq, c->read_ev, false);
  tt_order_access_record(f->root, c->off, c->len, true, f->dom, f->nq, c->write_ev, false);
  c->sd->bp->d->clReleaseEvent(c->read_ev);
  f->err = tt_deps_take(f->deps, c->write_ev);
  return f->err != CL_SUCCESS;
}

/* Both domains on this rank: read into host memory on the holder's internal queue, then
 * write into this domain's copy on the command's queue, in pieces of TUTTI_PIECE bytes so
 * that the holder reads the next piece while this domain writes the last (two in-order
 * queues: reads follow reads, writes follow writes, each write its own read). The pieces go
 * through the pinned staging of whichever side keeps its buffers in device memory (the
 * holder's first; the holder's too where both keep them in host memory, unless
 * TUTTI_STAGING=off), taking turns in its free slots (a piece's read waits for the write of
 * the piece before it in its slot); where none is free, through host memory of the copy's
 * own, fresh for each copy and far slower, since it is not pinned (doc/testing.md). The last
 * read and the last write stand for all of them in the access records. */
int tt_stage_copy_local(struct fetch *f, cl_uint src, size_t off, size_t len)
{
  size_t piece = f->root->image ? len : PIECE_BYTES;
  struct host_copy c = {.f = f, .src = src, .off = off, .len = len,
                        .sd = &f->ctx->domains[src], .dd = &f->ctx->domains[f->dom],
                        .npieces = (len + piece - 1) / piece, .piece = piece};
  /* The domain whose staging the pieces take, or -1: none (memory of the copy's own). */
  c.sdom = f->root->image                              ? -1
           : tt_domain_device_memory(f->ctx, src)      ? (long)src
           : tt_domain_device_memory(f->ctx, f->dom) ? (long)f->dom
           : tt_env()->staging != 0                  ? (long)src
                                                     : -1;
  if (c.sdom >= 0)
    c.m = staging_take(f->ctx, (cl_uint)c.sdom,
                       c.npieces < STAGING_MAX_SLOTS ? (int)c.npieces : STAGING_MAX_SLOTS, c.slot,
                       &c.st);
  c.own = c.m > 0 ? NULL : malloc(len);
  tt_deps_init(&c.sdeps);
  tt_deps_init(&c.ddeps);
  f->err = c.own || c.m > 0 ? tt_order_internal_queue(f->ctx, src, &c.sq) : CL_OUT_OF_HOST_MEMORY;
  if (f->err == CL_SUCCESS && (c.sn = tt_transfer_placed(f, src, off, len, &c.sat, NULL)))
    c.dn = tt_transfer_placed(f, f->dom, off, len, &c.dat, NULL);
  if (f->err == CL_SUCCESS)
    f->err = tt_order_after(&c.sdeps, f->ctx, src, c.sq, f->root, off, len, false);
  /* The first write also waits for this domain's earlier accesses of the bytes (a kernel of
   * another queue still reading the copy they replace): its record supersedes them. */
  if (f->err == CL_SUCCESS)
    f->err = tt_order_after(&c.ddeps, f->ctx, f->dom, f->nq, f->root, off, len, true);
  for (size_t at = 0; at < len && f->err == CL_SUCCESS; at += piece, c.pieces++)
    copy_piece(&c, at);
  return copy_done(&c);
}

void tt_stage_chains_put(struct chains *ch)
{
  if (atomic_fetch_sub(&ch->refs, 1) != 1)
    return;
  for (int k = 0; k < ch->m; k++) {
    if (ch->c[k].gate)
      TT_NATIVE_DISPATCH(ch->c[k].gate)->clReleaseEvent(ch->c[k].gate);
    pthread_mutex_destroy(&ch->c[k].lock);
  }
  free(ch);
}

/* n pieces of the transfer's slot k let go of it, or will never come (an error stopped the
 * planning): the slot goes back to the domain after its last piece. */
void tt_stage_chain_leave(struct chains *ch, int k, int n)
{
  struct slot_chain *c = &ch->c[k];
  pthread_mutex_lock(&c->lock);
  bool last = (c->left -= n) == 0;
  pthread_mutex_unlock(&c->lock);
  if (last)
    slot_give_back(ch->st, ch->slot[k]);
}

static void staged_post_recv(struct staged *s);

/* s, a piece done with its slot: the slot's next piece may take it. */
static void staged_let_go(struct staged *s)
{
  if (!s->ch)
    return;
  if (s->next_gate) {
    TT_NATIVE_DISPATCH(s->next_gate)->clSetUserEventStatus(s->next_gate, CL_COMPLETE);
    TT_NATIVE_DISPATCH(s->next_gate)->clReleaseEvent(s->next_gate);
    /* NVIDIA starts a command whose user event was set only at a flush. */
    s->rq->d->clFlush(s->rq->native);
  }
  struct slot_chain *c = &s->ch->c[s->k];
  pthread_mutex_lock(&c->lock);
  struct staged *next = c->head;
  if (next && !(c->head = next->queued))
    c->tail = NULL;
  c->idle = next == NULL;
  pthread_mutex_unlock(&c->lock);
  if (next)
    staged_post_recv(next);
  tt_stage_chain_leave(s->ch, s->k, 1);
  tt_stage_chains_put(s->ch);
}

/* What every piece holds, once its slot is dealt with. */
static void staged_drop(struct staged *s)
{
  if (s->rq)
    tt_nqueue_unref(s->rq);
  free(s->own);
  free(s);
}

static void staged_free(struct staged *s)
{
  staged_let_go(s);
  staged_drop(s);
}

static void *slot_ptr(const struct staged *s)
{
  return s->own ? s->own : s->ch->st->host + (size_t)s->ch->slot[s->k] * PIECE_BYTES;
}

static void staged_sent(void *arg, int ok)
{
  char s[256];
  if (!ok)
    TT_WARN("sending %s failed (MPI error)", tt_transfer_str(&((struct staged *)arg)->what, s, sizeof s));
  staged_free(arg);
}

static void CL_CALLBACK staged_read(cl_event ev, cl_int status, void *arg)
{
  struct staged *s = arg;
  char m[256];
  if (status < 0)
    TT_WARN("reading %s into staging failed (%s): sending it anyway",
            tt_transfer_str(&s->what, m, sizeof m), tt_error_name(status));
  if (tt_transport_isend(TT_CH_DATA, slot_ptr(s), s->len, s->peer, s->id, staged_sent, s) != 0)
    staged_sent(s, 0);
  tt_transport_promise(-1);
}

static void staged_received(void *arg, int ok)
{
  char m[256];
  if (!ok)
    TT_WARN("receiving %s failed (MPI error)", tt_transfer_str(&((struct staged *)arg)->what, m, sizeof m));
  /* The write may run, finish and free the piece as soon as the mirror is set: the receive
   * holds a reference of its own. */
  cl_event mirror = ((struct staged *)arg)->mirror;
  struct tt_nqueue *wq = ((struct staged *)arg)->wq;
  tt_user_event_end(mirror, ok);
  /* Some backends (NVIDIA) start a command whose user event was set only at a flush. */
  wq->d->clFlush(wq->native);
  tt_nqueue_gate(wq, -1);
  tt_nqueue_unref(wq);
}

static void CL_CALLBACK staged_written(cl_event ev, cl_int status, void *arg)
{
  struct staged *s = arg;
  TT_NATIVE_DISPATCH(s->mirror)->clReleaseEvent(s->mirror);
  staged_free(s);
}

static void staged_post_recv(struct staged *s)
{
  /* Not posted: the write fails with its mirror, and the command through its event. */
  if (tt_transport_irecv(TT_CH_DATA, slot_ptr(s), s->len, s->peer, s->id, staged_received, s) != 0)
    staged_received(s, 0);
}

/* Frees a piece that issued nothing (its slot stays with the transfer). */
static void staged_discard(struct staged *s)
{
  if (s->next_gate)
    TT_NATIVE_DISPATCH(s->next_gate)->clReleaseEvent(s->next_gate);
  if (s->ch)
    tt_stage_chains_put(s->ch);
  staged_drop(s);
}

/* One piece through pinned staging (slot k of ch, its turn there after the transfer's piece
 * before it in that slot when after is set), or through host memory of its own (ch NULL):
 * send side (read, then send) or receive side (receive, then write on the command's queue).
 * Returns 0 when done, 1 on an error once something was issued (the piece's callbacks still
 * run; f->err), 2 when nothing was issued. */
/* A staged piece sent: read from domain dom's native buffer (native, at) into its slot or
 * memory on the domain's internal queue, in its slot's turn (after: the piece before it in the
 * slot was sent; before: a piece follows it there), the send posted once the read is done
 * (staged_read). The read's event in *ev. */
static void stage_send(struct fetch *f, struct staged *s, cl_uint dom, size_t off, cl_mem native,
                       size_t at, bool after, bool before, cl_event *ev)
{
  struct tt_domain *dm = &f->ctx->domains[dom];
  struct slot_chain *c = s->ch ? &s->ch->c[s->k] : NULL;
  size_t n = s->len;
  struct tt_nqueue *q;
  struct tt_deps deps;
  tt_deps_init(&deps);
  f->err = tt_order_internal_queue(f->ctx, dom, &q);
  if (f->err == CL_SUCCESS)
    f->err = tt_order_after(&deps, f->ctx, dom, q, f->root, off, n, false);
  /* The slot's turn: once the piece before has been sent from it. */
  if (f->err == CL_SUCCESS && after && c->gate) {
    dm->bp->d->clRetainEvent(c->gate);
    f->err = tt_deps_take(&deps, c->gate);
  }
  /* The gate of the piece after, set once this one is sent. */
  if (f->err == CL_SUCCESS && before) {
    s->next_gate = dm->bp->d->clCreateUserEvent(dm->native, &f->err);
    if (s->next_gate) {
      if (c->gate)
        dm->bp->d->clReleaseEvent(c->gate);
      c->gate = s->next_gate;
      dm->bp->d->clRetainEvent(c->gate);
      tt_nqueue_ref(q);
      s->rq = q;
    }
  }
  if (f->err == CL_SUCCESS)
    f->err = tt_transfer_io(f, dm->bp->d, q->native, native, false, at, n, slot_ptr(s), deps.n,
                            deps.n ? deps.ev : NULL, ev);
  tt_deps_release(&deps);
  if (f->err != CL_SUCCESS)
    return;
  tt_order_trace_internal(dm, false,
                          s->own ? "host copy: read for sending" : "staging: read for sending",
                          *ev, tt_plan_cur.cmd);
  tt_order_access_record(f->root, off, n, false, dom, q, *ev, false);
  tt_transport_promise(1);
  if (tt_native_callback(*ev, CL_COMPLETE, staged_read, s) != CL_SUCCESS) {
    dm->bp->d->clWaitForEvents(1, ev);
    staged_read(*ev, CL_COMPLETE, s);
  }
}

/* A staged piece received: written into domain dom's native buffer (native, at) from its slot
 * or memory once the bytes arrived (a user event mirrors the receive) and after this domain's
 * earlier accesses of them (its record supersedes them); the receive posted in its slot's
 * turn (after: once the piece before it was written out of the slot). The write's event in
 * *ev. */
static void stage_receive(struct fetch *f, struct staged *s, cl_uint dom, size_t off,
                          cl_mem native, size_t at, bool after, cl_event *ev)
{
  struct tt_domain *dm = &f->ctx->domains[dom];
  struct slot_chain *c = s->ch ? &s->ch->c[s->k] : NULL;
  size_t n = s->len;
  struct tt_deps deps;
  tt_deps_init(&deps);
  s->mirror = dm->bp->d->clCreateUserEvent(dm->native, &f->err);
  if (s->mirror)
    f->err = tt_order_after(&deps, f->ctx, dom, f->nq, f->root, off, n, true);
  if (s->mirror && f->err == CL_SUCCESS) {
    dm->bp->d->clRetainEvent(s->mirror);
    f->err = tt_deps_take(&deps, s->mirror);
  }
  if (f->err == CL_SUCCESS)
    f->err = tt_transfer_io(f, dm->bp->d, f->nq->native, native, true, at, n, slot_ptr(s),
                            deps.n, deps.ev, ev);
  tt_deps_release(&deps);
  if (f->err != CL_SUCCESS) {
    if (s->mirror)
      dm->bp->d->clReleaseEvent(s->mirror);
    return;
  }
  tt_order_trace_internal(dm, true,
                          s->own ? "host copy: write of received bytes"
                                 : "staging: write of received bytes",
                          *ev, tt_plan_cur.cmd);
  tt_order_access_record(f->root, off, n, true, dom, f->nq, *ev, false);
  dm->bp->d->clRetainEvent(*ev);
  f->err = tt_deps_take(f->deps, *ev);
  if (tt_native_callback(*ev, CL_COMPLETE, staged_written, s) != CL_SUCCESS)
    TT_WARN("a staging slot (or host copy) of %s stays taken", dm->bp->short_name);
  dm->bp->d->clRetainEvent(s->mirror);
  tt_nqueue_ref(f->nq);
  s->wq = f->nq;
  tt_nqueue_gate(f->nq, 1);
  /* The slot's turn: once the piece before was written out of it. */
  bool now = true;
  if (after) {
    pthread_mutex_lock(&c->lock);
    now = c->idle;
    c->idle = false;
    if (!now) {
      if (c->tail)
        c->tail->queued = s;
      else
        c->head = s;
      c->tail = s;
    }
    pthread_mutex_unlock(&c->lock);
  }
  if (now)
    staged_post_recv(s);
}

bool tt_stage_piece(struct fetch *f, cl_uint dom, size_t off, size_t n, bool send, int peer,
                    uint64_t id, struct chains *ch, int k, bool after, bool before)
{
  unsigned char *own = NULL;
  if (!ch && !(own = malloc(n))) {
    f->err = CL_OUT_OF_HOST_MEMORY;
    return false;
  }
  struct tt_domain *dm = &f->ctx->domains[dom];
  struct staged *s = calloc(1, sizeof *s);
  if (!s) {
    free(own);
    f->err = CL_OUT_OF_HOST_MEMORY;
    return false;
  }
  *s = (struct staged){.ch = ch, .k = k, .own = own, .len = n, .peer = peer, .id = id};
  if (ch)
    atomic_fetch_add(&ch->refs, 1);
  s->what = send ? tt_transfer_of(f, dm->rank, peer, off, n, id)
                 : tt_transfer_of(f, peer, dm->rank, off, n, id);
  cl_event ev = NULL;
  size_t at = 0;
  cl_mem native = tt_transfer_placed(f, dom, off, n, &at, NULL);
  if (native && send)
    stage_send(f, s, dom, off, native, at, after, before, &ev);
  else if (native)
    stage_receive(f, s, dom, off, native, at, after, &ev);
  if (ev)
    dm->bp->d->clReleaseEvent(ev);
  if (!ev) {
    staged_discard(s);
    return false;
  }
  return true;
}

void tt_stage_release(struct tt_domain *dm)
{
  if (!dm->staging)
    return;
  struct tt_staging *st = dm->staging;
  dm->bp->d->clEnqueueUnmapMemObject(st->q->native, st->buffer, st->host, 0, NULL, NULL);
  dm->bp->d->clFinish(st->q->native);
  dm->bp->d->clReleaseMemObject(st->buffer);
  tt_nqueue_unref(st->q);
  pthread_mutex_destroy(&st->lock);
  free(st);
  dm->staging = NULL;
}
