/* TUTTI_BACKENDS matching, apart from the loading code so the unit tests can use it. */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "runtime/base/backend.h"

int tt_backend_selected(const char *list, const char *platform_name, const char *short_name)
{
  if (!list || !*list)
    return 1;
  const char *s = list;
  while (*s) {
    size_t n = strcspn(s, ",");
    if (n > 0) {
      for (const char *hay = platform_name; *hay; hay++)
        if (!strncasecmp(hay, s, n))
          return 1;
      if (strlen(short_name) == n && !strncasecmp(short_name, s, n))
        return 1;
    }
    s += n;
    if (*s == ',')
      s++;
  }
  return 0;
}
