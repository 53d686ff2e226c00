/* libtutti-host.so, the file system (host/preload_impl.h): every change the program makes
 * to its files and folders happens once, on rank 0, after every rank reached the call, and
 * every rank returns rank 0's outcome (result and errno), as in a job of one process:
 *   - by path, also relative to a folder's descriptor: mkdir(at), rmdir, unlink(at) (with and
 *     without AT_REMOVEDIR), remove, rename(at, at2), link(at), symlink(at), chmod, fchmodat,
 *     chown, lchown, fchownat, utime, utimes, lutimes, utimensat, truncate;
 *   - by descriptor, on a file opened through an agreed open (rank 0 holds the file, the
 *     others /dev/null or a private copy of its bytes) or a dup of one: fchmod, fchown,
 *     futimens, ftruncate, and fstat, which answers rank 0's file, so that a program (C++'s
 *     copy_file) checking what it opened sees a regular file everywhere;
 *   - queries (stat, lstat, fstatat, access, faccessat) about a file the job wrote: rank 0's
 *     answer. Other queries are each rank's own; their answers are kept for divergence
 *     reports (note_result).
 * Paths in /dev, /proc and /sys, and descriptors the job did not agree on, are each rank's
 * own (a chmod of a file every rank opened itself is made by each: the same change). A file
 * or folder renamed keeps the mark of what the job wrote in it (host/preload_host.c). */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <utime.h>

#include "host/preload_impl.h"

/* --- descriptors ------------------------------------------------------------------------- */

#define MAXFD 65536
static unsigned char fd_kind[MAXFD];

void host_mark_fd(int fd, int kind, bool on)
{
  if (fd < 0 || fd >= MAXFD)
    return;
  pthread_mutex_lock(&lock);
  fd_kind[fd] = (unsigned char)(on ? fd_kind[fd] | kind : fd_kind[fd] & ~kind);
  pthread_mutex_unlock(&lock);
}

bool host_fd_is(int fd, int kind)
{
  return fd >= 0 && fd < MAXFD && (__atomic_load_n(&fd_kind[fd], __ATOMIC_RELAXED) & kind);
}

void host_forget_fd(int fd)
{
  if (fd >= 0 && fd < MAXFD && fd_kind[fd])
    host_mark_fd(fd, FD_RANDOM | FD_AGREED, false);
}

/* fclose closes its descriptor inside the C library, past close(). */
EXPORT int fclose(FILE *f)
{
  REAL(fclose);
  int fd = f ? fileno(f) : -1;
  int r = real_fclose(f);
  host_forget_fd(fd);
  return r;
}

/* A copy of an agreed descriptor is agreed too. */
static int copied(int from, int fd)
{
  if (fd >= 0 && host_fd_is(from, FD_AGREED))
    host_mark_fd(fd, FD_AGREED, true);
  return fd;
}

EXPORT int dup(int fd)
{
  REAL(dup);
  return copied(fd, real_dup(fd));
}

/* What `to` was open on is closed by the copy. */
static int copied_onto(int from, int to, int r)
{
  if (r >= 0 && from != to) {
    host_forget_fd(to);
    copied(from, r);
  }
  return r;
}

EXPORT int dup2(int fd, int to)
{
  REAL(dup2);
  return copied_onto(fd, to, real_dup2(fd, to));
}

EXPORT int dup3(int fd, int to, int flags)
{
  REAL(dup3);
  return copied_onto(fd, to, real_dup3(fd, to, flags));
}

/* A change through a descriptor is rank 0's to make when the open was agreed on. */
static bool agreed_fd(int fd)
{
  return host_fd_is(fd, FD_AGREED) && active();
}

/* --- paths ------------------------------------------------------------------------------- */

/* Whether a change at path (relative to dirfd) is the program's, made by rank 0 only (not
 * in /dev, /proc, /sys). A path that cannot be resolved here is the program's too: the
 * decision must not depend on this rank's view of its folders. */
static bool program_path(int dirfd, const char *path, char *abs)
{
  if (!path || !active())
    return false;
  if (!absolute(dirfd, path, abs, PATH_MAX)) {
    abs[0] = 0;
    return true;
  }
  return strncmp(abs, "/dev/", 5) && strncmp(abs, "/proc/", 6) && strncmp(abs, "/sys/", 5);
}

/* Makes `call` on rank 0 only when the path is the program's; every rank returns its
 * outcome. */
#define RANK0_ONLY(what, dirfd, path, call)                                                       \
  do {                                                                                            \
    char abs_[PATH_MAX];                                                                          \
    if (!program_path(dirfd, path, abs_))                                                         \
      return call;                                                                                \
    host_changed(abs_);                                                                           \
    RETURN_AGREED(int, what, NULL, 0, call);                                                      \
  } while (0)

/* The same through a descriptor (`fd`, or the folder descriptor of an *at call given no
 * path): agreed when its open was. */
#define RANK0_ONLY_FD(what, fd, call)                                                             \
  do {                                                                                            \
    if (!agreed_fd(fd))                                                                           \
      return call;                                                                                \
    RETURN_AGREED(int, what, NULL, 0, call);                                                      \
  } while (0)

/* The C library declares these paths never NULL, which Linux allows for some calls: the
 * tests live apart, where the compiler does not take that declaration for a fact. */
static bool is_null(const char *path)
{
  return !path;
}

static bool is_empty(const char *path)
{
  return path && !path[0];
}

EXPORT int mkdir(const char *path, mode_t mode)
{
  REAL(mkdir);
  RANK0_ONLY("mkdir", AT_FDCWD, path, real_mkdir(path, mode));
}

EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
  REAL(mkdirat);
  RANK0_ONLY("mkdirat", dirfd, path, real_mkdirat(dirfd, path, mode));
}

EXPORT int rmdir(const char *path)
{
  REAL(rmdir);
  RANK0_ONLY("rmdir", AT_FDCWD, path, real_rmdir(path));
}

EXPORT int unlink(const char *path)
{
  REAL(unlink);
  RANK0_ONLY("unlink", AT_FDCWD, path, real_unlink(path));
}

EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
  REAL(unlinkat);
  RANK0_ONLY("unlinkat", dirfd, path, real_unlinkat(dirfd, path, flags));
}

EXPORT int remove(const char *path)
{
  REAL(remove);
  RANK0_ONLY("remove", AT_FDCWD, path, real_remove(path));
}

/* A rename or a link: the new name of a file the job wrote keeps the mark. */
static bool moves(int fromfd, const char *from, int tofd, const char *to)
{
  char abs_from[PATH_MAX], abs_to[PATH_MAX];
  if (!program_path(fromfd, from, abs_from))
    return false;
  host_changed(abs_from);
  if (abs_from[0] && to && absolute(tofd, to, abs_to, sizeof abs_to)) {
    renamed_written(abs_from, abs_to);
    host_changed(abs_to);
  }
  return true;
}

/* Makes a rename or link `call` on rank 0 only when the old path is the program's. */
#define MOVES(what, fromfd, from, tofd, to, call)                                                 \
  do {                                                                                            \
    if (!moves(fromfd, from, tofd, to))                                                           \
      return call;                                                                                \
    RETURN_AGREED(int, what, NULL, 0, call);                                                      \
  } while (0)

EXPORT int rename(const char *from, const char *to)
{
  REAL(rename);
  MOVES("rename", AT_FDCWD, from, AT_FDCWD, to, real_rename(from, to));
}

EXPORT int renameat(int fromfd, const char *from, int tofd, const char *to)
{
  REAL(renameat);
  MOVES("renameat", fromfd, from, tofd, to, real_renameat(fromfd, from, tofd, to));
}

EXPORT int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned flags)
{
  REAL(renameat2);
  MOVES("renameat2", fromfd, from, tofd, to, real_renameat2(fromfd, from, tofd, to, flags));
}

EXPORT int link(const char *from, const char *to)
{
  REAL(link);
  MOVES("link", AT_FDCWD, from, AT_FDCWD, to, real_link(from, to));
}

EXPORT int linkat(int fromfd, const char *from, int tofd, const char *to, int flags)
{
  REAL(linkat);
  MOVES("linkat", fromfd, from, tofd, to, real_linkat(fromfd, from, tofd, to, flags));
}

/* A symbolic link's target is text: only where it is made matters. */
EXPORT int symlink(const char *target, const char *path)
{
  REAL(symlink);
  RANK0_ONLY("symlink", AT_FDCWD, path, real_symlink(target, path));
}

EXPORT int symlinkat(const char *target, int dirfd, const char *path)
{
  REAL(symlinkat);
  RANK0_ONLY("symlinkat", dirfd, path, real_symlinkat(target, dirfd, path));
}

EXPORT int chmod(const char *path, mode_t mode)
{
  REAL(chmod);
  RANK0_ONLY("chmod", AT_FDCWD, path, real_chmod(path, mode));
}

EXPORT int fchmodat(int dirfd, const char *path, mode_t mode, int flags)
{
  REAL(fchmodat);
  RANK0_ONLY("fchmodat", dirfd, path, real_fchmodat(dirfd, path, mode, flags));
}

EXPORT int chown(const char *path, uid_t uid, gid_t gid)
{
  REAL(chown);
  RANK0_ONLY("chown", AT_FDCWD, path, real_chown(path, uid, gid));
}

EXPORT int lchown(const char *path, uid_t uid, gid_t gid)
{
  REAL(lchown);
  RANK0_ONLY("lchown", AT_FDCWD, path, real_lchown(path, uid, gid));
}

EXPORT int fchownat(int dirfd, const char *path, uid_t uid, gid_t gid, int flags)
{
  REAL(fchownat);
  if ((flags & AT_EMPTY_PATH) && is_empty(path))
    RANK0_ONLY_FD("fchownat", dirfd, real_fchownat(dirfd, path, uid, gid, flags));
  RANK0_ONLY("fchownat", dirfd, path, real_fchownat(dirfd, path, uid, gid, flags));
}

EXPORT int utime(const char *path, const struct utimbuf *times)
{
  REAL(utime);
  RANK0_ONLY("utime", AT_FDCWD, path, real_utime(path, times));
}

EXPORT int utimes(const char *path, const struct timeval times[2])
{
  REAL(utimes);
  RANK0_ONLY("utimes", AT_FDCWD, path, real_utimes(path, times));
}

EXPORT int lutimes(const char *path, const struct timeval times[2])
{
  REAL(lutimes);
  RANK0_ONLY("lutimes", AT_FDCWD, path, real_lutimes(path, times));
}

EXPORT int utimensat(int dirfd, const char *path, const struct timespec times[2], int flags)
{
  REAL(utimensat);
  /* No path: the times of dirfd's own file (futimens). */
  if (is_null(path))
    RANK0_ONLY_FD("utimensat", dirfd, real_utimensat(dirfd, path, times, flags));
  RANK0_ONLY("utimensat", dirfd, path, real_utimensat(dirfd, path, times, flags));
}

EXPORT int truncate(const char *path, off_t len)
{
  REAL(truncate);
  RANK0_ONLY("truncate", AT_FDCWD, path, real_truncate(path, len));
}

EXPORT int truncate64(const char *path, off64_t len)
{
  REAL(truncate64);
  RANK0_ONLY("truncate", AT_FDCWD, path, real_truncate64(path, len));
}

/* --- through agreed descriptors ---------------------------------------------------------- */

EXPORT int fchmod(int fd, mode_t mode)
{
  REAL(fchmod);
  RANK0_ONLY_FD("fchmod", fd, real_fchmod(fd, mode));
}

EXPORT int fchown(int fd, uid_t uid, gid_t gid)
{
  REAL(fchown);
  RANK0_ONLY_FD("fchown", fd, real_fchown(fd, uid, gid));
}

EXPORT int futimens(int fd, const struct timespec times[2])
{
  REAL(futimens);
  RANK0_ONLY_FD("futimens", fd, real_futimens(fd, times));
}

/* The other ranks' private copy (a program that also reads the file) is cut alike. */
static int cut(const char *what, int fd, off64_t len)
{
  REAL(ftruncate64);
  REAL(fstat64);
  if (!agreed_fd(fd))
    return real_ftruncate64(fd, len);
  struct stat64 st;
  /* Its own result does not count: rank 0's is every rank's. */
  if (rank != 0 && real_fstat64(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      real_ftruncate64(fd, len) != 0)
    errno = 0;
  RETURN_AGREED(int, what, NULL, 0, real_ftruncate64(fd, len));
}

EXPORT int ftruncate(int fd, off_t len)
{
  return cut("ftruncate", fd, len);
}

EXPORT int ftruncate64(int fd, off64_t len)
{
  return cut("ftruncate", fd, len);
}

/* rank 0's answer about its file, with the bytes of the answer. */
#define AGREED_STAT(what, fd, st, call)                                                           \
  do {                                                                                            \
    if (!agreed_fd(fd))                                                                           \
      return call;                                                                                \
    int64_t ret_ = 0;                                                                             \
    int err_ = 0;                                                                                 \
    if (rank == 0) {                                                                              \
      ret_ = (call);                                                                              \
      err_ = errno;                                                                               \
    }                                                                                             \
    if (!agree(what, &ret_, &err_, NULL, 0))                                                      \
      return call;                                                                                \
    if (ret_ == 0)                                                                                \
      share(what, st, sizeof *(st));                                                              \
    errno = err_;                                                                                 \
    return (int)ret_;                                                                             \
  } while (0)

EXPORT int fstat(int fd, struct stat *st)
{
  REAL(fstat);
  AGREED_STAT("fstat", fd, st, real_fstat(fd, st));
}

EXPORT int fstat64(int fd, struct stat64 *st)
{
  REAL(fstat64);
  AGREED_STAT("fstat", fd, st, real_fstat64(fd, st));
}

/* --- queries ----------------------------------------------------------------------------- */

/* A query about a file the job wrote is answered by rank 0 (the others may see rank 0's
 * writes late, or, on another node, not at all); any other is each rank's own, its answer
 * kept for divergence reports. */
static bool about_written(int dirfd, const char *path)
{
  char abs[PATH_MAX];
  return wrote_any() && state_on() && path && absolute(dirfd, path, abs, sizeof abs) &&
         was_written(abs) && active();
}

/* The answer and, when it is 0, the struct it filled. */
#define QUERY(what, dirfd, path, st, len, call)                                                        \
  do {                                                                                            \
    if (about_written(dirfd, path)) {                                                             \
      int64_t ret_ = 0;                                                                           \
      int err_ = 0;                                                                               \
      if (rank == 0) {                                                                            \
        ret_ = (call);                                                                            \
        err_ = errno;                                                                             \
      }                                                                                           \
      if (agree(what, &ret_, &err_, NULL, 0)) {                                                   \
        if (ret_ == 0 && (len))                                                                   \
          share(what, (st), (len));                                                               \
        errno = err_;                                                                             \
        return (int)ret_;                                                                         \
      }                                                                                           \
    }                                                                                             \
    int r_ = (call);                                                                              \
    note_result(what, path, r_, errno);                                                           \
    return r_;                                                                                    \
  } while (0)

EXPORT int access(const char *path, int mode)
{
  REAL(access);
  QUERY("access", AT_FDCWD, path, NULL, 0, real_access(path, mode));
}

EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
  REAL(faccessat);
  QUERY("faccessat", dirfd, path, NULL, 0, real_faccessat(dirfd, path, mode, flags));
}

EXPORT int stat(const char *path, struct stat *st)
{
  REAL(stat);
  QUERY("stat", AT_FDCWD, path, st, sizeof *st, real_stat(path, st));
}

EXPORT int stat64(const char *path, struct stat64 *st)
{
  REAL(stat64);
  QUERY("stat", AT_FDCWD, path, st, sizeof *st, real_stat64(path, st));
}

EXPORT int lstat(const char *path, struct stat *st)
{
  REAL(lstat);
  QUERY("lstat", AT_FDCWD, path, st, sizeof *st, real_lstat(path, st));
}

EXPORT int lstat64(const char *path, struct stat64 *st)
{
  REAL(lstat64);
  QUERY("lstat", AT_FDCWD, path, st, sizeof *st, real_lstat64(path, st));
}

EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
  REAL(fstatat);
  QUERY("fstatat", dirfd, path, st, sizeof *st, real_fstatat(dirfd, path, st, flags));
}

EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
  REAL(fstatat64);
  QUERY("fstatat", dirfd, path, st, sizeof *st, real_fstatat64(dirfd, path, st, flags));
}
