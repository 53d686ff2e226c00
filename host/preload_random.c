/* libtutti-host.so, seeds and random devices (host/preload_impl.h): rank 0's seeds and
 * random bytes on every rank, so that every rank's host program draws the same numbers. */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "host/preload_impl.h"

/* --- seeds ------------------------------------------------------------------------------- */

static void agree_seed(const char *what, void *seed, size_t len)
{
  if (active())
    share(what, seed, len);
}

EXPORT void srand(unsigned seed)
{
  agree_seed("srand", &seed, sizeof seed);
  REAL(srand);
  real_srand(seed);
}

EXPORT void srandom(unsigned seed)
{
  agree_seed("srandom", &seed, sizeof seed);
  REAL(srandom);
  real_srandom(seed);
}

EXPORT char *initstate(unsigned seed, char *statebuf, size_t n)
{
  agree_seed("initstate", &seed, sizeof seed);
  REAL(initstate);
  return real_initstate(seed, statebuf, n);
}

EXPORT void srand48(long seed)
{
  agree_seed("srand48", &seed, sizeof seed);
  REAL(srand48);
  real_srand48(seed);
}

EXPORT unsigned short *seed48(unsigned short seed[3])
{
  unsigned short s[3] = {seed[0], seed[1], seed[2]};
  agree_seed("seed48", s, sizeof s);
  REAL(seed48);
  return real_seed48(s);
}

EXPORT void lcong48(unsigned short param[7])
{
  unsigned short p[7];
  memcpy(p, param, sizeof p);
  agree_seed("lcong48", p, sizeof p);
  REAL(lcong48);
  real_lcong48(p);
}

EXPORT ssize_t getrandom(void *buf, size_t len, unsigned flags)
{
  REAL(getrandom);
  if (!active())
    return real_getrandom(buf, len, flags);
  RETURN_AGREED(ssize_t, "getrandom", buf, len, real_getrandom(buf, len, flags));
}

EXPORT int getentropy(void *buf, size_t len)
{
  REAL(getentropy);
  if (!active())
    return real_getentropy(buf, len);
  int64_t ret = 0;
  int err = 0;
  if (rank == 0) {
    ret = real_getentropy(buf, len);
    err = errno;
  }
  if (!agree("getentropy", &ret, &err, NULL, 0))
    return real_getentropy(buf, len);
  if (ret == 0)
    share("getentropy", buf, len);
  errno = err;
  return (int)ret;
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 36)
EXPORT void arc4random_buf(void *buf, size_t n)
{
  REAL(arc4random_buf);
  bool on = active();
  if (rank == 0 || !on)
    real_arc4random_buf(buf, n);
  if (on)
    share("arc4random_buf", buf, n);
}

EXPORT uint32_t arc4random(void)
{
  REAL(arc4random);
  uint32_t v = 0;
  bool on = active();
  if (rank == 0 || !on)
    v = real_arc4random();
  if (on)
    share("arc4random", &v, sizeof v);
  return v;
}

EXPORT uint32_t arc4random_uniform(uint32_t bound)
{
  REAL(arc4random_uniform);
  uint32_t v = 0;
  bool on = active();
  if (rank == 0 || !on)
    v = real_arc4random_uniform(bound);
  if (on)
    share("arc4random_uniform", &v, sizeof v);
  return v;
}
#endif

/* --- random devices ---------------------------------------------------------------------- */

bool host_is_random_device(const char *path)
{
  return !strcmp(path, "/dev/urandom") || !strcmp(path, "/dev/random");
}

void host_mark_random(int fd, bool on)
{
  host_mark_fd(fd, FD_RANDOM, on);
}

static bool marked_random(int fd)
{
  return host_fd_is(fd, FD_RANDOM);
}

/* A read of a random device: rank 0's bytes. */
static ssize_t shared_read(int fd, void *buf, size_t n)
{
  REAL(read);
  RETURN_AGREED(ssize_t, "read", buf, n, real_read(fd, buf, n));
}

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
  REAL(read);
  if (marked_random(fd) && active())
    return shared_read(fd, buf, n);
  return real_read(fd, buf, n);
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
  if (n > buflen)
    abort(); /* what the fortified read does: a buffer overflow */
  REAL(read);
  if (marked_random(fd) && active())
    return shared_read(fd, buf, n);
  return real_read(fd, buf, n);
}

EXPORT int close(int fd)
{
  REAL(close);
  host_forget_fd(fd);
  return real_close(fd);
}

static ssize_t cookie_read(void *c, char *buf, size_t n)
{
  return shared_read((int)(intptr_t)c, buf, n);
}

static int cookie_close(void *c)
{
  REAL(close);
  return real_close((int)(intptr_t)c);
}

FILE *host_random_stream(const char *path, int flags)
{
  REAL(openat);
  int fd = real_openat(AT_FDCWD, path, flags | O_CLOEXEC, 0);
  if (fd < 0)
    return NULL;
  cookie_io_functions_t io = {.read = cookie_read, .close = cookie_close};
  FILE *f = fopencookie((void *)(intptr_t)fd, "r", io);
  if (!f)
    cookie_close((void *)(intptr_t)fd);
  return f;
}
