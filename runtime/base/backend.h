/* Backends: the vendor OpenCL platforms Tutti drives (PoCL on CPUs, NVIDIA on GPUs).
 *
 * Tutti never goes through the ICD loader: it reads the vendors directory itself, skips its
 * own entry, dlopens each vendor library and reaches its platforms through the dispatch table
 * that every native object carries (doc/architecture.md says why). */
#ifndef TUTTI_BACKEND_H
#define TUTTI_BACKEND_H

#include <stdbool.h>

#include "runtime/base/cl.h"

struct tt_backend_platform {
  char *library;                 /* path or soname it was loaded from */
  void *dl;
  cl_platform_id native;
  const cl_icd_dispatch *d;      /* the vendor's dispatch table (may have NULL slots) */
  char name[128];                /* CL_PLATFORM_NAME */
  char short_name[32];           /* "pocl", "nvidia", ...: for logs and tutti-info */
  cl_uint ndevices;
  cl_device_id *devices;         /* native devices */
  /* Launches of one kernel at once on one device may crash it: the parts of split launches
   * on one of its devices are issued one after another (runtime/command/launch.c, after_last_part).
   * PoCL's CPU drivers keep one cache of loaded work-group functions, keyed by kernel and
   * local size, with a reference count per entry; a launch finds its entry by its global
   * offset (zero or not) and extent too, while its release takes the first entry of the
   * kernel and local size: with two entries of one kernel in use at once, a release takes
   * the other's count and a later one aborts ('found->ref_count > 0', PoCL 3.1 common.c).
   * tests/split/pocl_parts shows it with PoCL alone. */
  bool serial_parts;
  /* NVIDIA's OpenCL (driver 580) may call an event's callbacks 10-80 ms after the command
   * ended while nothing waits in the driver (a split Jacobi's halo copies waited for them,
   * doc/testing.md): Tutti's own callbacks on its events are also run by polling their
   * status (runtime/job/callback.c). */
  bool late_callbacks;
};

/* Loads every backend once (thread safe). Returns how many platforms were kept. */
cl_uint tt_backend_discover(void);
struct tt_backend_platform *tt_backend_get(cl_uint i);

/* Whether Tutti polls the status of native events whose vendor dispatch table
 * (TT_VENDOR_DISPATCH) is d for its callbacks (TUTTI_EVENT_POLL; auto: backends with
 * late_callbacks). */
bool tt_backend_polled(const cl_icd_dispatch *d);

/* The dispatch table a native handle carries: its vendor's own. */
#define TT_VENDOR_DISPATCH(h) (*(const cl_icd_dispatch *const *)(h))

/* The dispatch table of a native handle. With the event ledger (runtime/base/ledger.c), a copy of
 * it whose event entries check Tutti's references. */
#ifdef TT_LEDGER
const cl_icd_dispatch *tt_ledger_table(const cl_icd_dispatch *real);
#define TT_NATIVE_DISPATCH(h) tt_ledger_table(TT_VENDOR_DISPATCH(h))
#else
#define TT_NATIVE_DISPATCH(h) TT_VENDOR_DISPATCH(h)
#endif

/* Sets a native user event of Tutti's (complete, or failed) and drops Tutti's reference. */
static inline void tt_user_event_end(cl_event ev, bool ok)
{
  const cl_icd_dispatch *d = TT_NATIVE_DISPATCH(ev);
  d->clSetUserEventStatus(ev, ok ? CL_COMPLETE : CL_OUT_OF_RESOURCES);
  d->clReleaseEvent(ev);
}

/* A native event's execution status (or the error of asking). */
static inline cl_int tt_native_status(cl_event ev)
{
  cl_int s = CL_QUEUED;
  cl_int err = TT_NATIVE_DISPATCH(ev)->clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                                     sizeof s, &s, NULL);
  return err == CL_SUCCESS ? s : err;
}

/* Calls a backend entry point that returns cl_int, answering CL_INVALID_OPERATION where the
 * backend left the slot empty. */
#define TT_NCALL(bp, fn, ...) ((bp)->d->fn ? (bp)->d->fn(__VA_ARGS__) : CL_INVALID_OPERATION)

/* Whether a platform name is selected by a TUTTI_BACKENDS list (case-insensitive substrings
 * separated by commas; NULL selects all). Exposed for the unit tests. */
int tt_backend_selected(const char *list, const char *platform_name, const char *short_name);

/* Whether this rank has a PoCL kernel cache of its own, beside the other ranks of its node
 * (runtime/base/backend.c). */
bool tt_backend_pocl_own_cache(void);
/* Takes into this rank's PoCL cache, as hard links, what the other ranks of its node
 * compiled into theirs since the job began (or since the last time): before a build, so
 * that it comes from the cache where another rank made it already. */
void tt_backend_pocl_adopt(void);

#endif
