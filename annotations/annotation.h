/* The annotation language of split launches (doc/split.md, "Annotations"; Lightning,
 * section 3.2): which elements of which buffer one work-item or work-group touches.
 *
 *   global [x, y] => read in(h, w)[y-1:y+2, x-1:x+2], write out(h, w)[y, x]
 *
 * Parsing checks the text against the kernel's parameters once (tt_ann_parse); evaluating a
 * rule for one part of a launch gives the byte ranges that part reads or writes
 * (tt_ann_region), without parsing again. Also here: `#pragma tutti` lines of program
 * sources, the kernel signatures they refer to, and the -D macros of a build. Pure C: no MPI,
 * no OpenCL calls, so every rank computes the same from the same inputs. */
#ifndef TUTTI_ANNOTATION_H
#define TUTTI_ANNOTATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a bound variable ranges: over a work-item function's ids (global, group, local), or
 * over `NAME in LO:HI` (a loop's counter: the same range for every part). */
enum tt_ann_space { TT_ANN_GLOBAL, TT_ANN_GROUP, TT_ANN_LOCAL, TT_ANN_RANGE };
/* merge: each part writes a private copy of the region, whose changed bytes are merged into
 * the buffer after the parts (doc/split.md, "Merged writes"). */
enum tt_ann_mode {
  TT_ANN_READ = 1,
  TT_ANN_WRITE = 2,
  TT_ANN_READWRITE = 3,
  TT_ANN_REDUCE = 4,
  TT_ANN_MERGE = 8
};
enum tt_ann_op { TT_ANN_ADD, TT_ANN_MIN, TT_ANN_MAX, TT_ANN_AND, TT_ANN_OR, TT_ANN_XOR };

/* A kernel parameter as its source declares it. */
struct tt_ann_param {
  char name[64];
  char type[64];  /* the element type of a pointer, else the type; qualifiers dropped */
  bool pointer;   /* __global or __constant pointer */
  bool is_const;  /* points to const data (or __constant) */
  uint32_t size;  /* bytes of `type` when it is a built-in scalar or vector type, else 0 */
  bool integer;   /* a built-in integer scalar type */
  bool is_signed;
  bool floating;  /* float or double */
};

/* A -D macro of the build with an integer value. */
struct tt_ann_macro {
  char name[64];
  int64_t value;
};

struct tt_ann;

/* Parses an annotation against the kernel's parameters and the build's macros. Returns the
 * parsed form, or NULL with a message in err ("column 23: expected ']'"). */
struct tt_ann *tt_ann_parse(const char *text, const struct tt_ann_param *params, size_t nparams,
                            const struct tt_ann_macro *macros, size_t nmacros, char *err,
                            size_t errlen);
void tt_ann_free(struct tt_ann *a);

/* The rules of an annotation, in the order written. */
struct tt_ann_rule_info {
  enum tt_ann_mode mode;
  enum tt_ann_op op; /* reduce only */
  unsigned param;    /* index of the kernel parameter */
};
size_t tt_ann_nrules(const struct tt_ann *a);
struct tt_ann_rule_info tt_ann_rule(const struct tt_ann *a, size_t i);
/* The rule that reduces or merges parameter `param` (each part then writes a copy of its own,
 * combined after), or SIZE_MAX when none does. */
size_t tt_ann_reduce_rule(const struct tt_ann *a, unsigned param);

/* One launch: its shape and the integer values of its scalar parameters (by parameter
 * index; entries of other parameters are ignored). */
struct tt_ann_launch {
  unsigned work_dim;
  size_t offset[3], global[3], local[3];
  const int64_t *values;
};

/* Whether two launches are alike: their shape, and the first nvalues parameter values
 * (a split launch's plan is kept and taken again for a launch alike: runtime/command/split.c). */
bool tt_ann_launch_equal(const struct tt_ann_launch *a, const struct tt_ann_launch *b,
                         size_t nvalues);

/* One part of the launch: the work-groups [lo, hi) it runs along each dimension. */
struct tt_ann_part {
  size_t group_lo[3], group_hi[3];
};

struct tt_ann_range {
  size_t off, len;
};
struct tt_ann_ranges {
  struct tt_ann_range *r;
  size_t n, cap;
};
void tt_ann_ranges_free(struct tt_ann_ranges *r);
/* Appends [off, off+len) (nothing when len is 0), merged with the last range when they touch;
 * -1 without memory. */
int tt_ann_ranges_add(struct tt_ann_ranges *r, size_t off, size_t len);
/* Sorts r by offset and makes ranges that overlap or touch one. */
void tt_ann_ranges_normalize(struct tt_ann_ranges *r);

/* The byte ranges rule `rule` names for one part, in a buffer of buffer_bytes bytes (sorted,
 * merged where they touch): per axis the hull of its index over the part's variables,
 * clamped to the shape, then one range per row of the rectangle (one for whole rows).
 * Appends to out. Returns 0, or -1 with err set (a divisor that is not positive, a shape
 * larger than the buffer, no memory). */
int tt_ann_region(const struct tt_ann *a, size_t rule, const struct tt_ann_launch *l,
                  const struct tt_ann_part *p, size_t buffer_bytes, struct tt_ann_ranges *out,
                  char *err, size_t errlen);

/* One buffer argument of a launch, as a part's uses are planned from it: its parameter, its
 * size in bytes and whether the kernel may write it (neither const nor read-only). */
struct tt_ann_buffer {
  unsigned param;
  size_t size;
  bool writable;
};

/* What part p of launch l reads and writes of buffer argument b, by the rules that name its
 * parameter: reads and writes (sorted; a readwrite rule gives both; more than max_reads read
 * ranges become their hull, since a read may fetch more than it needs and a write records
 * exactly what it names); a reduce rule's regions go to reduce[r] for rule r (nrules
 * entries), not to reads or writes. A parameter no rule names is read whole and written
 * whole when writable: *named false, reads and writes hold the whole buffer (and the caller
 * may use it as one range both read and written). 0, -1 with err set (a region the
 * annotation cannot name at this launch), -2 out of memory. */
int tt_ann_part_uses(const struct tt_ann *a, const struct tt_ann_launch *l,
                     const struct tt_ann_part *p, const struct tt_ann_buffer *b, size_t max_reads,
                     struct tt_ann_ranges *reads, struct tt_ann_ranges *writes,
                     struct tt_ann_ranges *reduce, bool *named, char *err, size_t errlen);

/* Whether the two sorted range lists share a byte. */
bool tt_ann_ranges_overlap(const struct tt_ann_ranges *a, const struct tt_ann_ranges *b);

/* `#pragma tutti [kernel NAME] ANNOTATION` lines (a backslash at the end continues a line). */
struct tt_ann_pragma {
  char *kernel; /* the NAME given, else the next kernel defined after the line; NULL if none */
  char *text;
  int line;     /* 1-based line of the pragma */
  int column;   /* column of the annotation's first character on that line */
};

/* The source with every `#pragma tutti` line (and its continuations) blanked, line numbers
 * kept, and the pragmas found (malloc'd; free with tt_ann_pragmas_free). NULL without
 * memory. */
char *tt_ann_strip(const char *src, struct tt_ann_pragma **pragmas, size_t *npragmas);
void tt_ann_pragmas_free(struct tt_ann_pragma *p, size_t n);

/* The parameters of kernel `name` as defined in src (malloc'd). Returns the count, or -1 when
 * no definition of that kernel is found. */
long tt_ann_kernel_params(const char *src, const char *name, struct tt_ann_param **out);

/* The source with kernel `name`'s pointer parameters flagged in rebase[] (nparams entries)
 * taking windows that start inside their buffers: each is renamed __tutti_wI, a parameter
 * `ulong __tutti_oI` is appended for it (in parameter order), and the body starts by
 * declaring the parameter as written, as __tutti_wI - __tutti_oI (the window's first element
 * index), so absolute indexing works unchanged. Line numbers stay. Returns malloc'ed text, or
 * NULL when the kernel's text cannot be edited so (comments in its parameter list, arrays). */
char *tt_ann_rebase(const char *src, const char *name, const bool *rebase, size_t nparams);

/* The -D macros of build options that have integer values (-DN=4, -D N=4, -DFLAG as 1). */
size_t tt_ann_macros(const char *options, struct tt_ann_macro **out);

/* Bytes of an OpenCL C built-in scalar or vector type, from its name; 0 for other types. */
uint32_t tt_ann_type_size(const char *type);

#endif
