/* The live-object registry: an open-addressed hash set of object addresses. Lookups take a
 * read lock; creation and destruction take the write lock. */
#include "config.h"

#include "runtime/base/object.h"

#include <stdio.h>

#include "runtime/base/log.h"
#include <stdlib.h>
#include <string.h>

#define TOMBSTONE ((struct tt_object *)1)

static pthread_rwlock_t registry_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct tt_object **slots;
static size_t nslots, nused;
static atomic_uint_fast64_t next_id = 1;

static size_t hash_ptr(const void *p)
{
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

static void insert_slot(struct tt_object **table, size_t n, struct tt_object *o)
{
  size_t i = hash_ptr(o) & (n - 1);
  while (table[i] != NULL && table[i] != TOMBSTONE)
    i = (i + 1) & (n - 1);
  table[i] = o;
}

static void grow(void)
{
  size_t n = nslots ? nslots * 2 : 1024;
  struct tt_object **table = calloc(n, sizeof *table);
  if (!table) {
    fprintf(tt_log_file(), "[tutti] out of memory growing the object registry\n");
    abort();
  }
  size_t used = 0;
  for (size_t i = 0; i < nslots; i++)
    if (slots[i] && slots[i] != TOMBSTONE) {
      insert_slot(table, n, slots[i]);
      used++;
    }
  free(slots);
  slots = table;
  nslots = n;
  nused = used;
}

/* Caller holds the lock (read or write). p may be any value at all (an 8-byte kernel
 * argument, say): only registered addresses match, never the tombstone marker. */
static size_t find_slot(const void *p)
{
  if (!nslots || (const struct tt_object *)p == TOMBSTONE)
    return SIZE_MAX;
  size_t i = hash_ptr(p) & (nslots - 1);
  while (slots[i] != NULL) {
    if (slots[i] == p)
      return i;
    i = (i + 1) & (nslots - 1);
  }
  return SIZE_MAX;
}

static const cl_icd_dispatch *dispatch;

void tt_object_set_dispatch(const cl_icd_dispatch *d)
{
  dispatch = d;
}

void tt_object_init(struct tt_object *o, enum tt_tag tag, void (*destroy)(struct tt_object *))
{
  o->dispatch = dispatch;
  o->tag = tag;
  o->id = atomic_fetch_add(&next_id, 1);
  atomic_init(&o->refcount, 1);
  pthread_mutex_init(&o->lock, NULL);
  o->destroy = destroy;
  pthread_rwlock_wrlock(&registry_lock);
  if ((nused + 1) * 2 > nslots)
    grow();
  insert_slot(slots, nslots, o);
  nused++;
  pthread_rwlock_unlock(&registry_lock);
}

bool tt_object_valid(const void *p, enum tt_tag tag)
{
  if (!p)
    return false;
  pthread_rwlock_rdlock(&registry_lock);
  size_t i = find_slot(p);
  bool ok = i != SIZE_MAX && slots[i]->tag == (uint32_t)tag &&
            atomic_load_explicit(&slots[i]->refcount, memory_order_relaxed) > 0;
  pthread_rwlock_unlock(&registry_lock);
  return ok;
}

enum tt_tag tt_object_lookup(const void *p, uint64_t *id)
{
  if (!p)
    return 0;
  pthread_rwlock_rdlock(&registry_lock);
  size_t i = find_slot(p);
  enum tt_tag tag = 0;
  /* Read under the lock: once unregistered, the object may be freed at any time. */
  if (i != SIZE_MAX) {
    tag = (enum tt_tag)slots[i]->tag;
    if (id)
      *id = slots[i]->id;
  }
  pthread_rwlock_unlock(&registry_lock);
  return tag;
}

void tt_object_retain(struct tt_object *o)
{
  if (o->destroy)
    atomic_fetch_add(&o->refcount, 1);
}

/* The reaper: one thread that runs deferred destructions in order. */
struct reap {
  void (*fn)(void *);
  void *arg;
  struct reap *next;
};

static _Thread_local int deferring;
static pthread_mutex_t reap_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reap_cond = PTHREAD_COND_INITIALIZER;
static struct reap *reap_head, *reap_tail;
static bool reaper_started;

static void *reaper_main(void *unused)
{
  pthread_mutex_lock(&reap_lock);
  for (;;) {
    while (!reap_head)
      pthread_cond_wait(&reap_cond, &reap_lock);
    struct reap *r = reap_head;
    reap_head = r->next;
    if (!reap_head)
      reap_tail = NULL;
    pthread_mutex_unlock(&reap_lock);
    r->fn(r->arg);
    free(r);
    pthread_mutex_lock(&reap_lock);
  }
  return NULL;
}

void tt_reaper_enter(void)
{
  deferring++;
}

void tt_reaper_leave(void)
{
  deferring--;
}

void tt_reaper_run(void (*fn)(void *), void *arg)
{
  if (!deferring) {
    fn(arg);
    return;
  }
  struct reap *r = malloc(sizeof *r);
  if (!r) {
    fn(arg); /* better a risk of waiting than a leak of a whole context */
    return;
  }
  *r = (struct reap){fn, arg, NULL};
  pthread_mutex_lock(&reap_lock);
  if (!reaper_started)
    reaper_started = tt_thread_start("tutti-reaper", reaper_main, NULL);
  if (reap_tail)
    reap_tail->next = r;
  else
    reap_head = r;
  reap_tail = r;
  pthread_cond_signal(&reap_cond);
  pthread_mutex_unlock(&reap_lock);
}

static void destroy_later(void *arg)
{
  struct tt_object *o = arg;
  o->destroy(o);
}

bool tt_object_release(struct tt_object *o)
{
  if (!o->destroy)
    return false;
  if (atomic_fetch_sub(&o->refcount, 1) != 1)
    return false;
  pthread_rwlock_wrlock(&registry_lock);
  size_t i = find_slot(o);
  if (i != SIZE_MAX)
    slots[i] = TOMBSTONE;
  pthread_rwlock_unlock(&registry_lock);
  pthread_mutex_destroy(&o->lock);
  o->tag = 0;
  tt_reaper_run(destroy_later, o);
  return true;
}

static const char *tag_name(uint32_t tag)
{
  static const char *names[] = {"platform", "device", "context", "command queue", "mem object",
                                "program", "kernel", "event", "sampler"};
  uint32_t i = tag - TT_PLATFORM;
  return i < sizeof names / sizeof names[0] ? names[i] : "object";
}

void tt_object_list_live(void)
{
  pthread_rwlock_rdlock(&registry_lock);
  for (size_t i = 0; i < nslots; i++) {
    struct tt_object *o = slots[i];
    if (o && o != TOMBSTONE && o->destroy)
      fprintf(tt_log_file(), "[tutti] still alive at exit: %s #%llu (%d references)\n", tag_name(o->tag),
              (unsigned long long)o->id, atomic_load(&o->refcount));
  }
  pthread_rwlock_unlock(&registry_lock);
}

bool tt_thread_start(const char *name, void *(*fn)(void *), void *arg)
{
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  bool ok = pthread_create(&t, &attr, fn, arg) == 0;
  pthread_attr_destroy(&attr);
  if (ok)
    pthread_setname_np(t, name);
  return ok;
}
