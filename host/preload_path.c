/* Paths in their absolute, normalized form (host/preload_impl.h): pure, no file system
 * calls, so that tests/fuzz/fuzz_path.c can feed it anything. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "host/preload_impl.h"

bool normalize_path(const char *base, const char *path, char *out, size_t cap)
{
  if (cap < 2)
    return false;
  out[0] = 0;
  size_t len = 0;
  /* path, after base when it is relative: component by component, never joined (a join
   * could be cut short, and the shortened path taken for another). */
  const char *parts[2] = {path[0] == '/' ? "" : base, path};
  for (int k = 0; k < 2; k++)
    for (const char *s = parts[k]; *s;) {
      while (*s == '/')
        s++;
      const char *e = strchr(s, '/');
      size_t n = e ? (size_t)(e - s) : strlen(s);
      if (!n)
        break;
      if (n == 1 && s[0] == '.') {
        /* nothing */
      } else if (n == 2 && s[0] == '.' && s[1] == '.') {
        char *slash = strrchr(out, '/');
        len = slash ? (size_t)(slash - out) : 0;
        out[len] = 0;
      } else {
        if (len + n + 2 > cap)
          return false;
        out[len++] = '/';
        memcpy(out + len, s, n);
        len += n;
        out[len] = 0;
      }
      s += n;
    }
  if (!len)
    snprintf(out, cap, "/");
  return true;
}
