/* Annotations derived from kernels' code (annotations/derive.h).
 *
 * Each kernel's body is walked once, in order, as clang's front end parsed it, evaluating
 * integer expressions symbolically: a value is an affine form (terms of an integer times
 * scalar parameters or launch values, times at most one variable: a work-item id or a loop's
 * counter), a pointer into a buffer parameter with such an offset, or unknown (data). Every
 * load and store through a buffer parameter is recorded with its index; helper functions the
 * source defines are walked at their calls, with their arguments. The accesses become the
 * rules of an annotation, in the language a `#pragma tutti` is written in
 * (annotations/annotation.h), so that derived and written rules go through one planner. */
#include "config.h"

#include "annotations/derive_impl.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the annotation -------------------------------------------------------------------------- */

struct text {
  char *s;
  size_t n, cap;
  bool oom;
};

static void put(struct text *t, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || t->oom)
    return;
  if (t->n + (size_t)n + 1 > t->cap) {
    size_t cap = (t->cap + (size_t)n + 1) * 2;
    char *s = realloc(t->s, cap);
    if (!s) {
      t->oom = true;
      return;
    }
    t->s = s;
    t->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
  va_end(ap);
  t->n += (size_t)n;
}

static void atom_name(const struct an *a, int i, char *buf, size_t cap)
{
  unsigned x = a->atoms[i].index;
  static const char axis[] = "012";
  switch (a->atoms[i].kind) {
  case A_PARAM:
    snprintf(buf, cap, "%s", a->params[x].name);
    break;
  case A_LAUNCH:
    snprintf(buf, cap, "%s(%c)", dv_launch_fns[x / 3], axis[x % 3]);
    break;
  case A_GID:
    snprintf(buf, cap, "_g%u", x);
    break;
  case A_GRP:
    snprintf(buf, cap, "_w%u", x);
    break;
  case A_LID:
    snprintf(buf, cap, "_l%u", x);
    break;
  case A_LOOP:
    snprintf(buf, cap, "_t%u", x);
    break;
  }
}

static void put_sym(struct text *t, const struct an *a, struct sym s, int64_t add)
{
  bool first = true;
  for (int i = 0; i < s.n; i++) {
    const struct term *x = &s.t[i];
    int64_t c = x->c;
    bool factors = x->nf || x->v >= 0;
    if (!factors) {
      add += c;
      continue;
    }
    put(t, first ? (c < 0 ? "-" : "") : c < 0 ? " - " : " + ");
    first = false;
    if (c != 1 && c != -1)
      put(t, "%" PRId64 "*", c < 0 ? -c : c);
    for (int f = 0; f < x->nf; f++) {
      char n[64];
      atom_name(a, x->f[f], n, sizeof n);
      put(t, "%s%s", n, f + 1 < x->nf || x->v >= 0 ? "*" : "");
    }
    if (x->v >= 0) {
      char n[64];
      atom_name(a, x->v, n, sizeof n);
      put(t, "%s", n);
    }
  }
  if (first)
    put(t, "%" PRId64, add);
  else if (add)
    put(t, " %c %" PRId64, add < 0 ? '-' : '+', add < 0 ? -add : add);
}

/* Whether a write of `width` elements at idx covers every element of the hull of its values
 * over a part: one global id with coefficient width, or (width 1) a group id times the local
 * size plus the local id. */
static bool dense(const struct an *a, struct sym idx, int64_t width)
{
  int vars = 0, gid = -1, grp = -1, lid = -1;
  for (int i = 0; i < idx.n; i++) {
    const struct term *x = &idx.t[i];
    if (x->v < 0)
      continue;
    vars++;
    unsigned axis = a->atoms[x->v].index;
    if (a->atoms[x->v].kind == A_GID && x->c == width && !x->nf)
      gid = (int)axis;
    else if (a->atoms[x->v].kind == A_LID && x->c == 1 && !x->nf)
      lid = (int)axis;
    else if (a->atoms[x->v].kind == A_GRP && x->c == 1 && x->nf == 1 &&
             a->atoms[x->f[0]].kind == A_LAUNCH &&
             a->atoms[x->f[0]].index == (unsigned)(3 + axis)) /* get_local_size(axis) */
      grp = (int)axis;
  }
  return (vars == 1 && gid >= 0) || (vars == 2 && width == 1 && grp >= 0 && grp == lid);
}

static bool uses_atom(struct sym s, int atom)
{
  for (int i = 0; i < s.n; i++) {
    if (s.t[i].v == atom)
      return true;
    for (int f = 0; f < s.t[i].nf; f++)
      if (s.t[i].f[f] == atom)
        return true;
  }
  return false;
}

/* The variables the rules use, bound: global [_g0, ...], group [...], local [...], loops. */
static void put_bindings(struct text *t, const struct an *a, const bool *used)
{
  static const char *const space[] = {"global", "group", "local"};
  static const char letter[] = "gwl";
  bool first = true;
  for (int s = 0; s < 3; s++) {
    int top = -1;
    for (int i = 0; i < a->natoms; i++)
      if (used[i] && a->atoms[i].kind == (enum atom_kind)(A_GID + s) &&
          (int)a->atoms[i].index > top)
        top = (int)a->atoms[i].index;
    if (top < 0)
      continue;
    put(t, "%s%s [", first ? "" : ", ", space[s]);
    for (int d = 0; d <= top; d++)
      put(t, "%s_%c%d", d ? ", " : "", letter[s], d);
    put(t, "]");
    first = false;
  }
  for (int i = 0; i < a->natoms; i++)
    if (used[i] && a->atoms[i].kind == A_LOOP) {
      const struct loop *l = &a->loops[a->atoms[i].index];
      put(t, "%s_t%u in ", first ? "" : ", ", a->atoms[i].index);
      put_sym(t, a, l->lo, 0);
      put(t, ":");
      put_sym(t, a, l->hi, 0);
      first = false;
    }
  if (first)
    put(t, "global [_g0]"); /* no variable used: the rules name whole buffers */
}

/* The rules of one buffer parameter (text appended to rules), marking the atoms they use. */
static void put_rule(struct text *t, const struct an *a, const char *mode, int p,
                     const struct access *x, bool *used)
{
  put(t, "%s%s %s[", t->n ? ", " : "", mode, a->params[p].name);
  if (!x) {
    put(t, ":]");
    return;
  }
  put_sym(t, a, x->idx, 0);
  if (x->width > 1) {
    put(t, " : ");
    put_sym(t, a, x->idx, x->width);
  }
  put(t, "]");
  for (int i = 0; i < a->natoms; i++)
    used[i] |= uses_atom(x->idx, i);
}

static bool same_access(const struct access *x, const struct access *y)
{
  return x->width == y->width && dv_sym_equal(x->idx, y->idx);
}

/* Tier 2: a part's copy of a merged buffer starts as the whole buffer, so the kernel may read
 * it only where the same work-item writes it (the same place as a write: written alike, or
 * bounded alike), never what other work-groups write; false with why set otherwise. */
static bool reads_own_writes(const struct an *a, int p, char *why, size_t whylen)
{
  for (size_t i = 0; i < a->nacc; i++) {
    const struct access *x = &a->acc[i];
    if (x->param != p || !(x->mode & M_READ) || (x->mode & M_WRITE))
      continue;
    bool own = false;
    for (size_t j = 0; j < a->nacc && !own; j++) {
      const struct access *w = &a->acc[j];
      own = w->param == p && (w->mode & M_WRITE) &&
            (!strcmp(w->text, x->text) || (!w->unbounded && !x->unbounded && same_access(w, x)));
    }
    if (!own) {
      snprintf(why, whylen, "it reads '%s' where other work-groups may write it (%s)",
               a->params[p].name, x->text);
      return false;
    }
  }
  return true;
}

/* What the accesses of parameter p make it: its rules appended to t; *merged when its writes
 * are not bounded (force: when every write is to be merged); false with why set when the
 * kernel must run whole. */
static bool param_rules(struct an *a, int p, bool force, struct text *t, bool *used, bool *merged,
                        char *why, size_t whylen)
{
  const struct param *pr = &a->params[p];
  bool reads = false, writes = false, read_all = false, write_unbounded = false, atomics = false,
       plain = false;
  char op = 0;
  for (size_t i = 0; i < a->nacc; i++) {
    const struct access *x = &a->acc[i];
    if (x->param != p)
      continue;
    if (x->mode & M_ATOMIC) {
      atomics = true;
      if (op && op != x->op)
        op = 'x';
      else if (!op)
        op = x->op;
      continue;
    }
    plain = true;
    reads |= (x->mode & M_READ) != 0;
    writes |= (x->mode & M_WRITE) != 0;
    if (x->unbounded && (x->mode & M_READ))
      read_all = true;
    if (x->unbounded && (x->mode & M_WRITE))
      write_unbounded = true;
  }
  *merged = false;
  if (atomics) {
    static const char *const opname[] = {"+", "min", "max", "&", "|", "^"};
    const char *ops = "+<>&|^";
    const char *at = op && op != 'x' ? strchr(ops, op) : NULL;
    bool integer = pr->elem == 4 || pr->elem == 8;
    if (plain || !at || !integer) {
      snprintf(why, whylen, "its global atomics on '%s' are not a reduction (%s)", pr->name,
               plain ? "the buffer is also read or written otherwise"
               : !at ? "an exchange, mixed operations or a result used" : "its element type");
      return false;
    }
    put(t, "%sreduce(%s) %s[:]", t->n ? ", " : "", opname[at - ops], pr->name);
    return true;
  }
  if (!reads && !writes) {
    if (!pr->is_const)
      put(t, "%sread %s[0:0]", t->n ? ", " : "", pr->name); /* untouched: nothing moves */
    return true;
  }
  if (writes && (write_unbounded || force || !pr->elem)) {
    if (!reads_own_writes(a, p, why, whylen))
      return false;
    put(t, "%smerge %s[:]", t->n ? ", " : "", pr->name);
    *merged = true;
    return true;
  }
  if (read_all || !pr->elem) {
    if (reads)
      put_rule(t, a, "read", p, NULL, used);
  } else {
    for (size_t i = 0; i < a->nacc; i++) {
      const struct access *x = &a->acc[i];
      bool dup = false;
      for (size_t j = 0; j < i && !dup; j++)
        dup = a->acc[j].param == p && (a->acc[j].mode & M_READ) && same_access(&a->acc[j], x);
      if (x->param == p && (x->mode & M_READ) && !dup)
        put_rule(t, a, "read", p, x, used);
    }
  }
  for (size_t i = 0; i < a->nacc; i++) {
    const struct access *x = &a->acc[i];
    if (x->param != p || !(x->mode & M_WRITE))
      continue;
    bool dup = false;
    for (size_t j = 0; j < i && !dup; j++)
      dup = a->acc[j].param == p && (a->acc[j].mode & M_WRITE) && same_access(&a->acc[j], x) &&
            a->acc[j].cond == x->cond && a->acc[j].partial == x->partial;
    if (dup)
      continue;
    /* `write` says every element of the region is written: only for a store every
     * work-item makes, to an index that covers its hull. Otherwise the part's device first
     * gets the region's bytes (readwrite), so what it leaves alone stays as it was. */
    bool exact = !x->cond && !x->partial && dense(a, x->idx, x->width) &&
                 !(x->mode & M_READ);
    put_rule(t, a, exact ? "write" : "readwrite", p, x, used);
  }
  return true;
}

/* The annotation of the kernel from its accesses (force: every written buffer merged), or
 * NULL with why set; *tier says which it is. */
static char *annotation(struct an *a, bool force, enum tt_tier *tier, char *why, size_t whylen)
{
  struct text rules = {0}, all = {0};
  bool used[MAX_ATOMS] = {false}, any_merged = false;
  char merged_why[256] = "";
  for (int p = 0; p < a->nparams; p++) {
    if (!a->params[p].pointer || !a->params[p].global)
      continue;
    bool merged;
    if (!param_rules(a, p, force, &rules, used, &merged, why, whylen)) {
      free(rules.s);
      return NULL;
    }
    if (merged && !any_merged) {
      bool unbounded = false;
      for (size_t i = 0; i < a->nacc; i++)
        unbounded |= a->acc[i].param == p && (a->acc[i].mode & M_WRITE) && a->acc[i].unbounded;
      snprintf(merged_why, sizeof merged_why, "its writes to '%s' %s", a->params[p].name,
               unbounded ? "cannot be bounded" : "are merged");
    }
    any_merged |= merged;
  }
  if (!rules.n) {
    snprintf(why, whylen, "it has no buffer parameters");
    free(rules.s);
    return NULL;
  }
  put_bindings(&all, a, used);
  put(&all, " => %s", rules.s);
  free(rules.s);
  if (all.oom || rules.oom) {
    free(all.s);
    snprintf(why, whylen, "out of memory");
    return NULL;
  }
  *tier = any_merged ? TT_TIER_MERGED : TT_TIER_REGIONS;
  snprintf(why, whylen, "%s", merged_why);
  return all.s;
}

/* --- kernels --------------------------------------------------------------------------------- */

static bool is_kernel(const struct an *a, CXCursor fn)
{
  CXToken *toks = NULL;
  unsigned n = 0;
  bool k = false;
  a->cx->tokenize(a->tu, a->cx->getCursorExtent(fn), &toks, &n);
  for (unsigned i = 0; i < n && i < 24 && !k; i++) {
    char t[16];
    dv_spelling(a, a->cx->getTokenSpelling(a->tu, toks[i]), t, sizeof t);
    k = !strcmp(t, "__kernel") || !strcmp(t, "kernel");
  }
  if (toks)
    a->cx->disposeTokens(a->tu, toks, n);
  return k;
}

/* Whether an annotation can name a parameter so called: a name of letters, digits and
 * underscores (clang also takes '$', and unnamed parameters), shorter than the annotation
 * language's 64 bytes. */
static bool nameable(const char *name)
{
  size_t n = strlen(name);
  if (!n || n >= 63 || isdigit((unsigned char)name[0]))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)name[i]) && name[i] != '_')
      return false;
  return true;
}

static void kernel_params(struct an *a, CXCursor fn, struct kids *fk)
{
  a->nparams = 0;
  for (int i = 0; i < fk->n && a->nparams < MAX_PARAMS; i++) {
    if (a->cx->getCursorKind(fk->c[i]) != CXCursor_ParmDecl)
      continue;
    struct param *p = &a->params[a->nparams];
    memset(p, 0, sizeof *p);
    dv_cursor_name(a, fk->c[i], p->name, sizeof p->name);
    CXType t = a->cx->getCursorType(fk->c[i]);
    char type[160];
    dv_spelling(a, a->cx->getTypeSpelling(t), type, sizeof type);
    p->pointer = a->cx->getCanonicalType(t).kind == CXType_Pointer;
    p->global = p->pointer && (strstr(type, "__global") || strstr(type, "__constant"));
    p->is_const = strstr(type, "__constant") || (p->pointer && !strncmp(type, "const ", 6));
    p->elem = dv_pointee_size(a, t);
    if (strstr(type, "image") || strstr(type, "sampler_t"))
      dv_set_whole(a, "it takes an image or a sampler ('%s')", p->name);
    if (!nameable(p->name)) /* found by tests/fuzz/fuzz_derive.c */
      dv_set_whole(a, "its parameter %d has no name an annotation can say ('%s')",
                   a->nparams + 1, p->name);
    a->pdecl[a->nparams] = fk->c[i];
    struct val v = dv_unknown();
    if (p->global)
      v = (struct val){V_PTR, dv_const_sym(0), a->nparams, false};
    else if (a->cx->getCanonicalType(t).kind >= CXType_Bool &&
             a->cx->getCanonicalType(t).kind <= CXType_Int128) {
      p->integer = true;
      v = dv_int_val(dv_atom_sym(a, A_PARAM, (unsigned)a->nparams));
    }
    a->nparams++;
    dv_bind(a, fk->c[i], v);
  }
  (void)fn;
}

static void derive_kernel(struct an *a, CXCursor fn, struct tt_derived *d)
{
  a->natoms = a->nloops = 0;
  a->nenv = a->nacc = 0;
  a->cond = a->nret = a->depth = a->nesting = 0;
  a->tail_cond = a->done = false;
  a->whole[0] = 0;
  struct kids fk = dv_children(a, fn);
  kernel_params(a, fn, &fk);
  if (fk.n && !a->whole[0])
    dv_walk_body(a, fk.c[fk.n - 1]);
  if (a->whole[0]) {
    d->tier = TT_TIER_WHOLE;
    snprintf(d->why, sizeof d->why, "%s", a->whole);
    return;
  }
  d->text = annotation(a, false, &d->tier, d->why, sizeof d->why);
  if (!d->text) {
    d->tier = TT_TIER_WHOLE;
    return;
  }
  char why[256];
  enum tt_tier t;
  d->merged = annotation(a, true, &t, why, sizeof why);
  if (d->merged && (t != TT_TIER_MERGED || !strcmp(d->merged, d->text))) {
    free(d->merged);
    d->merged = NULL;
  }
}

struct walk_tu {
  struct an *a;
  struct tt_derived *d;
  size_t n, cap;
  bool oom;
};

static int each_function(CXCursor c, CXCursor parent, CXClientData data)
{
  (void)parent;
  struct walk_tu *w = data;
  struct an *a = w->a;
  if (a->cx->getCursorKind(c) != CXCursor_FunctionDecl ||
      a->cx->Location_isInSystemHeader(a->cx->getCursorLocation(c)) || !is_kernel(a, c))
    return CXChildVisit_Continue;
  struct kids fk = dv_children(a, c);
  if (!fk.n || a->cx->getCursorKind(fk.c[fk.n - 1]) != CXCursor_CompoundStmt)
    return CXChildVisit_Continue;
  if (w->n == w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 8;
    struct tt_derived *d = realloc(w->d, cap * sizeof *d);
    if (!d) {
      w->oom = true;
      return CXChildVisit_Break;
    }
    w->d = d;
    w->cap = cap;
  }
  struct tt_derived *d = &w->d[w->n++];
  memset(d, 0, sizeof *d);
  dv_cursor_name(a, c, d->name, sizeof d->name);
  derive_kernel(a, c, d);
  return CXChildVisit_Continue;
}

/* The options clang needs of a build's: -D, -I and -cl-std, each with its value. */
static int clang_args(const char *options, char **args, int max, char *buf, size_t cap)
{
  int n = 0;
  static const char *const fixed[] = {"-x", "cl", "-Xclang", "-finclude-default-header", "-w"};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
    args[n++] = (char *)fixed[i];
  bool std = false;
  size_t used = 0;
  const char *s = options ? options : "";
  while (*s && n + 2 < max) {
    while (isspace((unsigned char)*s))
      s++;
    const char *e = s;
    while (*e && !isspace((unsigned char)*e))
      e++;
    size_t len = (size_t)(e - s);
    bool takes = (len == 2 && (!strncmp(s, "-D", 2) || !strncmp(s, "-I", 2)));
    bool keep = takes || (len > 2 && (!strncmp(s, "-D", 2) || !strncmp(s, "-I", 2))) ||
                !strncmp(s, "-cl-std=", 8);
    std |= !strncmp(s, "-cl-std=", 8);
    if (keep && used + len + 1 < cap) {
      memcpy(buf + used, s, len);
      buf[used + len] = 0;
      args[n++] = buf + used;
      used += len + 1;
      if (takes) { /* its value is the next word */
        s = e;
        while (isspace((unsigned char)*s))
          s++;
        e = s;
        while (*e && !isspace((unsigned char)*e))
          e++;
        len = (size_t)(e - s);
        if (used + len + 1 < cap) {
          memcpy(buf + used, s, len);
          buf[used + len] = 0;
          args[n++] = buf + used;
          used += len + 1;
        }
      }
    }
    s = e;
  }
  if (!std)
    args[n++] = (char *)"-cl-std=CL1.2";
  return n;
}

long tt_derive(const struct tt_clang *cx, const char *src, const char *options,
               struct tt_derived **out, char *why, size_t whylen)
{
  *out = NULL;
  char *args[64], buf[4096];
  int nargs = clang_args(options, args, 64, buf, sizeof buf);
  struct CXUnsavedFile file = {"tutti-program.cl", src, (unsigned long)strlen(src)};
  CXIndex index = cx->createIndex(0, 0);
  CXTranslationUnit tu = cx->parseTranslationUnit(index, "tutti-program.cl",
                                                  (const char *const *)args, nargs, &file, 1,
                                                  CXTranslationUnit_KeepGoing);
  if (!tu) {
    snprintf(why, whylen, "libclang could not parse the source");
    cx->disposeIndex(index);
    return -1;
  }
  for (unsigned i = 0; i < cx->getNumDiagnostics(tu); i++) {
    CXDiagnostic dg = cx->getDiagnostic(tu, i);
    if (cx->getDiagnosticSeverity(dg) >= CXDiagnostic_Error) {
      char msg[200];
      const char *t;
      CXString s = cx->getDiagnosticSpelling(dg);
      t = cx->getCString(s);
      snprintf(msg, sizeof msg, "%s", t ? t : "");
      cx->disposeString(s);
      snprintf(why, whylen, "clang does not parse the source: %s", msg);
      cx->disposeDiagnostic(dg);
      cx->disposeTranslationUnit(tu);
      cx->disposeIndex(index);
      return -1;
    }
    cx->disposeDiagnostic(dg);
  }
  struct an a = {.cx = cx, .tu = tu};
  struct walk_tu w = {&a, NULL, 0, 0, false};
  cx->visitChildren(cx->getTranslationUnitCursor(tu), each_function, &w);
  free(a.env);
  free(a.acc);
  cx->disposeTranslationUnit(tu);
  cx->disposeIndex(index);
  if (w.oom) {
    tt_derived_free(w.d, w.n);
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  *out = w.d;
  return (long)w.n;
}

void tt_derived_free(struct tt_derived *d, size_t n)
{
  for (size_t i = 0; d && i < n; i++) {
    free(d[i].text);
    free(d[i].merged);
  }
  free(d);
}

const char *tt_tier_name(enum tt_tier t)
{
  return t == TT_TIER_REGIONS ? "derived" : t == TT_TIER_MERGED ? "merged" : "whole";
}
