/* The annotation language: a recursive-descent parser (one function per grammar rule of
 * doc/split.md, "Annotations") into affine expressions; their evaluation over the variable
 * ranges of one part is annotations/region.c's. */
#include "config.h"

#include "annotations/annotation.h"
#include "annotations/annotation_impl.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- tokens -------------------------------------------------------------------------------- */

enum tok_kind { T_END, T_IDENT, T_NUM, T_ARROW, T_PUNCT };

struct parser {
  const char *text, *at;
  enum tok_kind kind;
  char ident[64];
  int64_t num;
  char punct;
  int column; /* of the current token, 1-based */
  struct tt_ann *ann;
  const struct tt_ann_param *params;
  size_t nparams;
  const struct tt_ann_macro *macros;
  size_t nmacros;
  char *err;
  size_t errlen;
  bool failed;
};

static void fail(struct parser *p, int column, const char *fmt, ...)
{
  if (p->failed)
    return;
  p->failed = true;
  int n = snprintf(p->err, p->errlen, "column %d: ", column);
  va_list ap;
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < p->errlen)
    vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
  va_end(ap);
}

static void next(struct parser *p)
{
  while (isspace((unsigned char)*p->at))
    p->at++;
  p->column = (int)(p->at - p->text) + 1;
  const char *s = p->at;
  if (!*s) {
    p->kind = T_END;
  } else if (isalpha((unsigned char)*s) || *s == '_') {
    size_t n = 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '_')
      n++;
    if (n >= sizeof p->ident) {
      fail(p, p->column, "name too long");
      n = sizeof p->ident - 1;
    }
    memcpy(p->ident, s, n);
    p->ident[n] = 0;
    p->kind = T_IDENT;
    while (isalnum((unsigned char)*p->at) || *p->at == '_')
      p->at++;
  } else if (isdigit((unsigned char)*s)) {
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    if (v > INT64_MAX)
      fail(p, p->column, "number too large");
    /* Integer suffixes of OpenCL C literals. */
    while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
      end++;
    if (isalnum((unsigned char)*end) || *end == '.')
      fail(p, p->column, "expected an integer");
    p->num = (int64_t)v;
    p->kind = T_NUM;
    p->at = end;
  } else if (s[0] == '=' && s[1] == '>') {
    p->kind = T_ARROW;
    p->at += 2;
  } else {
    p->kind = T_PUNCT;
    p->punct = *s;
    p->at++;
  }
}

static bool is_punct(const struct parser *p, char c)
{
  return p->kind == T_PUNCT && p->punct == c;
}

static bool is_word(const struct parser *p, const char *w)
{
  return p->kind == T_IDENT && !strcmp(p->ident, w);
}

static const char *describe(const struct parser *p, char *buf, size_t cap)
{
  switch (p->kind) {
  case T_END:
    return "the end";
  case T_IDENT:
    snprintf(buf, cap, "'%s'", p->ident);
    return buf;
  case T_NUM:
    snprintf(buf, cap, "%lld", (long long)p->num);
    return buf;
  case T_ARROW:
    return "'=>'";
  case T_PUNCT:
    snprintf(buf, cap, "'%c'", p->punct);
    return buf;
  }
  return "?";
}

static void expect(struct parser *p, char c)
{
  if (is_punct(p, c)) {
    next(p);
    return;
  }
  char b[80];
  fail(p, p->column, "expected '%c', found %s", c, describe(p, b, sizeof b));
}

/* --- expressions --------------------------------------------------------------------------- */

static struct expr *node(struct parser *p, enum expr_kind kind, int column)
{
  struct tt_ann *a = p->ann;
  if (a->nnodes == a->capnodes) {
    size_t cap = a->capnodes ? a->capnodes * 2 : 32;
    struct expr **n = realloc(a->nodes, cap * sizeof *n);
    if (!n) {
      fail(p, column, "out of memory");
      return NULL;
    }
    a->nodes = n;
    a->capnodes = cap;
  }
  struct expr *e = calloc(1, sizeof *e);
  if (!e) {
    fail(p, column, "out of memory");
    return NULL;
  }
  e->kind = kind;
  e->column = column;
  a->nodes[a->nnodes++] = e;
  return e;
}

static struct expr *parse_expr(struct parser *p);

/* get_global_size(D) and its kin: a value of the launch, D an integer literal 0..2. */
static struct expr *parse_launch_value(struct parser *p, unsigned what, int col)
{
  next(p);
  expect(p, '(');
  if (p->failed)
    return NULL;
  if (p->kind != T_NUM || p->num > 2) {
    fail(p, p->column, "expected a dimension 0, 1 or 2");
    return NULL;
  }
  struct expr *e = node(p, E_LAUNCH, col);
  if (e)
    e->index = what * 3 + (unsigned)p->num;
  next(p);
  expect(p, ')');
  return e;
}

static struct expr *parse_primary(struct parser *p)
{
  int col = p->column;
  if (p->kind == T_NUM) {
    struct expr *e = node(p, E_NUM, col);
    if (e)
      e->num = p->num;
    next(p);
    return e;
  }
  if (is_punct(p, '(')) {
    next(p);
    struct expr *e = parse_expr(p);
    expect(p, ')');
    return e;
  }
  if (p->kind == T_IDENT) {
    static const char *const launch_names[L_COUNT] = {"get_global_size", "get_local_size",
                                                      "get_num_groups", "get_global_offset"};
    for (unsigned w = 0; w < L_COUNT; w++)
      if (!strcmp(p->ident, launch_names[w]))
        return parse_launch_value(p, w, col);
    struct expr *e = NULL;
    for (unsigned i = 0; i < p->ann->nvars && !e; i++)
      if (!strcmp(p->ann->vars[i].name, p->ident)) {
        if ((e = node(p, E_VAR, col))) {
          e->index = i;
          e->has_var = true;
        }
      }
    for (size_t i = 0; i < p->nparams && !e; i++)
      if (!strcmp(p->params[i].name, p->ident)) {
        if (!p->params[i].integer || p->params[i].pointer) {
          fail(p, col, "'%s' is not an integer scalar parameter", p->ident);
          return NULL;
        }
        if ((e = node(p, E_PARAM, col)))
          e->index = (unsigned)i;
      }
    for (size_t i = 0; i < p->nmacros && !e; i++)
      if (!strcmp(p->macros[i].name, p->ident))
        if ((e = node(p, E_NUM, col)))
          e->num = p->macros[i].value;
    if (!e && !p->failed)
      fail(p, col, "unknown name '%s' (expected a bound variable, an integer parameter or a "
           "-D macro)", p->ident);
    next(p);
    return e;
  }
  char b[80];
  fail(p, col, "expected an expression, found %s", describe(p, b, sizeof b));
  return NULL;
}

static struct expr *parse_unary(struct parser *p)
{
  if (is_punct(p, '-')) {
    int col = p->column;
    next(p);
    struct expr *x = parse_unary(p);
    struct expr *e = x ? node(p, E_NEG, col) : NULL;
    if (e) {
      e->a = x;
      e->has_var = x->has_var;
    }
    return e;
  }
  if (is_punct(p, '+')) {
    next(p);
    return parse_unary(p);
  }
  return parse_primary(p);
}

static struct expr *binary(struct parser *p, enum expr_kind kind, int col, struct expr *l,
                           struct expr *r)
{
  if (!l || !r)
    return NULL;
  /* Affine in the bound variables: a product needs a side free of them, a quotient a
   * divisor free of them (and positive: checked where known). */
  if (kind == E_MUL && l->has_var && r->has_var) {
    fail(p, col, "not affine: both sides of '*' use bound variables");
    return NULL;
  }
  if (kind == E_DIV && r->has_var) {
    fail(p, col, "not affine: the divisor uses a bound variable");
    return NULL;
  }
  if (kind == E_DIV && r->kind == E_NUM && r->num <= 0) {
    fail(p, r->column, "the divisor must be positive");
    return NULL;
  }
  struct expr *e = node(p, kind, col);
  if (e) {
    e->a = l;
    e->b = r;
    e->has_var = l->has_var || r->has_var;
  }
  return e;
}

static struct expr *parse_term(struct parser *p)
{
  struct expr *e = parse_unary(p);
  while (!p->failed && (is_punct(p, '*') || is_punct(p, '/'))) {
    enum expr_kind k = p->punct == '*' ? E_MUL : E_DIV;
    int col = p->column;
    next(p);
    e = binary(p, k, col, e, parse_unary(p));
  }
  return e;
}

static struct expr *parse_expr(struct parser *p)
{
  struct expr *e = parse_term(p);
  while (!p->failed && (is_punct(p, '+') || is_punct(p, '-'))) {
    enum expr_kind k = p->punct == '+' ? E_ADD : E_SUB;
    int col = p->column;
    next(p);
    e = binary(p, k, col, e, parse_term(p));
  }
  return e;
}

/* --- annotations --------------------------------------------------------------------------- */

/* Whether `name` may be bound: not bound yet, not a parameter's name. */
static bool new_variable(struct parser *p, const char *name)
{
  struct tt_ann *a = p->ann;
  for (unsigned i = 0; i < a->nvars; i++)
    if (!strcmp(a->vars[i].name, name)) {
      fail(p, p->column, "variable '%s' bound twice", name);
      return false;
    }
  for (size_t i = 0; i < p->nparams; i++)
    if (!strcmp(p->params[i].name, name)) {
      fail(p, p->column, "variable '%s' hides the kernel parameter of that name", name);
      return false;
    }
  if (a->nvars == MAX_VARS) {
    fail(p, p->column, "too many variables");
    return false;
  }
  return true;
}

/* `NAME in LO:HI`: a variable over [LO, HI), both free of variables. */
static void parse_range_binding(struct parser *p)
{
  struct tt_ann *a = p->ann;
  if (!new_variable(p, p->ident))
    return;
  struct var *v = &a->vars[a->nvars];
  snprintf(v->name, sizeof v->name, "%s", p->ident);
  v->space = TT_ANN_RANGE;
  next(p);
  next(p); /* "in" */
  int col = p->column;
  v->lo = parse_expr(p);
  expect(p, ':');
  if (p->failed)
    return;
  v->hi = parse_expr(p);
  if (p->failed)
    return;
  if (v->lo->has_var || v->hi->has_var) {
    fail(p, col, "the range of '%s' must not use bound variables", v->name);
    return;
  }
  a->nvars++;
}

static void parse_binding(struct parser *p)
{
  enum tt_ann_space space;
  if (p->kind == T_IDENT) {
    /* One token ahead: NAME in ... */
    struct parser ahead = *p;
    ahead.err = NULL;
    ahead.errlen = 0;
    next(&ahead);
    if (is_word(&ahead, "in")) {
      parse_range_binding(p);
      return;
    }
  }
  if (is_word(p, "global"))
    space = TT_ANN_GLOBAL;
  else if (is_word(p, "group"))
    space = TT_ANN_GROUP;
  else if (is_word(p, "local"))
    space = TT_ANN_LOCAL;
  else {
    char b[80];
    fail(p, p->column, "expected 'global', 'group' or 'local', found %s", describe(p, b, sizeof b));
    return;
  }
  next(p);
  bool list = is_punct(p, '[');
  if (list)
    next(p);
  for (unsigned axis = 0;; axis++) {
    if (p->kind != T_IDENT) {
      char b[80];
      fail(p, p->column, "expected a variable name, found %s", describe(p, b, sizeof b));
      return;
    }
    if (axis >= 3) {
      fail(p, p->column, "at most 3 variables per binding");
      return;
    }
    struct tt_ann *a = p->ann;
    if (!new_variable(p, p->ident))
      return;
    snprintf(a->vars[a->nvars].name, sizeof a->vars[0].name, "%s", p->ident);
    a->vars[a->nvars].space = space;
    a->vars[a->nvars].axis = axis;
    a->nvars++;
    next(p);
    if (!list)
      return;
    if (is_punct(p, ']')) {
      next(p);
      return;
    }
    expect(p, ',');
    if (p->failed)
      return;
  }
}

static bool parse_op(struct parser *p, enum tt_ann_op *op)
{
  if (is_punct(p, '+'))
    *op = TT_ANN_ADD;
  else if (is_punct(p, '&'))
    *op = TT_ANN_AND;
  else if (is_punct(p, '|'))
    *op = TT_ANN_OR;
  else if (is_punct(p, '^'))
    *op = TT_ANN_XOR;
  else if (is_word(p, "min"))
    *op = TT_ANN_MIN;
  else if (is_word(p, "max"))
    *op = TT_ANN_MAX;
  else {
    char b[80];
    fail(p, p->column, "expected one of + min max & | ^, found %s", describe(p, b, sizeof b));
    return false;
  }
  next(p);
  return true;
}

static void parse_slice(struct parser *p, struct slice *s)
{
  s->lo = s->hi = NULL;
  s->range = false;
  int col = p->column;
  if (!is_punct(p, ':'))
    s->lo = parse_expr(p);
  if (is_punct(p, ':')) {
    s->range = true;
    next(p);
    if (!is_punct(p, ',') && !is_punct(p, ']'))
      s->hi = parse_expr(p);
    if (!p->failed && !tt_ann_width_constant(s->lo, s->hi, p->nparams))
      fail(p, col, "not affine: the width of a slice 'a:b' must not depend on the variables");
  }
}

static bool reducible(const struct tt_ann_param *prm, enum tt_ann_op op)
{
  bool number = (prm->integer && prm->size >= 4) || prm->floating;
  if (op == TT_ANN_AND || op == TT_ANN_OR || op == TT_ANN_XOR)
    return prm->integer && prm->size >= 4;
  return number;
}

/* mode [ "(" op ")" ]: false (failed) when it is none of the modes. */
static bool parse_mode(struct parser *p, struct rule *r)
{
  static const struct {
    const char *word;
    enum tt_ann_mode mode;
  } modes[] = {{"read", TT_ANN_READ}, {"write", TT_ANN_WRITE}, {"readwrite", TT_ANN_READWRITE},
               {"reduce", TT_ANN_REDUCE}, {"merge", TT_ANN_MERGE}};
  size_t m = 0;
  while (m < sizeof modes / sizeof *modes && !is_word(p, modes[m].word))
    m++;
  if (m == sizeof modes / sizeof *modes) {
    char b[80];
    fail(p, p->column, "expected 'read', 'write', 'readwrite', 'reduce' or 'merge', found %s",
         describe(p, b, sizeof b));
    return false;
  }
  r->mode = modes[m].mode;
  next(p);
  if (r->mode == TT_ANN_REDUCE) {
    expect(p, '(');
    if (p->failed || !parse_op(p, &r->op))
      return false;
    expect(p, ')');
  }
  return !p->failed;
}

/* The rule's parameter, checked against its mode (r->param, r->elem set), or NULL (failed). */
static const struct tt_ann_param *rule_param(struct parser *p, struct rule *r)
{
  if (p->kind != T_IDENT) {
    char b[80];
    fail(p, p->column, "expected a parameter name, found %s", describe(p, b, sizeof b));
    return NULL;
  }
  size_t i = 0;
  while (i < p->nparams && strcmp(p->params[i].name, p->ident))
    i++;
  if (i == p->nparams) {
    fail(p, p->column, "unknown parameter '%s'", p->ident);
    return NULL;
  }
  const struct tt_ann_param *prm = &p->params[i];
  if (!prm->pointer) {
    fail(p, p->column, "'%s' is not a __global or __constant pointer", p->ident);
    return NULL;
  }
  /* An element type of unknown size (a structure) can be named whole only: `P[:]`. */
  const char *q = p->at;
  while (isspace((unsigned char)*q))
    q++;
  bool whole = q[0] == '[' && q[1] == ':' && q[2] == ']';
  if (!prm->size && (!whole || r->mode == TT_ANN_REDUCE)) {
    fail(p, p->column, "cannot tell the element size of '%s' (type '%s')", p->ident, prm->type);
    return NULL;
  }
  if ((r->mode & TT_ANN_WRITE || r->mode >= TT_ANN_REDUCE) && prm->is_const) {
    fail(p, p->column, "'%s' points to constant data: it cannot be written", p->ident);
    return NULL;
  }
  if (r->mode == TT_ANN_REDUCE && !reducible(prm, r->op)) {
    fail(p, p->column, "cannot reduce '%s' of type '%s' with that operator (int, uint, long, "
         "ulong%s)", p->ident, prm->type,
         r->op == TT_ANN_AND || r->op == TT_ANN_OR || r->op == TT_ANN_XOR ? "" : ", float, double");
    return NULL;
  }
  r->param = (unsigned)i;
  r->elem = prm->size ? prm->size : 1;
  next(p);
  return prm;
}

/* [ "(" expr {"," expr} ")" ]: the shape's extents (free of variables); their count. */
static unsigned parse_shape(struct parser *p, struct rule *r)
{
  unsigned nshape = 0;
  if (!is_punct(p, '('))
    return 0;
  next(p);
  for (;;) {
    if (nshape == 3) {
      fail(p, p->column, "at most 3 dimensions");
      return nshape;
    }
    int ecol = p->column;
    struct expr *e = parse_expr(p);
    if (p->failed)
      return nshape;
    if (e->has_var) {
      fail(p, ecol, "a shape must not use bound variables");
      return nshape;
    }
    r->shape[nshape++] = e;
    if (is_punct(p, ')'))
      break;
    expect(p, ',');
    if (p->failed)
      return nshape;
  }
  next(p);
  return nshape;
}

/* "[" slice {"," slice} "]", one slice per dimension of the shape (one without a shape). */
static void parse_index(struct parser *p, struct rule *r, unsigned nshape, const char *name)
{
  int icol = p->column;
  expect(p, '[');
  if (p->failed)
    return;
  for (;;) {
    if (r->ndims == 3) {
      fail(p, p->column, "at most 3 indices");
      return;
    }
    parse_slice(p, &r->index[r->ndims++]);
    if (p->failed)
      return;
    if (is_punct(p, ']'))
      break;
    if (!is_punct(p, ',')) {
      char b[80];
      fail(p, p->column, "expected ',' or ']', found %s", describe(p, b, sizeof b));
      return;
    }
    next(p);
  }
  next(p);
  unsigned want = nshape ? nshape : 1;
  if (r->ndims != want)
    fail(p, icol, "expected %u ind%s for '%s', found %u", want, want == 1 ? "ex" : "ices", name,
         r->ndims);
}

static void parse_rule(struct parser *p)
{
  struct rule r = {0};
  int col = p->column;
  if (!parse_mode(p, &r))
    return;
  const struct tt_ann_param *prm = rule_param(p, &r);
  if (!prm)
    return;
  unsigned nshape = parse_shape(p, &r);
  if (!p->failed)
    parse_index(p, &r, nshape, prm->name);
  if (p->failed)
    return;
  struct tt_ann *a = p->ann;
  /* A reduced or merged parameter is a private copy per part: no other rule can name it. */
  for (size_t j = 0; j < a->nrules; j++)
    if (a->rules[j].param == r.param &&
        (a->rules[j].mode >= TT_ANN_REDUCE) + (r.mode >= TT_ANN_REDUCE)) {
      bool merged = a->rules[j].mode == TT_ANN_MERGE || r.mode == TT_ANN_MERGE;
      fail(p, col, "'%s' is %s: no other rule may name it", prm->name,
           merged ? "merged" : "reduced");
      return;
    }
  struct rule *rules = realloc(a->rules, (a->nrules + 1) * sizeof *rules);
  if (!rules) {
    fail(p, col, "out of memory");
    return;
  }
  a->rules = rules;
  a->rules[a->nrules++] = r;
}

struct tt_ann *tt_ann_parse(const char *text, const struct tt_ann_param *params, size_t nparams,
                            const struct tt_ann_macro *macros, size_t nmacros, char *err,
                            size_t errlen)
{
  struct tt_ann *a = calloc(1, sizeof *a);
  if (!a) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  struct parser p = {.text = text, .at = text, .ann = a, .params = params, .nparams = nparams,
                     .macros = macros, .nmacros = nmacros, .err = err, .errlen = errlen};
  next(&p);
  for (;;) {
    parse_binding(&p);
    if (p.failed || !is_punct(&p, ','))
      break;
    next(&p);
  }
  if (!p.failed && p.kind != T_ARROW) {
    char b[80];
    fail(&p, p.column, "expected '=>' or ',', found %s", describe(&p, b, sizeof b));
  }
  if (!p.failed)
    next(&p);
  while (!p.failed) {
    parse_rule(&p);
    if (p.failed || !is_punct(&p, ','))
      break;
    next(&p);
  }
  if (!p.failed && p.kind != T_END) {
    char b[80];
    fail(&p, p.column, "expected ',' or the end, found %s", describe(&p, b, sizeof b));
  }
  if (p.failed) {
    tt_ann_free(a);
    return NULL;
  }
  return a;
}

void tt_ann_free(struct tt_ann *a)
{
  if (!a)
    return;
  for (size_t i = 0; i < a->nnodes; i++)
    free(a->nodes[i]);
  free(a->nodes);
  free(a->rules);
  free(a);
}

size_t tt_ann_nrules(const struct tt_ann *a)
{
  return a->nrules;
}

struct tt_ann_rule_info tt_ann_rule(const struct tt_ann *a, size_t i)
{
  const struct rule *r = &a->rules[i];
  return (struct tt_ann_rule_info){r->mode, r->op, r->param};
}

size_t tt_ann_reduce_rule(const struct tt_ann *a, unsigned param)
{
  for (size_t r = 0; r < a->nrules; r++)
    if (a->rules[r].param == param && a->rules[r].mode >= TT_ANN_REDUCE)
      return r;
  return SIZE_MAX;
}

bool tt_ann_launch_equal(const struct tt_ann_launch *a, const struct tt_ann_launch *b,
                         size_t nvalues)
{
  if (a->work_dim != b->work_dim)
    return false;
  for (unsigned d = 0; d < 3; d++)
    if (a->offset[d] != b->offset[d] || a->global[d] != b->global[d] || a->local[d] != b->local[d])
      return false;
  for (size_t i = 0; i < nvalues; i++)
    if (a->values[i] != b->values[i])
      return false;
  return true;
}
