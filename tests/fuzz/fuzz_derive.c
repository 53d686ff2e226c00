/* The automatic split's reading of kernels (annotations/derive.h) on arbitrary program text,
 * through libclang: it must not crash, and every annotation it derives must parse against
 * the kernel's own parameters (the annotation language's checks: annotations/annotation.h).
 * Without libclang there is nothing to run: the target says so once. */
#include "config.h"

#include "annotations/annotation.h"
#include "annotations/derive.h"
#include "tests/fuzz/fuzz.h"

static const struct tt_clang *cx;

/* The runtime reads the kernel's parameters by a scan of its text (tt_ann_kernel_params), not
 * by clang, and runs a kernel whole when its derived annotation does not parse against them
 * (runtime/program/annotate.c): where the scan sees every buffer's element type, it must. */
static void parses(const char *src, const char *kernel, const char *text)
{
  struct tt_ann_param *params = NULL;
  long n = tt_ann_kernel_params(src, kernel, &params);
  bool clear = n >= 0;
  for (long i = 0; i < n; i++)
    if (params[i].pointer && !params[i].size && strcmp(params[i].type, "void"))
      clear = false;
  char err[256] = "";
  struct tt_ann *a = n >= 0 ? tt_ann_parse(text, params, (size_t)n, NULL, 0, err, sizeof err) : NULL;
  if (!a && !clear) {
    free(params);
    return;
  }
  if (!a)
    fprintf(stderr, "derived for %s: \"%s\": %s\n", kernel, text, err);
  FUZZ_ASSERT(a != NULL);
  tt_ann_free(a);
  free(params);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static int tried;
  char why[256];
  if (!tried++) {
    cx = tt_clang_open(getenv("TUTTI_LIBCLANG"), why, sizeof why);
    if (!cx)
      fprintf(stderr, "fuzz_derive: no libclang (%s): nothing derived\n", why);
  }
  if (!cx || size > 4096) /* a kernel's text: longer inputs only slow libclang down */
    return 0;
  char *src = fuzz_text(data, size);
  if (!src)
    return 0;
  struct tt_derived *d = NULL;
  long n = tt_derive(cx, src, "-D N=4", &d, why, sizeof why);
  FUZZ_ASSERT(n >= -1);
  struct tt_ann_pragma *pragmas = NULL;
  size_t npragmas = 0;
  char *stripped = n > 0 ? tt_ann_strip(src, &pragmas, &npragmas) : NULL;
  for (long i = 0; stripped && i < n; i++) {
    FUZZ_ASSERT(d[i].tier == TT_TIER_WHOLE || d[i].text);
    if (d[i].text)
      parses(stripped, d[i].name, d[i].text);
    if (d[i].merged)
      parses(stripped, d[i].name, d[i].merged);
  }
  tt_ann_pragmas_free(pragmas, npragmas);
  free(stripped);
  if (n > 0)
    tt_derived_free(d, (size_t)n);
  free(src);
  return 0;
}
