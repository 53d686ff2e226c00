/* libtutti-host.so, folder listings (host/preload_impl.h): a listing of a folder the job
 * changed (made it, or made, removed, renamed or wrote something in it) is rank 0's on every
 * rank. Rank 0 reads the whole folder at opendir (fdopendir) and sends the entries; every
 * rank then reads them from a listing of its own, through readdir and the calls around it,
 * so that a rank never lists a folder before or after rank 0's changes to it, nor, on
 * another node, a folder it does not have. scandir is made of those calls. Other folders
 * are listed by each rank itself. Each listing is an agreement in program order, like the
 * rest of the layer. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/preload_impl.h"

/* --- the folders the job changed --------------------------------------------------------- */

static struct path_set changed;

static bool is_changed(const char *abs)
{
  return path_set_has(&changed, abs);
}

static void add_changed(const char *abs)
{
  path_set_add(&changed, abs);
}

void host_changed(const char *abs)
{
  if (!abs || !abs[0])
    return;
  add_changed(abs); /* a folder made */
  char parent[PATH_MAX];
  snprintf(parent, sizeof parent, "%s", abs);
  char *slash = strrchr(parent, '/');
  if (slash && slash != parent) {
    *slash = 0;
    add_changed(parent);
  } else if (slash) {
    add_changed("/");
  }
}

/* --- listings of rank 0's ---------------------------------------------------------------- */

/* The folder of a descriptor itself (agreed_folder). */
static const char no_path[1];

#define LISTING_MAGIC 0x7475747469646972ULL /* "tuttidir" */

struct listing {
  uint64_t magic;
  int fd;               /* this rank's descriptor of the folder (dirfd), or -1 */
  unsigned char *bytes; /* rank 0's entries: u64 inode, u8 type, u16 length, name */
  size_t len, at;       /* their size, and where the next entry starts */
  long pos;             /* entries read (telldir) */
  struct dirent64 ent;  /* what readdir returns */
};

/* Listings handed out: readdir and the rest tell them from the C library's own by this. */
static struct listing **open_listings;
static size_t nopen, capopen;

static bool ours(const void *dir)
{
  if (!nopen)
    return false;
  pthread_mutex_lock(&lock);
  bool found = false;
  for (size_t i = 0; i < nopen && !found; i++)
    found = open_listings[i] == dir;
  pthread_mutex_unlock(&lock);
  return found;
}

static bool keep(struct listing *l)
{
  pthread_mutex_lock(&lock);
  if (nopen == capopen) {
    size_t cap = capopen ? capopen * 2 : 8;
    struct listing **o = realloc(open_listings, cap * sizeof *o);
    if (o) {
      open_listings = o;
      capopen = cap;
    }
  }
  bool kept = nopen < capopen;
  if (kept)
    open_listings[nopen++] = l;
  pthread_mutex_unlock(&lock);
  return kept;
}

static void drop(struct listing *l)
{
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < nopen; i++)
    if (open_listings[i] == l) {
      open_listings[i] = open_listings[--nopen];
      break;
    }
  pthread_mutex_unlock(&lock);
}

/* Rank 0's entries of the folder it holds open as dir (every rank: the length, then the
 * bytes; NULL when rank 0 could not read them, which no rank then takes as a listing). */
static unsigned char *pack(DIR *dir, uint64_t *len)
{
  REAL(readdir64);
  size_t cap = 4096, n = 0;
  unsigned char *b = malloc(cap);
  for (struct dirent64 *e; b && dir && (e = real_readdir64(dir));) {
    uint16_t l = (uint16_t)strlen(e->d_name);
    if (n + 11 + l > cap) {
      unsigned char *g = realloc(b, cap = 2 * (n + 11 + l));
      if (!g) {
        free(b);
        b = NULL;
        break;
      }
      b = g;
    }
    uint64_t ino = e->d_ino;
    memcpy(b + n, &ino, 8);
    b[n + 8] = e->d_type;
    memcpy(b + n + 9, &l, 2);
    memcpy(b + n + 11, e->d_name, l);
    n += 11 + (size_t)l;
  }
  *len = n;
  return b;
}

/* The listing every rank returns for a folder the job changed; rank 0 reads it through
 * real_dir (then closed). The outcome and errno are rank 0's. */
static DIR *agreed_listing(const char *what, DIR *real_dir, int err0, int fd)
{
  REAL(closedir);
  int64_t ok = rank == 0 && real_dir;
  int err = err0;
  uint64_t len = 0;
  unsigned char *bytes = NULL;
  if (rank == 0 && real_dir) {
    /* The descriptor stays the program's (fdopendir's, or ours below): the C library's
     * listing keeps one of its own. */
    int keep_fd = dup(dirfd(real_dir));
    bytes = pack(real_dir, &len);
    real_closedir(real_dir);
    if (fd < 0)
      fd = keep_fd;
    else if (keep_fd >= 0)
      close(keep_fd);
    ok = bytes != NULL;
  }
  agree(what, &ok, &err, NULL, 0);
  if (!ok) {
    free(bytes);
    if (rank == 0 && fd >= 0)
      close(fd);
    errno = err;
    return NULL;
  }
  share(what, &len, sizeof len);
  unsigned char *b = rank == 0 ? bytes : malloc(len ? len : 1);
  if (!b)
    abort();
  share(what, b, len);
  struct listing *l = calloc(1, sizeof *l);
  if (!l)
    abort();
  *l = (struct listing){.magic = LISTING_MAGIC, .fd = fd, .bytes = b, .len = len};
  if (!keep(l))
    abort();
  return (DIR *)l;
}

/* Whether a listing of the folder at dirfd/path (or of the folder dirfd itself: path
 * NULL, as fdopendir asks) is agreed: a folder the job changed, in a job of several
 * ranks. A NULL path from the program (opendir's, which glibc calls nonnull) lists
 * nothing agreed: the C library answers it. */
static bool agreed_folder(int dirfd, const char *path)
{
  char abs[PATH_MAX];
  if (!state_on() || !changed.n)
    return false;
  if (path != no_path && (!path || !absolute(dirfd, path, abs, sizeof abs)))
    return false;
  if (path == no_path && !fd_path(dirfd, abs, sizeof abs))
    return false;
  return is_changed(abs) && active() && host_job() > 1;
}

EXPORT DIR *opendir(const char *path)
{
  REAL(opendir);
  REAL(openat);
  if (!agreed_folder(AT_FDCWD, path))
    return real_opendir(path);
  DIR *d = rank == 0 ? real_opendir(path) : NULL;
  int err = errno;
  /* The other ranks' own descriptor of the folder, for dirfd (-1 where they lack it: a
   * call relative to it is rank 0's to make anyway). */
  int fd = rank == 0 ? -1 : real_openat(AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  DIR *l = agreed_listing("opendir", d, err, fd);
  if (!l && fd >= 0)
    close(fd);
  return l;
}

EXPORT DIR *fdopendir(int fd)
{
  REAL(fdopendir);
  if (!agreed_folder(fd, no_path))
    return real_fdopendir(fd);
  DIR *d = NULL;
  int err = 0;
  if (rank == 0) {
    /* The C library's listing takes fd over; ours hands it back at closedir. */
    int copy = dup(fd);
    d = copy >= 0 ? real_fdopendir(copy) : NULL;
    err = errno;
    if (!d && copy >= 0)
      close(copy);
  }
  return agreed_listing("fdopendir", d, err, fd);
}

static struct dirent64 *next_entry(struct listing *l)
{
  if (l->at + 11 > l->len)
    return NULL;
  const unsigned char *p = l->bytes + l->at;
  uint64_t ino;
  uint16_t n;
  memcpy(&ino, p, 8);
  memcpy(&n, p + 9, 2);
  memset(&l->ent, 0, sizeof l->ent);
  l->ent.d_ino = ino;
  l->ent.d_type = p[8];
  l->ent.d_reclen = sizeof l->ent;
  memcpy(l->ent.d_name, p + 11, n < sizeof l->ent.d_name ? n : sizeof l->ent.d_name - 1);
  l->at += 11 + (size_t)n;
  l->ent.d_off = ++l->pos;
  return &l->ent;
}

/* struct dirent and struct dirent64 are one layout on 64-bit Linux. */
_Static_assert(sizeof(struct dirent) == sizeof(struct dirent64), "dirent layouts differ");

EXPORT struct dirent *readdir(DIR *dir)
{
  REAL(readdir);
  if (!ours(dir))
    return real_readdir(dir);
  return (struct dirent *)next_entry((struct listing *)dir);
}

EXPORT struct dirent64 *readdir64(DIR *dir)
{
  REAL(readdir64);
  if (!ours(dir))
    return real_readdir64(dir);
  return next_entry((struct listing *)dir);
}

/* readdir_r's answer from a listing of ours. */
static int next_into(DIR *dir, void *entry, void **result)
{
  struct dirent64 *e = next_entry((struct listing *)dir);
  if (e)
    memcpy(entry, e, sizeof *e);
  *result = e ? entry : NULL;
  return 0;
}

EXPORT int readdir_r(DIR *dir, struct dirent *entry, struct dirent **result)
{
  REAL(readdir_r);
  return ours(dir) ? next_into(dir, entry, (void **)result) : real_readdir_r(dir, entry, result);
}

EXPORT int readdir64_r(DIR *dir, struct dirent64 *entry, struct dirent64 **result)
{
  REAL(readdir64_r);
  return ours(dir) ? next_into(dir, entry, (void **)result)
                   : real_readdir64_r(dir, entry, result);
}

EXPORT int closedir(DIR *dir)
{
  REAL(closedir);
  if (!ours(dir))
    return real_closedir(dir);
  struct listing *l = (struct listing *)dir;
  drop(l);
  if (l->fd >= 0)
    close(l->fd);
  free(l->bytes);
  free(l);
  return 0;
}

EXPORT int dirfd(DIR *dir)
{
  REAL(dirfd);
  if (!ours(dir))
    return real_dirfd(dir);
  int fd = ((struct listing *)dir)->fd;
  if (fd < 0)
    errno = ENOTSUP;
  return fd;
}

EXPORT void rewinddir(DIR *dir)
{
  REAL(rewinddir);
  if (!ours(dir)) {
    real_rewinddir(dir);
    return;
  }
  struct listing *l = (struct listing *)dir;
  l->at = 0;
  l->pos = 0;
}

EXPORT long telldir(DIR *dir)
{
  REAL(telldir);
  return ours(dir) ? ((struct listing *)dir)->pos : real_telldir(dir);
}

EXPORT void seekdir(DIR *dir, long pos)
{
  REAL(seekdir);
  if (!ours(dir)) {
    real_seekdir(dir, pos);
    return;
  }
  rewinddir(dir);
  struct listing *l = (struct listing *)dir;
  while (l->pos < pos && next_entry(l))
    ;
}

/* scandir lists through the C library's own opendir: made here of the calls above. */
static int scan(const char *path, struct dirent64 ***list,
                int (*filter)(const struct dirent64 *),
                int (*compar)(const struct dirent64 **, const struct dirent64 **))
{
  DIR *d = opendir(path);
  if (!d)
    return -1;
  size_t n = 0, cap = 0;
  struct dirent64 **v = NULL;
  for (struct dirent64 *e; (e = readdir64(d));) {
    if (filter && !filter(e))
      continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      struct dirent64 **g = realloc(v, cap * sizeof *g);
      if (!g)
        goto fail;
      v = g;
    }
    if (!(v[n] = malloc(sizeof *e)))
      goto fail;
    memcpy(v[n++], e, sizeof *e);
  }
  closedir(d);
  if (compar)
    qsort(v, n, sizeof *v, (int (*)(const void *, const void *))compar);
  *list = v;
  return (int)n;
fail:
  while (n)
    free(v[--n]);
  free(v);
  closedir(d);
  errno = ENOMEM;
  return -1;
}

EXPORT int scandir(const char *path, struct dirent ***list, int (*filter)(const struct dirent *),
                   int (*compar)(const struct dirent **, const struct dirent **))
{
  REAL(scandir);
  if (!agreed_folder(AT_FDCWD, path))
    return real_scandir(path, list, filter, compar);
  return scan(path, (struct dirent64 ***)list, (int (*)(const struct dirent64 *))filter,
              (int (*)(const struct dirent64 **, const struct dirent64 **))compar);
}

EXPORT int scandir64(const char *path, struct dirent64 ***list,
                     int (*filter)(const struct dirent64 *),
                     int (*compar)(const struct dirent64 **, const struct dirent64 **))
{
  REAL(scandir64);
  if (!agreed_folder(AT_FDCWD, path))
    return real_scandir64(path, list, filter, compar);
  return scan(path, list, filter, compar);
}
