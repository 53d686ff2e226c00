/* Handles: the common header of every Tutti object, type tags, reference counts and the
 * registry of live objects that lets every entry point refuse a garbage or foreign handle
 * without dereferencing it. */
#ifndef TUTTI_OBJECT_H
#define TUTTI_OBJECT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime/base/cl.h"

enum tt_tag {
  TT_PLATFORM = 0x71a70001,
  TT_DEVICE,
  TT_CONTEXT,
  TT_QUEUE,
  TT_MEM,
  TT_PROGRAM,
  TT_KERNEL,
  TT_EVENT,
  TT_SAMPLER,
};

struct tt_object {
  const cl_icd_dispatch *dispatch; /* must stay first: the ICD loader reads it */
  uint32_t tag;
  uint64_t id;                     /* global id, identical on every rank (program order) */
  atomic_int refcount;
  pthread_mutex_t lock;
  void (*destroy)(struct tt_object *); /* frees the object once the last reference goes */
};

/* The ICD dispatch table every object starts with (icd/dispatch_table.c's): icd/ hands it
 * over when the library loads, so that runtime/ never names a symbol of the layer above. */
void tt_object_set_dispatch(const cl_icd_dispatch *d);

/* Sets the header, registers the object, reference count 1. Permanent objects (platform,
 * root devices) pass destroy NULL and ignore retain/release. */
void tt_object_init(struct tt_object *o, enum tt_tag tag, void (*destroy)(struct tt_object *));

/* True if p is a live Tutti object of this tag; never dereferences an unknown pointer. */
bool tt_object_valid(const void *p, enum tt_tag tag);

/* Finds the live object whose address is p, whatever its tag, or 0 (for kernel arguments,
 * whose type the caller does not know; p may be any bit pattern and is never dereferenced
 * unless registered). Its id goes to *id when id is not NULL. */
enum tt_tag tt_object_lookup(const void *p, uint64_t *id);

void tt_object_retain(struct tt_object *o);
/* Drops one reference; the last one unregisters and destroys. True if destroyed. */
bool tt_object_release(struct tt_object *o);

/* A listing of live (non-permanent) objects on stderr (printed at exit when TUTTI_DEBUG
 * contains "leak"). */
void tt_object_list_live(void);

/* Threads that must never block in a backend (the transport's progress thread, backend
 * callbacks) hand last releases to the reaper thread instead: destroying a queue or a
 * context finishes native work, which may wait for those very threads. */
void tt_reaper_enter(void);
void tt_reaper_leave(void);
/* Runs fn(arg) now on an ordinary thread, or on the reaper thread inside enter/leave. */
void tt_reaper_run(void (*fn)(void *), void *arg);

/* Starts a detached thread running fn(arg), named name as ps and debuggers show it (15
 * characters at most): Tutti's service threads (the reaper, the sweeper of failed commands,
 * the CUDA copy threads). Whether it started. */
bool tt_thread_start(const char *name, void *(*fn)(void *), void *arg);

#define TT_RETAIN(x) tt_object_retain(&(x)->obj)
#define TT_RELEASE(x) tt_object_release(&(x)->obj)

#endif
