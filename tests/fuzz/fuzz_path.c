/* The host layer's normalization of paths (host/preload_path.c) on arbitrary text: the
 * input's first line is the folder, the rest the path. What it returns is absolute, has no
 * empty, "." or ".." component, fits, and is its own normal form. */
#include "config.h"

#include "host/preload_impl.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = fuzz_text(data, size);
  if (!text)
    return 0;
  char *nl = strchr(text, '\n');
  const char *base = nl ? text : "/";
  const char *path = nl ? nl + 1 : text;
  if (nl)
    *nl = 0;
  size_t cap = 1 + size % 300; /* small folders too: the limit is met */
  char *out = malloc(cap), *again = malloc(cap);
  if (out && again && normalize_path(base, path, out, cap)) {
    size_t n = strlen(out);
    FUZZ_ASSERT(n < cap && out[0] == '/');
    FUZZ_ASSERT(n == 1 || out[n - 1] != '/');
    FUZZ_ASSERT(!strstr(out, "//") && !strstr(out, "/./") && !strstr(out, "/../"));
    FUZZ_ASSERT(strcmp(out + (n >= 2 ? n - 2 : 0), "/.") && strcmp(out + (n >= 3 ? n - 3 : 0), "/.."));
    FUZZ_ASSERT(normalize_path("/", out, again, cap) && !strcmp(out, again));
  }
  free(out);
  free(again);
  free(text);
  return 0;
}
