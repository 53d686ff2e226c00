/* What the files of the host layer (libtutti-host.so: host/preload_host.c, the core and the
 * files; host/preload_random.c, seeds and random devices) share. Every symbol here is hidden
 * (-fvisibility=hidden): the program's own symbols of the same names are never bound to
 * them. */
#ifndef TUTTI_HOST_PRELOAD_IMPL_H
#define TUTTI_HOST_PRELOAD_IMPL_H

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A function the program calls that the layer takes over. */
#define EXPORT __attribute__((visibility("default")))

extern int rank;             /* this rank, from the launcher's environment */
extern pthread_mutex_t lock; /* the layer's tables */

/* Whether a call of the program's is agreed on (a rank of a job of several, not a call of
 * Tutti's, MPI's or a driver's). */
bool active(void);
/* The same without asking whose call it is (cheap): the layer works and this thread is not
 * inside it. */
bool state_on(void);
/* Rank 0's len bytes at buf on every rank (collective). False: a job of one rank. */
bool share(const char *what, void *buf, size_t len);
/* Before rank 0 changes the file system: every rank has reached this call (collective). */
bool arrive(const char *what);
/* The outcome of a call made on rank 0 only, with the bytes it put in buf. */
bool agree(const char *what, int64_t *ret, int *err, void *buf, size_t cap);

/* Where this library (libtutti-host.so) is loaded: its calls are the layer's own. */
void *host_base(void);
/* Whether calls from this library path are the runtime's (Tutti, MPI, the drivers). */
bool runtime_library(const char *path);
/* Starts the job, if not yet; its size. */
int host_job(void);
/* Whether the program's locks go in rank 0's order of turns: a job of several ranks whose
 * Tutti started (runtime/job/turns.h). */
bool host_ordering(void);
/* fn in that order (tt_turn_ordered). */
int host_ordered(int (*fn)(void *arg, int rank0), void *arg);

/* A set of absolute paths, guarded by `lock`. */
struct path_set {
  char **paths;
  size_t n, cap;
};
bool path_set_has(struct path_set *set, const char *abs);
void path_set_add(struct path_set *set, const char *abs);

/* Files (host/preload_host.c): the absolute, normalized form of a path relative to dirfd
 * (AT_FDCWD: the working folder), and the files the job wrote (opened for writing, made,
 * renamed into place), whose bytes every rank reads from rank 0. */
bool absolute(int dirfd, const char *path, char *out, size_t cap);
/* The same of path, relative to folder base when not absolute (host/preload_path.c): false
 * when it does not fit in cap bytes. */
bool normalize_path(const char *base, const char *path, char *out, size_t cap);
/* The path a descriptor is open on (/proc/self/fd). */
bool fd_path(int fd, char *out, size_t cap);
bool was_written(const char *abs);
bool wrote_any(void);
void remember_written(const char *abs);
void renamed_written(const char *from, const char *to);

/* The outcome of a file query every rank makes itself, kept for divergence reports
 * (struct tutti_host_ops, result); keeps errno. */
void note_result(const char *call, const char *path, int64_t ret, int err);

/* The job changed the file or folder at abs (made, removed, renamed, wrote it): listings of
 * it and of its folder are rank 0's from now on (host/preload_dir.c). */
void host_changed(const char *abs);

/* What the layer knows of a descriptor of the program's, set alike on every rank in program
 * order: FD_RANDOM, open on a random device (reads give rank 0's bytes); FD_AGREED, opened
 * through an agreed open (rank 0 holds the file, the others /dev/null or a private copy:
 * changes through it are rank 0's to make, host/preload_fs.c). Cleared when it closes. */
enum { FD_RANDOM = 1, FD_AGREED = 2 };
void host_mark_fd(int fd, int kind, bool on);
bool host_fd_is(int fd, int kind);
void host_forget_fd(int fd);

/* Random devices (host/preload_random.c). */
bool host_is_random_device(const char *path);
/* fd, open on a random device for reading, gives rank 0's bytes (read) or no longer does. */
void host_mark_random(int fd, bool on);
/* A stream on the random device at path whose reads give rank 0's bytes (fopen). */
FILE *host_random_stream(const char *path, int flags);

#define REAL(name)                                                                                \
  static __typeof__(name) *real_##name;                                                           \
  if (!real_##name)                                                                               \
    real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

/* Returns rank 0's outcome of `call` (made on rank 0 only), with the bytes it put in buf, on
 * every rank; in a job of one rank, or once the job is over, the call's own. */
#define RETURN_AGREED(type, what, buf, cap, call)                                                 \
  do {                                                                                            \
    int64_t ret_ = 0;                                                                             \
    int err_ = 0;                                                                                 \
    if (!arrive(what))                                                                            \
      return (call);                                                                              \
    if (rank == 0) {                                                                              \
      ret_ = (call);                                                                              \
      err_ = errno;                                                                               \
    }                                                                                             \
    if (!agree(what, &ret_, &err_, buf, cap))                                                     \
      return (call);                                                                              \
    errno = err_;                                                                                 \
    return (type)ret_;                                                                            \
  } while (0)

#endif
