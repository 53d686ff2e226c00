/* The native event ledger (configure --enable-event-ledger): counts the references Tutti
 * holds on each backend event and stops the process, with a backtrace, at the first call that
 * hands a backend an event Tutti no longer holds (a release too many, an event in a wait list
 * or a query after its last release). A backend may keep such an event alive for a while and
 * crash later on a thread of its own; the ledger names the call of Tutti's that was wrong.
 *
 * Every call to a backend goes through TT_NATIVE_DISPATCH or a platform's d (runtime/base/backend.h):
 * with the ledger both give a copy of the vendor's table whose event entries check and count,
 * then call the vendor's own entry, found through the handle's dispatch pointer. */
#define _GNU_SOURCE /* dladdr */
#include "runtime/base/backend.h"

#ifdef TT_LEDGER
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define REAL(h) TT_VENDOR_DISPATCH(h)

/* An open hash of native event -> references, under one lock. */
enum { SLOTS = 1 << 16 };
struct entry {
  cl_event ev;
  long refs;
  struct entry *next;
};
static struct entry *slots[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct entry **find(cl_event ev)
{
  struct entry **p = &slots[((uintptr_t)ev >> 4) % SLOTS];
  while (*p && (*p)->ev != ev)
    p = &(*p)->next;
  return p;
}

static void fault(const char *what, cl_event ev)
{
  fprintf(stderr, "tutti: event ledger: %s (native event %p)\n", what, (void *)ev);
  void *frames[32];
  int n = backtrace(frames, 32);
  for (int i = 1; i < n; i++) {
    Dl_info info;
    if (dladdr(frames[i], &info) && info.dli_fname)
      fprintf(stderr, "  #%d %s+0x%lx %s\n", i, info.dli_fname,
              (unsigned long)((char *)frames[i] - (char *)info.dli_fbase),
              info.dli_sname ? info.dli_sname : "");
    else
      fprintf(stderr, "  #%d %p\n", i, frames[i]);
  }
  abort();
}

/* A backend handed Tutti a new event (one reference). */
static void born(cl_event ev)
{
  if (!ev)
    return;
  pthread_mutex_lock(&lock);
  struct entry **p = find(ev);
  if (*p) {
    pthread_mutex_unlock(&lock);
    fault("a backend returned an event Tutti still holds", ev);
  }
  struct entry *e = malloc(sizeof *e);
  *e = (struct entry){ev, 1, NULL};
  *p = e;
  pthread_mutex_unlock(&lock);
}

/* Tutti hands ev to its backend: it must hold it. delta: the change to its references. */
static void held(cl_event ev, int delta, const char *call)
{
  pthread_mutex_lock(&lock);
  struct entry **p = find(ev);
  if (!*p) {
    pthread_mutex_unlock(&lock);
    char what[96];
    snprintf(what, sizeof what, "%s on an event Tutti does not hold", call);
    fault(what, ev);
  }
  (*p)->refs += delta;
  if ((*p)->refs == 0) {
    struct entry *e = *p;
    *p = e->next;
    free(e);
  }
  pthread_mutex_unlock(&lock);
}

static void held_list(cl_uint n, const cl_event *list, const char *call)
{
  for (cl_uint i = 0; list && i < n; i++)
    held(list[i], 0, call);
}

static cl_int CL_API_CALL l_retain(cl_event e)
{
  held(e, 1, "clRetainEvent");
  return REAL(e)->clRetainEvent(e);
}

static cl_int CL_API_CALL l_release(cl_event e)
{
  held(e, -1, "clReleaseEvent");
  return REAL(e)->clReleaseEvent(e);
}

static cl_event CL_API_CALL l_user(cl_context c, cl_int *err)
{
  cl_event e = REAL(c)->clCreateUserEvent(c, err);
  born(e);
  return e;
}

static cl_int CL_API_CALL l_status(cl_event e, cl_int s)
{
  held(e, 0, "clSetUserEventStatus");
  return REAL(e)->clSetUserEventStatus(e, s);
}

static cl_int CL_API_CALL l_wait(cl_uint n, const cl_event *list)
{
  held_list(n, list, "clWaitForEvents");
  return n && list ? REAL(list[0])->clWaitForEvents(n, list) : CL_INVALID_VALUE;
}

static cl_int CL_API_CALL l_info(cl_event e, cl_event_info p, size_t sz, void *v, size_t *ret)
{
  held(e, 0, "clGetEventInfo");
  return REAL(e)->clGetEventInfo(e, p, sz, v, ret);
}

static cl_int CL_API_CALL l_prof(cl_event e, cl_profiling_info p, size_t sz, void *v, size_t *ret)
{
  held(e, 0, "clGetEventProfilingInfo");
  return REAL(e)->clGetEventProfilingInfo(e, p, sz, v, ret);
}

static cl_int CL_API_CALL l_callback(cl_event e, cl_int t,
                                     void(CL_CALLBACK *fn)(cl_event, cl_int, void *), void *data)
{
  held(e, 0, "clSetEventCallback");
  return REAL(e)->clSetEventCallback(e, t, fn, data);
}

/* The enqueue calls Tutti makes: the wait list must be held, the event returned is born. */
#define ENQUEUE(name, call, params, args)                                                     \
  static cl_int CL_API_CALL name params                                                       \
  {                                                                                           \
    held_list(n, list, #call);                                                                \
    cl_int err = REAL(q)->call args;                                                          \
    if (err == CL_SUCCESS && ev)                                                              \
      born(*ev);                                                                              \
    return err;                                                                               \
  }

ENQUEUE(l_read, clEnqueueReadBuffer,
        (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s, void *p, cl_uint n,
         const cl_event *list, cl_event *ev),
        (q, m, b, o, s, p, n, list, ev))
ENQUEUE(l_write, clEnqueueWriteBuffer,
        (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s, const void *p, cl_uint n,
         const cl_event *list, cl_event *ev),
        (q, m, b, o, s, p, n, list, ev))
ENQUEUE(l_copy, clEnqueueCopyBuffer,
        (cl_command_queue q, cl_mem a, cl_mem b, size_t ao, size_t bo, size_t s, cl_uint n,
         const cl_event *list, cl_event *ev),
        (q, a, b, ao, bo, s, n, list, ev))
ENQUEUE(l_fill, clEnqueueFillBuffer,
        (cl_command_queue q, cl_mem m, const void *pat, size_t ps, size_t o, size_t s, cl_uint n,
         const cl_event *list, cl_event *ev),
        (q, m, pat, ps, o, s, n, list, ev))
ENQUEUE(l_unmap, clEnqueueUnmapMemObject,
        (cl_command_queue q, cl_mem m, void *p, cl_uint n, const cl_event *list, cl_event *ev),
        (q, m, p, n, list, ev))
ENQUEUE(l_marker, clEnqueueMarkerWithWaitList,
        (cl_command_queue q, cl_uint n, const cl_event *list, cl_event *ev), (q, n, list, ev))
ENQUEUE(l_barrier, clEnqueueBarrierWithWaitList,
        (cl_command_queue q, cl_uint n, const cl_event *list, cl_event *ev), (q, n, list, ev))
ENQUEUE(l_migrate, clEnqueueMigrateMemObjects,
        (cl_command_queue q, cl_uint nm, const cl_mem *m, cl_mem_migration_flags f, cl_uint n,
         const cl_event *list, cl_event *ev),
        (q, nm, m, f, n, list, ev))
ENQUEUE(l_ndrange, clEnqueueNDRangeKernel,
        (cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *off, const size_t *gl,
         const size_t *lo, cl_uint n, const cl_event *list, cl_event *ev),
        (q, k, dim, off, gl, lo, n, list, ev))
ENQUEUE(l_read_rect, clEnqueueReadBufferRect,
        (cl_command_queue q, cl_mem m, cl_bool b, const size_t *bo, const size_t *ho,
         const size_t *r, size_t brp, size_t bsp, size_t hrp, size_t hsp, void *p, cl_uint n,
         const cl_event *list, cl_event *ev),
        (q, m, b, bo, ho, r, brp, bsp, hrp, hsp, p, n, list, ev))
ENQUEUE(l_write_rect, clEnqueueWriteBufferRect,
        (cl_command_queue q, cl_mem m, cl_bool b, const size_t *bo, const size_t *ho,
         const size_t *r, size_t brp, size_t bsp, size_t hrp, size_t hsp, const void *p,
         cl_uint n, const cl_event *list, cl_event *ev),
        (q, m, b, bo, ho, r, brp, bsp, hrp, hsp, p, n, list, ev))
ENQUEUE(l_copy_rect, clEnqueueCopyBufferRect,
        (cl_command_queue q, cl_mem a, cl_mem b, const size_t *ao, const size_t *bo,
         const size_t *r, size_t arp, size_t asp, size_t brp, size_t bsp, cl_uint n,
         const cl_event *list, cl_event *ev),
        (q, a, b, ao, bo, r, arp, asp, brp, bsp, n, list, ev))

/* clEnqueueMapBuffer returns the pointer, not an error. */
static void *CL_API_CALL l_map(cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags f, size_t o,
                               size_t s, cl_uint n, const cl_event *list, cl_event *ev,
                               cl_int *err)
{
  held_list(n, list, "clEnqueueMapBuffer");
  cl_int e = CL_SUCCESS;
  void *p = REAL(q)->clEnqueueMapBuffer(q, m, b, f, o, s, n, list, ev, &e);
  if (e == CL_SUCCESS && ev)
    born(*ev);
  if (err)
    *err = e;
  return p;
}

/* One wrapped table per vendor table. */
enum { VENDORS = 8 };
static struct {
  const cl_icd_dispatch *real;
  cl_icd_dispatch wrapped;
} tables[VENDORS];
static int ntables;

const cl_icd_dispatch *tt_ledger_table(const cl_icd_dispatch *real)
{
  if (!real)
    return NULL;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < ntables; i++)
    if (tables[i].real == real || &tables[i].wrapped == real) {
      pthread_mutex_unlock(&lock);
      return &tables[i].wrapped;
    }
  if (ntables == VENDORS) {
    pthread_mutex_unlock(&lock);
    return real;
  }
  cl_icd_dispatch *w = &tables[ntables].wrapped;
  *w = *real;
#define WRAP(slot, fn) if (real->slot) w->slot = fn
  WRAP(clRetainEvent, l_retain);
  WRAP(clReleaseEvent, l_release);
  WRAP(clCreateUserEvent, l_user);
  WRAP(clSetUserEventStatus, l_status);
  WRAP(clWaitForEvents, l_wait);
  WRAP(clGetEventInfo, l_info);
  WRAP(clGetEventProfilingInfo, l_prof);
  WRAP(clSetEventCallback, l_callback);
  WRAP(clEnqueueReadBuffer, l_read);
  WRAP(clEnqueueWriteBuffer, l_write);
  WRAP(clEnqueueCopyBuffer, l_copy);
  WRAP(clEnqueueFillBuffer, l_fill);
  WRAP(clEnqueueUnmapMemObject, l_unmap);
  WRAP(clEnqueueMarkerWithWaitList, l_marker);
  WRAP(clEnqueueBarrierWithWaitList, l_barrier);
  WRAP(clEnqueueMigrateMemObjects, l_migrate);
  WRAP(clEnqueueNDRangeKernel, l_ndrange);
  WRAP(clEnqueueReadBufferRect, l_read_rect);
  WRAP(clEnqueueWriteBufferRect, l_write_rect);
  WRAP(clEnqueueCopyBufferRect, l_copy_rect);
  WRAP(clEnqueueMapBuffer, l_map);
#undef WRAP
  tables[ntables].real = real;
  ntables++;
  pthread_mutex_unlock(&lock);
  return w;
}
#endif
