/* The walk over a kernel's code (annotations/derive_impl.h): statements in order, integer
 * expressions evaluated symbolically, every load and store through a buffer parameter recorded
 * with its index; helper functions the source defines walked at their calls. */
#include "config.h"

#include "annotations/derive_impl.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the environment ------------------------------------------------------------------------ */

static struct binding *binding_of(struct an *a, CXCursor decl)
{
  for (size_t i = a->nenv; i-- > 0;)
    if (a->cx->equalCursors(a->env[i].decl, decl))
      return &a->env[i];
  return NULL;
}

static struct val *lookup(struct an *a, CXCursor decl)
{
  struct binding *b = binding_of(a, decl);
  return b ? &b->v : NULL;
}

/* The array v of n elements of `size` bytes with room for one more (*cap grows by doubling),
 * or NULL without memory: the kernel then runs whole. */
static void *room(struct an *a, void *v, size_t n, size_t *cap, size_t size)
{
  if (n < *cap)
    return v;
  size_t c = *cap ? *cap * 2 : 32;
  void *g = realloc(v, c * size);
  if (!g) {
    dv_set_whole(a, "out of memory");
    return NULL;
  }
  *cap = c;
  return g;
}

void dv_bind(struct an *a, CXCursor decl, struct val v)
{
  struct binding *old = binding_of(a, decl);
  if (old) {
    old->v = old->escaped ? dv_unknown() : v;
    return;
  }
  struct binding *e = room(a, a->env, a->nenv, &a->capenv, sizeof *e);
  if (!e)
    return;
  a->env = e;
  a->env[a->nenv++] = (struct binding){decl, v, false};
}

/* c without the implicit conversions and parentheses around it. */
static CXCursor bare(struct an *a, CXCursor c)
{
  while (a->cx->getCursorKind(c) == CXCursor_UnexposedExpr ||
         a->cx->getCursorKind(c) == CXCursor_ParenExpr) {
    struct kids k = dv_children(a, c);
    if (k.n != 1)
      break;
    c = k.c[0];
  }
  return c;
}

/* Variables a statement may assign (=, op=, ++, --, &x): unknown from there on. */
static int forget_assigned(CXCursor c, CXCursor parent, CXClientData d)
{
  (void)parent;
  struct an *a = d;
  int k = a->cx->getCursorKind(c);
  if (k == CXCursor_BinaryOperator || k == CXCursor_CompoundAssignOperator ||
      k == CXCursor_UnaryOperator) {
    struct kids ch = dv_children(a, c);
    if (ch.n >= (k == CXCursor_UnaryOperator ? 1 : 2)) {
      char op[8];
      dv_operator_of(a, c, k == CXCursor_UnaryOperator ? NULL : &ch.c[0], op, sizeof op);
      bool assigns = k == CXCursor_CompoundAssignOperator || !strcmp(op, "=") ||
                     !strcmp(op, "++") || !strcmp(op, "--") || !strcmp(op, "post++") ||
                     !strcmp(op, "post--") || (k == CXCursor_UnaryOperator && !strcmp(op, "&"));
      CXCursor target = bare(a, ch.c[0]);
      if (assigns && a->cx->getCursorKind(target) == CXCursor_DeclRefExpr) {
        struct val *v = lookup(a, a->cx->getCursorReferenced(target));
        if (v)
          *v = dv_unknown();
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
  struct access *grown = room(a, a->acc, a->nacc, &a->capacc, sizeof *grown);
  if (!grown)
    return;
  a->acc = grown;
  struct access *x = &a->acc[a->nacc++];
  memset(x, 0, sizeof *x);
  x->param = ptr.param;
  x->mode = mode;
  x->op = op;
  x->cond = a->cond > 0 || a->tail_cond;
  x->partial = partial;
  x->idx = dv_sym_add(ptr.s, idx, 1);
  x->unbounded = ptr.lost || x->idx.n < 0;
  x->width = width;
  dv_text_of(a, where, x->text, sizeof x->text);
}

/* Accesses through a pointer that is not a known buffer parameter: a __global one may be
 * any buffer. */
static void unknown_pointer(struct an *a, CXCursor base, int mode)
{
  char type[128];
  dv_spelling(a, a->cx->getTypeSpelling(a->cx->getCursorType(base)), type, sizeof type);
  if (!strstr(type, "__global") && !strstr(type, "__constant"))
    return;
  for (int p = 0; p < a->nparams; p++)
    if (a->params[p].global) {
      struct val v = {V_PTR, dv_const_sym(0), p, true};
      record(a, base, v, dv_const_sym(0), 1, mode, 'x', false);
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
  struct kids ch = dv_children(a, c);
  if ((k == CXCursor_UnexposedExpr || k == CXCursor_ParenExpr) && ch.n == 1)
    return place(a, ch.c[0], ptr, idx, partial, base);
  if (k == CXCursor_ArraySubscriptExpr && ch.n == 2) {
    *base = ch.c[0];
    *ptr = eval(a, ch.c[0], M_READ);
    struct val i = eval(a, ch.c[1], M_READ);
    *idx = i.k == V_INT ? i.s : dv_unknown_sym();
    return true;
  }
  if (k == CXCursor_UnaryOperator && ch.n == 1) {
    char op[8];
    dv_operator_of(a, c, NULL, op, sizeof op);
    if (!strcmp(op, "*")) {
      *base = ch.c[0];
      *ptr = eval(a, ch.c[0], M_READ);
      *idx = dv_const_sym(0);
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
/* The access at lvalue c that place() found (through ptr at idx, base its pointer). */
static void access_placed(struct an *a, CXCursor c, int mode, struct val ptr, struct sym idx,
                          bool partial, CXCursor base)
{
  if (ptr.k == V_PTR)
    record(a, c, ptr, idx, 1, mode, 0, partial);
  else
    unknown_pointer(a, base, mode);
}

static void access_at(struct an *a, CXCursor c, int mode)
{
  struct val ptr = dv_unknown();
  struct sym idx = dv_unknown_sym();
  bool partial = false;
  CXCursor base = c;
  if (place(a, c, &ptr, &idx, &partial, &base))
    access_placed(a, c, mode, ptr, idx, partial, base);
  else
    eval(a, c, M_READ);
}

static struct val call(struct an *a, CXCursor c, struct kids *ch, bool used);

static struct val binary(struct an *a, CXCursor c, struct kids *ch)
{
  char op[8];
  dv_operator_of(a, c, &ch->c[0], op, sizeof op);
  if (!strcmp(op, "=")) {
    struct val r = eval(a, ch->c[1], M_READ);
    CXCursor lhs = bare(a, ch->c[0]);
    if (a->cx->getCursorKind(lhs) == CXCursor_DeclRefExpr) {
      CXCursor d = a->cx->getCursorReferenced(lhs);
      if (lookup(a, d) || a->cx->getCursorKind(d) == CXCursor_VarDecl)
        dv_bind(a, d, r);
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
    x.s = dv_sym_add(x.s, y.s, op[0] == '+' ? 1 : -1);
    x.lost |= x.s.n < 0;
    return x;
  }
  if (y.k == V_PTR && x.k == V_INT && !strcmp(op, "+")) {
    y.s = dv_sym_add(y.s, x.s, 1);
    y.lost |= y.s.n < 0;
    return y;
  }
  if (x.k != V_INT || y.k != V_INT)
    return dv_unknown();
  int64_t cy;
  if (!strcmp(op, "+"))
    return dv_int_val(dv_sym_add(x.s, y.s, 1));
  if (!strcmp(op, "-"))
    return dv_int_val(dv_sym_add(x.s, y.s, -1));
  if (!strcmp(op, "*"))
    return dv_int_val(dv_sym_mul(a, x.s, y.s));
  if (!strcmp(op, "<<") && dv_sym_const_value(y.s, &cy) && cy >= 0 && cy < 32)
    return dv_int_val(dv_sym_mul(a, x.s, dv_const_sym((int64_t)1 << cy)));
  int64_t cx;
  if (dv_sym_const_value(x.s, &cx) && dv_sym_const_value(y.s, &cy)) {
    if (!strcmp(op, "/") && cy)
      return dv_int_val(dv_const_sym(cx / cy));
    if (!strcmp(op, "%") && cy)
      return dv_int_val(dv_const_sym(cx % cy));
    if (!strcmp(op, ">>") && cy >= 0 && cy < 63)
      return dv_int_val(dv_const_sym(cx >> cy));
  }
  return dv_unknown();
}

static struct val unary(struct an *a, CXCursor c, struct kids *ch)
{
  char op[8];
  dv_operator_of(a, c, NULL, op, sizeof op);
  if (!strcmp(op, "&")) {
    /* The address of an element: a pointer, no access. */
    struct val ptr = dv_unknown();
    struct sym idx = dv_unknown_sym();
    bool partial = false;
    CXCursor base = c;
    if (place(a, ch->c[0], &ptr, &idx, &partial, &base) && ptr.k == V_PTR) {
      ptr.s = dv_sym_add(ptr.s, idx, 1);
      ptr.lost |= ptr.s.n < 0 || partial;
      return ptr;
    }
    /* A variable's address: it may be written through the pointer, now or later. */
    CXCursor v = bare(a, ch->c[0]);
    struct binding *b = a->cx->getCursorKind(v) == CXCursor_DeclRefExpr
                            ? binding_of(a, a->cx->getCursorReferenced(v)) : NULL;
    if (b) {
      b->escaped = true;
      b->v = dv_unknown();
    }
    eval(a, ch->c[0], M_READ);
    return dv_unknown();
  }
  if (!strcmp(op, "*")) {
    access_at(a, c, M_READ);
    return dv_unknown();
  }
  if (strstr(op, "++") || strstr(op, "--")) {
    access_at(a, ch->c[0], M_READ | M_WRITE);
    return dv_unknown();
  }
  struct val x = eval(a, ch->c[0], M_READ);
  if (!strcmp(op, "-") && x.k == V_INT)
    return dv_int_val(dv_sym_mul(a, x.s, dv_const_sym(-1)));
  if (!strcmp(op, "+"))
    return x;
  return dv_unknown();
}

#define MAX_NESTING 160

static struct val eval_node(struct an *a, CXCursor c, int mode);

/* Expressions nest as deep as the source writes them: a bound keeps the walk's stack (about
 * 4 KiB a level) within a thread's. */
static struct val eval(struct an *a, CXCursor c, int mode)
{
  if (a->nesting >= MAX_NESTING) {
    dv_set_whole(a, "its expressions or statements nest deeper than %d", MAX_NESTING);
    return dv_unknown();
  }
  a->nesting++;
  struct val v = eval_node(a, c, mode);
  a->nesting--;
  return v;
}

/* x op= y: a variable's value follows for += and -= of integers or pointers (else it is
 * unknown); memory is read and written. */
static void compound_assign(struct an *a, CXCursor c, struct kids *ch)
{
  char op[8];
  dv_operator_of(a, c, &ch->c[0], op, sizeof op);
  struct val r = eval(a, ch->c[1], M_READ);
  CXCursor lhs = bare(a, ch->c[0]);
  if (a->cx->getCursorKind(lhs) == CXCursor_DeclRefExpr) {
    struct val *b = lookup(a, a->cx->getCursorReferenced(lhs));
    if (b) {
      if (b->k == V_INT && r.k == V_INT && (!strcmp(op, "+=") || !strcmp(op, "-=")))
        *b = dv_int_val(dv_sym_add(b->s, r.s, op[0] == '+' ? 1 : -1));
      else if (b->k == V_PTR && r.k == V_INT && (!strcmp(op, "+=") || !strcmp(op, "-="))) {
        b->s = dv_sym_add(b->s, r.s, op[0] == '+' ? 1 : -1);
        b->lost |= b->s.n < 0;
      } else
        *b = dv_unknown();
    }
  } else {
    access_at(a, lhs, M_READ | M_WRITE);
  }
}

static struct val eval_node(struct an *a, CXCursor c, int mode)
{
  int k = a->cx->getCursorKind(c);
  struct kids ch = dv_children(a, c);
  int64_t v;
  switch (k) {
  case CXCursor_IntegerLiteral:
  case CXCursor_CharacterLiteral:
  case CXCursor_UnaryExpr: /* sizeof */
    return dv_evaluate(a, c, &v) ? dv_int_val(dv_const_sym(v)) : dv_unknown();
  case CXCursor_UnexposedExpr:
  case CXCursor_ParenExpr:
  case CXCursor_CStyleCastExpr: {
    if (!ch.n)
      return dv_unknown();
    struct val x = eval(a, ch.c[ch.n - 1], mode);
    if (x.k == V_PTR) {
      int64_t to = dv_pointee_size(a, a->cx->getCursorType(c));
      if (to != a->params[x.param].elem)
        x.lost = true;
    } else if (x.k == V_INT) {
      /* A cast to a floating type leaves the integers. */
      char type[64];
      dv_spelling(a, a->cx->getTypeSpelling(a->cx->getCanonicalType(a->cx->getCursorType(c))), type,
               sizeof type);
      if (strstr(type, "float") || strstr(type, "double") || strstr(type, "half"))
        return dv_unknown();
    }
    return x;
  }
  case CXCursor_DeclRefExpr: {
    CXCursor d = a->cx->getCursorReferenced(c);
    struct val *b = lookup(a, d);
    if (b)
      return *b;
    return dv_evaluate(a, c, &v) ? dv_int_val(dv_const_sym(v)) : dv_unknown();
  }
  case CXCursor_ArraySubscriptExpr:
    access_at(a, c, M_READ);
    return dv_unknown();
  case CXCursor_MemberRefExpr:
    if (ch.n == 1) {
      struct val ptr = dv_unknown();
      struct sym idx;
      bool partial = false;
      CXCursor base = c;
      /* Placed once: its index is evaluated (and its reads recorded) once. */
      if (place(a, c, &ptr, &idx, &partial, &base))
        access_placed(a, c, M_READ, ptr, idx, partial, base);
      else
        eval(a, ch.c[0], M_READ);
    }
    return dv_unknown();
  case CXCursor_BinaryOperator:
    return ch.n == 2 ? binary(a, c, &ch) : dv_unknown();
  case CXCursor_CompoundAssignOperator:
    if (ch.n == 2)
      compound_assign(a, c, &ch);
    return dv_unknown();
  case CXCursor_UnaryOperator:
    return ch.n == 1 ? unary(a, c, &ch) : dv_unknown();
  case CXCursor_ConditionalOperator:
    if (ch.n == 3) {
      eval(a, ch.c[0], M_READ);
      a->cond++;
      struct val x = eval(a, ch.c[1], M_READ), y = eval(a, ch.c[2], M_READ);
      a->cond--;
      if (x.k == V_INT && y.k == V_INT && dv_sym_equal(x.s, y.s))
        return x;
      if (x.k == V_PTR && y.k == V_PTR && x.param == y.param && dv_sym_equal(x.s, y.s))
        return x;
    }
    return dv_unknown();
  case CXCursor_CallExpr:
    return call(a, c, &ch, mode != 0);
  default:
    for (int i = 0; i < ch.n; i++)
      eval(a, ch.c[i], M_READ);
    return dv_unknown();
  }
}

/* --- calls ----------------------------------------------------------------------------------- */

static const struct {
  const char *name;
  enum atom_kind kind;
} work_item[] = {
  {"get_global_id", A_GID}, {"get_group_id", A_GRP}, {"get_local_id", A_LID},
};
const char *const dv_launch_fns[4] = {"get_global_size", "get_local_size", "get_num_groups",
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

void dv_walk_body(struct an *a, CXCursor body);

static struct val inline_call(struct an *a, CXCursor def, struct kids *ch, const char *name)
{
  if (a->depth >= MAX_DEPTH) {
    dv_set_whole(a, "its helper calls nest deeper than %d ('%s')", MAX_DEPTH, name);
    return dv_unknown();
  }
  struct kids fk = dv_children(a, def);
  int np = 0;
  struct val args[MAX_PARAMS];
  CXCursor decls[MAX_PARAMS];
  for (int i = 0; i < fk.n; i++)
    if (a->cx->getCursorKind(fk.c[i]) == CXCursor_ParmDecl && np < MAX_PARAMS)
      decls[np++] = fk.c[i];
  for (int i = 1; i < ch->n && i - 1 < np; i++)
    args[i - 1] = eval(a, ch->c[i], M_READ);
  for (int i = 0; i < np && i + 1 < ch->n; i++)
    dv_bind(a, decls[i], args[i]);
  CXCursor body = fk.c[fk.n - 1];
  struct val saved_ret = a->ret;
  int saved_nret = a->nret;
  bool saved_done = a->done, saved_tail = a->tail_cond;
  int saved_cond = a->cond;
  a->ret = dv_unknown();
  a->nret = 0;
  a->done = false;
  a->depth++;
  dv_walk_body(a, body);
  a->depth--;
  struct val r = a->nret == 1 ? a->ret : dv_unknown();
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
  dv_cursor_name(a, c, name, sizeof name);
  int nargs = ch->n - 1;
  int64_t d;
  for (size_t i = 0; i < sizeof work_item / sizeof *work_item; i++)
    if (!strcmp(name, work_item[i].name)) {
      if (nargs == 1 && dv_evaluate(a, ch->c[1], &d) && d >= 0 && d < 3)
        return dv_int_val(dv_atom_sym(a, work_item[i].kind, (unsigned)d));
      return dv_unknown();
    }
  for (unsigned i = 0; i < 4; i++)
    if (!strcmp(name, dv_launch_fns[i])) {
      if (nargs == 1 && dv_evaluate(a, ch->c[1], &d) && d >= 0 && d < 3)
        return dv_int_val(dv_atom_sym(a, A_LAUNCH, i * 3 + (unsigned)d));
      return dv_unknown();
    }
  char op = atomic_op(name);
  if (op && nargs >= 1) {
    struct val ptr = eval(a, ch->c[1], M_READ);
    for (int i = 2; i <= nargs; i++)
      eval(a, ch->c[i], M_READ);
    if (ptr.k == V_PTR)
      record(a, c, ptr, dv_const_sym(0), 1, M_READ | M_WRITE | M_ATOMIC, used ? 'x' : op, false);
    else
      unknown_pointer(a, ch->c[1], M_READ | M_WRITE | M_ATOMIC);
    return dv_unknown();
  }
  /* vloadN(offset, p) reads, vstoreN(value, offset, p) writes elements [N*offset, N*offset+N). */
  int w = vector_width(name, "vload"), at = 1, mode = M_READ;
  if (!w && (w = vector_width(name, "vstore"))) {
    eval(a, ch->c[1], M_READ);
    at = 2;
    mode = M_WRITE;
  }
  if (w && nargs == at + 1) {
    struct val off = eval(a, ch->c[at], M_READ), ptr = eval(a, ch->c[at + 1], M_READ);
    struct sym idx = off.k == V_INT ? dv_sym_mul(a, off.s, dv_const_sym(w)) : dv_unknown_sym();
    if (ptr.k == V_PTR)
      record(a, c, ptr, idx, w, mode, 0, false);
    else
      unknown_pointer(a, ch->c[at + 1], mode);
    return dv_unknown();
  }
  CXCursor def = callee(a, c, ch);
  struct kids fk = dv_children(a, def);
  bool has_body = fk.n && a->cx->getCursorKind(fk.c[fk.n - 1]) == CXCursor_CompoundStmt;
  if (has_body)
    return inline_call(a, def, ch, name);
  bool declared = dv_tokens_in(a, def) > 1; /* not by the compiler itself */
  if (!a->cx->Location_isInSystemHeader(a->cx->getCursorLocation(def)) && declared) {
    dv_set_whole(a, "it calls '%s', which its source does not define", name);
    return dv_unknown();
  }
  /* A built-in (declared by the compiler itself, or in its headers): its pointer arguments
   * into buffers may be read or written whole. */
  for (int i = 1; i <= nargs; i++) {
    struct val x = eval(a, ch->c[i], M_READ);
    if (x.k == V_PTR) {
      x.lost = true;
      bool to_const = false;
      char type[128];
      dv_spelling(a, a->cx->getTypeSpelling(a->cx->getCursorType(ch->c[i])), type, sizeof type);
      to_const = strstr(type, "const") != NULL;
      record(a, ch->c[i], x, dv_const_sym(0), 1, to_const ? M_READ : M_READ | M_WRITE, 0, false);
    }
  }
  return dv_unknown();
}

/* --- statements ------------------------------------------------------------------------------ */

static void declare(struct an *a, CXCursor decl)
{
  struct kids ch = dv_children(a, decl);
  struct val v = dv_unknown();
  if (ch.n) {
    int k = a->cx->getCursorKind(ch.c[ch.n - 1]);
    if (k != CXCursor_TypeRef)
      v = eval(a, ch.c[ch.n - 1], M_READ);
  }
  dv_bind(a, decl, v);
}

/* `for (v = LO; v < HI; v++)` and its kin: v's range [lo, hi) free of variables, or false. */
static bool loop_range(struct an *a, struct kids *ch, CXCursor *var, struct loop *out)
{
  if (ch->n != 4)
    return false;
  /* init: one declaration, or an assignment */
  CXCursor init = ch->c[0];
  struct val lo = dv_unknown();
  if (a->cx->getCursorKind(init) == CXCursor_DeclStmt) {
    struct kids d = dv_children(a, init);
    if (d.n != 1 || a->cx->getCursorKind(d.c[0]) != CXCursor_VarDecl)
      return false;
    *var = d.c[0];
    struct kids vk = dv_children(a, d.c[0]);
    if (!vk.n)
      return false;
    lo = eval(a, vk.c[vk.n - 1], M_READ);
  } else if (a->cx->getCursorKind(init) == CXCursor_BinaryOperator) {
    struct kids b = dv_children(a, init);
    char op[8];
    if (b.n != 2)
      return false;
    dv_operator_of(a, init, &b.c[0], op, sizeof op);
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
    struct kids p = dv_children(a, cond);
    cond = p.c[0];
  }
  struct kids cb = dv_children(a, cond);
  if (a->cx->getCursorKind(cond) != CXCursor_BinaryOperator || cb.n != 2)
    return false;
  char op[8];
  dv_operator_of(a, cond, &cb.c[0], op, sizeof op);
  CXCursor l = bare(a, cb.c[0]);
  if (a->cx->getCursorKind(l) != CXCursor_DeclRefExpr ||
      !a->cx->equalCursors(a->cx->getCursorReferenced(l), *var))
    return false;
  struct val hi = eval(a, cb.c[1], M_READ);
  if (lo.k != V_INT || hi.k != V_INT || dv_sym_has_var(lo.s) || dv_sym_has_var(hi.s))
    return false;
  if (!strcmp(op, "<="))
    hi.s = dv_sym_add(hi.s, dv_const_sym(1), 1);
  else if (strcmp(op, "<"))
    return false;
  /* inc: v++, ++v or v += a positive constant */
  CXCursor inc = ch->c[2];
  struct kids ik = dv_children(a, inc);
  char iop[8];
  int k = a->cx->getCursorKind(inc);
  if (k == CXCursor_UnaryOperator)
    dv_operator_of(a, inc, NULL, iop, sizeof iop);
  else if (k == CXCursor_CompoundAssignOperator && ik.n == 2)
    dv_operator_of(a, inc, &ik.c[0], iop, sizeof iop);
  else
    return false;
  int64_t step = 1;
  if (!strcmp(iop, "+=") && !(dv_evaluate(a, ik.c[1], &step) && step > 0))
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
    dv_bind(a, var, dv_int_val(dv_const_sym(0)));
    forget_in(a, ch->c[3]);
    counted = lookup(a, var)->k == V_INT;
  }
  if (counted) {
    int id = a->nloops;
    a->loops[a->nloops++] = range;
    dv_bind(a, var, dv_int_val(dv_atom_sym(a, A_LOOP, (unsigned)id)));
    walk(a, ch->c[3]);
    dv_bind(a, var, dv_unknown());
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
    dv_set_whole(a, "its expressions or statements nest deeper than %d", MAX_NESTING);
    return;
  }
  a->nesting++;
  walk_node(a, c);
  a->nesting--;
}

/* A statement whose parts may or may not run (a switch, statements not told apart): each
 * part walked as conditional, and what they assign unknown after. */
static void walk_conditionally(struct an *a, CXCursor c, struct kids *ch)
{
  a->cond++;
  for (int i = 0; i < ch->n; i++)
    walk(a, ch->c[i]);
  a->cond--;
  forget_in(a, c);
}

static void walk_node(struct an *a, CXCursor c)
{
  int k = a->cx->getCursorKind(c);
  struct kids ch = dv_children(a, c);
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
    walk_conditionally(a, c, &ch);
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
    dv_set_whole(a, "it uses goto");
    return;
  default:
    if (k >= 200 && k < 300) { /* other statements */
      walk_conditionally(a, c, &ch);
      return;
    }
    eval(a, c, 0);
  }
}

void dv_walk_body(struct an *a, CXCursor body)
{
  walk(a, body);
}
