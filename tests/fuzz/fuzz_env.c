/* Tutti's settings as the environment gives them (runtime/base/env.h): sizes, debug
 * categories, device types, Slurm's tasks per node, on arbitrary text. */
#include "config.h"

#include "runtime/base/env.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = fuzz_text(data, size);
  if (!text)
    return 0;
  size_t v = 7;
  if (tt_env_parse_bytes(text, &v) != 0)
    FUZZ_ASSERT(v == 7);
  const char *bad = NULL;
  int badlen = 0;
  tt_env_parse_debug(text, &bad, &badlen);
  FUZZ_ASSERT(!bad || (bad >= text && badlen >= 0 && bad + badlen <= text + strlen(text)));
  tt_env_parse_device_type(text);
  int tasks = tt_env_parse_tasks_per_node(text, (long)(size % 5));
  FUZZ_ASSERT(tasks >= 0);
  free(text);
  return 0;
}
