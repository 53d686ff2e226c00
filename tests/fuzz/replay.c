/* Replays inputs through a fuzz target (tests/fuzz/fuzz.h) without libFuzzer: each argument
 * is a file, or a folder whose files are each an input. Prints how many ran; a target that
 * crashes or aborts ends it. */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/fuzz.h"

static int ran;

static void replay(const char *path)
{
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot read %s\n", path);
    exit(2);
  }
  uint8_t *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n == cap) {
      cap = cap ? 2 * cap : 4096;
      uint8_t *b = realloc(buf, cap);
      if (!b)
        exit(2);
      buf = b;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    if (!got)
      break;
    n += got;
  }
  fclose(f);
  /* An input of its own size: reading past it is seen by the sanitizers. */
  uint8_t *exact = malloc(n ? n : 1);
  if (!exact)
    exit(2);
  memcpy(exact, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(exact, n);
  free(exact);
  ran++;
}

int main(int argc, char **argv)
{
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      DIR *d = opendir(argv[i]);
      struct dirent *e;
      while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
          char path[4096];
          snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
          replay(path);
        }
      if (d)
        closedir(d);
    } else {
      replay(argv[i]);
    }
  }
  printf("replayed %d input(s)\n", ran);
  return 0;
}
