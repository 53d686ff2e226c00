/* What the host layer (host/preload_host.c, in libtutti-host.so, which tutti-run preloads)
 * asks of the job: it runs in the program before any OpenCL call may have started Tutti, so
 * it loads libtutti.so and finds this table by the one name below (doc/cluster.md, "The
 * host layer"). */
#ifndef TUTTI_HOST_H
#define TUTTI_HOST_H

#include <stddef.h>

#define TUTTI_HOST_OPS_VERSION 5

/* What share and arrive return once the job is over (this rank left: Tutti's exit handler
 * ran, at exit or after the program's own MPI_Finalize): nothing is agreed on any more, and
 * each rank makes its calls alone (a file a destructor writes at exit, say). */
#define TUTTI_HOST_OVER 1

struct tutti_host_ops {
  unsigned version; /* TUTTI_HOST_OPS_VERSION */
  /* Starts MPI and the transport when needed. Returns the job's size (1: nothing to agree
   * on, or MPI could not start) and sets *rank. */
  int (*start)(int *rank);
  /* Collective, in program order on every rank: rank 0's len bytes at buf reach every
   * rank. `what` names the call in divergence reports (runtime/job/check.h). 0 on success,
   * TUTTI_HOST_OVER once the job is over. */
  int (*share)(const char *what, void *buf, size_t len);
  /* Collective: returns once every rank has reached the same call `what`. Rank 0 changes the
   * file system only after this, so that no rank sees a change before its own program
   * reached it (a rank that checks for a directory before making it then decides as rank 0
   * did). 0 on success, TUTTI_HOST_OVER once the job is over. */
  int (*arrive)(const char *what);
  /* Runs fn in the order of host threads' turns that rank 0 chose (runtime/job/turns.h,
   * tt_turn_ordered): the program's locks, once it made threads. */
  int (*ordered)(int (*fn)(void *arg, int rank0), void *arg);
  /* The answer of a file query every rank makes itself (access, stat, an open for
   * reading), kept for divergence reports (runtime/job/check.h, tt_check_result); nothing
   * once the program made threads. Sends nothing. */
  void (*result)(const char *call, const char *path, long long ret, int err);
};

const struct tutti_host_ops *tutti_host_interface(void);

#endif
