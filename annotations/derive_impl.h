/* What the files reading kernels share (annotations/derive.c: derived annotations from the
 * accesses; annotations/derive_walk.c: the walk over a kernel's code that records them;
 * annotations/derive_base.c: affine forms and reading clang's AST). Nothing outside
 * annotations/ includes it: the interface is annotations/derive.h. */
#ifndef TUTTI_ANN_DERIVE_IMPL_H
#define TUTTI_ANN_DERIVE_IMPL_H

#include "annotations/derive.h"

#include <stdbool.h>
#include <stdint.h>

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
  bool escaped; /* its address was taken: whatever writes through it, its value is unknown */
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

#define MAX_CHILDREN 128

struct kids {
  CXCursor c[MAX_CHILDREN];
  int n;
  bool more; /* there were more children than fit */
};

/* --- affine forms and the AST (annotations/derive_base.c) ------------------------------------ */

void dv_set_whole(struct an *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Affine forms: unknown, a constant, one atom (interned in a), sums, products (unknown when
 * two variables would multiply or the terms do not fit). */
struct sym dv_unknown_sym(void);
struct sym dv_const_sym(int64_t c);
bool dv_is_var(const struct an *a, int atom);
int dv_atom(struct an *a, enum atom_kind kind, unsigned index);
struct sym dv_atom_sym(struct an *a, enum atom_kind kind, unsigned index);
struct sym dv_sym_add(struct sym x, struct sym y, int64_t sign);
struct sym dv_sym_mul(const struct an *a, struct sym x, struct sym y);
bool dv_sym_const_value(struct sym s, int64_t *c);
bool dv_sym_has_var(struct sym s);
bool dv_sym_equal(struct sym x, struct sym y);
struct val dv_unknown(void);
struct val dv_int_val(struct sym s);

/* The AST: a cursor's children (more than MAX_CHILDREN make the kernel run whole), names and
 * types, an operator's spelling, source text, integer constants. */
struct kids dv_children(struct an *a, CXCursor c);
void dv_spelling(const struct an *a, CXString s, char *buf, size_t cap);
void dv_cursor_name(const struct an *a, CXCursor c, char *buf, size_t cap);
void dv_operator_of(const struct an *a, CXCursor c, const CXCursor *lhs, char *op, size_t cap);
unsigned dv_tokens_in(const struct an *a, CXCursor c);
void dv_text_of(const struct an *a, CXCursor c, char *buf, size_t cap);
bool dv_evaluate(const struct an *a, CXCursor c, int64_t *v);
int64_t dv_pointee_size(const struct an *a, CXType t);

/* --- the walk (annotations/derive_walk.c) ---------------------------------------------------- */

/* decl (a variable or parameter) has value v from here on. */
void dv_bind(struct an *a, CXCursor decl, struct val v);
/* Walks a function body in order, recording every access through buffer parameters. */
void dv_walk_body(struct an *a, CXCursor body);
/* The launch-value built-ins, in the order of enum launch_value's values 0..3 (names of
 * A_LAUNCH atoms: index = value * 3 + axis). */
extern const char *const dv_launch_fns[4];

#endif
