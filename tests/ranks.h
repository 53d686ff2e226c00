/* For the test programs run by tutti-run whose checks run on every rank (tests/cluster/cluster.c,
 * tests/api/agree.c): failed checks counted per rank and named with the rank, and whether a
 * value is the same on every rank (through MPI, which Tutti started). The program defines
 * `failures` and `rank`. */
#ifndef TUTTI_TEST_RANKS_H
#define TUTTI_TEST_RANKS_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#define CHECK(cond)                                                                               \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      fprintf(stderr, "# rank %d: %s:%d: check failed: %s\n", rank, __FILE__, __LINE__, #cond);  \
      failures++;                                                                                 \
    }                                                                                             \
  } while (0)
#define OK(call)                                                                                  \
  do {                                                                                            \
    cl_int e_ = (call);                                                                           \
    if (e_ != CL_SUCCESS) {                                                                       \
      fprintf(stderr, "# rank %d: %s:%d: %s returned %d\n", rank, __FILE__, __LINE__, #call, e_); \
      failures++;                                                                                 \
    }                                                                                             \
  } while (0)

/* The same value on every rank? (Collective.) */
static inline int same_everywhere(uint64_t v)
{
  uint64_t lo = v, hi = v;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

/* MPI of the job: Tutti's (a tutti-run job of several ranks), or a singleton started here
 * (tutti-run runs one rank without mpirun, and Tutti then starts none). Returns 1 when this
 * program started MPI (it finalizes it), 0 when Tutti did, -1 when MPI does not start. */
static inline int ranks_start(int *argc, char ***argv, int *rank, int *nranks)
{
  int started = 0;
  MPI_Initialized(&started);
  if (!started && MPI_Init(argc, argv) != MPI_SUCCESS) {
    fprintf(stderr, "%s: MPI does not start\n", (*argv)[0]);
    return -1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, nranks);
  return !started;
}

#endif
