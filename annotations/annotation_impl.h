/* What the parser (annotations/annotation.c) and the evaluation of regions
 * (annotations/region.c) share: the parsed form of an annotation. Nothing outside
 * annotations/ includes it: the interface is annotations/annotation.h. */
#ifndef TUTTI_ANNOTATION_IMPL_H
#define TUTTI_ANNOTATION_IMPL_H

#include "annotations/annotation.h"

#define MAX_VARS 16

enum expr_kind { E_NUM, E_VAR, E_PARAM, E_LAUNCH, E_ADD, E_SUB, E_MUL, E_DIV, E_NEG };

/* E_LAUNCH: a value of the launch, index = what * 3 + axis. */
enum launch_value { L_GLOBAL_SIZE, L_LOCAL_SIZE, L_NUM_GROUPS, L_GLOBAL_OFFSET, L_COUNT };

struct expr {
  enum expr_kind kind;
  int64_t num;         /* E_NUM */
  unsigned index;      /* E_VAR: variable; E_PARAM: kernel parameter; E_LAUNCH: value */
  struct expr *a, *b;
  bool has_var;        /* names a bound variable somewhere below */
  int column;
};

struct slice {
  struct expr *lo, *hi; /* NULL: an open end */
  bool range;           /* lo:hi, else the single index lo */
};

struct rule {
  enum tt_ann_mode mode;
  enum tt_ann_op op;
  unsigned param;
  unsigned ndims;
  size_t elem;           /* bytes per element: the parameter's type */
  struct expr *shape[3]; /* NULL without a shape: 1-D, the buffer's elements */
  struct slice index[3];
};

struct var {
  char name[64];
  enum tt_ann_space space;
  unsigned axis;
  struct expr *lo, *hi; /* TT_ANN_RANGE: [lo, hi), free of variables */
};

struct tt_ann {
  unsigned nvars;
  struct var vars[MAX_VARS];
  size_t nrules;
  struct rule *rules;
  /* Every expression node, for freeing. */
  struct expr **nodes;
  size_t nnodes, capnodes;
  const struct tt_ann_param *params; /* during parsing only */
};

/* `a:b` needs b - a independent of the variables. Checked by evaluating both ends at fixed
 * pseudo-random points (the same on every rank): parameters take several values, and for
 * each the width must not change with the variables. */
bool tt_ann_width_constant(const struct expr *lo, const struct expr *hi, size_t nparams);

/* What expressions are evaluated against: the parameters' values and the launch. */
struct eval_ctx {
  const int64_t *values;
  int64_t launch[L_COUNT * 3];
};
void tt_ann_eval_ctx(const struct tt_ann_launch *l, struct eval_ctx *c);

#endif
