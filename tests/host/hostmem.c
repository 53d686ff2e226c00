/* The program's memory is its own once OpenCL says a command is done (OpenCL 1.2, 5.2.2 and
 * 5.4.3): for every command kind that reads into or writes from host memory, the memory is
 * mapped for the command alone and unmapped right after its event completes or its
 * blocking call returns. A rank that still sent from it, or received into it, dies of
 * SIGSEGV or sees MPI fail (EFAULT); one that completed the event before the bytes arrived
 * fails the check of the bytes. Each command runs on a device of every rank in turn, in
 * sizes below a piece, of several pieces (TUTTI_PIECE), and past the size at which reads
 * reaching every rank go along a chain of ranks (1 MiB, at three ranks or more), each way
 * of waiting in turn. Prints one line per kind ("read: ok"), then "hostmem: ok". */
#include "tests/app.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char *source =
    "__kernel void fill(__global uint *a, uint salt) {\n"
    "  size_t i = get_global_id(0); a[i] = (uint)i * 2654435761u + salt; }\n";

static struct app a;
static cl_kernel fill;
static unsigned long checked;

/* HOSTMEM_FREE=1: the memory comes from malloc and goes back with free, so that
 * AddressSanitizer (tools/check-asan.sh) reports any touch of it after the command. */
static bool use_malloc;

/* Fresh memory of its own pages for one command, unmapped again by give_back. */
static void *take(size_t len)
{
  if (use_malloc) {
    void *p = malloc(len);
    if (!p)
      exit(1);
    return p;
  }
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("hostmem: mmap");
    exit(1);
  }
  return p;
}

static void give_back(void *p, size_t len)
{
  if (use_malloc) {
    free(p);
    return;
  }
  if (munmap(p, len) != 0) {
    perror("hostmem: munmap");
    exit(1);
  }
}

static uint32_t expect(size_t i, uint32_t salt)
{
  return (uint32_t)i * 2654435761u + salt;
}

static void fill_buffer(cl_command_queue q, cl_mem m, size_t words, uint32_t salt, cl_event *ev)
{
  CHECK(clSetKernelArg(fill, 0, sizeof m, &m));
  CHECK(clSetKernelArg(fill, 1, sizeof salt, &salt));
  CHECK(clEnqueueNDRangeKernel(q, fill, 1, NULL, &words, NULL, 0, NULL, ev));
}

static void check_words(const char *what, const uint32_t *h, size_t first, size_t n,
                        uint32_t salt)
{
  for (size_t i = 0; i < n; i++)
    if (h[i] != expect(first + i, salt)) {
      fprintf(stderr, "hostmem: %s: word %zu is %u, not %u\n", what, first + i, h[i],
              expect(first + i, salt));
      exit(1);
    }
  checked += n;
}

/* Ways to learn that a command is done. */
enum wait { WAIT_EVENT, WAIT_FINISH, WAIT_POLL, WAIT_BLOCKING, NWAITS };

static void wait_done(cl_command_queue q, cl_event ev, enum wait how)
{
  cl_int st = CL_QUEUED;
  switch (how) {
  case WAIT_EVENT:
    CHECK(clWaitForEvents(1, &ev));
    break;
  case WAIT_FINISH:
    CHECK(clFinish(q));
    break;
  case WAIT_POLL:
    while (st != CL_COMPLETE) {
      CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
      if (st < 0) {
        fprintf(stderr, "hostmem: a command failed: %d\n", st);
        exit(1);
      }
    }
    break;
  default:
    break;
  }
}

/* A read of the whole buffer (and a rectangle of it) into fresh memory, unmapped at once. */
static void reads(cl_command_queue q, cl_mem m, size_t words, uint32_t salt, enum wait how)
{
  size_t len = words * 4;
  cl_event kernel, ev = NULL;
  fill_buffer(q, m, words, salt, &kernel);
  uint32_t *h = take(len);
  cl_bool blocking = how == WAIT_BLOCKING;
  CHECK(clEnqueueReadBuffer(q, m, blocking, 0, len, h, 1, &kernel, blocking ? NULL : &ev));
  wait_done(q, ev, how);
  check_words("read", h, 0, words, salt);
  give_back(h, len);
  /* Rows of 256 words, the second half of each, into a host rectangle of its own layout. */
  size_t rows = words / 256, region[3] = {128 * 4, rows, 1};
  size_t borigin[3] = {128 * 4, 0, 0}, horigin[3] = {0, 0, 0};
  uint32_t *r = take(rows * 128 * 4);
  CHECK(clEnqueueReadBufferRect(q, m, blocking, borigin, horigin, region, 256 * 4, 0, 128 * 4, 0,
                                r, 0, NULL, blocking ? NULL : &ev));
  if (!blocking)
    wait_done(q, ev, how);
  for (size_t y = 0; y < rows; y++)
    check_words("read rect", r + y * 128, y * 256 + 128, 128, salt);
  give_back(r, rows * 128 * 4);
  if (ev)
    clReleaseEvent(ev);
  clReleaseEvent(kernel);
}

/* Writes from fresh memory, unmapped at once; then the bytes read back. */
static void writes(cl_command_queue q, cl_mem m, size_t words, uint32_t salt, enum wait how)
{
  size_t len = words * 4;
  cl_event ev = NULL;
  cl_bool blocking = how == WAIT_BLOCKING;
  uint32_t *h = take(len);
  for (size_t i = 0; i < words; i++)
    h[i] = expect(i, salt);
  CHECK(clEnqueueWriteBuffer(q, m, blocking, 0, len, h, 0, NULL, blocking ? NULL : &ev));
  wait_done(q, ev, how);
  give_back(h, len);
  if (ev)
    clReleaseEvent(ev), ev = NULL;
  /* The first quarter of every row of 256 words again, from a rectangle of its own. */
  size_t rows = words / 256, region[3] = {64 * 4, rows, 1};
  size_t borigin[3] = {0, 0, 0}, horigin[3] = {0, 0, 0};
  uint32_t *r = take(rows * 64 * 4);
  for (size_t y = 0; y < rows; y++)
    for (size_t x = 0; x < 64; x++)
      r[y * 64 + x] = expect(y * 256 + x, salt + 1);
  CHECK(clEnqueueWriteBufferRect(q, m, blocking, borigin, horigin, region, 256 * 4, 0, 64 * 4, 0,
                                 r, 0, NULL, blocking ? NULL : &ev));
  wait_done(q, ev, how);
  give_back(r, rows * 64 * 4);
  if (ev)
    clReleaseEvent(ev);
  uint32_t *back = malloc(len);
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, len, back, 0, NULL, NULL));
  for (size_t y = 0; y < rows; y++) {
    check_words("write rect", back + y * 256, y * 256, 64, salt + 1);
    check_words("write", back + y * 256 + 64, y * 256 + 64, 192, salt);
  }
  free(back);
}

/* A map for reading after a kernel, one for writing, each unmapped; the program's memory of
 * a buffer made from it (CL_MEM_USE_HOST_PTR) is its own again once the buffer is gone. */
static void maps(cl_command_queue q, size_t words, uint32_t salt, enum wait how)
{
  size_t len = words * 4;
  cl_int err;
  uint32_t *host = take(len);
  cl_mem m = clCreateBuffer(a.ctx, CL_MEM_USE_HOST_PTR, len, host, &err);
  CHECK(err);
  cl_event kernel, ev = NULL;
  fill_buffer(q, m, words, salt, &kernel);
  cl_bool blocking = how == WAIT_BLOCKING;
  uint32_t *p = clEnqueueMapBuffer(q, m, blocking, CL_MAP_READ, 0, len, 1, &kernel,
                                   blocking ? NULL : &ev, &err);
  CHECK(err);
  wait_done(q, ev, how);
  check_words("map", p, 0, words, salt);
  if (ev)
    clReleaseEvent(ev), ev = NULL;
  CHECK(clEnqueueUnmapMemObject(q, m, p, 0, NULL, &ev));
  CHECK(clWaitForEvents(1, &ev));
  clReleaseEvent(ev);
  p = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, len, 0, NULL, NULL,
                         &err);
  CHECK(err);
  for (size_t i = 0; i < words; i++)
    p[i] = expect(i, salt + 2);
  CHECK(clEnqueueUnmapMemObject(q, m, p, 0, NULL, &ev));
  wait_done(q, ev, how == WAIT_BLOCKING ? WAIT_EVENT : how);
  clReleaseEvent(ev);
  uint32_t *back = malloc(len);
  CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, len, back, 0, NULL, NULL));
  check_words("unmap", back, 0, words, salt + 2);
  free(back);
  clReleaseEvent(kernel);
  CHECK(clFinish(q));
  CHECK(clReleaseMemObject(m));
  CHECK(clFinish(q));
  give_back(host, len);
}

/* A collective command (Tutti's broadcast from a device to every device), its result read
 * into fresh memory on every device's queue. */
static void collective(cl_mem *bufs, size_t words, uint32_t salt, enum wait how)
{
  size_t len = words * 4;
  cl_event kernel;
  fill_buffer(a.qs[0], bufs[0], words, salt, &kernel);
  CHECK(clFinish(a.qs[0]));
  cl_event *evs = calloc(a.ndev, sizeof *evs);
  size_t *offs = calloc(a.ndev, sizeof *offs);
  CHECK(clEnqueueBroadcastBuffer(a.qs, bufs[0], a.ndev - 1, bufs + 1, 0, offs, len, 0, NULL,
                                 evs));
  for (cl_uint d = 1; d < a.ndev; d++) {
    uint32_t *h = take(len);
    cl_event ev = NULL;
    cl_bool blocking = how == WAIT_BLOCKING;
    CHECK(clEnqueueReadBuffer(a.qs[d], bufs[d], blocking, 0, len, h, 1, &evs[d - 1],
                              blocking ? NULL : &ev));
    wait_done(a.qs[d], ev, how);
    check_words("collective", h, 0, words, salt);
    give_back(h, len);
    if (ev)
      clReleaseEvent(ev);
  }
  for (cl_uint d = 0; d + 1 < a.ndev; d++)
    clReleaseEvent(evs[d]);
  for (cl_uint d = 0; d < a.ndev; d++)
    CHECK(clFinish(a.qs[d]));
  clReleaseEvent(kernel);
  free(evs);
  free(offs);
}

int main(int argc, char **argv)
{
  int rounds = argc > 1 ? atoi(argv[1]) : 1;
  use_malloc = getenv("HOSTMEM_FREE") && atoi(getenv("HOSTMEM_FREE"));
  app_open(&a);
  cl_int err;
  cl_program prog = clCreateProgramWithSource(a.ctx, 1, &source, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 0, NULL, NULL, NULL, NULL));
  fill = clCreateKernel(prog, "fill", &err);
  CHECK(err);
  /* 16 KiB (below a piece), 3 MiB + 16 KiB, and past 5 MiB (several pieces of the default
   * 4 MiB, a chain at three ranks or more). */
  static const size_t sizes[] = {4096, 790528, 1310720};
  enum { NSIZES = sizeof sizes / sizeof sizes[0] };
  cl_mem *bufs = calloc(a.ndev, sizeof *bufs);
  for (cl_uint d = 0; d < a.ndev; d++) {
    /* The first made as the outside suite's events test made it. */
    bufs[d] = clCreateBuffer(a.ctx, d ? CL_MEM_READ_WRITE : CL_MEM_ALLOC_HOST_PTR,
                             sizes[NSIZES - 1] * 4, NULL, &err);
    CHECK(err);
  }
  uint32_t salt = 7;
  for (int round = 0; round < rounds; round++)
    for (size_t s = 0; s < NSIZES; s++)
      for (cl_uint d = 0; d < a.ndev; d++) {
        enum wait how = (enum wait)((round + s + d) % NWAITS);
        reads(a.qs[d], bufs[d], sizes[s], salt++, how);
        writes(a.qs[d], bufs[d], sizes[s], salt++, how);
        maps(a.qs[d], sizes[s], salt++, how);
        if (d == 0 && a.ndev > 1)
          collective(bufs, sizes[s], salt++, how);
      }
  for (cl_uint d = 0; d < a.ndev; d++)
    clReleaseMemObject(bufs[d]);
  free(bufs);
  clReleaseKernel(fill);
  clReleaseProgram(prog);
  app_close(&a);
  printf("hostmem: ok, %lu words checked on %u devices\n", checked, a.ndev);
  return 0;
}
