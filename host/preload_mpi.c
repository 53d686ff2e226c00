/* libtutti-host.so, MPI part: preloaded by tutti-run into every rank, so that a program that calls
 * MPI_Init itself works with Tutti whether it does so before or after its first OpenCL call
 * (doc/architecture.md: a second MPI_Init aborts).
 *   - MPI_Init / MPI_Init_thread: a no-op when Tutti already started MPI; otherwise MPI
 *     starts at MPI_THREAD_MULTIPLE (Tutti's transport needs it) and the program is told the
 *     level it asked for, or less if that is all MPI gives.
 *   - MPI_Finalize: a no-op when Tutti started MPI (Tutti finalizes at exit); otherwise Tutti
 *     first stops its own traffic.
 * It links no MPI library: the real entry points are found at run time (PMPI_*), so programs
 * without MPI under tutti-run pay nothing. Tutti reaches it through the tutti_shim_* names. */
#include "config.h"

#include <dlfcn.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define EXPORT __attribute__((visibility("default")))

static bool tutti_owns, initializing;
static void (*tutti_finalize_hook)(void);

/* Tutti asks whether it is being called from inside MPI_Init (hwloc loads OpenCL drivers
 * there): it must not start MPI then. */
EXPORT int tutti_shim_initializing(void)
{
  return initializing;
}

/* Tutti tells the shim it started MPI, and how to stop its traffic before MPI goes. */
EXPORT void tutti_shim_register(int owns, void (*finalize_hook)(void))
{
  tutti_owns = owns;
  tutti_finalize_hook = finalize_hook;
}

static int real_init_thread(int *argc, char ***argv, int required, int *provided)
{
  int (*f)(int *, char ***, int, int *) =
      (int (*)(int *, char ***, int, int *))dlsym(RTLD_NEXT, "PMPI_Init_thread");
  if (!f) {
    fprintf(stderr, "[tutti] libtutti-mpi: no PMPI_Init_thread in the program's MPI\n");
    return MPI_ERR_OTHER;
  }
  initializing = true;
  int rc = f(argc, argv, required, provided);
  initializing = false;
  return rc;
}

EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
  if (tutti_owns) {
    if (provided)
      *provided = required;
    return MPI_SUCCESS;
  }
  int got = MPI_THREAD_SINGLE;
  int rc = real_init_thread(argc, argv, MPI_THREAD_MULTIPLE, &got);
  if (provided)
    *provided = got < required ? got : required;
  return rc;
}

EXPORT int MPI_Init(int *argc, char ***argv)
{
  int provided;
  return MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
}

EXPORT int MPI_Finalize(void)
{
  if (tutti_owns)
    return MPI_SUCCESS;
  if (tutti_finalize_hook)
    tutti_finalize_hook();
  int (*f)(void) = (int (*)(void))dlsym(RTLD_NEXT, "PMPI_Finalize");
  return f ? f() : MPI_ERR_OTHER;
}
