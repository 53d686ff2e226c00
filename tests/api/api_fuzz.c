/* The API fuzzer: random sequences of OpenCL calls with random valid and invalid arguments
 * (buffers of other contexts, odd sizes and offsets, sub-buffers out of range, wait lists
 * with events that failed, objects released while commands use them, kernels with missing or
 * wrong arguments), from a seed. Every rank runs the same sequence (a seeded generator of its
 * own), folds every call's result and every byte read back into a hash, and the hashes must
 * be the same on every rank; the program must not crash or hang, and it releases everything
 * it made, so that TUTTI_DEBUG=leak has nothing to report (tests/api/api-fuzz.test).
 *
 *   api_fuzz [seed] [steps] [fail]   (1, 400); with "fail" some user events are set to errors
 *                                    (PoCL 3.1 crashes now and then when commands fail through
 *                                    them: doc/status.md); API_FUZZ_TRACE=1 prints each call
 *                                    and its result */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/ranks.h"

static int failures, rank, nranks;

#define MAXOBJ 24
#define NCTX 2

static uint64_t state;
static uint64_t hash = 0xcbf29ce484222325ULL;
static int trace, fails;

/* xorshift64*: the same numbers on every rank from the same seed. */
static uint64_t next(void)
{
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 0x2545F4914F6CDD1DULL;
}

static unsigned pick(unsigned n)
{
  return n ? (unsigned)(next() % n) : 0;
}

static void mix(const void *p, size_t n)
{
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    hash = (hash ^ b[i]) * 0x100000001b3ULL;
}

static void result(int step, const char *call, cl_int err)
{
  mix(&err, sizeof err);
  if (trace)
    printf("step %d: %s: %d\n", step, call, err);
}

static cl_device_id devs[16];
static cl_uint ndevs;
static cl_context ctx[NCTX];
static cl_command_queue queues[NCTX][16];
static cl_program prog[NCTX];
static cl_kernel kadd[NCTX];

struct buf {
  cl_mem m;
  int ctx;
  size_t size;
  int rw; /* read and written by kernels (a kernel writing a read-only buffer is undefined) */
};
static struct buf bufs[MAXOBJ];
static int nbufs;
static cl_event events[MAXOBJ];
static int nevents;
static cl_event users[MAXOBJ]; /* user events not yet set */
static int nusers;

/* Reads not waited for yet: their memory is hashed once every queue finished. */
struct pending {
  void *p;
  size_t n;
};
static struct pending reads[MAXOBJ * 4];
static int nreads;

static void keep_event(cl_event e)
{
  if (!e)
    return;
  if (nevents == MAXOBJ) {
    clReleaseEvent(events[0]);
    memmove(events, events + 1, (MAXOBJ - 1) * sizeof *events);
    nevents--;
  }
  events[nevents++] = e;
}

/* A wait list: none, some kept events (of either context: an error for the other), or an
 * invalid one. */
static cl_uint wait_list(cl_event *list, int *bad)
{
  *bad = 0;
  unsigned how = pick(8);
  if (how < 4 || !nevents)
    return 0;
  cl_uint n = 1 + pick(3);
  for (cl_uint i = 0; i < n; i++)
    list[i] = events[pick((unsigned)nevents)];
  if (how == 7) {
    *bad = 1;
    return n; /* with a NULL list below: CL_INVALID_EVENT_WAIT_LIST */
  }
  return n;
}

static size_t odd_size(size_t within)
{
  switch (pick(6)) {
  case 0:
    return 0;
  case 1:
    return within + 1 + pick(64);
  case 2:
    return 1 + pick(7);
  default:
    return within ? 1 + pick((unsigned)within) : 0;
  }
}

/* Every user event set, some to an error: before a call that blocks (it could wait for
 * one, directly or through its queue's order). */
static void set_users(int step)
{
  for (int i = 0; i < nusers; i++) {
    cl_int st = pick(3) || !fails ? CL_COMPLETE : -(cl_int)(1 + pick(20)) - 1000;
    if (trace)
      printf("step %d: user event set to %d\n", step, st);
    result(step, "clSetUserEventStatus", clSetUserEventStatus(users[i], st));
    clReleaseEvent(users[i]);
  }
  nusers = 0;
}

/* Every queue finished, pending reads hashed. */
static void settle(int step)
{
  set_users(step);
  for (int c = 0; c < NCTX; c++)
    for (cl_uint d = 0; d < ndevs; d++)
      result(step, "clFinish", clFinish(queues[c][d]));
  for (int i = 0; i < nevents; i++) {
    cl_int st = 0;
    result(step, "clGetEventInfo", clGetEventInfo(events[i], CL_EVENT_COMMAND_EXECUTION_STATUS,
                                                  sizeof st, &st, NULL));
    mix(&st, sizeof st);
    if (trace)
      printf("step %d: event %d status %d\n", step, i, st);
  }
  for (int i = 0; i < nreads; i++) {
    mix(reads[i].p, reads[i].n);
    free(reads[i].p);
  }
  nreads = 0;
}

static void step_once(int step)
{
  cl_int err = CL_SUCCESS;
  cl_event list[4], ev = NULL;
  int bad;
  cl_uint nlist;
  int c = (int)pick(NCTX);
  cl_command_queue q = queues[c][pick(ndevs)];
  struct buf *b = nbufs ? &bufs[pick((unsigned)nbufs)] : NULL;
  switch (pick(14)) {
  case 0: { /* a buffer, flags valid or not */
    static const cl_mem_flags flags[] = {CL_MEM_READ_WRITE, CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY,
                                         CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
                                         CL_MEM_COPY_HOST_PTR, CL_MEM_ALLOC_HOST_PTR, 0};
    size_t size = pick(5) ? 4 * (1 + pick(4096)) : odd_size(64);
    cl_mem_flags f = flags[pick(7)];
    void *host = NULL;
    if (f & CL_MEM_COPY_HOST_PTR && pick(4)) {
      host = malloc(size ? size : 1);
      for (size_t i = 0; host && i < size; i++)
        ((unsigned char *)host)[i] = (unsigned char)(i * 7 + (size_t)step);
    }
    cl_mem m = clCreateBuffer(ctx[c], f, size, host, &err);
    result(step, "clCreateBuffer", err);
    if (m && !host) {
      /* A new buffer's bytes are undefined (and differ between ranks): filled first. */
      unsigned char zero = (unsigned char)step;
      result(step, "clEnqueueFillBuffer", clEnqueueFillBuffer(queues[c][0], m, &zero, 1, 0, size,
                                                              0, NULL, NULL));
    }
    free(host);
    if (m && nbufs < MAXOBJ)
      bufs[nbufs++] = (struct buf){m, c, size, !(f & (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY))};
    else if (m)
      clReleaseMemObject(m);
    break;
  }
  case 1: /* released, perhaps while commands use it */
    if (b) {
      result(step, "clReleaseMemObject", clReleaseMemObject(b->m));
      *b = bufs[--nbufs];
    }
    break;
  case 2: /* a sub-buffer, in range or not, aligned or not */
    if (b) {
      cl_buffer_region r = {pick(3) ? 0 : odd_size(b->size), odd_size(b->size)};
      cl_mem s = clCreateSubBuffer(b->m, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
      result(step, "clCreateSubBuffer", err);
      if (s && nbufs < MAXOBJ)
        bufs[nbufs++] = (struct buf){s, b->ctx, r.size, b->rw};
      else if (s)
        clReleaseMemObject(s);
    }
    break;
  case 3: /* a write, maybe to another context's queue, maybe out of range */
    if (b) {
      size_t off = pick(4) ? 0 : odd_size(b->size), n = odd_size(b->size);
      unsigned char *p = malloc(n ? n : 1);
      for (size_t i = 0; p && i < n; i++)
        p[i] = (unsigned char)(i + (size_t)step);
      set_users(step); /* it blocks */
      nlist = wait_list(list, &bad);
      result(step, "clEnqueueWriteBuffer",
             clEnqueueWriteBuffer(q, b->m, CL_TRUE, off, n, p, nlist, bad ? NULL : list, &ev));
      keep_event(ev);
      free(p);
    }
    break;
  case 4: /* a read, blocking or not */
    if (b && nreads < MAXOBJ * 4) {
      size_t off = pick(4) ? 0 : odd_size(b->size), n = odd_size(b->size);
      void *p = calloc(1, n ? n : 1);
      cl_bool blocking = pick(2);
      if (blocking)
        set_users(step);
      nlist = wait_list(list, &bad);
      err = clEnqueueReadBuffer(q, b->m, blocking, off, n, p, nlist, bad ? NULL : list, &ev);
      result(step, "clEnqueueReadBuffer", err);
      keep_event(ev);
      if (err == CL_SUCCESS)
        reads[nreads++] = (struct pending){p, n};
      else
        free(p);
    }
    break;
  case 5: /* a copy, perhaps overlapping itself */
    if (b) {
      struct buf *d = &bufs[pick((unsigned)nbufs)];
      nlist = wait_list(list, &bad);
      result(step, "clEnqueueCopyBuffer",
             clEnqueueCopyBuffer(q, b->m, d->m, pick(2) ? 0 : odd_size(b->size),
                                 pick(2) ? 0 : odd_size(d->size), odd_size(b->size), nlist,
                                 bad ? NULL : list, &ev));
      keep_event(ev);
    }
    break;
  case 6: /* a fill with a pattern of any size */
    if (b) {
      static const size_t patterns[] = {1, 2, 3, 4, 8, 16, 128, 256};
      uint64_t pat[32] = {(uint64_t)step * 0x0101010101010101ULL};
      size_t ps = patterns[pick(8)];
      result(step, "clEnqueueFillBuffer",
             clEnqueueFillBuffer(q, b->m, pat, ps, pick(3) ? 0 : ps * pick(4),
                                 pick(4) ? (b->size / ps) * ps : odd_size(b->size), 0, NULL, &ev));
      keep_event(ev);
    }
    break;
  case 7: /* a map written and unmapped */
    if (b) {
      size_t n = odd_size(b->size);
      set_users(step); /* it blocks */
      void *p = clEnqueueMapBuffer(q, b->m, CL_TRUE, CL_MAP_WRITE, 0, n, 0, NULL, NULL, &err);
      result(step, "clEnqueueMapBuffer", err);
      if (p) {
        memset(p, step & 0xff, n);
        result(step, "clEnqueueUnmapMemObject",
               clEnqueueUnmapMemObject(q, b->m, p, 0, NULL, &ev));
        keep_event(ev);
      }
    }
    break;
  case 8: { /* a launch: arguments right and wrong, sizes that divide or not */
    /* A buffer of the kernel's context that kernels may read and write: the one argument.
     * The kernel writes one int a work-item, so no launch covers more than the buffer. */
    struct buf *a = NULL;
    for (int i = 0, from = nbufs ? (int)pick((unsigned)nbufs) : 0; i < nbufs && !a; i++) {
      struct buf *x = &bufs[(from + i) % nbufs];
      if (x->ctx == c && x->rw && x->size >= 4)
        a = x;
    }
    if (!a)
      break;
    cl_kernel k = kadd[c];
    int k4 = (int)pick(100);
    result(step, "clSetKernelArg", clSetKernelArg(k, 0, sizeof a->m, &a->m));
    result(step, "clSetKernelArg", clSetKernelArg(k, 1, sizeof k4, &k4));
    if (!pick(4)) /* refused: no such argument, or the wrong size; the earlier value stays */
      result(step, "clSetKernelArg(bad)",
             pick(2) ? clSetKernelArg(k, 2, sizeof k4, &k4) : clSetKernelArg(k, 1, 2, &k4));
    size_t g = pick(6) ? 1 + pick((unsigned)(a->size / 4)) : 0, l = pick(3) ? 0 : 1 + pick(8);
    if (l && g > l)
      g -= g % l; /* most local sizes divide; some do not (when g < l) */
    nlist = wait_list(list, &bad);
    result(step, "clEnqueueNDRangeKernel",
           clEnqueueNDRangeKernel(q, k, 1, NULL, &g, l ? &l : NULL, nlist, bad ? NULL : list, &ev));
    keep_event(ev);
    break;
  }
  case 9: /* a user event, set later (some to an error) */
    if (nusers < MAXOBJ) {
      cl_event u = clCreateUserEvent(ctx[c], &err);
      result(step, "clCreateUserEvent", err);
      if (u) {
        users[nusers++] = u;
        clRetainEvent(u);
        keep_event(u);
      }
    }
    break;
  case 10: /* a marker or barrier after some events */
    nlist = wait_list(list, &bad);
    if (pick(2))
      result(step, "clEnqueueMarkerWithWaitList",
             clEnqueueMarkerWithWaitList(q, nlist, bad ? NULL : list, &ev));
    else
      result(step, "clEnqueueBarrierWithWaitList",
             clEnqueueBarrierWithWaitList(q, nlist, bad ? NULL : list, &ev));
    keep_event(ev);
    break;
  case 11: /* an event released early */
    if (nevents) {
      int i = (int)pick((unsigned)nevents);
      result(step, "clReleaseEvent", clReleaseEvent(events[i]));
      events[i] = events[--nevents];
    }
    break;
  case 12: /* a flush, or everything settled and waited for */
    if (pick(4))
      result(step, "clFlush", clFlush(q));
    else
      settle(step);
    break;
  case 13: { /* queries */
    size_t size = 0;
    if (b) {
      result(step, "clGetMemObjectInfo", clGetMemObjectInfo(b->m, CL_MEM_SIZE, sizeof size, &size,
                                                            NULL));
      mix(&size, sizeof size);
      result(step, "clGetMemObjectInfo(bad)",
             clGetMemObjectInfo(b->m, CL_MEM_SIZE, 1, &size, NULL));
    }
    result(step, "clGetDeviceInfo(bad)", clGetDeviceInfo(devs[0], 0xdead, 0, NULL, NULL));
    break;
  }
  }
}

int main(int argc, char **argv)
{
  uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
  int steps = argc > 2 ? atoi(argv[2]) : 400;
  trace = getenv("API_FUZZ_TRACE") != NULL;
  fails = argc > 3 && !strcmp(argv[3], "fail");
  state = seed * 0x9E3779B97F4A7C15ULL + 1;
  cl_platform_id platform;
  cl_int err = clGetPlatformIDs(1, &platform, NULL);
  if (err == CL_SUCCESS)
    err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 16, devs, &ndevs);
  int own_mpi = ranks_start(&argc, &argv, &rank, &nranks);
  if (own_mpi < 0)
    return 2;
  if (err != CL_SUCCESS || !ndevs) {
    fprintf(stderr, "api_fuzz: no platform or device (%d)\n", err);
    return 2;
  }
  const char *src = "__kernel void add(__global int *x, int k) { x[get_global_id(0)] += k; }\n";
  for (int c = 0; c < NCTX; c++) {
    ctx[c] = clCreateContext(NULL, ndevs, devs, NULL, NULL, &err);
    OK(err);
    for (cl_uint d = 0; d < ndevs; d++) {
      queues[c][d] = clCreateCommandQueue(ctx[c], devs[d], 0, &err);
      OK(err);
    }
    prog[c] = clCreateProgramWithSource(ctx[c], 1, &src, NULL, &err);
    OK(err);
    OK(clBuildProgram(prog[c], 0, NULL, NULL, NULL, NULL));
    kadd[c] = clCreateKernel(prog[c], "add", &err);
    OK(err);
  }
  for (int s = 0; s < steps && !failures; s++)
    step_once(s);
  settle(steps);
  for (int i = 0; i < nevents; i++)
    clReleaseEvent(events[i]);
  for (int i = 0; i < nbufs; i++)
    clReleaseMemObject(bufs[i].m);
  for (int c = 0; c < NCTX; c++) {
    clReleaseKernel(kadd[c]);
    clReleaseProgram(prog[c]);
    for (cl_uint d = 0; d < ndevs; d++)
      clReleaseCommandQueue(queues[c][d]);
    clReleaseContext(ctx[c]);
  }
  CHECK(same_everywhere(hash));
  printf("api_fuzz: seed %llu, %d steps on %u device(s): hash %016llx, %s\n",
         (unsigned long long)seed, steps, ndevs, (unsigned long long)hash,
         failures ? "FAILED" : "the same on every rank");
  if (own_mpi)
    MPI_Finalize();
  return failures ? 1 : 0;
}
