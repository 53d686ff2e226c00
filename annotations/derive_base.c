/* Affine forms and reading clang's AST for annotations derived from kernels' code
 * (annotations/derive_impl.h). */
#include "config.h"

#include "annotations/derive_impl.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- affine forms ---------------------------------------------------------------------------- */

void dv_set_whole(struct an *a, const char *fmt, ...)
{
  if (a->whole[0])
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->whole, sizeof a->whole, fmt, ap);
  va_end(ap);
}

struct sym dv_unknown_sym(void)
{
  struct sym s;
  s.n = -1;
  return s;
}

struct sym dv_const_sym(int64_t c)
{
  struct sym s = {0};
  if (c) {
    s.n = 1;
    s.t[0] = (struct term){c, 0, {0}, -1};
  }
  return s;
}

bool dv_is_var(const struct an *a, int atom)
{
  return a->atoms[atom].kind >= A_GID;
}

int dv_atom(struct an *a, enum atom_kind kind, unsigned index)
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

struct sym dv_atom_sym(struct an *a, enum atom_kind kind, unsigned index)
{
  int i = dv_atom(a, kind, index);
  if (i < 0)
    return dv_unknown_sym();
  struct sym s = {1, {{1, 0, {0}, -1}}};
  if (dv_is_var(a, i))
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

struct sym dv_sym_add(struct sym x, struct sym y, int64_t sign)
{
  if (x.n < 0 || y.n < 0)
    return dv_unknown_sym();
  for (int i = 0; i < y.n; i++) {
    struct term t = y.t[i];
    t.c *= sign;
    if (!add_term(&x, t))
      return dv_unknown_sym();
  }
  return x;
}

struct sym dv_sym_mul(const struct an *a, struct sym x, struct sym y)
{
  if (x.n < 0 || y.n < 0)
    return dv_unknown_sym();
  struct sym r = {0};
  for (int i = 0; i < x.n; i++)
    for (int j = 0; j < y.n; j++) {
      const struct term *p = &x.t[i], *q = &y.t[j];
      if ((p->v >= 0 && q->v >= 0) || p->nf + q->nf > MAX_FACTORS)
        return dv_unknown_sym();
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
        return dv_unknown_sym();
    }
  (void)a;
  return r;
}

bool dv_sym_const_value(struct sym s, int64_t *c)
{
  if (s.n < 0 || s.n > 1 || (s.n == 1 && (s.t[0].nf || s.t[0].v >= 0)))
    return false;
  *c = s.n ? s.t[0].c : 0;
  return true;
}

bool dv_sym_has_var(struct sym s)
{
  for (int i = 0; i < s.n; i++)
    if (s.t[i].v >= 0)
      return true;
  return false;
}

bool dv_sym_equal(struct sym x, struct sym y)
{
  struct sym d = dv_sym_add(x, y, -1);
  return x.n >= 0 && y.n >= 0 && d.n == 0;
}

struct val dv_unknown(void)
{
  struct val v;
  memset(&v, 0, sizeof v);
  v.k = V_UNKNOWN;
  v.s.n = -1;
  v.param = -1;
  return v;
}

struct val dv_int_val(struct sym s)
{
  if (s.n < 0)
    return dv_unknown();
  struct val v = {V_INT, s, -1, false};
  return v;
}

/* --- the AST --------------------------------------------------------------------------------- */
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

struct kids dv_children(struct an *a, CXCursor c)
{
  struct kids k;
  k.n = 0;
  k.more = false;
  a->cx->visitChildren(c, collect, &k);
  if (k.more)
    dv_set_whole(a, "a block or call has more than %d parts", MAX_CHILDREN);
  return k;
}

void dv_spelling(const struct an *a, CXString s, char *buf, size_t cap)
{
  const char *t = a->cx->getCString(s);
  snprintf(buf, cap, "%s", t ? t : "");
  a->cx->disposeString(s);
}

void dv_cursor_name(const struct an *a, CXCursor c, char *buf, size_t cap)
{
  dv_spelling(a, a->cx->getCursorSpelling(c), buf, cap);
}

static unsigned offset_of(const struct an *a, CXSourceLocation l)
{
  unsigned off = 0;
  a->cx->getSpellingLocation(l, NULL, NULL, NULL, &off);
  return off;
}

/* The operator of a binary or compound assignment (lhs: its two operands, in an array): the
 * one punctuation token between them; of a unary one, its first token, or its last (postfix
 * ++ and --). "" when it cannot be told. */
void dv_operator_of(const struct an *a, CXCursor c, const CXCursor *lhs, char *op, size_t cap)
{
  CXToken *toks = NULL;
  unsigned n = 0;
  op[0] = 0;
  a->cx->tokenize(a->tu, a->cx->getCursorExtent(c), &toks, &n);
  if (!n)
    return;
  if (lhs) {
    /* The one token between the operands, which must lie in order in the file (operands
     * from macro expansions may not: then no operator is told, and the value is unknown). */
    unsigned end = offset_of(a, a->cx->getRangeEnd(a->cx->getCursorExtent(lhs[0])));
    unsigned start = offset_of(a, a->cx->getRangeStart(a->cx->getCursorExtent(lhs[1])));
    unsigned between = 0, at = 0;
    for (unsigned i = 0; i < n && start > end; i++) {
      CXSourceRange r = a->cx->getTokenExtent(a->tu, toks[i]);
      unsigned t0 = offset_of(a, a->cx->getRangeStart(r)), t1 = offset_of(a, a->cx->getRangeEnd(r));
      if (t0 >= end && t1 <= start) {
        between++;
        at = i;
      }
    }
    if (between == 1 && a->cx->getTokenKind(toks[at]) == CXToken_Punctuation)
      dv_spelling(a, a->cx->getTokenSpelling(a->tu, toks[at]), op, cap);
  } else if (a->cx->getTokenKind(toks[0]) == CXToken_Punctuation) {
    dv_spelling(a, a->cx->getTokenSpelling(a->tu, toks[0]), op, cap);
  } else if (a->cx->getTokenKind(toks[n - 1]) == CXToken_Punctuation) {
    char last[8];
    dv_spelling(a, a->cx->getTokenSpelling(a->tu, toks[n - 1]), last, sizeof last);
    if (!strcmp(last, "++") || !strcmp(last, "--"))
      snprintf(op, cap, "post%c%c", last[0], last[1]);
  }
  a->cx->disposeTokens(a->tu, toks, n);
}

unsigned dv_tokens_in(const struct an *a, CXCursor c)
{
  CXToken *toks = NULL;
  unsigned n = 0;
  a->cx->tokenize(a->tu, a->cx->getCursorExtent(c), &toks, &n);
  if (toks)
    a->cx->disposeTokens(a->tu, toks, n);
  return n;
}

/* The source text of c, its tokens joined. */
void dv_text_of(const struct an *a, CXCursor c, char *buf, size_t cap)
{
  CXToken *toks = NULL;
  unsigned n = 0;
  size_t len = 0;
  buf[0] = 0;
  a->cx->tokenize(a->tu, a->cx->getCursorExtent(c), &toks, &n);
  for (unsigned i = 0; i < n && len + 1 < cap; i++) {
    char t[64];
    dv_spelling(a, a->cx->getTokenSpelling(a->tu, toks[i]), t, sizeof t);
    len += (size_t)snprintf(buf + len, cap - len, "%s", t);
  }
  if (toks)
    a->cx->disposeTokens(a->tu, toks, n);
}

/* An integer constant expression's value. */
bool dv_evaluate(const struct an *a, CXCursor c, int64_t *v)
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
int64_t dv_pointee_size(const struct an *a, CXType t)
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
