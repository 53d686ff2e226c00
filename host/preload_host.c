/* libtutti-host.so, host part: the determinism layer (SnuCL-D section 3.5; seeds and random
 * devices in host/preload_random.c). Every rank runs the same host program, which is only
 * correct if every rank sees the same inputs. In a rank of a tutti-run job of several ranks:
 *   - seeds: srand, srandom, initstate, srand48, seed48 and lcong48 take rank 0's argument;
 *     getrandom, getentropy, arc4random* and reads of /dev/urandom or /dev/random return
 *     rank 0's bytes;
 *   - files: opening a file for writing (or creating or truncating it) happens on rank 0
 *     only; the others write to /dev/null (or, when they may also read it, into a private
 *     copy of rank 0's bytes) and return rank 0's outcome. Opening for reading a file the job
 *     wrote waits until rank 0 opens it too, and every rank reads rank 0's bytes (so the
 *     nodes need not share a file system). mkdir, rmdir, unlink, remove and rename happen on
 *     rank 0 only, with rank 0's outcome everywhere. Files the job never wrote are read by
 *     every rank itself, untouched;
 *   - console: with TUTTI_OUTPUT=rank0 (tutti-run's default) the standard output and error of
 *     other ranks are not shown: they go to files in TUTTI_OUTPUT_DIR (tutti-run compares
 *     them and each rank's exit status with rank 0's), else to /dev/null; Tutti's own
 *     messages still show (tutti_shim_log_fd).
 * Calls made by Tutti, MPI and the OpenCL drivers pass through (told by the library the call
 * comes from), as do calls in processes the program starts, and jobs of one rank. Each
 * agreement is a collective in program order: calls from several threads agree only if
 * they come in the same order everywhere (doc/cluster.md says what is not covered). */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/preload_impl.h"
#include "runtime/job/host.h"

static int state;    /* 1: the layer works; -1: everything passes through */
int rank;            /* from the launcher's environment */
static int log_fd = -1;
static const struct tutti_host_ops *ops;
static int job_size; /* 0 until the job started */
static __thread int inside; /* this thread is in the layer or in Tutti: pass through */
pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Files the job opened for writing (absolute, normalized paths). */
static struct path_set written;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = snprintf(buf, sizeof buf, "[tutti %d host] ", rank);
  vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
  va_end(ap);
  size_t len = strlen(buf);
  if (len < sizeof buf - 1)
    buf[len++] = '\n';
  ssize_t w = write(log_fd >= 0 ? log_fd : 2, buf, len);
  (void)w;
}

/* Where Tutti's own messages go when the console of this rank is discarded. */
EXPORT int tutti_shim_log_fd(void)
{
  return log_fd;
}

static const char *env_first(const char *a, const char *b, const char *c)
{
  const char *v = getenv(a);
  if (!v)
    v = getenv(b);
  if (!v)
    v = getenv(c);
  return v;
}

/* TUTTI_OUTPUT_DIR: the rank's exit status, for tutti-run to compare with rank 0's. */
static void note_exit(int status, void *unused)
{
  const char *dir = getenv("TUTTI_OUTPUT_DIR");
  char path[PATH_MAX], tmp[PATH_MAX + 8], text[32];
  snprintf(path, sizeof path, "%s/status.%d", dir ? dir : ".", rank);
  snprintf(tmp, sizeof tmp, "%s.part", path);
  /* Whole or not at all: a rank killed while writing leaves no status (tutti-run then says
   * it is unknown), never an empty one. */
  inside++; /* Tutti's own file, never agreed (MPI is gone by now) */
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  inside--;
  if (fd < 0)
    return;
  int n = snprintf(text, sizeof text, "%d\n", status);
  bool whole = write(fd, text, (size_t)n) == n;
  close(fd);
  inside++;
  if (!whole || rename(tmp, path) != 0)
    unlink(tmp);
  inside--;
}

__attribute__((constructor)) static void host_layer_init(void)
{
  state = -1;
  const char *r = env_first("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK");
  if (!r)
    return; /* not a rank: mpirun, orted, a shell */
  char pid[32];
  snprintf(pid, sizeof pid, "%ld", (long)getpid());
  const char *owner = getenv("TUTTI_HOST_PID");
  if (owner && strcmp(owner, pid) != 0)
    return; /* a process the program started (exec keeps the pid, so the program itself
               after a launcher's exec is still the rank) */
  setenv("TUTTI_HOST_PID", pid, 1);
  rank = atoi(r);
  const char *output = getenv("TUTTI_OUTPUT");
  const char *dir = getenv("TUTTI_OUTPUT_DIR");
  if (rank != 0 && output && !strcmp(output, "rank0")) {
    /* Not shown; kept in tutti-run's directory, when it gave one, so that it can say when a
     * rank's output or end differs from rank 0's. */
    log_fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
    char path[PATH_MAX];
    int out = -1, err = -1;
    if (dir && *dir) {
      snprintf(path, sizeof path, "%s/out.%d", dir, rank);
      out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      snprintf(path, sizeof path, "%s/err.%d", dir, rank);
      err = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    }
    if (out < 0)
      out = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (err < 0)
      err = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (out >= 0) {
      dup2(out, 1);
      close(out);
    }
    if (err >= 0) {
      dup2(err, 2);
      close(err);
    }
  }
  if (dir && *dir)
    on_exit(note_exit, NULL);
  const char *size = env_first("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE");
  const char *layer = getenv("TUTTI_HOST");
  bool off = layer && (!strcmp(layer, "0") || !strcmp(layer, "off"));
  if (layer && *layer && !off && strcmp(layer, "1") != 0 && strcmp(layer, "on") != 0 && rank == 0)
    say("TUTTI_HOST=%s is not one of on, off: the layer stays on", layer);
  if ((size && atoi(size) <= 1) || off)
    return;
  state = 1;
}

/* Calls made from these libraries, directly or through others (libudev asks getrandom
 * inside MPI_Init), are the runtime's, not the program's: they pass through. */
bool runtime_library(const char *path)
{
  static const char *const libs[] = {
      "libtutti", "libOpenCL", "libpocl", "libnvidia", "libcuda", "libLLVM", "libclang",
      "libmpi", "libopen-", "libpmix", "libevent", "libhwloc", "libucp", "libucs", "libuct",
      "libfabric", "libpsm", "mca_", "libltdl", "libibverbs", "librdmacm", "libmunge",
      "libudev"};
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
    if (!strncmp(base, libs[i], strlen(libs[i])))
      return true;
  return false;
}

void *host_base(void)
{
  static void *self;
  if (!self) {
    Dl_info me;
    if (dladdr((void *)host_base, &me))
      self = me.dli_fbase;
  }
  return self;
}

/* Whether any caller on this thread's stack belongs to the runtime. Verdicts are kept by
 * object (a few dozen libraries at most). */
static bool from_runtime(void)
{
  static struct {
    void *base;
    bool runtime;
  } seen[64];
  static int nseen;
  void *self = host_base();
  void *frames[64];
  int n = backtrace(frames, 64);
  for (int i = 1; i < n; i++) {
    Dl_info info;
    if (!dladdr(frames[i], &info) || !info.dli_fname || info.dli_fbase == self)
      continue;
    int k;
    pthread_mutex_lock(&lock);
    for (k = 0; k < nseen && seen[k].base != info.dli_fbase; k++)
      ;
    bool known = k < nseen, runtime = known && seen[k].runtime;
    pthread_mutex_unlock(&lock);
    if (!known) {
      runtime = runtime_library(info.dli_fname);
      pthread_mutex_lock(&lock);
      if (nseen < 64)
        seen[nseen++].base = info.dli_fbase, seen[nseen - 1].runtime = runtime;
      pthread_mutex_unlock(&lock);
    }
    if (runtime)
      return true;
  }
  return false;
}

bool state_on(void)
{
  return state == 1 && !inside;
}

bool active(void)
{
  return state == 1 && !inside && !from_runtime();
}

/* Loads Tutti (the same libtutti.so the ICD loader will load: the one beside this library)
 * and starts the job; its size, 1 when nothing can be agreed on. */
static void tutti_path(char *path, size_t cap)
{
  Dl_info self;
  snprintf(path, cap, "libtutti.so");
  if (dladdr((void *)tutti_path, &self) && self.dli_fname && strrchr(self.dli_fname, '/'))
    snprintf(path, cap, "%.*s/libtutti.so",
             (int)(strrchr(self.dli_fname, '/') - self.dli_fname), self.dli_fname);
}

static int job(void)
{
  if (job_size)
    return job_size;
  inside++;
  pthread_mutex_lock(&lock);
  if (!ops) {
    char path[PATH_MAX];
    tutti_path(path, sizeof path);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const struct tutti_host_ops *(*get)(void) =
        h ? (const struct tutti_host_ops *(*)(void))dlsym(h, "tutti_host_interface") : NULL;
    ops = get ? get() : NULL;
    if (!ops || ops->version != TUTTI_HOST_OPS_VERSION)
      say("cannot use %s (%s): seeds and files are not agreed on between ranks", path,
          h ? "no matching tutti_host_interface" : dlerror());
  }
  pthread_mutex_unlock(&lock);
  int r = 0, size = 1;
  if (ops && ops->version == TUTTI_HOST_OPS_VERSION)
    size = ops->start(&r);
  if (size <= 1)
    state = -1;
  job_size = size;
  inside--;
  return size;
}

int host_job(void)
{
  return job();
}

bool host_ordering(void)
{
  return state == 1 && job_size > 1 && ops;
}

int host_ordered(int (*fn)(void *arg, int rank0), void *arg)
{
  inside++;
  int r = ops->ordered(fn, arg);
  inside--;
  return r;
}

/* Whether the job runs (the program's OpenCL calls, or an agreement, started it): a query
 * made before never starts it. */
static bool job_started(void)
{
  if (job_size)
    return job_size > 1;
  char path[PATH_MAX];
  tutti_path(path, sizeof path);
  void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    return false;
  dlclose(h);
  return job() > 1;
}

void note_result(const char *call, const char *path, int64_t ret, int err)
{
  if (state != 1 || inside || !active() || !job_started() || !ops)
    return;
  inside++;
  ops->result(call, path, (long long)ret, err);
  inside--;
  errno = err;
}

/* The job is over (TUTTI_HOST_OVER): from now on every call is this rank's alone, as in a
 * job of one rank. */
static void job_over(void)
{
  job_size = 1;
  state = -1;
}

/* Rank 0's len bytes at buf on every rank (collective). False: a job of one rank, or one that
 * is over (the caller then makes the call itself). */
bool share(const char *what, void *buf, size_t len)
{
  if (job() <= 1)
    return false;
  inside++;
  int rc = ops->share(what, buf, len);
  inside--;
  if (rc == TUTTI_HOST_OVER) {
    job_over();
    return false;
  }
  if (rc != 0) {
    say("%s: agreeing with rank 0 failed: stopping", what);
    abort();
  }
  return true;
}

/* Before rank 0 changes the file system: every rank has reached this call (collective).
 * False once the job is over: the caller makes the call itself. */
bool arrive(const char *what)
{
  if (job() <= 1)
    return true;
  inside++;
  int rc = ops->arrive(what);
  inside--;
  if (rc == TUTTI_HOST_OVER) {
    job_over();
    return false;
  }
  if (rc != 0) {
    say("%s: meeting the other ranks failed: stopping", what);
    abort();
  }
  return true;
}

/* The outcome of a call made on rank 0 only (its result, errno and, when the result is a
 * positive length, the bytes it put in buf). Other ranks pass their ret and err unset;
 * false: a job of one rank (the caller then makes the call itself). */
bool agree(const char *what, int64_t *ret, int *err, void *buf, size_t cap)
{
  struct {
    int64_t ret;
    int64_t err;
  } o = {*ret, *err};
  if (!share(what, &o, sizeof o))
    return false;
  *ret = o.ret;
  *err = (int)o.err;
  if (buf && o.ret > 0 && (size_t)o.ret <= cap)
    share(what, buf, (size_t)o.ret);
  return true;
}


/* --- files ------------------------------------------------------------------------------- */

static bool opens_for_writing(int flags)
{
  return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
}

bool fd_path(int fd, char *out, size_t cap)
{
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, out, cap - 1);
  if (n <= 0)
    return false;
  out[n] = 0;
  return true;
}

/* The absolute path, "." and ".." taken out (symbolic links are not followed). */
bool absolute(int dirfd, const char *path, char *out, size_t cap)
{
  char base[PATH_MAX] = "/";
  if (path[0] != '/') {
    if (dirfd == AT_FDCWD) {
      if (!getcwd(base, sizeof base))
        return false;
    } else if (!fd_path(dirfd, base, sizeof base)) {
      return false;
    }
  }
  return normalize_path(base, path, out, cap);
}

/* Paths that are not ordinary files of the program: devices, kernel files, pipes. */
static bool special(const char *abs)
{
  if (!strncmp(abs, "/dev/", 5) || !strncmp(abs, "/proc/", 6) || !strncmp(abs, "/sys/", 5))
    return true;
  struct stat st;
  return stat(abs, &st) == 0 && !S_ISREG(st.st_mode);
}

bool path_set_has(struct path_set *set, const char *abs)
{
  pthread_mutex_lock(&lock);
  bool found = false;
  for (size_t i = 0; i < set->n && !found; i++)
    found = !strcmp(set->paths[i], abs);
  pthread_mutex_unlock(&lock);
  return found;
}

void path_set_add(struct path_set *set, const char *abs)
{
  if (path_set_has(set, abs))
    return;
  pthread_mutex_lock(&lock);
  if (set->n == set->cap) {
    size_t cap = set->cap ? set->cap * 2 : 16;
    char **w = realloc(set->paths, cap * sizeof *w);
    if (w) {
      set->paths = w;
      set->cap = cap;
    }
  }
  if (set->n < set->cap)
    set->paths[set->n++] = strdup(abs);
  pthread_mutex_unlock(&lock);
}

bool wrote_any(void)
{
  return __atomic_load_n(&written.n, __ATOMIC_RELAXED) > 0;
}

bool was_written(const char *abs)
{
  return path_set_has(&written, abs);
}

void remember_written(const char *abs)
{
  path_set_add(&written, abs);
}

/* A file or folder of the program moved from `from` to `to` (absolute paths): what the
 * job wrote there, the folder's files too, keeps that mark under the new name. */
void renamed_written(const char *from, const char *to)
{
  size_t n = strlen(from);
  char moved[PATH_MAX];
  for (size_t i = 0; i < written.n; i++) {
    pthread_mutex_lock(&lock);
    const char *w = i < written.n ? written.paths[i] : NULL;
    bool under = w && !strncmp(w, from, n) && (w[n] == 0 || w[n] == '/') &&
                 snprintf(moved, sizeof moved, "%s%s", to, w + n) < (int)sizeof moved;
    pthread_mutex_unlock(&lock);
    if (under)
      remember_written(moved);
  }
}

/* Rank 0's bytes of an open file (every rank: the same length, then the bytes). */
static void *share_contents(const char *what, int fd, uint64_t *len)
{
  *len = 0;
  if (rank == 0) {
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
      *len = (uint64_t)st.st_size;
  }
  share(what, len, sizeof *len);
  char *buf = malloc(*len ? *len : 1);
  if (!buf) {
    say("%s: out of memory for %llu bytes of a file", what, (unsigned long long)*len);
    abort();
  }
  if (rank == 0) {
    uint64_t got = 0;
    while (got < *len) {
      ssize_t n = pread(fd, buf + got, *len - got, (off_t)got);
      if (n <= 0)
        break;
      got += (uint64_t)n;
    }
    memset(buf + got, 0, *len - got);
  }
  share(what, buf, *len);
  return buf;
}

/* A private file holding bytes: what other ranks read instead of rank 0's file. */
static int private_copy(const char *bytes, uint64_t len, int flags)
{
  int fd = memfd_create("tutti-host", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
  if (fd < 0)
    return -1;
  for (uint64_t off = 0; off < len;) {
    ssize_t n = write(fd, bytes + off, len - off);
    if (n <= 0) {
      int e = errno;
      close(fd);
      errno = e;
      return -1;
    }
    off += (uint64_t)n;
  }
  lseek(fd, 0, (flags & O_APPEND) ? SEEK_END : SEEK_SET);
  if (flags & O_APPEND)
    fcntl(fd, F_SETFL, O_APPEND);
  return fd;
}

/* Whether an open of the program's (not a random device) is agreed on: one that writes,
 * or reads a file the job wrote, of an ordinary file. Sets abs. */
static bool agreed_open(int dirfd, const char *path, int flags, char *abs)
{
  bool writes = opens_for_writing(flags);
  return state == 1 && !inside && path && (writes || written.n) &&
         !(flags & (O_DIRECTORY | O_PATH)) && absolute(dirfd, path, abs, PATH_MAX) &&
         (writes || was_written(abs)) && !special(abs) && active();
}

/* Rank 0 opens; every rank returns its outcome (agreed_open said so). */
static int open_agreed(const char *what, int dirfd, const char *path, int flags, mode_t mode,
                       const char *abs)
{
  REAL(openat);
  bool writes = opens_for_writing(flags);
  int fd = -1;
  int64_t ok = 0;
  int err = 0;
  if (!arrive(what))
    return real_openat(dirfd, path, flags, mode);
  if (rank == 0) {
    fd = real_openat(dirfd, path, flags, mode);
    ok = fd >= 0;
    err = errno;
  }
  agree(what, &ok, &err, NULL, 0);
  if (!ok) {
    errno = err;
    return -1;
  }
  if (writes) {
    remember_written(abs);
    host_changed(abs);
  }
  /* Ranks that may read what they open get rank 0's bytes. */
  bool reads = (flags & O_ACCMODE) != O_WRONLY;
  char *bytes = NULL;
  uint64_t len = 0;
  if (reads && !(flags & O_TRUNC))
    bytes = share_contents(what, fd, &len);
  if (rank != 0)
    fd = reads ? private_copy(bytes, len, flags)
               : real_openat(AT_FDCWD, "/dev/null", O_WRONLY | (flags & O_CLOEXEC), 0);
  free(bytes);
  /* What the program does to the file through it is rank 0's to do (host/preload_fs.c). */
  host_mark_fd(fd, FD_AGREED, true);
  return fd;
}

/* Every open of the program comes here. */
static int host_open(const char *what, int dirfd, const char *path, int flags, mode_t mode)
{
  REAL(openat);
  if (state == 1 && !inside && path && host_is_random_device(path) && !opens_for_writing(flags)) {
    int fd = real_openat(dirfd, path, flags, mode);
    if (fd >= 0 && active())
      host_mark_random(fd, true);
    return fd;
  }
  char abs[PATH_MAX];
  if (!agreed_open(dirfd, path, flags, abs)) {
    int fd = real_openat(dirfd, path, flags, mode);
    note_result(what, path, fd < 0 ? -1 : 0, errno);
    return fd;
  }
  return open_agreed(what, dirfd, path, flags, mode, abs);
}

static mode_t mode_arg(int flags, va_list ap)
{
  return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

/* open and openat with their 64-bit names: the mode argument is there only with O_CREAT or
 * O_TMPFILE. */
#define OPEN(fn, what)                                                                            \
  EXPORT int fn(const char *path, int flags, ...)                                                 \
  {                                                                                               \
    va_list ap;                                                                                   \
    va_start(ap, flags);                                                                          \
    mode_t mode = mode_arg(flags, ap);                                                            \
    va_end(ap);                                                                                   \
    return host_open(what, AT_FDCWD, path, flags, mode);                                          \
  }
#define OPENAT(fn, what)                                                                          \
  EXPORT int fn(int dirfd, const char *path, int flags, ...)                                      \
  {                                                                                               \
    va_list ap;                                                                                   \
    va_start(ap, flags);                                                                          \
    mode_t mode = mode_arg(flags, ap);                                                            \
    va_end(ap);                                                                                   \
    return host_open(what, dirfd, path, flags, mode);                                             \
  }
OPEN(open, "open")
OPEN(open64, "open")
OPENAT(openat, "openat")
OPENAT(openat64, "openat")

/* The fortified forms (_FORTIFY_SOURCE) of calls without a mode. */
EXPORT int __open_2(const char *path, int flags)
{
  return host_open("open", AT_FDCWD, path, flags, 0);
}

EXPORT int __open64_2(const char *path, int flags)
{
  return host_open("open", AT_FDCWD, path, flags, 0);
}

EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
  return host_open("openat", dirfd, path, flags, 0);
}

EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
  return host_open("openat", dirfd, path, flags, 0);
}

EXPORT int creat(const char *path, mode_t mode)
{
  return host_open("creat", AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

EXPORT int creat64(const char *path, mode_t mode)
{
  return host_open("creat", AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

/* fopen's mode as open flags; false for a mode fopen refuses. */
static bool mode_flags(const char *mode, int *flags, char *fdmode, size_t cap)
{
  int f;
  switch (mode[0]) {
  case 'r': f = O_RDONLY; break;
  case 'w': f = O_WRONLY | O_CREAT | O_TRUNC; break;
  case 'a': f = O_WRONLY | O_CREAT | O_APPEND; break;
  default: return false;
  }
  size_t n = 0;
  fdmode[n++] = mode[0];
  for (const char *m = mode + 1; *m && *m != ','; m++) {
    if (*m == '+')
      f = (f & ~O_ACCMODE) | O_RDWR;
    else if (*m == 'x')
      f |= O_EXCL;
    else if (*m == 'e')
      f |= O_CLOEXEC;
    if (*m != 'x' && n + 2 < cap)
      fdmode[n++] = *m; /* fdopen takes the rest; O_EXCL was the open's */
  }
  fdmode[n] = 0;
  *flags = f;
  return true;
}

static FILE *host_fopen(const char *what, const char *path, const char *mode,
                        FILE *(*real)(const char *, const char *))
{
  int flags;
  char fdmode[16];
  if (state != 1 || inside || !path || !mode || !mode_flags(mode, &flags, fdmode, sizeof fdmode))
    return real(path, mode);
  if (host_is_random_device(path) && !opens_for_writing(flags) && active())
    return host_random_stream(path, flags);
  char abs[PATH_MAX];
  if (!agreed_open(AT_FDCWD, path, flags, abs))
    return real(path, mode);
  int fd = open_agreed(what, AT_FDCWD, path, flags, 0666, abs);
  if (fd < 0)
    return NULL;
  FILE *f = fdopen(fd, fdmode);
  if (!f) {
    int e = errno;
    close(fd);
    errno = e;
  }
  return f;
}

EXPORT FILE *fopen(const char *path, const char *mode)
{
  REAL(fopen);
  return host_fopen("fopen", path, mode, real_fopen);
}

EXPORT FILE *fopen64(const char *path, const char *mode)
{
  REAL(fopen64);
  return host_fopen("fopen", path, mode, real_fopen64);
}

/* freopen for writing (a program sending stdout to a file): rank 0's outcome; the others
 * write to /dev/null. */
EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
  REAL(freopen);
  int flags;
  char fdmode[16], abs[PATH_MAX];
  if (!mode || !mode_flags(mode, &flags, fdmode, sizeof fdmode) || !opens_for_writing(flags) ||
      (flags & O_ACCMODE) == O_RDWR || !agreed_open(AT_FDCWD, path, flags, abs))
    return real_freopen(path, mode, stream);
  int64_t ok = 0;
  int err = 0;
  FILE *f = NULL;
  if (!arrive("freopen"))
    return real_freopen(path, mode, stream);
  if (rank == 0) {
    f = real_freopen(path, mode, stream);
    ok = f != NULL;
    err = errno;
  }
  agree("freopen", &ok, &err, NULL, 0);
  if (ok)
    remember_written(abs);
  if (rank != 0)
    f = ok ? real_freopen("/dev/null", "w", stream) : NULL;
  if (!ok)
    errno = err;
  return f;
}
