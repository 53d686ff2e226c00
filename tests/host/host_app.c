/* A host program that is only right when every rank sees the same inputs (SnuCL-D 3.5):
 * it seeds from the clock and the process id, mixes in bytes of /dev/urandom (read through
 * stdio and through a descriptor) and of getrandom, computes on every device of the
 * platform, each device on the part of the data its own rank's host wrote, appends the
 * result to a file, reads the file back and prints it. It also makes a directory and removes
 * it, and opens the file read-write and renames it (and back). Without the host layer the
 * ranks' data differ and the check fails; without rank-0-only writes the file gets one copy
 * per rank. At exit, after Tutti left, every rank appends a line to FILE.exit: the job is
 * over, so each rank's calls are its own again.
 * Usage: host_app FILE DIR */
#include "tests/app.h"

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *source =
    "__kernel void square_plus(__global const int *in, __global int *out, int k)\n"
    "{ size_t i = get_global_id(0); out[i] = in[i] * in[i] + k; }\n";

static char exit_file[4096];

/* Registered before the first OpenCL call, so it runs after Tutti's own exit handler. */
static void note_exit(void)
{
  FILE *f = fopen(exit_file, "a");
  if (!f || fputs("at exit\n", f) < 0 || fclose(f) != 0)
    fprintf(stderr, "host_app: writing %s at exit failed\n", exit_file);
}

int main(int argc, char **argv)
{
  if (argc < 3) {
    fprintf(stderr, "usage: host_app FILE DIR\n");
    return 2;
  }
  const char *file = argv[1], *dir = argv[2];
  snprintf(exit_file, sizeof exit_file, "%s.exit", file);
  atexit(note_exit);
  /* The seeds differ from process to process unless the host layer agrees on them. */
  srand((unsigned)time(NULL) ^ (unsigned)getpid() * 2654435761u);
  srand48((long)time(NULL) + getpid());
  uint32_t noise[3] = {0, 0, 0};
  FILE *u = fopen("/dev/urandom", "rb");
  if (!u || fread(&noise[0], sizeof noise[0], 1, u) != 1)
    return 1;
  fclose(u);
  int fd = open("/dev/urandom", O_RDONLY);
  if (fd < 0 || read(fd, &noise[1], sizeof noise[1]) != (ssize_t)sizeof noise[1])
    return 1;
  close(fd);
  if (getrandom(&noise[2], sizeof noise[2], 0) != (ssize_t)sizeof noise[2])
    return 1;

  struct app a;
  app_open(&a);
  cl_uint ndev = a.ndev;
  cl_context ctx = a.ctx;
  cl_command_queue *qs = a.qs;
  size_t chunk = 1024, n = chunk * ndev;
  int *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
  for (size_t i = 0; i < n; i++)
    in[i] = rand() % 1000 + (int)(drand48() * 100) + (int)(noise[i % 3] % 7);
  int k = (int)(noise[0] % 100);

  cl_int err;
  cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 0, NULL, NULL, NULL, NULL));
  cl_kernel kern = clCreateKernel(prog, "square_plus", &err);
  CHECK(err);
  cl_mem bin = clCreateBuffer(ctx, CL_MEM_READ_ONLY, n * sizeof *in, NULL, &err);
  CHECK(err);
  cl_mem bout = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, n * sizeof *out, NULL, &err);
  CHECK(err);
  CHECK(clSetKernelArg(kern, 0, sizeof bin, &bin));
  CHECK(clSetKernelArg(kern, 1, sizeof bout, &bout));
  CHECK(clSetKernelArg(kern, 2, sizeof k, &k));
  /* Each device gets its part from its own rank's host memory: replicated host data. */
  for (cl_uint d = 0; d < ndev; d++) {
    size_t off = d * chunk;
    CHECK(clEnqueueWriteBuffer(qs[d], bin, CL_FALSE, off * sizeof *in, chunk * sizeof *in,
                               in + off, 0, NULL, NULL));
    CHECK(clEnqueueNDRangeKernel(qs[d], kern, 1, &off, &chunk, NULL, 0, NULL, NULL));
  }
  for (cl_uint d = 0; d < ndev; d++)
    CHECK(clFinish(qs[d]));
  CHECK(clEnqueueReadBuffer(qs[0], bout, CL_TRUE, 0, n * sizeof *out, out, 0, NULL, NULL));
  long long sum = 0;
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    sum += out[i];
    bad += out[i] != in[i] * in[i] + k;
  }

  /* mkdir answers alike on every rank (made once); rmdir too. */
  if (mkdir(dir, 0755) != 0)
    perror("host_app: mkdir");
  if (rmdir(dir) != 0)
    perror("host_app: rmdir");
  /* A directory made only when missing, then a file in it: every rank sees it missing (rank
   * 0 makes it only once every rank reached the mkdir), so every rank makes the same calls. */
  struct stat st;
  if (stat(dir, &st) != 0 && mkdir(dir, 0755) != 0)
    perror("host_app: mkdir when missing");
  char inside[4200];
  snprintf(inside, sizeof inside, "%s/inside", dir);
  FILE *in_dir = fopen(inside, "w");
  if (!in_dir || fprintf(in_dir, "x\n") != 2 || fclose(in_dir) != 0)
    perror("host_app: a file in the new directory");
  if (unlink(inside) != 0 || rmdir(dir) != 0)
    perror("host_app: removing the new directory");

  FILE *f = fopen(file, "a");
  if (!f) {
    perror("host_app: fopen for appending");
    return 1;
  }
  fprintf(f, "devices %u sum %lld\n", ndev, sum);
  fprintf(f, "check %s\n", bad ? "FAILED" : "ok");
  fclose(f);
  f = fopen(file, "r");
  if (!f) {
    perror("host_app: fopen for reading");
    return 1;
  }
  char line[256], first[256] = "";
  while (fgets(line, sizeof line, f)) {
    if (!first[0])
      snprintf(first, sizeof first, "%s", line);
    printf("read back: %s", line);
  }
  fclose(f);
  /* Read-write: every rank reads rank 0's bytes (a private copy on the others). */
  f = fopen(file, "r+");
  if (!f || !fgets(line, sizeof line, f) || strcmp(line, first) != 0)
    fprintf(stderr, "host_app: r+ does not read what r read\n");
  if (f)
    fclose(f);
  /* Renamed by rank 0 only; the new name reads alike everywhere; and back. */
  char moved[4096];
  snprintf(moved, sizeof moved, "%s.moved", file);
  if (rename(file, moved) != 0)
    perror("host_app: rename");
  f = fopen(moved, "r");
  int lines = 0;
  while (f && fgets(line, sizeof line, f))
    lines++;
  if (!f || lines != 2)
    fprintf(stderr, "host_app: the renamed file reads %d lines\n", lines);
  if (f)
    fclose(f);
  if (rename(moved, file) != 0)
    perror("host_app: rename back");
  fprintf(stderr, "host_app: a line on standard error\n");
  printf("done\n");
  clReleaseMemObject(bin);
  clReleaseMemObject(bout);
  clReleaseKernel(kern);
  clReleaseProgram(prog);
  app_close(&a);
  free(in);
  free(out);
  return bad ? 1 : 0;
}
