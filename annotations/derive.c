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

#include "annotations/derive.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- affine forms ---------------------------------------------------------------------------- */

#define MAX_TERMS 12
#define MAX_FACTORS 3
#define MAX_ATOMS 64
#define MAX_PARAMS 64
#define MAX_DEPTH 8

/* What a symbol stands for: a scalar parameter, a launch value (get_local_size(d), ...), a
 * work-item id, or a loop's counter. The first two are factors, the others variables. */
enum atom_kind { A_PARAM, A_LAUNCH, A_GID, A_GRP, A_LID, A_LOOP };

struct term {
  int64_t c;
  unsigned char nf;
  unsigned char f[MAX_FACTORS]; /* factor atoms, sorted */
  short v;                      /* variable atom, or -1 */
};

/* n < 0: unknown. */
struct sym {
  int n;
  struct term t[MAX_TERMS];
};

enum vkind { V_UNKNOWN, V_INT, V_PTR };

struct val {
  enum vkind k;
  struct sym s; /* V_INT: the value; V_PTR: the offset in the parameter's elements */
  int param;    /* V_PTR */
  bool lost;    /* V_PTR: cast to another element size: offsets unknown */
};

enum { M_READ = 1, M_WRITE = 2, M_ATOMIC = 4 };

struct access {
  int param;
  int mode;
  char op;         /* atomics: '+', '<' (min), '>' (max), '&', '|', '^'; 'x' not reducible */
  bool cond;       /* under a branch, a loop or after a conditional return */
  bool partial;    /* writes part of an element (a vector component) */
  bool unbounded;  /* the index is unknown */
  struct sym idx;
  int64_t width;   /* elements from idx on */
  char text[96];   /* the index as written (tier 2 compares reads with writes by it) */
};

struct loop {
  struct sym lo, hi; /* [lo, hi) */
};

struct param {
  char name[64];
  bool pointer, global, integer;
  int64_t elem; /* bytes of the element type, 0 unknown */
  bool is_const;
};

struct binding {
  CXCursor decl;
  struct val v;
};

struct an {
  const struct tt_clang *cx;
  CXTranslationUnit tu;
  struct param params[MAX_PARAMS];
  CXCursor pdecl[MAX_PARAMS];
  int nparams;
  struct { enum atom_kind kind; unsigned index; } atoms[MAX_ATOMS];
  int natoms;
  struct loop loops[MAX_ATOMS];
  int nloops;
  struct binding *env;
  size_t nenv, capenv;
  struct access *acc;
  size_t nacc, capacc;
  int cond;       /* depth of conditional context */
  bool tail_cond; /* a return under a condition passed: all that follows is conditional */
  bool done;      /* an unconditional return passed in the function being walked */
  int depth;      /* helper calls nested */
  int nesting;    /* expressions and statements being walked, nested */
  struct val ret; /* a helper's return value */
  int nret;
  char whole[200]; /* why the kernel runs whole, when it must */
};

static void set_whole(struct an *a, const char *fmt, ...)
{
  if (a->whole[0])
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->whole, sizeof a->whole, fmt, ap);
  va_end(ap);
}

static struct sym unknown_sym(void)
{
  struct sym s;
  s.n = -1;
  return s;
}

static struct sym const_sym(int64_t c)
{
  struct sym s = {0};
  if (c) {
    s.n = 1;
    s.t[0] = (struct term){c, 0, {0}, -1};
  }
  return s;
}

static bool is_var(const struct an *a, int atom)
{
  return a->atoms[atom].kind >= A_GID;
}

static int atom(struct an *a, enum atom_kind kind, unsigned index)
{
  for (int i = 0; i < a->natoms; i++)
    if (a->atoms[i].kind == kind && a->atoms[i].index == index)
      return i;
  if (a->natoms == MAX_ATOMS)
    return -1;
  a->atoms[a->natoms].kind = kind;
  a->atoms[a->natoms].index = index;
  return a->natoms++;
}

static struct sym atom_sym(struct an *a, enum atom_kind kind, unsigned index)
{
  int i = atom(a, kind, index);
  if (i < 0)
    return unknown_sym();
  struct sym s = {1, {{1, 0, {0}, -1}}};
  if (is_var(a, i))
    s.t[0].v = (short)i;
  else
    s.t[0] = (struct term){1, 1, {(unsigned char)i}, -1};
  return s;
}

static bool same_atoms(const struct term *x, const struct term *y)
{
  return x->v == y->v && x->nf == y->nf && !memcmp(x->f, y->f, x->nf);
}

/* Adds term t into s, combining like terms; false when s has no room. */
static bool add_term(struct sym *s, struct term t)
{
  if (!t.c)
    return true;
  for (int i = 0; i < s->n; i++)
    if (same_atoms(&s->t[i], &t)) {
      s->t[i].c += t.c;
      if (!s->t[i].c)
        s->t[i] = s->t[--s->n];
      return true;
    }
  if (s->n == MAX_TERMS)
    return false;
  s->t[s->n++] = t;
  return true;
}

static struct sym sym_add(struct sym x, struct sym y, int64_t sign)
{
  if (x.n < 0 || y.n < 0)
    return unknown_sym();
  for (int i = 0; i < y.n; i++) {
    struct term t = y.t[i];
    t.c *= sign;
    if (!add_term(&x, t))
      return unknown_sym();
  }
  return x;
}

static struct sym sym_mul(const struct an *a, struct sym x, struct sym y)
{
  if (x.n < 0 || y.n < 0)
    return unknown_sym();
  struct sym r = {0};
  for (int i = 0; i < x.n; i++)
    for (int j = 0; j < y.n; j++) {
      const struct term *p = &x.t[i], *q = &y.t[j];
      if ((p->v >= 0 && q->v >= 0) || p->nf + q->nf > MAX_FACTORS)
        return unknown_sym();
      struct term t = {p->c * q->c, 0, {0}, p->v >= 0 ? p->v : q->v};
      /* The factors of both, sorted. */
      unsigned char f[2 * MAX_FACTORS];
      int n = 0;
      for (int k = 0; k < p->nf; k++)
        f[n++] = p->f[k];
      for (int k = 0; k < q->nf; k++)
        f[n++] = q->f[k];
      for (int k = 1; k < n; k++)
        for (int m = k; m > 0 && f[m - 1] > f[m]; m--) {
          unsigned char tmp = f[m];
          f[m] = f[m - 1];
          f[m - 1] = tmp;
        }
      t.nf = (unsigned char)n;
      memcpy(t.f, f, (size_t)n);
      if (!add_term(&r, t))
        return unknown_sym();
    }
  (void)a;
  return r;
}

static bool sym_const_value(struct sym s, int64_t *c)
{
  if (s.n < 0 || s.n > 1 || (s.n == 1 && (s.t[0].nf || s.t[0].v >= 0)))
    return false;
  *c = s.n ? s.t[0].c : 0;
  return true;
}

static bool sym_has_var(struct sym s)
{
  for (int i = 0; i < s.n; i++)
    if (s.t[i].v >= 0)
      return true;
  return false;
}

static bool sym_equal(struct sym x, struct sym y)
{
  struct sym d = sym_add(x, y, -1);
  return x.n >= 0 && y.n >= 0 && d.n == 0;
}

static struct val unknown(void)
{
  struct val v;
  memset(&v, 0, sizeof v);
  v.k = V_UNKNOWN;
  v.s.n = -1;
  v.param = -1;
  return v;
}

static struct val int_val(struct sym s)
{
  if (s.n < 0)
    return unknown();
  struct val v = {V_INT, s, -1, false};
  return v;
}

/* --- the AST --------------------------------------------------------------------------------- */

#define MAX_CHILDREN 128

struct kids {
  CXCursor c[MAX_CHILDREN];
  int n;
  bool more; /* there were more children than fit */
};

static int collect(CXCursor c, CXCursor parent, CXClientData d)
{
  (void)parent;
  struct kids *k = d;
  if (k->n == MAX_CHILDREN) {
    k->more = true;
    return CXChildVisit_Break;
  }
  k->c[k->n++] = c;
  return CXChildVisit_Continue;
}

static void set_whole(struct an *a, const char *fmt, ...);

static struct kids children(struct an *a, CXCursor c)
{
  struct kids k;
  k.n = 0;
  k.more = false;
  a->cx->visitChildren(c, collect, &k);
  if (k.more)
    set_whole(a, "a block or call has more than %d parts", MAX_CHILDREN);
  return k;
}

static void spelling(const struct an *a, CXString s, char *buf, size_t cap)
{
  const char *t = a->cx->getCString(s);
  snprintf(buf, cap, "%s", t ? t : "");
  a->cx->disposeString(s);
}

static void cursor_name(const struct an *a, CXCursor c, char *buf, size_t cap)
{
  spelling(a, a->cx->getCursorSpelling(c), buf, cap);
}

static unsigned offset_of(const struct an *a, CXSourceLocation l)
{
  unsigned off = 0;
  a->cx->getSpellingLocation(l, NULL, NULL, NULL, &off);
  return off;
}

/* The operator of a binary or compound assignment: the first punctuation after its left
 * operand; of a unary one, its first token, or its last (postfix ++ and --). */
static void operator_of(const struct an *a, CXCursor c, const CXCursor *lhs, char *op, size_t cap)
{
  CXToken *toks = NULL;
  unsigned n = 0;
  op[0] = 0;
  a->cx->tokenize(a->tu, a->cx->getCursorExtent(c), &toks, &n);
  if (!n)
    return;
  if (lhs) {
    unsigned end = offset_of(a, a->cx->getRangeEnd(a->cx->getCursorExtent(*lhs)));
    for (unsigned i = 0; i < n; i++) {
      CXSourceRange r = a->cx->getTokenExtent(a->tu, toks[i]);
      if (a->cx->getTokenKind(toks[i]) == CXToken_Punctuation &&
          offset_of(a, a->cx->getRangeStart(r)) >= end) {
        spelling(a, a->cx->getTokenSpelling(a->tu, toks[i]), op, cap);
        break;
      }
    }
  } else if (a->cx->getTokenKind(toks[0]) == CXToken_Punctuation) {
    spelling(a, a->cx->getTokenSpelling(a->tu, toks[0]), op, cap);
  } else if (a->cx->getTokenKind(toks[n - 1]) == CXToken_Punctuation) {
    char last[8];
    spelling(a, a->cx->getTokenSpelling(a->tu, toks[n - 1]), last, sizeof last);
    if (!strcmp(last, "++") || !strcmp(last, "--"))
      snprintf(op, cap, "post%c%c", last[0], last[1]);
  }
  a->cx->disposeTokens(a->tu, toks, n);
}

static unsigned tokens_in(const struct an *a, CXCursor c)
{
  CXToken *toks = NULL;
  unsigned n = 0;
  a->cx->tokenize(a->tu, a->cx->getCursorExtent(c), &toks, &n);
  if (toks)
    a->cx->disposeTokens(a->tu, toks, n);
  return n;
}

/* The source text of c, its tokens joined. */
static void text_of(const struct an *a, CXCursor c, char *buf, size_t cap)
{
  CXToken *toks = NULL;
  unsigned n = 0;
  size_t len = 0;
  buf[0] = 0;
  a->cx->tokenize(a->tu, a->cx->getCursorExtent(c), &toks, &n);
  for (unsigned i = 0; i < n && len + 1 < cap; i++) {
    char t[64];
    spelling(a, a->cx->getTokenSpelling(a->tu, toks[i]), t, sizeof t);
    len += (size_t)snprintf(buf + len, cap - len, "%s", t);
  }
  if (toks)
    a->cx->disposeTokens(a->tu, toks, n);
}

/* An integer constant expression's value. */
static bool evaluate(const struct an *a, CXCursor c, int64_t *v)
{
  CXEvalResult r = a->cx->Cursor_Evaluate(c);
  if (!r)
    return false;
  bool ok = a->cx->EvalResult_getKind(r) == CXEval_Int;
  if (ok)
    *v = a->cx->EvalResult_getAsLongLong(r);
  a->cx->EvalResult_dispose(r);
  return ok;
}

/* Bytes of the pointee of a pointer type when it is a built-in scalar or vector type (0: not
 * a pointer, a structure, not known). */
static int64_t pointee_size(const struct an *a, CXType t)
{
  t = a->cx->getCanonicalType(t);
  if (t.kind != CXType_Pointer)
    return 0;
  CXType e = a->cx->getCanonicalType(a->cx->getPointeeType(t));
  if (!((e.kind >= CXType_FirstBuiltin && e.kind <= CXType_LastBuiltin) ||
        e.kind == CXType_ExtVector))
    return 0;
  long long n = a->cx->Type_getSizeOf(e);
  return n > 0 ? n : 0;
}

/* --- the environment ------------------------------------------------------------------------ */

static struct val *lookup(struct an *a, CXCursor decl)
{
  for (size_t i = a->nenv; i-- > 0;)
    if (a->cx->equalCursors(a->env[i].decl, decl))
      return &a->env[i].v;
  return NULL;
}

static void bind(struct an *a, CXCursor decl, struct val v)
{
  struct val *old = lookup(a, decl);
  if (old) {
    *old = v;
    return;
  }
  if (a->nenv == a->capenv) {
    size_t cap = a->capenv ? a->capenv * 2 : 32;
    struct binding *e = realloc(a->env, cap * sizeof *e);
    if (!e) {
      set_whole(a, "out of memory");
      return;
    }
    a->env = e;
    a->capenv = cap;
  }
  a->env[a->nenv++] = (struct binding){decl, v};
}

/* Variables a statement may assign (=, op=, ++, --, &x): unknown from there on. */
static int forget_assigned(CXCursor c, CXCursor parent, CXClientData d)
{
  (void)parent;
  struct an *a = d;
  int k = a->cx->getCursorKind(c);
  if (k == CXCursor_BinaryOperator || k == CXCursor_CompoundAssignOperator ||
      k == CXCursor_UnaryOperator) {
    struct kids ch = children(a, c);
    if (ch.n >= 1) {
      char op[8];
      operator_of(a, c, k == CXCursor_UnaryOperator ? NULL : &ch.c[0], op, sizeof op);
      bool assigns = k == CXCursor_CompoundAssignOperator || !strcmp(op, "=") ||
                     !strcmp(op, "++") || !strcmp(op, "--") || !strcmp(op, "post++") ||
                     !strcmp(op, "post--") || (k == CXCursor_UnaryOperator && !strcmp(op, "&"));
      CXCursor target = ch.c[0];
      while (a->cx->getCursorKind(target) == CXCursor_UnexposedExpr ||
             a->cx->getCursorKind(target) == CXCursor_ParenExpr) {
        struct kids t = children(a, target);
        if (t.n != 1)
          break;
        target = t.c[0];
      }
      if (assigns && a->cx->getCursorKind(target) == CXCursor_DeclRefExpr) {
        struct val *v = lookup(a, a->cx->getCursorReferenced(target));
        if (v)
          *v = unknown();
      }
    }
  }
  return CXChildVisit_Recurse;
}

static void forget_in(struct an *a, CXCursor c)
{
  forget_assigned(c, c, a);
  a->cx->visitChildren(c, forget_assigned, a);
}

/* --- accesses -------------------------------------------------------------------------------- */

static void record(struct an *a, CXCursor where, struct val ptr, struct sym idx, int64_t width,
                   int mode, char op, bool partial)
{
  if (ptr.k != V_PTR)
    return;
  if (a->nacc == a->capacc) {
    size_t cap = a->capacc ? a->capacc * 2 : 32;
    struct access *n = realloc(a->acc, cap * sizeof *n);
    if (!n) {
      set_whole(a, "out of memory");
      return;
    }
    a->acc = n;
    a->capacc = cap;
  }
  struct access *x = &a->acc[a->nacc++];
  memset(x, 0, sizeof *x);
  x->param = ptr.param;
  x->mode = mode;
  x->op = op;
  x->cond = a->cond > 0 || a->tail_cond;
  x->partial = partial;
  x->idx = sym_add(ptr.s, idx, 1);
  x->unbounded = ptr.lost || x->idx.n < 0;
  x->width = width;
  text_of(a, where, x->text, sizeof x->text);
}

/* Accesses through a pointer that is not a known buffer parameter: a __global one may be
 * any buffer. */
static void unknown_pointer(struct an *a, CXCursor base, int mode)
{
  char type[128];
  spelling(a, a->cx->getTypeSpelling(a->cx->getCursorType(base)), type, sizeof type);
  if (!strstr(type, "__global") && !strstr(type, "__constant"))
    return;
  for (int p = 0; p < a->nparams; p++)
    if (a->params[p].global) {
      struct val v = {V_PTR, const_sym(0), p, true};
      record(a, base, v, const_sym(0), 1, mode, 'x', false);
    }
}

/* --- expressions ----------------------------------------------------------------------------- */

static struct val eval(struct an *a, CXCursor c, int mode);
static void walk(struct an *a, CXCursor c);

/* An lvalue's memory: a pointer and an index, or false when it is not memory. */
static bool place(struct an *a, CXCursor c, struct val *ptr, struct sym *idx, bool *partial,
                  CXCursor *base)
{
  int k = a->cx->getCursorKind(c);
  struct kids ch = children(a, c);
  if ((k == CXCursor_UnexposedExpr || k == CXCursor_ParenExpr) && ch.n == 1)
    return place(a, ch.c[0], ptr, idx, partial, base);
  if (k == CXCursor_ArraySubscriptExpr && ch.n == 2) {
    *base = ch.c[0];
    *ptr = eval(a, ch.c[0], M_READ);
    struct val i = eval(a, ch.c[1], M_READ);
    *idx = i.k == V_INT ? i.s : unknown_sym();
    return true;
  }
  if (k == CXCursor_UnaryOperator && ch.n == 1) {
    char op[8];
    operator_of(a, c, NULL, op, sizeof op);
    if (!strcmp(op, "*")) {
      *base = ch.c[0];
      *ptr = eval(a, ch.c[0], M_READ);
      *idx = const_sym(0);
      return true;
    }
  }
  if (k == CXCursor_MemberRefExpr && ch.n == 1) {
    /* A vector component or a structure field: part of the element. */
    *partial = true;
    return place(a, ch.c[0], ptr, idx, partial, base);
  }
  return false;
}

/* A load, store or both at lvalue c. */
static void access_at(struct an *a, CXCursor c, int mode)
{
  struct val ptr = unknown();
  struct sym idx = unknown_sym();
  bool partial = false;
  CXCursor base = c;
  if (!place(a, c, &ptr, &idx, &partial, &base)) {
    eval(a, c, M_READ);
    return;
  }
  if (ptr.k == V_PTR)
    record(a, c, ptr, idx, 1, mode, 0, partial);
  else
    unknown_pointer(a, base, mode);
}

static struct val call(struct an *a, CXCursor c, struct kids *ch, bool used);

static struct val binary(struct an *a, CXCursor c, struct kids *ch)
{
  char op[8];
  operator_of(a, c, &ch->c[0], op, sizeof op);
  if (!strcmp(op, "=")) {
    struct val r = eval(a, ch->c[1], M_READ);
    CXCursor lhs = ch->c[0];
    struct kids l = children(a, lhs);
    while ((a->cx->getCursorKind(lhs) == CXCursor_UnexposedExpr ||
            a->cx->getCursorKind(lhs) == CXCursor_ParenExpr) && l.n == 1) {
      lhs = l.c[0];
      l = children(a, lhs);
    }
    if (a->cx->getCursorKind(lhs) == CXCursor_DeclRefExpr) {
      CXCursor d = a->cx->getCursorReferenced(lhs);
      if (lookup(a, d) || a->cx->getCursorKind(d) == CXCursor_VarDecl)
        bind(a, d, r);
    } else {
      access_at(a, lhs, M_WRITE);
    }
    return r;
  }
  bool shortcut = !strcmp(op, "&&") || !strcmp(op, "||");
  struct val x = eval(a, ch->c[0], M_READ);
  if (shortcut)
    a->cond++;
  struct val y = eval(a, ch->c[1], M_READ);
  if (shortcut)
    a->cond--;
  if (!strcmp(op, ","))
    return y;
  if (x.k == V_PTR && y.k == V_INT && (!strcmp(op, "+") || !strcmp(op, "-"))) {
    x.s = sym_add(x.s, y.s, op[0] == '+' ? 1 : -1);
    x.lost |= x.s.n < 0;
    return x;
  }
  if (y.k == V_PTR && x.k == V_INT && !strcmp(op, "+")) {
    y.s = sym_add(y.s, x.s, 1);
    y.lost |= y.s.n < 0;
    return y;
  }
  if (x.k != V_INT || y.k != V_INT)
    return unknown();
  int64_t cy;
  if (!strcmp(op, "+"))
    return int_val(sym_add(x.s, y.s, 1));
  if (!strcmp(op, "-"))
    return int_val(sym_add(x.s, y.s, -1));
  if (!strcmp(op, "*"))
    return int_val(sym_mul(a, x.s, y.s));
  if (!strcmp(op, "<<") && sym_const_value(y.s, &cy) && cy >= 0 && cy < 32)
    return int_val(sym_mul(a, x.s, const_sym((int64_t)1 << cy)));
  int64_t cx;
  if (sym_const_value(x.s, &cx) && sym_const_value(y.s, &cy)) {
    if (!strcmp(op, "/") && cy)
      return int_val(const_sym(cx / cy));
    if (!strcmp(op, "%") && cy)
      return int_val(const_sym(cx % cy));
    if (!strcmp(op, ">>") && cy >= 0 && cy < 63)
      return int_val(const_sym(cx >> cy));
  }
  return unknown();
}

static struct val unary(struct an *a, CXCursor c, struct kids *ch)
{
  char op[8];
  operator_of(a, c, NULL, op, sizeof op);
  if (!strcmp(op, "&")) {
    /* The address of an element: a pointer, no access. */
    struct val ptr = unknown();
    struct sym idx = unknown_sym();
    bool partial = false;
    CXCursor base = c;
    if (place(a, ch->c[0], &ptr, &idx, &partial, &base) && ptr.k == V_PTR) {
      ptr.s = sym_add(ptr.s, idx, 1);
      ptr.lost |= ptr.s.n < 0 || partial;
      return ptr;
    }
    eval(a, ch->c[0], M_READ);
    return unknown();
  }
  if (!strcmp(op, "*")) {
    access_at(a, c, M_READ);
    return unknown();
  }
  if (strstr(op, "++") || strstr(op, "--")) {
    access_at(a, ch->c[0], M_READ | M_WRITE);
    return unknown();
  }
  struct val x = eval(a, ch->c[0], M_READ);
  if (!strcmp(op, "-") && x.k == V_INT)
    return int_val(sym_mul(a, x.s, const_sym(-1)));
  if (!strcmp(op, "+"))
    return x;
  return unknown();
}

#define MAX_NESTING 160

static struct val eval_node(struct an *a, CXCursor c, int mode);

/* Expressions nest as deep as the source writes them: a bound keeps the walk's stack (about
 * 4 KiB a level) within a thread's. */
static struct val eval(struct an *a, CXCursor c, int mode)
{
  if (a->nesting >= MAX_NESTING) {
    set_whole(a, "its expressions or statements nest deeper than %d", MAX_NESTING);
    return unknown();
  }
  a->nesting++;
  struct val v = eval_node(a, c, mode);
  a->nesting--;
  return v;
}

static struct val eval_node(struct an *a, CXCursor c, int mode)
{
  int k = a->cx->getCursorKind(c);
  struct kids ch = children(a, c);
  int64_t v;
  switch (k) {
  case CXCursor_IntegerLiteral:
  case CXCursor_CharacterLiteral:
  case CXCursor_UnaryExpr: /* sizeof */
    return evaluate(a, c, &v) ? int_val(const_sym(v)) : unknown();
  case CXCursor_UnexposedExpr:
  case CXCursor_ParenExpr:
  case CXCursor_CStyleCastExpr: {
    if (!ch.n)
      return unknown();
    struct val x = eval(a, ch.c[ch.n - 1], mode);
    if (x.k == V_PTR) {
      int64_t to = pointee_size(a, a->cx->getCursorType(c));
      if (to != a->params[x.param].elem)
        x.lost = true;
    } else if (x.k == V_INT) {
      /* A cast to a floating type leaves the integers. */
      char type[64];
      spelling(a, a->cx->getTypeSpelling(a->cx->getCanonicalType(a->cx->getCursorType(c))), type,
               sizeof type);
      if (strstr(type, "float") || strstr(type, "double") || strstr(type, "half"))
        return unknown();
    }
    return x;
  }
  case CXCursor_DeclRefExpr: {
    CXCursor d = a->cx->getCursorReferenced(c);
    struct val *b = lookup(a, d);
    if (b)
      return *b;
    return evaluate(a, c, &v) ? int_val(const_sym(v)) : unknown();
  }
  case CXCursor_ArraySubscriptExpr:
    access_at(a, c, M_READ);
    return unknown();
  case CXCursor_MemberRefExpr:
    if (ch.n == 1) {
      struct val ptr = unknown();
      struct sym idx;
      bool partial = false;
      CXCursor base = c;
      if (place(a, c, &ptr, &idx, &partial, &base))
        access_at(a, c, M_READ);
      else
        eval(a, ch.c[0], M_READ);
    }
    return unknown();
  case CXCursor_BinaryOperator:
    return ch.n == 2 ? binary(a, c, &ch) : unknown();
  case CXCursor_CompoundAssignOperator:
    if (ch.n == 2) {
      char op[8];
      operator_of(a, c, &ch.c[0], op, sizeof op);
      struct val r = eval(a, ch.c[1], M_READ);
      CXCursor lhs = ch.c[0];
      struct kids l = children(a, lhs);
      while (a->cx->getCursorKind(lhs) == CXCursor_UnexposedExpr && l.n == 1) {
        lhs = l.c[0];
        l = children(a, lhs);
      }
      if (a->cx->getCursorKind(lhs) == CXCursor_DeclRefExpr) {
        struct val *b = lookup(a, a->cx->getCursorReferenced(lhs));
        if (b) {
          if (b->k == V_INT && r.k == V_INT && (!strcmp(op, "+=") || !strcmp(op, "-=")))
            *b = int_val(sym_add(b->s, r.s, op[0] == '+' ? 1 : -1));
          else if (b->k == V_PTR && r.k == V_INT && (!strcmp(op, "+=") || !strcmp(op, "-="))) {
            b->s = sym_add(b->s, r.s, op[0] == '+' ? 1 : -1);
            b->lost |= b->s.n < 0;
          } else
            *b = unknown();
        }
      } else {
        access_at(a, lhs, M_READ | M_WRITE);
      }
    }
    return unknown();
  case CXCursor_UnaryOperator:
    return ch.n == 1 ? unary(a, c, &ch) : unknown();
  case CXCursor_ConditionalOperator:
    if (ch.n == 3) {
      eval(a, ch.c[0], M_READ);
      a->cond++;
      struct val x = eval(a, ch.c[1], M_READ), y = eval(a, ch.c[2], M_READ);
      a->cond--;
      if (x.k == V_INT && y.k == V_INT && sym_equal(x.s, y.s))
        return x;
      if (x.k == V_PTR && y.k == V_PTR && x.param == y.param && sym_equal(x.s, y.s))
        return x;
    }
    return unknown();
  case CXCursor_CallExpr:
    return call(a, c, &ch, mode != 0);
  default:
    for (int i = 0; i < ch.n; i++)
      eval(a, ch.c[i], M_READ);
    return unknown();
  }
}

/* --- calls ----------------------------------------------------------------------------------- */

static const struct {
  const char *name;
  enum atom_kind kind;
} work_item[] = {
  {"get_global_id", A_GID}, {"get_group_id", A_GRP}, {"get_local_id", A_LID},
};
static const char *const launch_fns[] = {"get_global_size", "get_local_size", "get_num_groups",
                                         "get_global_offset"};

/* The reduction an atomic built-in makes, or 'x' (exchanges: not one), 0 when not atomic. */
static char atomic_op(const char *name)
{
  const char *n = !strncmp(name, "atomic_", 7) ? name + 7 : !strncmp(name, "atom_", 5) ? name + 5
                                                                                        : NULL;
  if (!n)
    return 0;
  if (!strcmp(n, "add") || !strcmp(n, "sub") || !strcmp(n, "inc") || !strcmp(n, "dec"))
    return '+';
  if (!strcmp(n, "min"))
    return '<';
  if (!strcmp(n, "max"))
    return '>';
  if (!strcmp(n, "and") || !strcmp(n, "or") || !strcmp(n, "xor"))
    return n[0] == 'a' ? '&' : n[0] == 'o' ? '|' : '^';
  return 'x';
}

/* vloadN / vstoreN: N, else 0 (the half variants convert: not counted). */
static int vector_width(const char *name, const char *prefix)
{
  size_t n = strlen(prefix);
  if (strncmp(name, prefix, n))
    return 0;
  int w = atoi(name + n);
  return w == 2 || w == 3 || w == 4 || w == 8 || w == 16 ? w : 0;
}

/* The function a call names, its definition when the source has one. */
static CXCursor callee(const struct an *a, CXCursor c, struct kids *ch)
{
  CXCursor ref = a->cx->getCursorReferenced(c);
  if (a->cx->Cursor_isNull(ref) && ch->n)
    ref = a->cx->getCursorReferenced(ch->c[0]);
  CXCursor def = a->cx->getCursorDefinition(ref);
  return a->cx->Cursor_isNull(def) ? ref : def;
}

static void walk_body(struct an *a, CXCursor body);

static struct val inline_call(struct an *a, CXCursor def, struct kids *ch, const char *name)
{
  if (a->depth >= MAX_DEPTH) {
    set_whole(a, "its helper calls nest deeper than %d ('%s')", MAX_DEPTH, name);
    return unknown();
  }
  struct kids fk = children(a, def);
  int np = 0;
  struct val args[MAX_PARAMS];
  CXCursor decls[MAX_PARAMS];
  for (int i = 0; i < fk.n; i++)
    if (a->cx->getCursorKind(fk.c[i]) == CXCursor_ParmDecl && np < MAX_PARAMS)
      decls[np++] = fk.c[i];
  for (int i = 1; i < ch->n && i - 1 < np; i++)
    args[i - 1] = eval(a, ch->c[i], M_READ);
  for (int i = 0; i < np && i + 1 < ch->n; i++)
    bind(a, decls[i], args[i]);
  CXCursor body = fk.c[fk.n - 1];
  struct val saved_ret = a->ret;
  int saved_nret = a->nret;
  bool saved_done = a->done, saved_tail = a->tail_cond;
  int saved_cond = a->cond;
  a->ret = unknown();
  a->nret = 0;
  a->done = false;
  a->depth++;
  walk_body(a, body);
  a->depth--;
  struct val r = a->nret == 1 ? a->ret : unknown();
  /* A return under a condition in the helper ends the helper only. */
  a->tail_cond = saved_tail;
  a->cond = saved_cond;
  a->done = saved_done;
  a->ret = saved_ret;
  a->nret = saved_nret;
  return r;
}

static struct val call(struct an *a, CXCursor c, struct kids *ch, bool used)
{
  char name[64];
  cursor_name(a, c, name, sizeof name);
  int nargs = ch->n - 1;
  int64_t d;
  for (size_t i = 0; i < sizeof work_item / sizeof *work_item; i++)
    if (!strcmp(name, work_item[i].name)) {
      if (nargs == 1 && evaluate(a, ch->c[1], &d) && d >= 0 && d < 3)
        return int_val(atom_sym(a, work_item[i].kind, (unsigned)d));
      return unknown();
    }
  for (unsigned i = 0; i < 4; i++)
    if (!strcmp(name, launch_fns[i])) {
      if (nargs == 1 && evaluate(a, ch->c[1], &d) && d >= 0 && d < 3)
        return int_val(atom_sym(a, A_LAUNCH, i * 3 + (unsigned)d));
      return unknown();
    }
  char op = atomic_op(name);
  if (op && nargs >= 1) {
    struct val ptr = eval(a, ch->c[1], M_READ);
    for (int i = 2; i <= nargs; i++)
      eval(a, ch->c[i], M_READ);
    if (ptr.k == V_PTR)
      record(a, c, ptr, const_sym(0), 1, M_READ | M_WRITE | M_ATOMIC, used ? 'x' : op, false);
    else
      unknown_pointer(a, ch->c[1], M_READ | M_WRITE | M_ATOMIC);
    return unknown();
  }
  int w = vector_width(name, "vload");
  if (w && nargs == 2) {
    struct val off = eval(a, ch->c[1], M_READ), ptr = eval(a, ch->c[2], M_READ);
    struct sym idx = off.k == V_INT ? sym_mul(a, off.s, const_sym(w)) : unknown_sym();
    if (ptr.k == V_PTR)
      record(a, c, ptr, idx, w, M_READ, 0, false);
    else
      unknown_pointer(a, ch->c[2], M_READ);
    return unknown();
  }
  w = vector_width(name, "vstore");
  if (w && nargs == 3) {
    eval(a, ch->c[1], M_READ);
    struct val off = eval(a, ch->c[2], M_READ), ptr = eval(a, ch->c[3], M_READ);
    struct sym idx = off.k == V_INT ? sym_mul(a, off.s, const_sym(w)) : unknown_sym();
    if (ptr.k == V_PTR)
      record(a, c, ptr, idx, w, M_WRITE, 0, false);
    else
      unknown_pointer(a, ch->c[3], M_WRITE);
    return unknown();
  }
  CXCursor def = callee(a, c, ch);
  struct kids fk = children(a, def);
  bool has_body = fk.n && a->cx->getCursorKind(fk.c[fk.n - 1]) == CXCursor_CompoundStmt;
  if (has_body)
    return inline_call(a, def, ch, name);
  if (!a->cx->Location_isInSystemHeader(a->cx->getCursorLocation(def)) && tokens_in(a, def) > 1) {
    set_whole(a, "it calls '%s', which its source does not define", name);
    return unknown();
  }
  /* A built-in (declared by the compiler itself, or in its headers): its pointer arguments
   * into buffers may be read or written whole. */
  for (int i = 1; i <= nargs; i++) {
    struct val x = eval(a, ch->c[i], M_READ);
    if (x.k == V_PTR) {
      x.lost = true;
      bool to_const = false;
      char type[128];
      spelling(a, a->cx->getTypeSpelling(a->cx->getCursorType(ch->c[i])), type, sizeof type);
      to_const = strstr(type, "const") != NULL;
      record(a, ch->c[i], x, const_sym(0), 1, to_const ? M_READ : M_READ | M_WRITE, 0, false);
    }
  }
  return unknown();
}

/* --- statements ------------------------------------------------------------------------------ */

static void declare(struct an *a, CXCursor decl)
{
  struct kids ch = children(a, decl);
  struct val v = unknown();
  if (ch.n) {
    int k = a->cx->getCursorKind(ch.c[ch.n - 1]);
    if (k != CXCursor_TypeRef)
      v = eval(a, ch.c[ch.n - 1], M_READ);
  }
  bind(a, decl, v);
}

/* `for (v = LO; v < HI; v++)` and its kin: v's range [lo, hi) free of variables, or false. */
static bool loop_range(struct an *a, struct kids *ch, CXCursor *var, struct loop *out)
{
  if (ch->n != 4)
    return false;
  /* init: one declaration, or an assignment */
  CXCursor init = ch->c[0];
  struct val lo = unknown();
  if (a->cx->getCursorKind(init) == CXCursor_DeclStmt) {
    struct kids d = children(a, init);
    if (d.n != 1 || a->cx->getCursorKind(d.c[0]) != CXCursor_VarDecl)
      return false;
    *var = d.c[0];
    struct kids vk = children(a, d.c[0]);
    if (!vk.n)
      return false;
    lo = eval(a, vk.c[vk.n - 1], M_READ);
  } else if (a->cx->getCursorKind(init) == CXCursor_BinaryOperator) {
    struct kids b = children(a, init);
    char op[8];
    if (b.n != 2)
      return false;
    operator_of(a, init, &b.c[0], op, sizeof op);
    CXCursor l = b.c[0];
    if (strcmp(op, "=") || a->cx->getCursorKind(l) != CXCursor_DeclRefExpr)
      return false;
    *var = a->cx->getCursorReferenced(l);
    lo = eval(a, b.c[1], M_READ);
  } else {
    return false;
  }
  /* cond: v < HI or v <= HI */
  CXCursor cond = ch->c[1];
  while (a->cx->getCursorKind(cond) == CXCursor_ParenExpr) {
    struct kids p = children(a, cond);
    cond = p.c[0];
  }
  struct kids cb = children(a, cond);
  if (a->cx->getCursorKind(cond) != CXCursor_BinaryOperator || cb.n != 2)
    return false;
  char op[8];
  operator_of(a, cond, &cb.c[0], op, sizeof op);
  CXCursor l = cb.c[0];
  while (a->cx->getCursorKind(l) == CXCursor_UnexposedExpr) {
    struct kids u = children(a, l);
    if (u.n != 1)
      break;
    l = u.c[0];
  }
  if (a->cx->getCursorKind(l) != CXCursor_DeclRefExpr ||
      !a->cx->equalCursors(a->cx->getCursorReferenced(l), *var))
    return false;
  struct val hi = eval(a, cb.c[1], M_READ);
  if (lo.k != V_INT || hi.k != V_INT || sym_has_var(lo.s) || sym_has_var(hi.s))
    return false;
  if (!strcmp(op, "<="))
    hi.s = sym_add(hi.s, const_sym(1), 1);
  else if (strcmp(op, "<"))
    return false;
  /* inc: v++, ++v or v += a positive constant */
  CXCursor inc = ch->c[2];
  struct kids ik = children(a, inc);
  char iop[8];
  int k = a->cx->getCursorKind(inc);
  if (k == CXCursor_UnaryOperator)
    operator_of(a, inc, NULL, iop, sizeof iop);
  else if (k == CXCursor_CompoundAssignOperator && ik.n == 2)
    operator_of(a, inc, &ik.c[0], iop, sizeof iop);
  else
    return false;
  int64_t step = 1;
  if (!strcmp(iop, "+=") && !(evaluate(a, ik.c[1], &step) && step > 0))
    return false;
  if (strcmp(iop, "++") && strcmp(iop, "post++") && strcmp(iop, "+="))
    return false;
  out->lo = lo.s;
  out->hi = hi.s;
  return true;
}

static void walk_loop(struct an *a, CXCursor c, struct kids *ch)
{
  CXCursor var;
  struct loop range;
  /* What the loop assigns is unknown in it, its counter aside. */
  forget_in(a, c);
  a->cond++;
  bool counted = a->cx->getCursorKind(c) == CXCursor_ForStmt && loop_range(a, ch, &var, &range) &&
                 a->nloops < MAX_ATOMS;
  if (counted) {
    /* The counter stays in [lo, hi) unless the body assigns it. */
    bind(a, var, int_val(const_sym(0)));
    forget_in(a, ch->c[3]);
    counted = lookup(a, var)->k == V_INT;
  }
  if (counted) {
    int id = a->nloops;
    a->loops[a->nloops++] = range;
    bind(a, var, int_val(atom_sym(a, A_LOOP, (unsigned)id)));
    walk(a, ch->c[3]);
    bind(a, var, unknown());
  } else if (ch->n) {
    /* The body: the last child of for and while, the first of do. */
    int body = a->cx->getCursorKind(c) == CXCursor_DoStmt ? 0 : ch->n - 1;
    for (int i = 0; i < ch->n; i++)
      if (i != body)
        walk(a, ch->c[i]);
    forget_in(a, c);
    walk(a, ch->c[body]);
    forget_in(a, c);
  }
  a->cond--;
}

static void walk_node(struct an *a, CXCursor c);

static void walk(struct an *a, CXCursor c)
{
  if (a->done || a->whole[0])
    return;
  if (a->nesting >= MAX_NESTING) {
    set_whole(a, "its expressions or statements nest deeper than %d", MAX_NESTING);
    return;
  }
  a->nesting++;
  walk_node(a, c);
  a->nesting--;
}

static void walk_node(struct an *a, CXCursor c)
{
  int k = a->cx->getCursorKind(c);
  struct kids ch = children(a, c);
  switch (k) {
  case CXCursor_CompoundStmt:
    for (int i = 0; i < ch.n && !a->done; i++)
      walk(a, ch.c[i]);
    return;
  case CXCursor_DeclStmt:
    for (int i = 0; i < ch.n; i++)
      if (a->cx->getCursorKind(ch.c[i]) == CXCursor_VarDecl)
        declare(a, ch.c[i]);
    return;
  case CXCursor_IfStmt:
    if (ch.n >= 2) {
      eval(a, ch.c[0], M_READ);
      a->cond++;
      for (int i = 1; i < ch.n; i++) {
        bool was_done = a->done;
        walk(a, ch.c[i]);
        a->done = was_done;
      }
      a->cond--;
      for (int i = 1; i < ch.n; i++)
        forget_in(a, ch.c[i]);
    }
    return;
  case CXCursor_ForStmt:
  case CXCursor_WhileStmt:
  case CXCursor_DoStmt:
    walk_loop(a, c, &ch);
    return;
  case CXCursor_SwitchStmt:
    a->cond++;
    for (int i = 0; i < ch.n; i++)
      walk(a, ch.c[i]);
    a->cond--;
    forget_in(a, c);
    return;
  case CXCursor_ReturnStmt:
    if (ch.n) {
      struct val v = eval(a, ch.c[0], M_READ);
      if (a->nret++ == 0)
        a->ret = v;
    }
    if (a->cond > 0)
      a->tail_cond = true;
    else
      a->done = true;
    return;
  case CXCursor_BreakStmt:
  case CXCursor_ContinueStmt:
  case CXCursor_NullStmt:
    return;
  case CXCursor_GotoStmt:
    set_whole(a, "it uses goto");
    return;
  default:
    if (k >= 200 && k < 300) { /* other statements: their parts, conditionally */
      a->cond++;
      for (int i = 0; i < ch.n; i++)
        walk(a, ch.c[i]);
      a->cond--;
      forget_in(a, c);
      return;
    }
    eval(a, c, 0);
  }
}

static void walk_body(struct an *a, CXCursor body)
{
  walk(a, body);
}

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
    snprintf(buf, cap, "%s(%c)", launch_fns[x / 3], axis[x % 3]);
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
  return x->width == y->width && sym_equal(x->idx, y->idx);
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
    /* Tier 2: the part's copy starts as the whole buffer; reads of it must be of what the
     * same work-item writes, never what other work-groups do. */
    for (size_t i = 0; i < a->nacc; i++) {
      const struct access *x = &a->acc[i];
      if (x->param != p || !(x->mode & M_READ) || (x->mode & M_WRITE))
        continue;
      /* The same place as a write of it: written alike, or bounded alike. */
      bool own = false;
      for (size_t j = 0; j < a->nacc && !own; j++) {
        const struct access *w = &a->acc[j];
        own = w->param == p && (w->mode & M_WRITE) &&
              (!strcmp(w->text, x->text) ||
               (!w->unbounded && !x->unbounded && same_access(w, x)));
      }
      if (!own) {
        snprintf(why, whylen, "it reads '%s' where other work-groups may write it (%s)",
                 pr->name, x->text);
        return false;
      }
    }
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
    spelling(a, a->cx->getTokenSpelling(a->tu, toks[i]), t, sizeof t);
    k = !strcmp(t, "__kernel") || !strcmp(t, "kernel");
  }
  if (toks)
    a->cx->disposeTokens(a->tu, toks, n);
  return k;
}

static void kernel_params(struct an *a, CXCursor fn, struct kids *fk)
{
  a->nparams = 0;
  for (int i = 0; i < fk->n && a->nparams < MAX_PARAMS; i++) {
    if (a->cx->getCursorKind(fk->c[i]) != CXCursor_ParmDecl)
      continue;
    struct param *p = &a->params[a->nparams];
    memset(p, 0, sizeof *p);
    cursor_name(a, fk->c[i], p->name, sizeof p->name);
    CXType t = a->cx->getCursorType(fk->c[i]);
    char type[160];
    spelling(a, a->cx->getTypeSpelling(t), type, sizeof type);
    p->pointer = a->cx->getCanonicalType(t).kind == CXType_Pointer;
    p->global = p->pointer && (strstr(type, "__global") || strstr(type, "__constant"));
    p->is_const = strstr(type, "__constant") || (p->pointer && !strncmp(type, "const ", 6));
    p->elem = pointee_size(a, t);
    if (strstr(type, "image") || strstr(type, "sampler_t"))
      set_whole(a, "it takes an image or a sampler ('%s')", p->name);
    a->pdecl[a->nparams] = fk->c[i];
    struct val v = unknown();
    if (p->global)
      v = (struct val){V_PTR, const_sym(0), a->nparams, false};
    else if (a->cx->getCanonicalType(t).kind >= CXType_Bool &&
             a->cx->getCanonicalType(t).kind <= CXType_Int128) {
      p->integer = true;
      v = int_val(atom_sym(a, A_PARAM, (unsigned)a->nparams));
    }
    a->nparams++;
    bind(a, fk->c[i], v);
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
  struct kids fk = children(a, fn);
  kernel_params(a, fn, &fk);
  if (fk.n && !a->whole[0])
    walk_body(a, fk.c[fk.n - 1]);
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
  struct kids fk = children(a, c);
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
  cursor_name(a, c, d->name, sizeof d->name);
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
