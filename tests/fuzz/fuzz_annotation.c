/* The annotation language (annotations/annotation.h) on arbitrary text. The input's first
 * line is an annotation of a kernel of six parameters, parsed and, when it parses, evaluated
 * for launches and parts drawn from the input's last bytes (shapes, scalar values, buffer
 * sizes: regions must stay inside their buffers). The whole input is also read as a program
 * source (#pragma tutti lines stripped and parsed against the kernels they name, kernels'
 * parameters, windows rebased) and as build options (-D macros). */
#include "config.h"

#include "annotations/annotation.h"
#include "tests/fuzz/fuzz.h"

static const char *const kernel =
    "__kernel void k(__global const float *in, __global float *out, int n, int w, uint h, "
    "__global int *hist) {}";

/* Every rule's regions for one launch and part, within a buffer of `bytes`. */
static void evaluate(struct tt_ann *a, long nparams, struct fuzz_bytes *b)
{
  struct tt_ann_launch l = {0};
  int64_t values[6] = {0};
  l.work_dim = 1 + (unsigned)fuzz_take(b, 1) % 3;
  for (unsigned d = 0; d < 3; d++) {
    l.local[d] = 1 + fuzz_take(b, 1) % 8;
    l.global[d] = d < l.work_dim ? l.local[d] * (1 + fuzz_take(b, 1) % 16) : 1;
    l.offset[d] = fuzz_take(b, 1) % 4;
    if (d >= l.work_dim)
      l.local[d] = 1;
  }
  for (int i = 2; i < 5; i++)
    values[i] = (int64_t)(int8_t)fuzz_take(b, 1);
  l.values = values;
  struct tt_ann_part part;
  for (unsigned d = 0; d < 3; d++) {
    size_t groups = l.global[d] / l.local[d];
    part.group_lo[d] = fuzz_take(b, 1) % groups;
    part.group_hi[d] = part.group_lo[d] + 1 + fuzz_take(b, 1) % (groups - part.group_lo[d]);
  }
  size_t bytes = (size_t)fuzz_take(b, 2) * 4;
  char err[256];
  for (size_t r = 0; r < tt_ann_nrules(a); r++) {
    struct tt_ann_ranges out = {0};
    if (tt_ann_region(a, r, &l, &part, bytes, &out, err, sizeof err) == 0)
      for (size_t i = 0; i < out.n; i++) {
        FUZZ_ASSERT(out.r[i].off + out.r[i].len <= bytes && out.r[i].len > 0);
        FUZZ_ASSERT(i == 0 || out.r[i].off > out.r[i - 1].off + out.r[i - 1].len);
      }
    tt_ann_ranges_free(&out);
  }
  for (long p = 0; p < nparams; p++) {
    struct tt_ann_buffer buf = {(unsigned)p, bytes, p != 0};
    struct tt_ann_ranges reads = {0}, writes = {0};
    size_t nrules = tt_ann_nrules(a);
    struct tt_ann_ranges *reduce = calloc(nrules ? nrules : 1, sizeof *reduce);
    bool named;
    if (reduce && tt_ann_part_uses(a, &l, &part, &buf, 8, &reads, &writes, reduce, &named, err,
                                   sizeof err) == 0) {
      FUZZ_ASSERT(reads.n <= 8 || !named);
      for (size_t i = 0; i < reads.n; i++)
        FUZZ_ASSERT(reads.r[i].off + reads.r[i].len <= bytes);
      for (size_t i = 0; i < writes.n; i++)
        FUZZ_ASSERT(writes.r[i].off + writes.r[i].len <= bytes);
    }
    for (size_t r = 0; reduce && r < nrules; r++)
      tt_ann_ranges_free(&reduce[r]);
    free(reduce);
    tt_ann_ranges_free(&reads);
    tt_ann_ranges_free(&writes);
  }
}

/* The input as a program: its pragmas, against the kernels they name. */
static void as_source(const char *src)
{
  struct tt_ann_pragma *pragmas = NULL;
  size_t npragmas = 0;
  char *stripped = tt_ann_strip(src, &pragmas, &npragmas);
  for (size_t i = 0; stripped && i < npragmas; i++) {
    FUZZ_ASSERT(pragmas[i].text && pragmas[i].line >= 1);
    if (!pragmas[i].kernel)
      continue;
    struct tt_ann_param *params = NULL;
    long n = tt_ann_kernel_params(stripped, pragmas[i].kernel, &params);
    char err[256];
    struct tt_ann *a =
        n >= 0 ? tt_ann_parse(pragmas[i].text, params, (size_t)n, NULL, 0, err, sizeof err) : NULL;
    tt_ann_free(a);
    if (n > 0) {
      bool *all = malloc((size_t)n);
      if (all) {
        memset(all, 1, (size_t)n);
        free(tt_ann_rebase(stripped, pragmas[i].kernel, all, (size_t)n));
      }
      free(all);
    }
    free(params);
  }
  tt_ann_pragmas_free(pragmas, npragmas);
  free(stripped);
  struct tt_ann_macro *macros = NULL;
  tt_ann_macros(src, &macros);
  free(macros);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = fuzz_text(data, size);
  if (!text)
    return 0;
  struct tt_ann_param *params = NULL;
  long nparams = tt_ann_kernel_params(kernel, "k", &params);
  FUZZ_ASSERT(nparams == 6);
  struct tt_ann_macro macros[] = {{"TILE", 16}, {"R", 2}};
  char *line = strdup(text), err[256];
  if (line) {
    char *nl = strchr(line, '\n');
    if (nl)
      *nl = 0;
    struct tt_ann *a = tt_ann_parse(line, params, (size_t)nparams, macros, 2, err, sizeof err);
    FUZZ_ASSERT(a || err[0]);
    if (a) {
      struct fuzz_bytes b = {data, size};
      for (int i = 0; i < 4; i++)
        evaluate(a, nparams, &b);
    }
    tt_ann_free(a);
    free(line);
  }
  as_source(text);
  free(params);
  free(text);
  return 0;
}
