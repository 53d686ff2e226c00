/* The transfer planner (runtime/transfer/route.c): which bytes a command's memory domain must
 * fetch before it runs, from which holder, by which route and in which pieces with which
 * message ids (SnuCL-D Table 2), as data. It knows no OpenCL and no MPI: what it needs of
 * the job (each domain's rank, the message ids of a pair of ranks) and of this rank's memory
 * (whether bytes live in Tutti's host memory, in device memory, in CUDA memory linked by
 * copy engines; free staging slots; a windowed buffer's source window placed) it asks through
 * the view's functions, so that tests/unit/unit_route.c checks plans step by step with a view of
 * its own, and runtime/command/coherence.c with the job's.
 *
 * The planner hands each step to the view's executor as soon as it is planned, in the order
 * of the runs: a windowed buffer's source window is placed on every rank right before its
 * step runs (runtime/memory/window.h), so that no later placement can evict it first. */
#ifndef TUTTI_TRANSFER_ROUTE_H
#define TUTTI_TRANSFER_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/base/rangemap.h"

/* How one run of bytes reaches the command's domain. */
enum tt_route {
  TT_ROUTE_UNWRITTEN,  /* bytes nobody ever wrote: the domain holds them, nothing moves */
  TT_ROUTE_ELSEWHERE,  /* neither end is on this rank: only the holders change here */
  TT_ROUTE_LOCAL_HOST, /* within this rank, through host memory (staging or a copy's own) */
  TT_ROUTE_LOCAL_CUDA, /* within this rank, GPU to GPU by the copy engines */
  TT_ROUTE_CUDA,       /* between ranks of one host, GPU to GPU by the copy engines */
  TT_ROUTE_DIRECT,     /* between ranks, sent from or received into Tutti's host memory */
  TT_ROUTE_STAGED,     /* between ranks, each piece through a slot of pinned staging */
  TT_ROUTE_MAPPED,     /* between ranks, each piece of the buffer mapped */
  TT_ROUTE_HOST_COPY,  /* between ranks, one piece through a host copy of its own */
};

/* One step: a run of bytes [off, off+len) of the buffer from holder domain src into the
 * command's domain dst. */
struct tt_step {
  enum tt_route route;
  unsigned src, dst;
  size_t off, len;
  bool place;          /* a windowed buffer: src's window placed first (every rank) */
  /* Between ranks with an end here: */
  bool send;           /* this rank sends (it holds src) */
  int peer;            /* the other end's rank */
  uint64_t id;         /* the first message id; the pieces take id .. id + pieces - 1 */
  uint64_t pieces;     /* TUTTI_PIECE pieces (the ids drawn) */
  int slots;           /* STAGED: the staging slots the pieces take turns in */
  void *reserved;      /* STAGED: what the view's stage() reserved for them */
};

/* Piece i of a step between ranks: its bytes and message id and, STAGED, its slot (piece i
 * takes slot i % slots), whether it follows the step's piece before it in that slot (after)
 * and whether one follows it there (before). */
struct tt_piece {
  size_t off, len;
  uint64_t id;
  int slot;
  bool after, before;
};
void tt_route_piece(const struct tt_step *s, size_t piece_bytes, uint64_t i, struct tt_piece *p);

/* What the planner asks. Functions get arg; domains are indices of the context's list. */
struct tt_route_view {
  int me;               /* this rank */
  size_t piece;         /* bytes of a piece between ranks (TUTTI_PIECE) */
  bool one_piece_copy;  /* a one-piece transfer between host-memory domains goes through a
                         * host copy (TUTTI_STAGING=auto) */
  bool windowed;        /* the buffer is distributed in windows */
  bool host_copies;     /* every step between ranks in one piece through a host copy (an
                         * image: its rows move whole, runtime/memory/image.h) */
  void *arg;
  int (*rank)(void *arg, unsigned dom); /* the rank that holds domain dom */
  /* The first of n message ids for a transfer from rank a to rank b (only asked when one of
   * them is this rank: both ends draw alike). */
  uint64_t (*ids)(void *arg, int a, int b, uint64_t n);
  /* A windowed buffer: places domain dom's window over [off, off+len); nonzero: failed. */
  int (*place)(void *arg, unsigned dom, size_t off, size_t len);
  /* Whether the bytes from byte `at` move between domains a and b by the copy engines (every
   * rank alike). */
  bool (*cuda)(void *arg, unsigned a, unsigned b, size_t at);
  /* This rank's domain dom: whether [off, off+len) lives in Tutti's host memory; whether its
   * devices have memory of their own. */
  bool (*direct)(void *arg, unsigned dom, size_t off, size_t len);
  bool (*device_memory)(void *arg, unsigned dom);
  /* Slots of dom's pinned staging reserved for a transfer of n pieces (0: none free, the
   * pieces are mapped), *reserved what the executor takes them back by. */
  int (*stage)(void *arg, unsigned dom, uint64_t n, void **reserved);
  /* Runs a step, taking over what it reserved; nonzero stops the plan (the bytes are not
   * held). */
  int (*run)(void *arg, const struct tt_step *s);
};

/* Plans and runs what domain dom needs of [off, off+len) of a buffer whose newest bytes the
 * map latest says who holds (from, unless negative: every byte from that domain, whatever
 * the map says, which then stays as it is: an attached buffer). The command's domain is
 * added as a holder of each run once its step ran. Returns 0, or what run() or place()
 * returned. */
int tt_route_fetch(const struct tt_route_view *v, struct tt_rangemap *latest, size_t off,
                   size_t len, unsigned dom, int from);

/* A copy command's source bytes [off, off+len) (a map of their holders: latest) for its
 * destination in domain dom, which the view's cuda() answers for: when they are one run that
 * one other domain holds and the copy engines link the two, *taken is set and that run's
 * step planned and run (no holder changes: the bytes land in the destination buffer);
 * otherwise nothing is done. Returns 0 or what run() returned. */
int tt_route_copy_into(const struct tt_route_view *v, const struct tt_rangemap *latest,
                       size_t off, size_t len, unsigned dom, bool *taken);

/* The holder domain dom fetches from: one on its own rank if any, else the lowest; UINT_MAX
 * when dom holds them already or nobody does. Every rank alike. */
unsigned tt_route_source(const struct tt_route_view *v, tt_holders holders, unsigned dom);

/* This rank's part of a broadcast among n ranks from owner (the bytes a read leaves on its
 * device's owner sent to every rank: runtime/transfer/broadcast.h): along a chain (owner,
 * owner + 1, ... mod n; its last rank forwards nothing) or straight from the owner. */
struct tt_hop {
  int from;   /* the rank each piece arrives from; -1 on the owner */
  int next;   /* along a chain, the rank this one forwards each piece to; -1: none */
  int sends;  /* the sends of each piece from here: to next, or the owner's to every rank */
};
void tt_route_broadcast(int me, int n, int owner, bool chain, struct tt_hop *h);
/* Whether rank r is one this rank sends each piece to. */
bool tt_hop_to(const struct tt_hop *h, int me, int r);

/* "staged" and the like, for logs and tests. */
const char *tt_route_name(enum tt_route r);

#endif
