/* Files and folders made and removed through the calls relative to a folder's descriptor
 * (doc/cluster.md, "The host layer"), as the outside conformance suite's compiler test does
 * with C++'s std::filesystem: a header written into a fresh folder, a program built with
 * -I there on every device, then the folder renamed, linked, changed and removed piece by
 * piece. Every call must succeed once, as in one process, and one made twice must fail
 * alike (EEXIST, ENOENT) on every rank.
 *   fs_at DIR          the whole sequence; prints "fs_at: N calls as in one process"
 *   fs_at DIR part     the ranks see different answers of access(DIR/only-RANK) (the test
 *                      makes one rank's file) and part: the job must stop, naming it */
#define _GNU_SOURCE
#include "tests/app.h"
#include "tests/launcher.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int calls;

/* A call that must give `want` (0, or -1 with errno `err`). */
static void expect(const char *what, int got, int want, int err)
{
  calls++;
  if (got == want && (want == 0 || errno == err))
    return;
  fprintf(stderr, "fs_at: %s gave %d (%s), not %d%s%s\n", what, got,
          got < 0 ? strerror(errno) : "no error", want, want ? " with " : "",
          want ? strerror(err) : "");
  exit(1);
}

#define OK(call) expect(#call, (call), 0, 0)
#define FAILS(call, err) expect(#call, (call), -1, err)

static const char *kernel_source = "#include \"h.h\"\n"
                                   "__kernel void k(__global int *out) { out[0] = VALUE; }\n";

/* The program built with -I dir on every device; its kernel's answer on each. */
static void build_with(struct app *a, const char *dir)
{
  cl_int err;
  cl_program p = clCreateProgramWithSource(a->ctx, 1, &kernel_source, NULL, &err);
  CHECK(err);
  char opts[4300];
  snprintf(opts, sizeof opts, "-I %s", dir);
  CHECK(clBuildProgram(p, 0, NULL, opts, NULL, NULL));
  cl_kernel k = clCreateKernel(p, "k", &err);
  CHECK(err);
  for (cl_uint d = 0; d < a->ndev; d++) {
    cl_mem m = clCreateBuffer(a->ctx, CL_MEM_WRITE_ONLY, sizeof(int), NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof m, &m));
    size_t one = 1;
    int v = 0;
    CHECK(clEnqueueNDRangeKernel(a->qs[d], k, 1, NULL, &one, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(a->qs[d], m, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL));
    if (v != 42) {
      fprintf(stderr, "fs_at: the kernel built with the header gave %d on device %u\n", v, d);
      exit(1);
    }
    clReleaseMemObject(m);
  }
  clReleaseKernel(k);
  clReleaseProgram(p);
}

static int entries(int dfd, const char *sub)
{
  int fd = openat(dfd, sub, O_RDONLY | O_DIRECTORY);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    fprintf(stderr, "fs_at: listing %s: %s\n", sub, strerror(errno));
    exit(1);
  }
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return n;
}

static void part(struct app *a, const char *base)
{
  char path[4200];
  const char *r = launcher_rank();
  snprintf(path, sizeof path, "%s/only-%s", base, r ? r : "0");
  /* A node-local file: rank 1 alone finds its own, makes one more folder, and the ranks
   * part there. */
  if (access(path, F_OK) == 0) {
    snprintf(path, sizeof path, "%s/extra", base);
    mkdir(path, 0755);
  }
  CHECK(clFinish(a->qs[0]));
  printf("fs_at: finished without being stopped\n");
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: fs_at DIR [part]\n");
    return 2;
  }
  const char *base = argv[1];
  struct app a;
  app_open(&a);
  if (argc > 2 && !strcmp(argv[2], "part")) {
    part(&a, base);
    return 0;
  }
  char bar[4200], h3[4200];
  OK(mkdir(base, 0755));
  int dfd = open(base, O_RDONLY | O_DIRECTORY);
  if (dfd < 0) {
    perror("fs_at: open");
    return 1;
  }
  OK(mkdirat(dfd, "foo", 0755));
  FAILS(mkdirat(dfd, "foo", 0755), EEXIST);
  OK(mkdirat(dfd, "foo/bar", 0755));
  int fd = openat(dfd, "foo/bar/h.h", O_CREAT | O_WRONLY | O_EXCL, 0644);
  expect("openat(O_CREAT | O_EXCL)", fd < 0 ? -1 : 0, 0, 0);
  static const char header[] = "#define VALUE 42\n";
  expect("write", write(fd, header, sizeof header - 1) == sizeof header - 1 ? 0 : -1, 0, 0);
  OK(close(fd));
  FAILS(openat(dfd, "foo/bar/h.h", O_CREAT | O_WRONLY | O_EXCL, 0644), EEXIST);
  snprintf(bar, sizeof bar, "%s/foo/bar", base);
  build_with(&a, bar);
  OK(renameat(dfd, "foo/bar/h.h", dfd, "foo/h2.h"));
  FAILS(renameat(dfd, "foo/bar/h.h", dfd, "foo/h2.h"), ENOENT);
  OK(renameat2(dfd, "foo/h2.h", dfd, "foo/h3.h", RENAME_NOREPLACE));
  OK(linkat(dfd, "foo/h3.h", dfd, "foo/hard.h", 0));
  OK(symlinkat("h3.h", dfd, "foo/soft.h"));
  FAILS(symlinkat("h3.h", dfd, "foo/soft.h"), EEXIST);
  OK(fchmodat(dfd, "foo/h3.h", 0600, 0));
  OK(fchownat(dfd, "foo/h3.h", getuid(), getgid(), 0));
  OK(utimensat(dfd, "foo/h3.h", NULL, 0));
  snprintf(h3, sizeof h3, "%s/foo/h3.h", base);
  OK(truncate(h3, 5));
  struct stat st;
  OK(fstatat(dfd, "foo/hard.h", &st, 0));
  expect("the size after truncate", st.st_size == 5 && (st.st_mode & 0777) == 0600 ? 0 : -1, 0, 0);
  expect("the folder's entries", entries(dfd, "foo") == 4 ? 0 : -1, 0, 0);
  char foo[4200];
  snprintf(foo, sizeof foo, "%s/foo", base);
  struct dirent **names;
  int nnames = scandir(foo, &names, NULL, alphasort);
  expect("scandir", nnames == 6 ? 0 : -1, 0, 0); /* ., .., bar, h3.h, hard.h, soft.h */
  expect("scandir's order", strcmp(names[2]->d_name, "bar") || strcmp(names[5]->d_name, "soft.h"), 0, 0);
  while (nnames > 0)
    free(names[--nnames]);
  free(names);
  OK(unlinkat(dfd, "foo/soft.h", 0));
  OK(unlinkat(dfd, "foo/hard.h", 0));
  OK(unlinkat(dfd, "foo/h3.h", 0));
  FAILS(unlinkat(dfd, "foo/h3.h", 0), ENOENT);
  FAILS(unlinkat(dfd, "foo", AT_REMOVEDIR), ENOTEMPTY);
  OK(unlinkat(dfd, "foo/bar", AT_REMOVEDIR));
  OK(unlinkat(dfd, "foo", AT_REMOVEDIR));
  OK(close(dfd));
  OK(rmdir(base));
  FAILS(rmdir(base), ENOENT);
  app_close(&a);
  printf("fs_at: %d calls as in one process\n", calls);
  return 0;
}
