/* The rank and the size of the job as the launcher tells a process: Open MPI's variables,
 * MPICH's (PMI, its hydra), PMIx's or Slurm's (NULL when none: one process alone). */
#ifndef TUTTI_TEST_LAUNCHER_H
#define TUTTI_TEST_LAUNCHER_H

#include <stdlib.h>

static inline const char *launcher_rank(void)
{
  const char *v = getenv("OMPI_COMM_WORLD_RANK");
  if (!v)
    v = getenv("PMI_RANK");
  if (!v)
    v = getenv("PMIX_RANK");
  return v ? v : getenv("SLURM_PROCID");
}

static inline const char *launcher_size(void)
{
  const char *v = getenv("OMPI_COMM_WORLD_SIZE");
  if (!v)
    v = getenv("PMI_SIZE");
  return v ? v : getenv("SLURM_NTASKS");
}

#endif
