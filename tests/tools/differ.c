/* A program whose ranks do not all end alike (tests/tools/tutti-run.test): every rank prints a
 * timing that differs (not worth a word) and a verdict; with "fail R" rank R says FAILED and
 * exits 3, with "say R" rank R says FAILED and exits 0, with "crash R,S" ranks R and S
 * crash (a write through a null pointer in the program, after Tutti started), with "hang"
 * every rank starts a thread named differ-helper that waits forever, prints "hanging: pid P"
 * and waits forever itself. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/launcher.h"

static pthread_mutex_t never_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static void *helper(void *unused)
{
  (void)unused;
  pthread_mutex_lock(&never_lock);
  for (;;)
    pthread_cond_wait(&never, &never_lock);
  return NULL;
}

/* Waits forever, in a thread of its own and in this one. (No context: PoCL's LLVM would take
 * SIGQUIT first, doc/cluster.md.) */
static void hang(void)
{
  pthread_t t;
  if (pthread_create(&t, NULL, helper, NULL) != 0) {
    printf("hang: cannot start a thread\n");
    exit(1);
  }
  pthread_setname_np(t, "differ-helper");
  printf("hanging: pid %d\n", (int)getpid());
  fflush(stdout);
  helper(NULL);
}

int main(int argc, char **argv)
{
  cl_platform_id p;
  clGetPlatformIDs(1, &p, NULL); /* a Tutti rank: the host layer is on */
  const char *r = launcher_rank();
  int rank = r ? atoi(r) : 0;
  int who = argc > 2 ? atoi(argv[2]) : -1;
  if (argc > 2 && !strcmp(argv[1], "crash")) {
    for (const char *w = argv[2]; *w; w += strcspn(w, ",") + (w[strcspn(w, ",")] == ','))
      if (atoi(w) == rank) {
        fflush(stdout);
        *(volatile int *)(uintptr_t)(argc - 3) = 1; /* argc is 3: a null pointer */
      }
  }
  if (argc > 1 && !strcmp(argv[1], "hang"))
    hang();
  printf("took %d ms\n", 3 + 7 * rank);
  if (rank == who) {
    printf("check FAILED\n");
    return !strcmp(argv[1], "fail") ? 3 : 0;
  }
  printf("check passed\n");
  return 0;
}
