/* Table tests of the transfer planner (runtime/transfer/route.h): plans for jobs of 1-4 ranks
 * with 1-3 memory domains a rank, of every kind of memory, checked step by step with no
 * OpenCL and no MPI. A job here is a string of domains, one letter each: h host memory of a
 * backend (pieces mapped), d host memory of Tutti's (sent from and received into directly), g
 * device memory (pinned staging), c CUDA memory (copy engines between GPUs of one host);
 * upper case starts the next rank. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/transfer/route.h"
#include "tests/unit/unit.h"

#define PIECE 100

struct job {
  const char *doms;     /* as above */
  int rank[16];
  int me;
  int free_slots;       /* free slots of each device-memory domain's staging */
  uint64_t out[4], in[4]; /* this rank's message ids drawn: to each peer, from each peer */
  int fail_place;       /* place() of this domain fails (-1: none) */
  char log[2048];       /* the steps run and windows placed, as text */
};

static void job_init(struct job *j, const char *doms, int me)
{
  memset(j, 0, sizeof *j);
  j->doms = doms;
  j->me = me;
  j->free_slots = 2;
  j->fail_place = -1;
  int r = -1;
  for (int i = 0; doms[i]; i++) {
    if (doms[i] >= 'A' && doms[i] <= 'Z')
      r++;
    j->rank[i] = r < 0 ? 0 : r;
  }
}

static char kind(const struct job *j, unsigned dom)
{
  char c = j->doms[dom];
  return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static void say(struct job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct job *j, const char *fmt, ...)
{
  size_t n = strlen(j->log);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(j->log + n, sizeof j->log - n, fmt, ap);
  va_end(ap);
}

static int v_rank(void *arg, unsigned dom) { return ((struct job *)arg)->rank[dom]; }

static uint64_t v_ids(void *arg, int a, int b, uint64_t n)
{
  struct job *j = arg;
  uint64_t *c = a == j->me ? &j->out[b] : &j->in[a];
  uint64_t first = *c;
  *c += n;
  return first;
}

static int v_place(void *arg, unsigned dom, size_t off, size_t len)
{
  struct job *j = arg;
  say(j, "place d%u %zu+%zu; ", dom, off, len);
  return (int)dom == j->fail_place;
}

static bool v_cuda(void *arg, unsigned a, unsigned b, size_t at)
{
  (void)at;
  return kind(arg, a) == 'c' && kind(arg, b) == 'c';
}

static bool v_direct(void *arg, unsigned dom, size_t off, size_t len)
{
  (void)off, (void)len;
  return kind(arg, dom) == 'd';
}

static bool v_device_memory(void *arg, unsigned dom)
{
  return kind(arg, dom) == 'g' || kind(arg, dom) == 'c';
}

static int v_stage(void *arg, unsigned dom, uint64_t n, void **reserved)
{
  struct job *j = arg;
  (void)dom;
  *reserved = NULL;
  return n < (uint64_t)j->free_slots ? (int)n : j->free_slots;
}

static int v_run(void *arg, const struct tt_step *s)
{
  struct job *j = arg;
  say(j, "%s d%u->d%u %zu+%zu", tt_route_name(s->route), s->src, s->dst, s->off, s->len);
  if (s->peer >= 0)
    say(j, " %s r%d id %llu x%llu", s->send ? "send" : "recv", s->peer,
        (unsigned long long)s->id, (unsigned long long)s->pieces);
  if (s->route == TT_ROUTE_STAGED)
    say(j, " slots %d", s->slots);
  say(j, "; ");
  return 0;
}

static struct tt_route_view view(struct job *j, bool windowed)
{
  return (struct tt_route_view){.me = j->me, .piece = PIECE, .one_piece_copy = true,
                                .windowed = windowed, .arg = j, .rank = v_rank, .ids = v_ids,
                                .place = v_place, .cuda = v_cuda, .direct = v_direct,
                                .device_memory = v_device_memory, .stage = v_stage, .run = v_run};
}

/* The map's runs as "off+len:holders ...". */
static int show_run(void *arg, size_t off, size_t len, tt_holders h)
{
  char *buf = arg;
  size_t n = strlen(buf);
  n += (size_t)snprintf(buf + n, 256 - n, "%zu+%zu:", off, len);
  for (unsigned i = tt_holders_next(h, 0); i != UINT_MAX; i = tt_holders_next(h, i + 1))
    n += (size_t)snprintf(buf + n, 256 - n, "%u", i);
  snprintf(buf + n, 256 - n, " ");
  return 0;
}

static const char *holders(struct tt_rangemap *m, size_t size)
{
  static char buf[256];
  buf[0] = 0;
  tt_rangemap_walk(m, 0, size, show_run, buf);
  return buf;
}

#define EXPECT(got, want)                                                                         \
  do {                                                                                            \
    if (strcmp((got), (want))) {                                                                  \
      fprintf(stderr, "%s:%d: got  \"%s\"\n%*swant \"%s\"\n", __FILE__, __LINE__, (got),         \
              (int)strlen(__FILE__) + 8, "", (want));                                            \
      failures++;                                                                                 \
    }                                                                                             \
  } while (0)

/* A map of size bytes, its runs' holders (a digit each, - for none) and lengths in turn:
 * "0:100 12:50 -:30". */
static struct tt_rangemap *map_of(size_t size, unsigned ndom, const char *runs)
{
  struct tt_rangemap *m = tt_rangemap_new(size, ndom, 0);
  size_t at = 0;
  for (const char *p = runs; *p;) {
    const char *colon = strchr(p, ':');
    char *end;
    size_t len = strtoul(colon + 1, &end, 10);
    tt_rangemap_set(m, at, len, -1);
    for (const char *h = p; h < colon; h++)
      if (*h != '-')
        tt_rangemap_add(m, at, len, (unsigned)(*h - '0'));
    at += len;
    p = *end ? end + 1 : end;
  }
  return m;
}

/* One plan: job doms seen from rank me, domain dom reading [off, off+len) of a buffer of
 * size bytes whose holders are runs; the steps logged and the holders after. */
static void plan(const char *doms, int me, size_t size, const char *runs, unsigned dom,
                 size_t off, size_t len, const char *steps, const char *after)
{
  struct job j;
  job_init(&j, doms, me);
  struct tt_rangemap *m = map_of(size, (unsigned)strlen(doms), runs);
  struct tt_route_view v = view(&j, false);
  CHECK(tt_route_fetch(&v, m, off, len, dom, -1) == 0);
  EXPECT(j.log, steps);
  EXPECT(holders(m, size), after);
  tt_rangemap_free(m);
}

static void single_rank(void)
{
  /* 1 rank, 2 domains of host memory: a copy through the host. */
  plan("Hh", 0, 300, "0:300", 1, 0, 300, "local host d0->d1 0+300; ", "0+300:01 ");
  /* 1 rank, 3 domains, the range in three runs: the one dom holds is not moved. */
  plan("Hgh", 0, 300, "0:100 2:100 1:100", 1, 0, 300,
       "local host d0->d1 0+100; local host d2->d1 100+100; ", "0+100:01 100+100:12 200+100:1 ");
  /* 1 rank, 2 CUDA domains: by the copy engines. */
  plan("Cc", 0, 200, "1:200", 0, 50, 100, "local cuda d1->d0 50+100; ",
       "0+50:1 50+100:01 150+50:1 ");
  /* Bytes nobody wrote: nothing moves, the domain holds them. */
  plan("Hh", 0, 100, "-:100", 1, 0, 100, "unwritten d1->d1 0+100; ", "0+100:1 ");
}

static void two_ranks(void)
{
  /* Host memory of the backend, 250 bytes: three mapped pieces, sent from rank 0... */
  plan("HH", 0, 250, "0:250", 1, 0, 250, "mapped d0->d1 0+250 send r1 id 0 x3; ", "0+250:01 ");
  /* ...and received on rank 1, with the same ids. */
  plan("HH", 1, 250, "0:250", 1, 0, 250, "mapped d0->d1 0+250 recv r0 id 0 x3; ", "0+250:01 ");
  /* Tutti's host memory: straight from and into the buffers' memory. */
  plan("DD", 1, 250, "0:250", 1, 0, 250, "direct d0->d1 0+250 recv r0 id 0 x3; ", "0+250:01 ");
  /* One piece between host-memory domains: through a host copy. */
  plan("HH", 0, 80, "1:80", 0, 0, 80, "host copy d1->d0 0+80 recv r1 id 0 x1; ", "0+80:01 ");
  /* Device memory: five pieces through two slots of staging. */
  plan("GG", 0, 500, "0:500", 1, 0, 500, "staged d0->d1 0+500 send r1 id 0 x5 slots 2; ",
       "0+500:01 ");
  /* CUDA memory of one host on two ranks: the copy engines, one message id. */
  plan("CC", 1, 150, "0:150", 1, 0, 150, "cuda d0->d1 0+150 recv r0 id 0 x2; ", "0+150:01 ");
  /* 2 ranks x 3 domains (CPU, two GPUs): a holder on the reader's own rank is preferred to
   * a lower one elsewhere; a run only rank 0 holds comes by staging into the GPU. */
  plan("HggHgg", 1, 300, "4:100 0:100 1:100", 5, 0, 300,
       "local host d4->d5 0+100; staged d0->d5 100+100 recv r0 id 0 x1 slots 1; "
       "staged d1->d5 200+100 recv r0 id 1 x1 slots 1; ",
       "0+100:45 100+100:05 200+100:15 ");
  /* Held on both ranks: the reader's own rank's copy wins, and the other rank only notes
   * the new holder. */
  plan("HHh", 1, 100, "01:100", 2, 0, 100, "local host d1->d2 0+100; ", "0+100:012 ");
  plan("HHh", 0, 100, "01:100", 2, 0, 100, "elsewhere d1->d2 0+100; ", "0+100:012 ");
}

/* An image's rows: every step between ranks one piece through a host copy, whatever the
 * memory; within a rank through the host. */
static void images(void)
{
  struct job j;
  job_init(&j, "GgG", 1);
  struct tt_rangemap *m = map_of(1000, 3, "0:400 1:600");
  struct tt_route_view v = view(&j, false);
  v.host_copies = true;
  CHECK(tt_route_fetch(&v, m, 0, 1000, 2, -1) == 0);
  EXPECT(j.log, "host copy d0->d2 0+400 recv r0 id 0 x1; "
                "host copy d1->d2 400+600 recv r0 id 1 x1; ");
  tt_rangemap_free(m);
}

/* Staging without free slots maps the pieces; the pieces of a staged step take slots in
 * turn. */
static void staging(void)
{
  struct job j;
  job_init(&j, "GG", 1);
  j.free_slots = 0;
  struct tt_rangemap *m = map_of(300, 2, "0:300");
  struct tt_route_view v = view(&j, false);
  CHECK(tt_route_fetch(&v, m, 0, 300, 1, -1) == 0);
  EXPECT(j.log, "mapped d0->d1 0+300 recv r0 id 0 x3; ");
  tt_rangemap_free(m);

  struct tt_step s = {.route = TT_ROUTE_STAGED, .off = 1000, .len = 450, .id = 7, .pieces = 5,
                      .slots = 2};
  char got[256] = "";
  for (uint64_t i = 0; i < s.pieces; i++) {
    struct tt_piece p;
    tt_route_piece(&s, PIECE, i, &p);
    snprintf(got + strlen(got), sizeof got - strlen(got), "%zu+%zu#%llu@%d%s%s ", p.off, p.len,
             (unsigned long long)p.id, p.slot, p.after ? "a" : "", p.before ? "b" : "");
  }
  EXPECT(got, "1000+100#7@0b 1100+100#8@1b 1200+100#9@0ab 1300+100#10@1a 1400+50#11@0a ");
}

/* Three and four ranks: a rank at neither end draws no ids; ids count per pair of ranks. */
static void more_ranks(void)
{
  struct job j;
  job_init(&j, "HHH", 2);
  struct tt_rangemap *m = map_of(100, 3, "0:100");
  struct tt_route_view v = view(&j, false);
  CHECK(tt_route_fetch(&v, m, 0, 100, 1, -1) == 0);
  EXPECT(j.log, "elsewhere d0->d1 0+100; ");
  CHECK(j.out[0] + j.out[1] + j.in[0] + j.in[1] == 0);
  EXPECT(holders(m, 100), "0+100:01 ");
  tt_rangemap_free(m);

  /* Rank 0 of 4 reads runs held on ranks 1, 2 and 1 again: each pair counts its own ids. */
  job_init(&j, "HHHH", 0);
  m = map_of(400, 4, "1:150 2:100 1:150");
  v = view(&j, false);
  CHECK(tt_route_fetch(&v, m, 0, 400, 0, -1) == 0);
  EXPECT(j.log, "mapped d1->d0 0+150 recv r1 id 0 x2; host copy d2->d0 150+100 recv r2 id 0 x1; "
                "mapped d1->d0 250+150 recv r1 id 2 x2; ");
  CHECK(j.in[1] == 4 && j.in[2] == 1 && j.in[3] == 0);
  tt_rangemap_free(m);
}

/* Windows: the source's window is placed before each step, on every rank; a placement that
 * fails stops the plan there, the run not held. */
static void windows(void)
{
  struct job j;
  job_init(&j, "HgH", 0);
  struct tt_rangemap *m = map_of(300, 3, "2:100 1:200");
  struct tt_route_view v = view(&j, true);
  CHECK(tt_route_fetch(&v, m, 0, 300, 0, -1) == 0);
  EXPECT(j.log, "place d2 0+100; host copy d2->d0 0+100 recv r1 id 0 x1; place d1 100+200; "
                "local host d1->d0 100+200; ");
  tt_rangemap_free(m);

  job_init(&j, "HgH", 1);
  j.fail_place = 1;
  m = map_of(300, 3, "2:100 1:200");
  v = view(&j, true);
  CHECK(tt_route_fetch(&v, m, 0, 300, 0, -1) != 0);
  EXPECT(j.log, "place d2 0+100; host copy d2->d0 0+100 send r0 id 0 x1; place d1 100+200; ");
  EXPECT(holders(m, 300), "0+100:02 100+200:1 ");
  tt_rangemap_free(m);
}

/* An attached buffer: every byte from the attached domain, whatever the map says, which
 * stays; a copy command straight into its destination by the copy engines when its source is
 * one run. */
static void attached_and_copies(void)
{
  struct job j;
  job_init(&j, "DD", 0);
  struct tt_rangemap *m = map_of(100, 2, "1:100");
  struct tt_route_view v = view(&j, false);
  CHECK(tt_route_fetch(&v, m, 0, 100, 1, 0) == 0);
  EXPECT(j.log, "direct d0->d1 0+100 send r1 id 0 x1; ");
  EXPECT(holders(m, 100), "0+100:1 ");
  tt_rangemap_free(m);

  bool taken;
  job_init(&j, "CC", 0);
  m = map_of(200, 2, "1:200");
  v = view(&j, false);
  CHECK(tt_route_copy_into(&v, m, 0, 200, 0, &taken) == 0 && taken);
  EXPECT(j.log, "cuda d1->d0 0+200 recv r1 id 0 x2; ");
  EXPECT(holders(m, 200), "0+200:1 ");
  tt_rangemap_free(m);

  job_init(&j, "CC", 0);
  m = map_of(200, 2, "1:100 0:100");
  v = view(&j, false);
  CHECK(tt_route_copy_into(&v, m, 0, 200, 0, &taken) == 0 && !taken);
  EXPECT(j.log, "");
  tt_rangemap_free(m);
}

/* Reads reaching every rank: who receives each piece from whom and sends it on. */
static void broadcasts(void)
{
  static const struct {
    int n, owner;
    bool chain;
    const char *hops; /* each rank: from>next/sends */
  } t[] = {
      {2, 0, false, "-1>-1/1 0>-1/0 "},
      {3, 1, false, "1>-1/0 -1>-1/2 1>-1/0 "},
      {4, 2, true, "3>1/1 0>-1/0 -1>3/1 2>0/1 "},
      {4, 0, true, "-1>1/1 0>2/1 1>3/1 2>-1/0 "},
  };
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
    char got[128] = "";
    int sent_to = 0;
    for (int me = 0; me < t[i].n; me++) {
      struct tt_hop h;
      tt_route_broadcast(me, t[i].n, t[i].owner, t[i].chain, &h);
      snprintf(got + strlen(got), sizeof got - strlen(got), "%d>%d/%d ", h.from, h.next, h.sends);
      for (int r = 0; r < t[i].n; r++)
        sent_to += tt_hop_to(&h, me, r);
    }
    EXPECT(got, t[i].hops);
    CHECK(sent_to == t[i].n - 1); /* every rank but the owner receives each piece once */
  }
}

int main(void)
{
  single_rank();
  two_ranks();
  staging();
  images();
  more_ranks();
  windows();
  attached_and_copies();
  broadcasts();
  puts(failures ? "unit_route: FAILED" : "unit_route: passed");
  return failures != 0;
}
