/* A fuzz target (doc/testing.md, "Fuzzing"): LLVMFuzzerTestOneInput takes one input of
 * arbitrary bytes and must neither crash, hang, nor read or write outside what it was given.
 * Built with libFuzzer (clang -fsanitize=fuzzer) by tools/fuzz.sh; linked with
 * tests/fuzz/replay.c instead, it replays its corpus and regression inputs in make check. */
#ifndef TUTTI_FUZZ_H
#define TUTTI_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property of the code under test that does not hold: reported, then the input fails
 * (abort: libFuzzer keeps it as a crash). */
#define FUZZ_ASSERT(cond)                                                                          \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      fprintf(stderr, "%s:%d: property does not hold: %s\n", __FILE__, __LINE__, #cond);          \
      abort();                                                                                    \
    }                                                                                             \
  } while (0)

/* The input as a NUL-terminated string (malloc'd; its NULs kept, so it may end early). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
  char *s = malloc(size + 1);
  if (s) {
    memcpy(s, data, size);
    s[size] = 0;
  }
  return s;
}

/* Reading numbers from the input, from its end: 0 once it is used up. */
struct fuzz_bytes {
  const uint8_t *p;
  size_t n;
};

static inline uint64_t fuzz_take(struct fuzz_bytes *b, int bytes)
{
  uint64_t v = 0;
  for (int i = 0; i < bytes && b->n; i++)
    v = v << 8 | b->p[--b->n];
  return v;
}

#endif
