/* The job's trace (runtime/job/trace.h). Records are kept in memory, in the units they come in
 * (device clock for commands, this host's clock for the rest), and turned into JSON trace
 * events at exit, when every device's offset to the host clock is known as well as it will
 * be: the smallest (host time at completion - device end time) seen over its commands. */
#include "config.h"

#include "runtime/job/trace.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/job/cluster.h"
#include "runtime/job/callback.h"
#include "runtime/base/env.h"
#include "runtime/base/log.h"
#include "runtime/job/stats.h"
#include "runtime/job/transport.h"

#define MAX_RECORDS 2000000 /* about 200 MB of records: later ones are counted, not kept */

bool tt_trace_on;

enum kind { K_COMMAND, K_ENQUEUE, K_MESSAGE };

struct rec {
  uint8_t kind;
  uint8_t channel;
  bool flag;         /* K_ENQUEUE: actual; K_MESSAGE: send; K_COMMAND: device clock */
  bool dropped;      /* K_ENQUEUE: dropped */
  uint8_t cat;       /* K_COMMAND: enum tt_trace_cat */
  int peer;
  cl_uint device;
  uint64_t t0, t1;
  uint64_t id;       /* command or message id */
  uint64_t len;
  char name[48];
};

struct plan_note {
  int src, dst;
  uint64_t first, n, mem;
  size_t off, len;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rec *recs;
static size_t nrecs, caprecs, lost;
static struct plan_note *notes;
static size_t nnotes, capnotes;
static int64_t *dev_offset; /* by global device index: host - device clock, or INT64_MAX */
static cl_uint ndev;
static int64_t rank_offset; /* this clock minus rank 0's */
static uint64_t base;       /* rank 0's clock at the start: time 0 of the trace */

static bool grow(void **p, size_t *cap, size_t n, size_t size)
{
  if (n < *cap)
    return true;
  size_t c = *cap ? *cap * 2 : 4096;
  void *q = realloc(*p, c * size);
  if (!q)
    return false;
  *p = q;
  *cap = c;
  return true;
}

/* Caller holds the lock. */
static struct rec *add(enum kind k)
{
  if (nrecs >= MAX_RECORDS || !grow((void **)&recs, &caprecs, nrecs, sizeof *recs)) {
    lost++;
    return NULL;
  }
  struct rec *r = &recs[nrecs++];
  memset(r, 0, sizeof *r);
  r->kind = (uint8_t)k;
  return r;
}

void tt_trace_start(void)
{
  const char *file = tt_env()->trace;
  if (!file)
    return;
  base = tt_stats_now_ns();
  if (tt_cluster_size() > 1) {
    tt_transport_clock_offset(tt_stats_now_ns, &rank_offset);
    uint64_t b = base - (uint64_t)rank_offset;
    tt_transport_bcast(&b, sizeof b, 0);
    base = b;
  }
  tt_trace_on = true;
  tt_transport_on_message(tt_trace_message);
  TT_LOG(TT_LOG_MPI, "trace: recording for %s (clock %+" PRId64 " ns from rank 0's)", file,
         rank_offset);
}

struct pending {
  cl_uint device;
  enum tt_trace_cat cat;
  uint64_t cmd, submitted;
  const cl_icd_dispatch *d;
  char name[48];
};

static void device_offset(cl_uint dev, int64_t off)
{
  if (dev >= ndev) {
    cl_uint n = tt_cluster_ndevices();
    int64_t *o = realloc(dev_offset, (n ? n : 1) * sizeof *o);
    if (!o)
      return;
    for (cl_uint i = ndev; i < n; i++)
      o[i] = INT64_MAX;
    dev_offset = o;
    ndev = n;
  }
  if (dev < ndev && off < dev_offset[dev])
    dev_offset[dev] = off;
}

static void CL_CALLBACK command_done(cl_event native, cl_int status, void *arg)
{
  struct pending *p = arg;
  uint64_t now = tt_stats_now_ns();
  cl_ulong start = 0, end = 0;
  bool device_clock =
      p->d->clGetEventProfilingInfo(native, CL_PROFILING_COMMAND_START, sizeof start, &start,
                                    NULL) == CL_SUCCESS &&
      p->d->clGetEventProfilingInfo(native, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) ==
          CL_SUCCESS &&
      end >= start && end > 0;
  pthread_mutex_lock(&lock);
  struct rec *r = add(K_COMMAND);
  if (r) {
    r->device = p->device;
    r->id = p->cmd;
    r->flag = device_clock;
    r->cat = (uint8_t)p->cat;
    r->t0 = device_clock ? start : p->submitted;
    r->t1 = device_clock ? end : now;
    r->peer = status < 0 ? status : 0;
    memcpy(r->name, p->name, sizeof r->name);
    if (device_clock)
      device_offset(p->device, (int64_t)now - (int64_t)end);
  }
  pthread_mutex_unlock(&lock);
  p->d->clReleaseEvent(native);
  free(p);
}

void tt_trace_command(cl_device_id device, const char *name, enum tt_trace_cat cat, uint64_t cmd,
                      cl_event native, const cl_icd_dispatch *d)
{
  struct pending *p = calloc(1, sizeof *p);
  if (!p)
    return;
  *p = (struct pending){device->index, cat, cmd, tt_stats_now_ns(), d, ""};
  snprintf(p->name, sizeof p->name, "%s", name);
  d->clRetainEvent(native);
  if (tt_native_callback(native, CL_COMPLETE, command_done, p) != CL_SUCCESS) {
    d->clReleaseEvent(native);
    free(p);
  }
}

void tt_trace_host_slice(cl_device_id device, const char *name, uint64_t cmd, uint64_t t0,
                         uint64_t t1)
{
  pthread_mutex_lock(&lock);
  struct rec *r = add(K_COMMAND);
  if (r) {
    r->device = device->index;
    r->id = cmd;
    r->cat = TT_TRACE_INTERNAL;
    r->t0 = t0;
    r->t1 = t1;
    snprintf(r->name, sizeof r->name, "%s", name);
  }
  pthread_mutex_unlock(&lock);
}

void tt_trace_enqueue(cl_device_id device, const char *name, uint64_t cmd, bool actual,
                      bool dropped)
{
  uint64_t now = tt_stats_now_ns();
  pthread_mutex_lock(&lock);
  struct rec *r = add(K_ENQUEUE);
  if (r) {
    r->device = device->index;
    r->id = cmd;
    r->flag = actual;
    r->dropped = dropped;
    r->t0 = r->t1 = now;
    snprintf(r->name, sizeof r->name, "%s", name);
  }
  pthread_mutex_unlock(&lock);
}

void tt_trace_transfer_plan(int src, int dst, uint64_t first, uint64_t n, uint64_t mem,
                            size_t off, size_t len)
{
  pthread_mutex_lock(&lock);
  if (grow((void **)&notes, &capnotes, nnotes, sizeof *notes))
    notes[nnotes++] = (struct plan_note){src, dst, first, n, mem, off, len};
  pthread_mutex_unlock(&lock);
}

void tt_trace_message(int channel, bool send, int peer, uint64_t id, size_t len, uint64_t t0,
                      uint64_t t1)
{
  pthread_mutex_lock(&lock);
  struct rec *r = add(K_MESSAGE);
  if (r) {
    r->channel = (uint8_t)channel;
    r->flag = send;
    r->peer = peer;
    r->id = id;
    r->len = len;
    r->t0 = t0;
    r->t1 = t1;
  }
  pthread_mutex_unlock(&lock);
}

/* --- JSON ------------------------------------------------------------------------------- */

struct out {
  char *buf;
  size_t len, cap;
  bool first, open;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(o->buf ? o->buf + o->len : NULL, o->buf ? o->cap - o->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0)
      return;
    if (o->buf && o->len + (size_t)n < o->cap) {
      o->len += (size_t)n;
      return;
    }
    size_t c = o->cap ? o->cap * 2 : 1 << 16;
    while (c < o->len + (size_t)n + 1)
      c *= 2;
    char *b = realloc(o->buf, c);
    if (!b)
      return;
    o->buf = b;
    o->cap = c;
  }
}

/* One event: closes the one before, a comma before every one but the first. */
static void event(struct out *o)
{
  put(o, "%s%s\n{", o->open ? "}" : "", o->first ? "" : ",");
  o->first = false;
  o->open = true;
}

/* A JSON string's contents (names come from kernels and drivers). */
static const char *esc(const char *s, char *buf, size_t cap)
{
  size_t n = 0;
  for (; *s && n + 7 < cap; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      buf[n++] = '\\', buf[n++] = (char)c;
    else if (c < 0x20)
      n += (size_t)snprintf(buf + n, cap - n, "\\u%04x", c);
    else
      buf[n++] = (char)c;
  }
  buf[n] = 0;
  return buf;
}

/* Microseconds on rank 0's clock since the start. */
static double us(uint64_t t)
{
  return ((double)(int64_t)(t - (uint64_t)rank_offset - base)) / 1000.0;
}

enum { TID_HOST = 0, TID_SEND = 1000000, TID_RECV = 1000001 };

static void metadata(struct out *o, int me)
{
  char e[256];
  event(o);
  put(o, "\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"rank %d (%s)\"}",
      me, me, esc(tt_cluster_hostname(), e, sizeof e));
  event(o);
  put(o, "\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"sort_index\":%d}",
      me, me);
  event(o);
  put(o, "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":"
         "\"host: enqueues (actual, virtual, dropped)\"}", me, TID_HOST);
  event(o);
  put(o, "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":"
         "\"MPI: bytes sent\"}", me, TID_SEND);
  event(o);
  put(o, "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":"
         "\"MPI: bytes received\"}", me, TID_RECV);
  for (cl_uint i = 0; i < tt_cluster_ndevices(); i++) {
    cl_device_id d = tt_cluster_device(i);
    if (!d->actual)
      continue;
    char name[128] = "";
    if (d->bp)
      d->bp->d->clGetDeviceInfo(d->native, CL_DEVICE_NAME, sizeof name - 1, name, NULL);
    else /* not opened on this rank (yet): its node's description */
      tt_cluster_device_info(d, CL_DEVICE_NAME, sizeof name - 1, name, NULL);
    event(o);
    put(o, "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"args\":{\"name\":"
           "\"device %u: %s (%s)\"}", me, i + 1, i, esc(name, e, sizeof e), d->backend);
    event(o);
    put(o, "\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"args\":"
           "{\"sort_index\":%u}", me, i + 1, i + 1);
  }
}

/* Notes in (src, dst, first id) order, for a binary search per message. */
static int note_order(const void *a, const void *b)
{
  const struct plan_note *x = a, *y = b;
  if (x->src != y->src)
    return x->src < y->src ? -1 : 1;
  if (x->dst != y->dst)
    return x->dst < y->dst ? -1 : 1;
  return x->first < y->first ? -1 : x->first > y->first;
}

/* The note whose ids hold message id of the pair (src, dst): the last one starting at or
 * before it. Notes must be sorted. */
static const struct plan_note *find_note(int src, int dst, uint64_t id)
{
  size_t lo = 0, hi = nnotes;
  struct plan_note key = {src, dst, id, 0, 0, 0, 0};
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (note_order(&notes[mid], &key) <= 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0)
    return NULL;
  const struct plan_note *n = &notes[lo - 1];
  return n->src == src && n->dst == dst && id < n->first + n->n ? n : NULL;
}

static void serialize(struct out *o, int me)
{
  char e[128];
  metadata(o, me);
  qsort(notes, nnotes, sizeof *notes, note_order);
  for (size_t i = 0; i < nrecs; i++) {
    const struct rec *r = &recs[i];
    switch (r->kind) {
    case K_COMMAND: {
      uint64_t t0 = r->t0, t1 = r->t1;
      if (r->flag) {
        int64_t off = r->device < ndev ? dev_offset[r->device] : 0;
        t0 = (uint64_t)((int64_t)t0 + off);
        t1 = (uint64_t)((int64_t)t1 + off);
      }
      static const char *const cats[] = {"kernel", "command", "internal"};
      event(o);
      put(o, "\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,"
             "\"dur\":%.3f,\"args\":{\"command\":%" PRIu64 ",\"device\":%u%s}",
          esc(r->name, e, sizeof e), cats[r->cat], me, r->device + 1, us(t0),
          (double)(t1 - t0) / 1000.0, r->id, r->device, r->peer ? ",\"failed\":true" : "");
      break;
    }
    case K_ENQUEUE: {
      const char *what = r->dropped ? "dropped" : r->flag ? "actual" : "virtual";
      event(o);
      put(o, "\"name\":\"%s %s\",\"cat\":\"%s\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%d,"
             "\"ts\":%.3f,\"args\":{\"command\":%" PRIu64 ",\"device\":%u,\"device_rank\":%d}",
          what, esc(r->name, e, sizeof e), what, me, TID_HOST, us(r->t0), r->id, r->device,
          tt_cluster_device(r->device)->rank);
      break;
    }
    case K_MESSAGE: {
      int src = r->flag ? me : r->peer, dst = r->flag ? r->peer : me;
      const struct plan_note *n = r->channel == TT_CH_DATA ? find_note(src, dst, r->id) : NULL;
      const char *what = r->channel == TT_CH_DATA ? "buffer bytes" : "read to every rank";
      double t0 = us(r->t0), t1 = us(r->t1);
      event(o);
      put(o, "\"name\":\"%s %s rank %d\",\"cat\":\"transfer\",\"ph\":\"X\",\"pid\":%d,"
             "\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"what\":\"%s\",\"bytes\":%" PRIu64
             ",\"peer\":%d,\"message\":%" PRIu64,
          r->flag ? "send to" : "receive from", what, r->peer, me, r->flag ? TID_SEND : TID_RECV,
          t0, t1 - t0, what, r->len, r->peer, r->id);
      if (n)
        put(o, ",\"buffer\":%" PRIu64 ",\"buffer_offset\":%zu,\"buffer_bytes\":%zu", n->mem,
            n->off, n->len);
      put(o, "}");
      /* The arrow: from the send's start to the receive's end. */
      event(o);
      put(o, "\"name\":\"transfer\",\"cat\":\"transfer\",\"ph\":\"%s\",%s\"id\":\"%d-%d-%d-%"
             PRIu64 "\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f",
          r->flag ? "s" : "f", r->flag ? "" : "\"bp\":\"e\",", r->channel, src, dst, r->id, me,
          r->flag ? TID_SEND : TID_RECV, r->flag ? t0 : (t1 > t0 ? t1 - 0.001 : t0));
      break;
    }
    }
  }
  if (o->open)
    put(o, "}");
}

void tt_trace_finish(void)
{
  if (!tt_trace_on)
    return;
  tt_trace_on = false;
  tt_transport_on_message(NULL);
  int me = tt_cluster_rank();
  struct out o = {NULL, 0, 0, true, false};
  pthread_mutex_lock(&lock);
  serialize(&o, me);
  if (lost)
    TT_WARN("trace: %zu records beyond the first %d were left out", lost, MAX_RECORDS);
  pthread_mutex_unlock(&lock);
  void *all = NULL;
  size_t *lens = NULL;
  if (tt_cluster_size() > 1) {
    if (tt_transport_gatherv(o.buf ? o.buf : "", o.len, &all, &lens) != 0) {
      TT_WARN("trace: gathering the ranks' records failed");
      free(o.buf);
      return;
    }
  } else {
    all = o.buf;
    o.buf = NULL;
    lens = malloc(sizeof *lens);
    if (lens)
      lens[0] = o.len;
  }
  free(o.buf);
  if (me == 0 && all && lens) {
    const char *file = tt_env()->trace;
    FILE *f = fopen(file, "w");
    if (!f) {
      TT_WARN("trace: cannot write %s", file);
    } else {
      fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"Tutti %s\","
                 "\"ranks\":%d},\n\"traceEvents\":[", PACKAGE_VERSION, tt_cluster_size());
      const char *p = all;
      bool any = false;
      for (int r = 0; r < tt_cluster_size(); r++) {
        if (lens[r]) {
          fputs(any ? "," : "", f);
          fwrite(p, 1, lens[r], f);
          any = true;
        }
        p += lens[r];
      }
      fputs("\n]}\n", f);
      if (fclose(f) != 0)
        TT_WARN("trace: writing %s failed", file);
      else
        TT_LOG(TT_LOG_MPI, "trace: wrote %s", file);
    }
  }
  free(all);
  free(lens);
}
