/* A program whose ranks do not all end alike (tests/tutti-run.test): every rank prints a
 * timing that differs (not worth a word) and a verdict; with "fail R" rank R says FAILED and
 * exits 3, with "say R" rank R says FAILED and exits 0, with "crash R,S" ranks R and S
 * crash (a write through a null pointer in the program, after Tutti started). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
  cl_platform_id p;
  clGetPlatformIDs(1, &p, NULL); /* a Tutti rank: the host layer is on */
  const char *r = getenv("OMPI_COMM_WORLD_RANK");
  int rank = r ? atoi(r) : 0;
  int who = argc > 2 ? atoi(argv[2]) : -1;
  if (argc > 2 && !strcmp(argv[1], "crash")) {
    for (const char *w = argv[2]; *w; w += strcspn(w, ",") + (w[strcspn(w, ",")] == ','))
      if (atoi(w) == rank) {
        fflush(stdout);
        *(volatile int *)(uintptr_t)(argc - 3) = 1; /* argc is 3: a null pointer */
      }
  }
  printf("took %d ms\n", 3 + 7 * rank);
  if (rank == who) {
    printf("check FAILED\n");
    return !strcmp(argv[1], "fail") ? 3 : 0;
  }
  printf("check passed\n");
  return 0;
}
