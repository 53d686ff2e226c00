/* cl_tutti_split: one kernel launch split into parts over the devices of several queues
 * (doc/split.md; Lightning, sections 2-3), planned on every rank alike from replicated state.
 *
 * A part is an ordinary kernel command on its queue whose buffer uses are the byte ranges the
 * annotation gives for its work-groups, so the plan fetches exactly what the part lacks (a
 * halo is a range another device holds) and records exactly what it writes. Each part runs
 * with the global offset of its first work-group; kernels that ask for their group id, the
 * global size, the number of groups or the global offset run as a variant of the program
 * whose prelude answers those for the whole launch. reduce(op) parameters get one private
 * copy per part, filled with op's identity and combined into the buffer in part order. */
#include "config.h"

#include "runtime/command/split_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "annotations/annotation.h"
#include "annotations/partition.h"
#include "annotations/parts.h"
#include "runtime/job/check.h"
#include "runtime/job/turns.h"
#include "runtime/command/coherence.h"
#include "runtime/job/stats.h"
#include "runtime/memory/window.h"

/* Reads with more rows than this are fetched as their hull (never writes: a write records
 * exactly what it names). */
#define READ_RANGES_MAX 64

/* Parts following a distribution (owner computes): its chunks along axis 0, each given to
 * the queue of its device (annotations/partition.h). Returns the count, 0 when the
 * distribution does not place parts (replicated, or a device without a queue). */
static size_t parts_from_distribution(const struct tt_distribution *d, cl_uint nq,
                                      const cl_command_queue *qs, size_t G,
                                      struct tt_part **out)
{
  if (d->kind == CL_TUTTI_DIST_REPLICATED)
    return 0;
  int *queue_of = malloc(d->ndevices * sizeof *queue_of);
  if (!queue_of)
    return 0;
  for (cl_uint i = 0; i < d->ndevices; i++) {
    queue_of[i] = -1;
    for (cl_uint q = 0; q < nq && queue_of[i] < 0; q++)
      if (qs[q]->device == d->devices[i])
        queue_of[i] = (int)q;
  }
  size_t n = tt_part_distribution(d->kind == CL_TUTTI_DIST_BLOCK, d->extents[0], d->chunk[0],
                                  d->ndevices, queue_of, G, out);
  free(queue_of);
  return n;
}

/* Contiguous ranges of the G work-groups, one per queue: equal, or as the kernel's measured
 * weights say (runtime/command/balance.c; *balanced). */
static size_t parts_weighted(cl_kernel k, cl_uint nq, const cl_command_queue *qs, size_t G,
                             struct tt_part **out, bool *balanced)
{
  struct tt_part *p = calloc(nq, sizeof *p);
  size_t *bounds = calloc((size_t)nq + 1, sizeof *bounds);
  size_t n = 0;
  if (p && bounds) {
    *balanced = tt_balance_bounds(k, nq, qs, G, bounds);
    if (!*balanced)
      tt_part_equal_bounds(nq, G, bounds);
    n = tt_part_from_bounds(nq, bounds, p);
  }
  free(bounds);
  if (!n) {
    free(p);
    return 0;
  }
  *out = p;
  return n;
}

/* The integer value of scalar parameter i (0 for others). */
static int64_t param_value(const struct tt_ann_param *prm, const struct tt_kernel_arg *a)
{
  if (!prm->integer || prm->pointer || !a->value)
    return 0;
  size_t n = a->value_size;
  if (n == 1)
    return prm->is_signed ? (int64_t) * (const int8_t *)a->value : *(const uint8_t *)a->value;
  if (n == 2) {
    int16_t v;
    memcpy(&v, a->value, 2);
    return prm->is_signed ? v : (uint16_t)v;
  }
  if (n == 4) {
    int32_t v;
    memcpy(&v, a->value, 4);
    return prm->is_signed ? (int64_t)v : (int64_t)(uint32_t)v;
  }
  if (n == 8) {
    int64_t v;
    memcpy(&v, a->value, 8);
    return v;
  }
  return 0;
}

/* A local size when the program gave none: along axis 0 the largest power of two up to 64
 * that divides the global size and every device and the kernel allow; 1 elsewhere. */
static void choose_local(cl_kernel k, cl_uint nq, const cl_command_queue *qs,
                         const size_t *gws, size_t *lws)
{
  size_t limit = 64;
  for (cl_uint q = 0; q < nq; q++) {
    size_t items[3] = {0}, wg = 0;
    tt_cluster_device_query(qs[q]->device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, NULL);
    tt_cluster_device_query(qs[q]->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    const struct tt_kernel_device *kd = &k->dev[qs[q]->device->index];
    if (items[0] && items[0] < limit)
      limit = items[0];
    if (wg && wg < limit)
      limit = wg;
    if (kd->known && kd->wg_size && kd->wg_size < limit)
      limit = kd->wg_size;
  }
  size_t l = 1;
  while (l * 2 <= limit && gws[0] % (l * 2) == 0)
    l *= 2;
  lws[0] = l;
  for (cl_uint d = 1; d < 3; d++)
    lws[d] = 1;
}

/* --- what each part uses -------------------------------------------------------------------- */

static int use_add(struct uses *s, cl_mem m, size_t off, size_t len, bool reads, bool writes)
{
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    struct tt_launch_use *u = realloc(s->u, cap * sizeof *u);
    if (!u)
      return -1;
    s->u = u;
    s->cap = cap;
  }
  s->u[s->n++] = (struct tt_launch_use){m, off, len, reads, writes};
  return 0;
}


/* Frees what plan_parts made for s's parts (their uses and reduce ranges). */
static void uses_free(struct split *s)
{
  for (size_t p = 0; s->uses && p < s->nparts; p++)
    free(s->uses[p].u);
  for (size_t i = 0; s->reduce && i < s->nparts * s->nrules; i++)
    tt_ann_ranges_free(&s->reduce[i]);
  free(s->uses);
  free(s->reduce);
  s->uses = NULL;
  s->reduce = NULL;
}

static void split_free(struct split *s)
{
  if (s->memo)
    return;
  uses_free(s);
  free(s->parts);
  free(s->given);
}

/* Plans the parts' uses (caller holds k's lock). Returns 0, or -1 with s->why set when the
 * launch must run whole, or -2 without memory. */
static int plan_parts(struct split *s, const struct tt_ann_launch *l)
{
  cl_kernel k = s->k;
  s->nrules = tt_ann_nrules(s->ann);
  s->uses = calloc(s->nparts, sizeof *s->uses);
  s->reduce = calloc(s->nparts * s->nrules + 1, sizeof *s->reduce);
  /* The buffer arguments as annotations/parts.h sees them, and each one's cl_mem. */
  struct tt_part_buffer *b = calloc(k->nargs + 1, sizeof *b);
  cl_mem *mem = calloc(k->nargs + 1, sizeof *mem);
  struct tt_part_use **pu = calloc(s->nparts, sizeof *pu);
  size_t *npu = calloc(s->nparts, sizeof *npu), nb = 0;
  int rc = s->uses && s->reduce && b && mem && pu && npu ? 0 : -2;
  for (cl_uint i = 0; i < k->nargs && !rc; i++) {
    const struct tt_kernel_arg *arg = &k->args[i];
    if (arg->kind != TT_ARG_MEM || !arg->mem)
      continue;
    cl_mem m = arg->mem;
    mem[nb] = m;
    b[nb++] = (struct tt_part_buffer){i, m->size, !arg->is_const && !(m->flags & CL_MEM_READ_ONLY),
                                      m->root->obj.id, m->origin};
  }
  if (!rc)
    rc = tt_parts_uses(s->ann, l, s->parts, s->nparts, b, nb, READ_RANGES_MAX, pu, npu,
                       s->reduce, s->why, sizeof s->why);
  for (size_t p = 0; p < s->nparts && !rc; p++)
    for (size_t j = 0; j < npu[p] && !rc; j++) {
      const struct tt_part_use *u = &pu[p][j];
      rc = use_add(&s->uses[p], mem[u->buffer], u->off, u->len, u->reads, u->writes) ? -2 : 0;
    }
  /* Images it only reads: whole, by every part. */
  for (cl_uint i = 0; i < k->nargs && !rc; i++) {
    cl_mem img = k->args[i].kind == TT_ARG_IMAGE ? k->args[i].mem : NULL;
    for (size_t p = 0; img && p < s->nparts && !rc; p++)
      rc = use_add(&s->uses[p], img, 0, img->size, true, false) ? -2 : 0;
  }
  for (size_t p = 0; pu && p < s->nparts; p++)
    free(pu[p]);
  free(pu);
  free(npu);
  free(b);
  free(mem);
  return rc;
}

/* --- edges first ----------------------------------------------------------------------------- */

/* A stencil's parts read bytes that the parts beside them read too: their halos, which its
 * next launch fetches from the device that wrote them once that device's part is complete.
 * Running a part's edge work-groups before its interior, as parts of their own, lets those
 * bytes travel while the interior runs (TUTTI_EDGES_FIRST, split.md "Edges first"). */

/* The byte ranges of m that uses u read (*n of them; NULL with *n 0 when none or out of
 * memory: no halo then). */
static struct tt_part_range *reads_of(const struct uses *u, cl_mem m, size_t *n)
{
  struct tt_part_range *r = malloc((u->n ? u->n : 1) * sizeof *r);
  *n = 0;
  for (size_t i = 0; r && i < u->n; i++)
    if (u->u[i].mem == m && u->u[i].reads)
      r[(*n)++] = (struct tt_part_range){u->u[i].off, u->u[i].len};
  return r;
}

/* Work-groups at the edge of part p that part p + 1 (beside it, on another memory domain)
 * reads: half of what both read, in p's work-groups of reading; 0 when they share nothing. */
static size_t edge_groups(const struct split *s, const cl_command_queue *qs, size_t p)
{
  const struct tt_part *a = &s->parts[p], *b = &s->parts[p + 1];
  if (a->g1 != b->g0 || qs[a->queue]->domain == qs[b->queue]->domain)
    return 0;
  size_t e = 0;
  for (size_t i = 0; i < s->uses[p].n; i++) {
    cl_mem m = s->uses[p].u[i].mem;
    size_t na, nb, len = 0;
    struct tt_part_range *ra = reads_of(&s->uses[p], m, &na);
    struct tt_part_range *rb = reads_of(&s->uses[p + 1], m, &nb);
    size_t both = ra && rb ? tt_part_shared_reads(ra, na, rb, nb, m->size, &len) : 0;
    free(ra);
    free(rb);
    size_t g = tt_part_edge_width(both, len, a->g1 - a->g0);
    e = g > e ? g : e;
  }
  return e;
}

/* Replaces s's parts (planned) by their edges, then their interiors, each part an edge's
 * width from a neighbour split in two or three, and plans those. Returns plan_parts' value;
 * s is unchanged where no part has a halo. */
static int edges_first(struct split *s, const struct tt_ann_launch *l, const cl_command_queue *qs)
{
  size_t n = s->nparts, *edge = calloc(n, sizeof *edge);
  struct tt_part *np = calloc(3 * n, sizeof *np);
  if (!edge || !np) {
    free(edge);
    free(np);
    return -2;
  }
  for (size_t p = 0; p + 1 < n; p++)
    edge[p] = edge_groups(s, qs, p);
  size_t m = tt_part_edges_first(s->parts, n, edge, np);
  free(edge);
  if (!m) {
    free(np);
    return 0;
  }
  /* The plan again, for the new parts; the given ones kept for the memo's comparison. */
  uses_free(s);
  s->given = s->parts;
  s->ngiven = n;
  s->parts = np;
  s->nparts = m;
  return plan_parts(s, l);
}

/* --- the plan of the last launch, kept -------------------------------------------------------- */

/* A kernel launched again and again alike (a solver's iterations, the same arguments, the
 * same parts) gets the same plan: the last one is kept with what it was planned from and
 * taken again when all of that is equal (caller holds the kernel's lock). */
struct tt_split_memo {
  bool busy;  /* a launch is using it (run_parts runs outside the kernel's lock) */
  bool stale; /* dropped while busy: freed when that launch ends */
  struct tt_ann_launch l;
  int64_t *values;  /* nparams */
  uint64_t *ids;    /* nargs: each argument's buffer id, or 0 */
  struct split s;   /* parts, uses, reduce ranges */
  size_t *nuses;    /* per part: its uses as planned (run_parts appends reduction copies) */
};

static void memo_free(struct tt_split_memo *m)
{
  if (!m)
    return;
  m->s.memo = NULL;
  split_free(&m->s);
  free(m->values);
  free(m->ids);
  free(m->nuses);
  free(m);
}

/* What split launches keep for k, dropped when k goes (runtime/program/annotate.c). */
static void drop_split_state(cl_kernel k)
{
  tt_split_memo_drop(k);
  tt_balance_kernel_free(k);
}

/* Drops k's memo (its annotation changed, it is released). */
void tt_split_memo_drop(cl_kernel k)
{
  struct tt_split_memo *m = k->split_memo;
  k->split_memo = NULL;
  if (m && m->busy)
    m->stale = true;
  else
    memo_free(m);
}

static uint64_t arg_id(const struct tt_kernel_arg *a)
{
  return a->kind == TT_ARG_MEM && a->mem ? a->mem->obj.id : 0;
}

/* Takes k's memo for s when it was planned from the same launch, parameter values, buffers
 * and parts (s->parts: this launch's, given up for the memo's); a new annotation dropped any
 * memo (memo_drop). */
static bool memo_take(cl_kernel k, struct split *s, const struct tt_ann_launch *l)
{
  struct tt_split_memo *m = k->split_memo;
  if (!m || m->busy || !tt_ann_launch_equal(&m->l, l, k->nparams > 0 ? (size_t)k->nparams : 0))
    return false;
  /* The parts as given, before their edges went first. */
  const struct tt_part *given = m->s.given ? m->s.given : m->s.parts;
  if ((m->s.given ? m->s.ngiven : m->s.nparts) != s->nparts ||
      !tt_part_equal(given, s->parts, s->nparts))
    return false;
  for (cl_uint i = 0; i < k->nargs; i++)
    if (m->ids[i] != arg_id(&k->args[i]))
      return false;
  free(s->parts);
  s->parts = m->s.parts;
  s->nparts = m->s.nparts;
  s->given = m->s.given;
  s->ngiven = m->s.ngiven;
  s->uses = m->s.uses;
  s->reduce = m->s.reduce;
  s->nrules = m->s.nrules;
  s->ann = m->s.ann;
  s->memo = m;
  m->busy = true;
  return true;
}

/* Keeps s, planned from l, as k's memo (values: taken), unless a launch is using the one
 * there. Without memory s stays the launch's own. */
static void memo_keep(cl_kernel k, struct split *s, const struct tt_ann_launch *l, int64_t *values)
{
  if (k->split_memo && k->split_memo->busy) {
    free(values);
    return;
  }
  struct tt_split_memo *m = calloc(1, sizeof *m);
  uint64_t *ids = calloc(k->nargs + 1, sizeof *ids);
  size_t *nuses = calloc(s->nparts + 1, sizeof *nuses);
  if (!m || !ids || !nuses) {
    free(m);
    free(ids);
    free(nuses);
    free(values);
    return;
  }
  tt_split_memo_drop(k);
  for (cl_uint i = 0; i < k->nargs; i++)
    ids[i] = arg_id(&k->args[i]);
  for (size_t p = 0; p < s->nparts; p++)
    nuses[p] = s->uses[p].n;
  *m = (struct tt_split_memo){.busy = true, .l = *l, .values = values, .ids = ids, .s = *s,
                              .nuses = nuses};
  m->l.values = values;
  s->memo = m;
  k->split_memo = m;
}

/* The launch is done with s: a memo's uses back as planned, and free for the next launch. */
static void memo_done(cl_kernel k, struct split *s)
{
  struct tt_split_memo *m = s->memo;
  if (!m)
    return;
  pthread_mutex_lock(&k->obj.lock);
  for (size_t p = 0; p < m->s.nparts; p++)
    m->s.uses[p].n = m->nuses[p];
  m->busy = false;
  if (m->stale)
    memo_free(m);
  pthread_mutex_unlock(&k->obj.lock);
}

/* Sets argument i of kernel `to` as k's argument i is set. */
static cl_int copy_arg(cl_kernel k, cl_kernel to, cl_uint i)
{
  const struct tt_kernel_arg *a = &k->args[i];
  switch (a->kind) {
  case TT_ARG_MEM:
  case TT_ARG_IMAGE:
    return tt_kernel_arg_set(to, i, sizeof(cl_mem), &a->mem);
  case TT_ARG_LOCAL:
    return tt_kernel_arg_set(to, i, a->local, NULL);
  default:
    return tt_kernel_arg_set(to, i, a->value_size, a->value);
  }
}

/* --- the launch ----------------------------------------------------------------------------- */

/* The kernel the parts run (k, or its variant for the launch shape) with its arguments set, and
 * the parameters taking windows that start inside their buffers (*rebase, rb: each one's
 * offset argument, set per part once its window is known by tt_cmd_launch). */
static cl_int part_kernel(struct split *s, cl_uint dim, const size_t *off3, const size_t *gws3,
                          const size_t *lws3, bool whole, cl_kernel *run, struct tt_rebase *rb,
                          uint64_t *rebase)
{
  cl_kernel k = s->k;
  /* Windowed buffers of built-in element types take windows of what each part uses (the
   * others, whole ones). */
  for (cl_uint i = 0; i < k->nargs && i < 64 && !whole; i++) {
    const struct tt_kernel_arg *a = &k->args[i];
    uint32_t es = k->params[i].size;
    if (a->kind == TT_ARG_MEM && a->mem && tt_windowed(a->mem) && k->params[i].pointer &&
        es && es <= 128 && !(es & (es - 1)) && tt_ann_reduce_rule(s->ann, i) == SIZE_MAX)
      *rebase |= (uint64_t)1 << i;
  }
  bool prelude = !whole && tt_split_whole_builtins(k->program->stripped);
  cl_int err = tt_split_variant(k, dim, off3, gws3, lws3, prelude, rebase, run);
  for (cl_uint i = 0; i < k->nargs && err == CL_SUCCESS && *run != k; i++)
    err = copy_arg(k, *run, i);
  cl_uint extra = k->nargs;
  for (cl_uint i = 0; i < k->nargs && i < 64 && err == CL_SUCCESS; i++)
    if (*rebase >> i & 1) {
      cl_ulong zero = 0;
      rb[i] = (struct tt_rebase){extra, k->params[i].size};
      err = tt_kernel_arg_set(*run, extra++, sizeof zero, &zero);
    }
  return err;
}

/* Part p's private copies of the reduced and merged parameters (reductions filled with the
 * operator's identity, merges copied from their twin), set as run's arguments and added to
 * the part's uses; one part alone (single) uses the buffers themselves. */
static cl_int part_copies(struct split *s, size_t p, cl_command_queue q, cl_kernel run,
                          bool single, cl_mem *own, cl_mem *twins, cl_mem *partials)
{
  cl_kernel k = s->k;
  cl_int err = CL_SUCCESS;
  for (size_t r = 0; r < s->nrules && err == CL_SUCCESS; r++) {
    struct tt_ann_rule_info ri = tt_ann_rule(s->ann, r);
    const struct tt_ann_ranges *rg = &s->reduce[p * s->nrules + r];
    if (ri.mode < TT_ANN_REDUCE)
      continue;
    if (single) {
      for (size_t j = 0; j < rg->n && err == CL_SUCCESS; j++)
        if (use_add(&s->uses[p], own[r], rg->r[j].off, rg->r[j].len, true, true))
          err = CL_OUT_OF_HOST_MEMORY;
      continue;
    }
    size_t end = rg->n ? rg->r[rg->n - 1].off + rg->r[rg->n - 1].len : 0;
    cl_mem m = tt_split_private_copy(k->context, end, &err);
    partials[p * s->nrules + r] = m;
    if (ri.mode == TT_ANN_REDUCE) {
      unsigned char pattern[8];
      tt_split_identity(&k->params[ri.param], ri.op, pattern);
      for (size_t j = 0; j < rg->n && err == CL_SUCCESS; j++)
        err = tt_cmd_fill(q, m, pattern, k->params[ri.param].size, rg->r[j].off, rg->r[j].len,
                          0, NULL, NULL);
    } else {
      /* The part starts from the buffer's bytes, as the whole launch would: the twin's. */
      for (size_t j = 0; j < rg->n && err == CL_SUCCESS; j++)
        err = tt_cmd_copy(q, twins[r], m, rg->r[j].off, rg->r[j].off, rg->r[j].len, 0, NULL,
                          NULL);
    }
    if (err == CL_SUCCESS)
      err = tt_kernel_arg_set(run, ri.param, sizeof m, &m);
    if (err == CL_SUCCESS && use_add(&s->uses[p], m, 0, end ? end : 1, true, true))
      err = CL_OUT_OF_HOST_MEMORY;
  }
  return err;
}

/* Every part's reads first: a device then sends the halos and inputs others need before its
 * own part is queued behind them (a CPU device runs one command at a time). Only the first
 * part of each memory domain: the others' bytes come with their launches, so that parts of one
 * device past its budget do not fetch chunks that the next part's evict before their launch. */
static cl_int fetch_first(struct split *s, const cl_command_queue *qs)
{
  cl_int err = CL_SUCCESS;
  bool *fetched = calloc(s->k->context->ndomains, sizeof *fetched);
  for (size_t p = 0; p < s->nparts && err == CL_SUCCESS; p++) {
    cl_command_queue q = qs[s->parts[p].queue];
    if (fetched && fetched[q->domain])
      continue;
    if (fetched)
      fetched[q->domain] = true;
    err = tt_cmd_fetch(q, s->uses[p].u, s->uses[p].n);
  }
  free(fetched);
  return err;
}

/* Runs the parts, then combines the reductions; the events of what was enqueued go to evs.
 * chosen: lws is Tutti's choice, the program gave none. */
static cl_int run_parts(struct split *s, const cl_command_queue *qs, cl_uint dim,
                        const size_t *off, const size_t *gws, const size_t *lws, bool chosen,
                        cl_uint nwait,
                        const cl_event *wait, cl_event *evs, size_t *nevs)
{
  cl_kernel k = s->k;
  cl_kernel run = k;
  bool whole = s->nparts == 1 && s->parts[0].g0 == 0 &&
               s->parts[0].g1 * lws[dim - 1] == gws[dim - 1];
  size_t off3[3] = {0, 0, 0}, gws3[3] = {1, 1, 1}, lws3[3] = {1, 1, 1};
  for (cl_uint d = 0; d < dim; d++) {
    off3[d] = off ? off[d] : 0;
    gws3[d] = gws[d];
    lws3[d] = lws[d];
  }
  struct tt_rebase rb[64] = {{0, 0}};
  uint64_t rebase = 0;
  cl_int err = part_kernel(s, dim, off3, gws3, lws3, whole, &run, rb, &rebase);
  /* Private copies of the reduced and merged parameters, one per part; the program's own
   * buffers, to set back and to combine into (run may be k itself). One part alone works on
   * the buffer itself when that gives the same: a merge of one part is what it writes, and
   * op(old, part) what atomics accumulating into old give. */
  bool single = s->nparts == 1;
  for (size_t r = 0; r < s->nrules && single; r++) {
    struct tt_ann_rule_info ri = tt_ann_rule(s->ann, r);
    if (ri.mode == TT_ANN_REDUCE && (ri.param >= 64 || !(k->accumulated >> ri.param & 1)))
      single = false;
  }
  cl_mem *partials = calloc(s->nparts * s->nrules + 1, sizeof *partials);
  cl_mem *own = calloc(s->nrules + 1, sizeof *own);
  cl_mem *twins = calloc(s->nrules + 1, sizeof *twins);
  if (!partials || !own || !twins) {
    free(partials);
    free(own);
    free(twins);
    TT_RETURN_IF(1, CL_OUT_OF_HOST_MEMORY);
  }
  for (size_t r = 0; r < s->nrules; r++)
    own[r] = k->args[tt_ann_rule(s->ann, r).param].mem;
  if (err == CL_SUCCESS && s->nparts > 1)
    err = fetch_first(s, qs);
  /* A merged buffer's twin: its bytes before the launch, on the first queue's device, taken
   * before any part runs (the parts write copies; the merges after them, the buffer). */
  for (size_t r = 0; r < s->nrules && err == CL_SUCCESS && !single; r++)
    if (tt_ann_rule(s->ann, r).mode == TT_ANN_MERGE)
      err = tt_split_merge_twin(s, r, qs[0], own[r], &twins[r]);
  for (size_t p = 0; p < s->nparts && err == CL_SUCCESS; p++) {
    cl_command_queue q = qs[s->parts[p].queue];
    err = part_copies(s, p, q, run, single, own, twins, partials);
    size_t poff[3], pgws[3];
    memcpy(poff, off3, sizeof poff);
    memcpy(pgws, gws3, sizeof pgws);
    poff[dim - 1] += s->parts[p].g0 * lws3[dim - 1];
    pgws[dim - 1] = (s->parts[p].g1 - s->parts[p].g0) * lws3[dim - 1];
    if (err == CL_SUCCESS) {
      if (q->device->actual) {
        struct tt_stats_device *st = tt_stats_device(q->device->index);
        size_t groups = 1;
        for (cl_uint d = 0; d < dim; d++)
          groups *= pgws[d] / lws3[d];
        atomic_fetch_add_explicit(&st->parts, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&st->groups, groups, memory_order_relaxed);
      }
      /* The next part on this part's memory domain: its windows come back while this runs. */
      size_t nx = p + 1;
      while (nx < s->nparts && qs[s->parts[nx].queue]->domain != q->domain)
        nx++;
      const struct uses *next = nx < s->nparts ? &s->uses[nx] : NULL;
      /* Where the program gave no work-group shape, each part gets none either (the backend
       * chooses, and may take groups of uneven sizes) unless the parts answer the whole
       * launch's group ids (the variant's prelude counts in Tutti's groups). */
      bool native_local = chosen && (whole || run == k);
      err = tt_cmd_launch(q, run, dim, poff, pgws, native_local ? NULL : lws3, s->uses[p].u,
                          s->uses[p].n, true, rebase ? rb : NULL, next ? next->u : NULL,
                          next ? next->n : 0, nwait, wait, evs ? &evs[(*nevs)++] : NULL);
    }
  }
  /* Arguments back as the program set them. */
  for (size_t r = 0; r < s->nrules && err == CL_SUCCESS && !single; r++)
    if (tt_ann_rule(s->ann, r).mode >= TT_ANN_REDUCE)
      err = tt_kernel_arg_set(run, tt_ann_rule(s->ann, r).param, sizeof own[r], &own[r]);
  /* dst = op(dst, part 0, part 1, ...), or the bytes each part changed, on the first queue, in
   * part order. */
  for (size_t r = 0; r < s->nrules && err == CL_SUCCESS && !single; r++)
    if (tt_ann_rule(s->ann, r).mode >= TT_ANN_REDUCE)
      err = tt_split_combine(s, r, qs[0], own[r], twins[r], partials, evs, nevs);
  for (size_t i = 0; i < s->nparts * s->nrules; i++)
    if (partials[i])
      TT_RELEASE(partials[i]);
  for (size_t r = 0; r < s->nrules; r++)
    if (twins[r])
      TT_RELEASE(twins[r]);
  free(partials);
  free(own);
  free(twins);
  return err;
}

/* The split entry point's own checks, before anything is planned. */
cl_int tt_split_check(cl_uint nq, const cl_command_queue *qs, cl_kernel kernel,
                          cl_uint nwait, const cl_event *wait)
{
  /* CL_INVALID_VALUE if num_queues is 0 or queues is NULL. */
  TT_RETURN_IF(nq == 0 || qs == NULL, CL_INVALID_VALUE);
  /* CL_INVALID_COMMAND_QUEUE if a queue is not a valid command-queue. */
  for (cl_uint i = 0; i < nq; i++)
    TT_RETURN_IF(!tt_object_valid(qs[i], TT_QUEUE), CL_INVALID_COMMAND_QUEUE);
  /* CL_INVALID_CONTEXT if the queues are not all of one context. */
  for (cl_uint i = 1; i < nq; i++)
    TT_RETURN_IF(qs[i]->context != qs[0]->context, CL_INVALID_CONTEXT);
  /* CL_INVALID_KERNEL if kernel is not a valid kernel object. */
  TT_RETURN_IF(!tt_object_valid(kernel, TT_KERNEL), CL_INVALID_KERNEL);
  /* The wait list, as clEnqueueNDRangeKernel checks it, before any part is planned. */
  return tt_order_check_wait_list(qs[0]->context, nwait, wait);
}

/* The launch measured for balancing: each queue's largest part (its interior when its edges
 * went first) and that part's event. */
static void measure_parts(const struct split *s, cl_uint nq, cl_event *evs)
{
  size_t groups[nq];
  cl_event times[nq];
  memset(groups, 0, sizeof groups);
  for (size_t p = 0; p < s->nparts; p++)
    if (s->parts[p].g1 - s->parts[p].g0 > groups[s->parts[p].queue]) {
      groups[s->parts[p].queue] = s->parts[p].g1 - s->parts[p].g0;
      times[s->parts[p].queue] = evs[p];
    }
  tt_balance_measure(s->k, groups, times);
}

/* One event for the launch, complete when its last part (and combination) is: the part's own
 * when it had one, else a marker on q0 whose profiling times span theirs (*evs then belongs
 * to the event). */
static cl_int launch_event(cl_command_queue q0, cl_event **evs, size_t *nevs, cl_event *event)
{
  if (*nevs == 1) {
    *event = (*evs)[0];
    (*evs)[0] = NULL;
    return CL_SUCCESS;
  }
  cl_int err = tt_cmd_marker(q0, (cl_uint)*nevs, *evs, event);
  if (err == CL_SUCCESS) {
    (*event)->span = *evs;
    (*event)->nspan = (cl_uint)*nevs;
    *evs = NULL;
    *nevs = 0;
  }
  return err;
}

/* Plans launch (dim, goff, gws, lws) of s's kernel over queues qs (its lock held): the parts
 * (a distribution's, else weighted, *balanced when by measured weights; *measure: this
 * launch's part times are to be measured), each part's uses (the kept plan when the launch is
 * alike). Returns 0, -1 with s->why when it must run whole, -2 without memory. */
static int plan_launch(struct split *s, cl_uint nq, const cl_command_queue *qs, cl_uint dim,
                       const size_t *goff, const size_t *gws, const size_t *lws, bool *balanced,
                       bool *measure)
{
  cl_kernel k = s->k;
  size_t G = gws[dim - 1] / lws[dim - 1];
  int rc;
  s->ann = k->ann;
  /* Every part reads an image whole; a kernel that writes one runs whole (doc/split.md). */
  for (cl_uint i = 0; i < k->nargs; i++)
    if (k->args[i].kind == TT_ARG_IMAGE && !k->args[i].is_const) {
      snprintf(s->why, sizeof s->why, "argument %u is an image it may write", i);
      return -1;
    }
  /* Parts follow the distribution of the first written parameter that has one. */
  for (size_t r = 0; r < tt_ann_nrules(s->ann) && !s->parts; r++) {
    struct tt_ann_rule_info ri = tt_ann_rule(s->ann, r);
    cl_mem m = k->args[ri.param].mem;
    if ((ri.mode & TT_ANN_WRITE) && m && m->root->dist)
      s->nparts = parts_from_distribution(m->root->dist, nq, qs, G, &s->parts);
  }
  if (!s->parts) {
    s->nparts = parts_weighted(k, nq, qs, G, &s->parts, balanced);
    /* Measured: one part on each queue (queues of one device count alike), one launch of
     * the kernel at a time. Only that launch takes events of its parts: each costs a native
     * event and, for other ranks' parts, their statuses. */
    *measure = nq > 1 && s->nparts == nq && tt_balance_on(k->context) &&
               tt_balance_wants(k, nq, qs);
  }
  int64_t *values = calloc((size_t)k->nparams + 1, sizeof *values);
  for (long i = 0; values && i < k->nparams; i++)
    values[i] = param_value(&k->params[i], &k->args[i]);
  struct tt_ann_launch l = {dim, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, values};
  for (cl_uint d = 0; d < dim; d++) {
    l.offset[d] = goff ? goff[d] : 0;
    l.global[d] = gws[d];
    l.local[d] = lws[d];
  }
  if (!s->parts || !values)
    rc = -2;
  else if (memo_take(k, s, &l))
    rc = 0;
  else {
    rc = plan_parts(s, &l);
    if (rc == -1 && k->ann_merged) {
      /* Derived write regions that overlap at this launch: every written buffer merged. */
      uses_free(s);
      s->ann = k->ann_merged;
      rc = plan_parts(s, &l);
    }
    bool reduces = false;
    for (size_t r = 0; r < s->nrules; r++)
      reduces |= tt_ann_rule(s->ann, r).mode >= TT_ANN_REDUCE;
    if (rc == 0 && s->nparts > 1 && !reduces && tt_env()->edges_first)
      rc = edges_first(s, &l, qs);
  }
  if (rc == 0 && !s->memo) {
    memo_keep(k, s, &l, values);
    values = NULL;
  }
  free(values);
  return rc;
}

cl_int tt_split_enqueue(cl_uint num_queues, const cl_command_queue *queues, cl_kernel kernel,
                        cl_uint work_dim, const size_t *global_work_offset,
                        const size_t *global_work_size, const size_t *local_work_size,
                        cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                        cl_event *event)
{
  cl_int err = tt_split_check(num_queues, queues, kernel, num_events_in_wait_list, event_wait_list);
  if (err != CL_SUCCESS)
    return err;
  /* Everything clEnqueueNDRangeKernel checks, for every queue. */
  for (cl_uint i = 0; i < num_queues; i++) {
    err = tt_enqueue_check_launch(queues[i], kernel, work_dim, global_work_offset,
                                  global_work_size, local_work_size);
    if (err != CL_SUCCESS)
      return err;
  }
  TT_TURN_CHECK(tt_check_ids(queues, num_queues), kernel->obj.id, work_dim,
           tt_check_bytes(global_work_size, work_dim * sizeof(size_t)),
           tt_check_bytes(global_work_offset, global_work_offset ? work_dim * sizeof(size_t) : 0),
           tt_check_bytes(local_work_size, local_work_size ? work_dim * sizeof(size_t) : 0),
           num_events_in_wait_list, event != NULL);
  /* A kernel without annotation: one derived from its code (TUTTI_AUTO_SPLIT). */
  tt_split_kernel_derive(kernel);
  size_t lws[3] = {1, 1, 1};
  if (local_work_size)
    memcpy(lws, local_work_size, work_dim * sizeof *lws);
  else
    choose_local(kernel, num_queues, queues, global_work_size, lws);
  struct split s = {.k = kernel, .ann = kernel->ann};
  bool balanced = false, measure = false;
  pthread_mutex_lock(&kernel->obj.lock);
  /* What this file and runtime/command/balance.c keep for the kernel goes with it. */
  kernel->drop_split_state = drop_split_state;
  int rc = -1;
  if (!kernel->ann && kernel->nparams < 0)
    snprintf(s.why, sizeof s.why, "its program has no source (built from binaries)");
  else if (!kernel->ann)
    snprintf(s.why, sizeof s.why, "it has no annotation");
  else
    rc = plan_launch(&s, num_queues, queues, work_dim, global_work_offset, global_work_size, lws,
                     &balanced, &measure);
  bool warn = rc == -1 && num_queues > 1 && !kernel->warned_whole;
  if (warn)
    kernel->warned_whole = true;
  /* TUTTI_STATS: each launch of a kernel split without a written annotation, by tier. */
  if (kernel->derived || (kernel->auto_tried && !kernel->ann))
    tt_stats_split_launch(kernel->name,
                          rc == -1 ? 0 : s.ann == kernel->ann_merged ? 2 : kernel->tier);
  pthread_mutex_unlock(&kernel->obj.lock);
  if (rc == -2) {
    split_free(&s);
    TT_RETURN_IF(1, CL_OUT_OF_HOST_MEMORY);
  }
  if (rc == -1) {
    /* One whole launch on the first queue, as the program gave it. */
    if (warn)
      TT_WARN("kernel '%s' runs whole on its first queue: %s", kernel->name, s.why);
    split_free(&s);
    return tt_cmd_launch(queues[0], kernel, work_dim, global_work_offset, global_work_size,
                             local_work_size, NULL, 0, false, NULL, NULL, 0, num_events_in_wait_list,
                             event_wait_list, event);
  }
  size_t most = s.nparts + 1, nevs = 0;
  for (size_t i = 0; i < s.nparts * s.nrules; i++)
    most += s.reduce[i].n;
  /* Every rank plans the same parts and measures the same launches (TUTTI_BALANCE alike). */
  if (tt_check_active) {
    uint64_t v[3] = {kernel->obj.id, measure,
                     balanced || s.given ? tt_check_bytes(s.parts, s.nparts * sizeof *s.parts) : 0};
    tt_check_call("split parts", 0, v, 3);
  }
  /* The parts' events: for the program's event, and for measuring the parts' times. */
  cl_event *evs = event || measure ? calloc(most, sizeof *evs) : NULL;
  if ((event || measure) && !evs)
    err = CL_OUT_OF_HOST_MEMORY;
  else
    err = run_parts(&s, queues, work_dim, global_work_offset, global_work_size, lws,
                    local_work_size == NULL,
                    num_events_in_wait_list, event_wait_list, evs, &nevs);
  if (err == CL_SUCCESS && measure)
    measure_parts(&s, num_queues, evs);
  if (err == CL_SUCCESS && event)
    err = launch_event(queues[0], &evs, &nevs, event);
  for (size_t i = 0; evs && i < nevs; i++)
    if (evs[i])
      TT_RELEASE(evs[i]);
  free(evs);
  memo_done(kernel, &s);
  split_free(&s);
  return err;
}
