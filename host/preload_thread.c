/* libtutti-host.so, threads (host/preload_impl.h): every thread the host program makes gets a
 * name that every rank gives it alike, whatever order the operating system runs them in: the
 * main thread is "0", the k-th thread a named thread makes (counting its own pthread_create
 * calls, in its own program order) is its name and ".k" ("0.2", "0.2.1"). Threads the
 * runtime makes (MPI's, the drivers', Tutti's) get none. Tutti names the thread of a call in
 * its divergence reports (tutti_shim_thread_name, runtime/job/check.c), and orders the calls
 * of several threads alike on every rank once the program made one (tutti_shim_threads_made,
 * runtime/job/turns.c). */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host/preload_impl.h"

#define NAME_LEN 48

static __thread char name[NAME_LEN];  /* "" until named */
static __thread unsigned children;     /* threads this one made so far */
static atomic_uint made;               /* named threads the program made */

struct start {
  void *(*fn)(void *);
  void *arg;
  char name[NAME_LEN];
};

static void *named_start(void *p)
{
  struct start s = *(struct start *)p;
  free(p);
  memcpy(name, s.name, sizeof name);
  return s.fn(s.arg);
}

/* This thread's name, the main thread's made on first use; NULL for a thread of the
 * runtime's, or outside a job of several ranks. */
EXPORT const char *tutti_shim_thread_name(void)
{
  if (!name[0] && (pid_t)syscall(SYS_gettid) == getpid())
    snprintf(name, sizeof name, "0");
  return name[0] ? name : NULL;
}

/* How many threads the program made so far (named ones). */
EXPORT unsigned tutti_shim_threads_made(void)
{
  return atomic_load(&made);
}

EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                          void *(*start_routine)(void *), void *arg)
{
  REAL(pthread_create);
  const char *parent = active() ? tutti_shim_thread_name() : NULL;
  if (parent && atomic_load(&made) == 0)
    host_job(); /* its locks are ordered from now on: the job must run */
  struct start *s = parent ? malloc(sizeof *s) : NULL;
  if (!s)
    return real_pthread_create(thread, attr, start_routine, arg);
  s->fn = start_routine;
  s->arg = arg;
  /* A name too deep to fit keeps its tail: still the same on every rank. */
  char full[3 * NAME_LEN];
  snprintf(full, sizeof full, "%s.%u", parent, ++children);
  size_t len = strlen(full), from = len < NAME_LEN ? 0 : len - (NAME_LEN - 1);
  memcpy(s->name, full + from, len - from + 1);
  atomic_fetch_add(&made, 1); /* before the thread exists: its calls, and the maker's next
                               * ones, see it */
  int rc = real_pthread_create(thread, attr, named_start, s);
  if (rc != 0)
    free(s);
  return rc;
}

/* --- the program's locks, once it made a thread -----------------------------------------
 * Threads that take one lock in another order on each rank would meet Tutti's calls in
 * another order too (a thread holding a lock waits for its turn while the thread whose turn
 * it is waits for the lock). So every pthread_mutex_lock, _trylock and the relock at the end
 * of pthread_cond_wait and _timedwait made by the program (not by the runtime: the library
 * of the call's site decides) takes its place in rank 0's order of turns
 * (runtime/job/turns.h): rank 0 locks, then records; the others lock when the order says,
 * and a trylock there succeeds exactly when rank 0's did. Other waits (rwlocks, spinlocks,
 * semaphores, atomics) are not ordered (doc/cluster.md, "Host threads"). */

static int (*real_lock)(pthread_mutex_t *);
static int (*real_trylock)(pthread_mutex_t *);
static int (*real_unlock)(pthread_mutex_t *);

/* Whether a call from ret is the program's: kept by site, as (site << 1) | verdict in one
 * word, so that a reader never pairs one site with another's verdict. */
static bool program_site(void *ret)
{
  static _Atomic uintptr_t seen[1024];
  uintptr_t site = (uintptr_t)ret;
  _Atomic uintptr_t *slot = &seen[(site >> 2) % 1024];
  uintptr_t v = atomic_load_explicit(slot, memory_order_relaxed);
  if (v >> 1 == site)
    return v & 1;
  Dl_info info;
  bool program = dladdr(ret, &info) && info.dli_fname && info.dli_fbase != host_base() &&
                 !runtime_library(info.dli_fname);
  atomic_store_explicit(slot, site << 1 | program, memory_order_relaxed);
  return program;
}

static bool ordering(void *site)
{
  return atomic_load_explicit(&made, memory_order_relaxed) > 0 && host_ordering() &&
         program_site(site);
}

struct lock_op {
  pthread_mutex_t *m;
  bool try;
};

/* rank0: -1 on rank 0 (or without turns), else whether rank 0's trylock failed. */
static int lock_in_order(void *arg, int rank0)
{
  struct lock_op *o = arg;
  if (o->try && rank0 == 1)
    return EBUSY;
  if (o->try && rank0 < 0)
    return real_trylock(o->m);
  return real_lock(o->m);
}

static void find_locks(void)
{
  if (!real_lock) {
    real_trylock = (__typeof__(real_trylock))dlsym(RTLD_NEXT, "pthread_mutex_trylock");
    real_unlock = (__typeof__(real_unlock))dlsym(RTLD_NEXT, "pthread_mutex_unlock");
    real_lock = (__typeof__(real_lock))dlsym(RTLD_NEXT, "pthread_mutex_lock");
  }
}

static int lock_ordered(pthread_mutex_t *m, bool try)
{
  struct lock_op o = {m, try};
  return host_ordered(lock_in_order, &o);
}

/* The end of an ordered condition wait that returned rc: its own relock is let go at once
 * and made again in order, so that a wait may return later than woken, never in another
 * order. */
static int relocked_in_order(pthread_mutex_t *m, int rc)
{
  real_unlock(m);
  lock_ordered(m, false);
  return rc;
}

EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
  find_locks();
  return ordering(__builtin_return_address(0)) ? lock_ordered(m, false) : real_lock(m);
}

EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
  find_locks();
  return ordering(__builtin_return_address(0)) ? lock_ordered(m, true) : real_trylock(m);
}

EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
  REAL(pthread_cond_wait);
  find_locks();
  if (!ordering(__builtin_return_address(0)))
    return real_pthread_cond_wait(c, m);
  return relocked_in_order(m, real_pthread_cond_wait(c, m));
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                  const struct timespec *abstime)
{
  REAL(pthread_cond_timedwait);
  find_locks();
  if (!ordering(__builtin_return_address(0)))
    return real_pthread_cond_timedwait(c, m, abstime);
  return relocked_in_order(m, real_pthread_cond_timedwait(c, m, abstime));
}
