/* The transfer planner (runtime/transfer/route.h). */
#include "config.h"

#include "runtime/transfer/route.h"

const char *tt_route_name(enum tt_route r)
{
  static const char *const names[] = {"unwritten", "elsewhere", "local host", "local cuda",
                                      "cuda", "direct", "staged", "mapped", "host copy"};
  return (unsigned)r < sizeof names / sizeof *names ? names[r] : "?";
}

unsigned tt_route_source(const struct tt_route_view *v, tt_holders holders, unsigned dom)
{
  if (tt_holders_has(holders, dom))
    return UINT_MAX;
  /* Depends on the destination only, never on who decides. */
  for (unsigned i = tt_holders_next(holders, 0); i != UINT_MAX; i = tt_holders_next(holders, i + 1))
    if (v->rank(v->arg, i) == v->rank(v->arg, dom))
      return i;
  return tt_holders_next(holders, 0);
}

void tt_route_piece(const struct tt_step *s, size_t piece_bytes, uint64_t i, struct tt_piece *p)
{
  size_t at = (size_t)i * piece_bytes;
  p->off = s->off + at;
  p->len = s->len - at < piece_bytes ? s->len - at : piece_bytes;
  p->id = s->id + i;
  p->slot = s->slots > 0 ? (int)(i % (uint64_t)s->slots) : 0;
  p->after = s->slots > 0 && i >= (uint64_t)s->slots;
  p->before = s->slots > 0 && i + (uint64_t)s->slots < s->pieces;
}

/* The route between ranks, this rank at one end (s->send: the holder's). */
static void route_between(const struct tt_route_view *v, struct tt_step *s)
{
  unsigned here = s->send ? s->src : s->dst;
  if (v->host_copies) {
    s->route = TT_ROUTE_HOST_COPY;
    return;
  }
  if (v->cuda(v->arg, s->src, s->dst, s->off)) {
    s->route = TT_ROUTE_CUDA;
    return;
  }
  if (v->direct(v->arg, here, s->off, s->len)) {
    s->route = TT_ROUTE_DIRECT;
    return;
  }
  if (v->device_memory(v->arg, here)) {
    s->slots = v->stage(v->arg, here, s->pieces, &s->reserved);
    if (s->slots > 0) {
      s->route = TT_ROUTE_STAGED;
      return;
    }
  } else if (s->pieces == 1 && v->one_piece_copy) {
    s->route = TT_ROUTE_HOST_COPY;
    return;
  }
  s->route = TT_ROUTE_MAPPED;
}

/* Plans one run from holder src into dom; 0 or what stopped it. */
static int plan_run(const struct tt_route_view *v, unsigned src, unsigned dom, size_t off,
                    size_t len)
{
  struct tt_step s = {.src = src, .dst = dom, .off = off, .len = len, .place = v->windowed,
                      .peer = -1};
  int a = v->rank(v->arg, src), b = v->rank(v->arg, dom);
  if (s.place) {
    /* Every rank alike, and before the route is chosen: the window decides it. */
    int err = v->place(v->arg, src, off, len);
    if (err)
      return err;
  }
  if (a == b)
    s.route = b != v->me ? TT_ROUTE_ELSEWHERE
              : v->cuda(v->arg, src, dom, off) ? TT_ROUTE_LOCAL_CUDA
                                               : TT_ROUTE_LOCAL_HOST;
  else if (a != v->me && b != v->me)
    s.route = TT_ROUTE_ELSEWHERE;
  else {
    s.send = a == v->me;
    s.peer = s.send ? b : a;
    s.pieces = v->host_copies ? 1 : (len + v->piece - 1) / v->piece;
    s.id = v->ids(v->arg, a, b, s.pieces);
    route_between(v, &s);
  }
  return v->run(v->arg, &s);
}

struct walk {
  const struct tt_route_view *v;
  struct tt_rangemap *latest;
  unsigned dom;
  int err;
};

static int walk_run(void *arg, size_t off, size_t len, tt_holders holders)
{
  struct walk *w = arg;
  if (tt_holders_has(holders, w->dom))
    return 0;
  unsigned src = tt_route_source(w->v, holders, w->dom);
  if (src != UINT_MAX && (w->err = plan_run(w->v, src, w->dom, off, len)) != 0)
    return 1;
  if (src == UINT_MAX) {
    struct tt_step s = {.route = TT_ROUTE_UNWRITTEN, .src = w->dom, .dst = w->dom, .off = off,
                        .len = len, .peer = -1};
    if ((w->err = w->v->run(w->v->arg, &s)) != 0)
      return 1;
  }
  if (tt_rangemap_add(w->latest, off, len, w->dom) != 0) {
    w->err = -1;
    return 1;
  }
  return 0;
}

struct one_run {
  const struct tt_route_view *v;
  unsigned dom, runs, src;
};

static int note_run(void *arg, size_t off, size_t len, tt_holders holders)
{
  (void)off, (void)len;
  struct one_run *r = arg;
  r->src = tt_route_source(r->v, holders, r->dom);
  return ++r->runs > 1;
}

int tt_route_copy_into(const struct tt_route_view *v, const struct tt_rangemap *latest,
                       size_t off, size_t len, unsigned dom, bool *taken)
{
  struct one_run r = {v, dom, 0, UINT_MAX};
  *taken = false;
  if (len == 0 || v->windowed)
    return 0;
  tt_rangemap_walk(latest, off, len, note_run, &r);
  if (r.runs != 1 || r.src == UINT_MAX || !v->cuda(v->arg, r.src, dom, off))
    return 0;
  *taken = true;
  return plan_run(v, r.src, dom, off, len);
}

int tt_route_fetch(const struct tt_route_view *v, struct tt_rangemap *latest, size_t off,
                   size_t len, unsigned dom, int from)
{
  if (len == 0)
    return 0;
  if (from >= 0)
    return plan_run(v, (unsigned)from, dom, off, len);
  struct walk w = {v, latest, dom, 0};
  tt_rangemap_walk(latest, off, len, walk_run, &w);
  return w.err;
}

void tt_route_broadcast(int me, int n, int owner, bool chain, struct tt_hop *h)
{
  int pos = (me - owner + n) % n;
  h->next = chain && pos < n - 1 ? (me + 1) % n : -1;
  h->from = me == owner ? -1 : chain ? (me - 1 + n) % n : owner;
  h->sends = me == owner && !chain ? n - 1 : h->next >= 0 ? 1 : 0;
}

bool tt_hop_to(const struct tt_hop *h, int me, int r)
{
  return h->next >= 0 ? r == h->next : h->from < 0 && r != me;
}
