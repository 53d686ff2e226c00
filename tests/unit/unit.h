/* The unit tests' checks (no OpenCL backend, no MPI): each failed check says where and is
 * counted; main prints "<name>: passed" or "FAILED" and exits 1 on any failure. */
#ifndef TUTTI_TEST_UNIT_H
#define TUTTI_TEST_UNIT_H

#include <stdio.h>

static int failures;
#define CHECK(c)                                                                                  \
  do {                                                                                            \
    if (!(c)) {                                                                                   \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                      \
      failures++;                                                                                 \
    }                                                                                             \
  } while (0)

#endif
