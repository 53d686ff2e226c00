/* libtutti-host.so, threads (host/preload_impl.h): every thread the host program makes gets a
 * name that every rank gives it alike, whatever order the operating system runs them in: the
 * main thread is "0", the k-th thread a named thread makes (counting its own pthread_create
 * calls, in its own program order) is its name and ".k" ("0.2", "0.2.1"). Threads the
 * runtime makes (MPI's, the drivers', Tutti's) get none. Tutti names the thread of a call in
 * its divergence reports (tutti_shim_thread_name, runtime/job/check.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host/preload_impl.h"

#define NAME_LEN 48

static __thread char name[NAME_LEN];  /* "" until named */
static __thread unsigned children;     /* threads this one made so far */

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

EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                          void *(*start_routine)(void *), void *arg)
{
  REAL(pthread_create);
  const char *parent = active() ? tutti_shim_thread_name() : NULL;
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
  int rc = real_pthread_create(thread, attr, named_start, s);
  if (rc != 0)
    free(s);
  return rc;
}
