/* Checks a trace written by TUTTI_TRACE: strict JSON (RFC 8259), in the Chrome/Perfetto
 * trace event format, and what Tutti promises of it:
 *   - every event has a phase and a process; slices have a start and a duration >= 0;
 *   - every device has its track, on the process of the rank that owns it;
 *   - every kernel slice is on the track of the device its command was enqueued for, on the
 *     rank that owns that device, and that rank marked the enqueue "actual" while every other
 *     rank marked the same command virtual or dropped;
 *   - every flow start (a send) has one flow end (its receive) on another rank.
 * Usage: trace_check FILE RANKS KERNEL KERNELS [FIRST]   (KERNELS: the number of kernel
 * slices named KERNEL expected). Prints five TAP lines, numbered from FIRST (default 1). */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum type { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct json {
  enum type type;
  double num;
  char *str;
  struct json **items; /* arrays and object values */
  char **keys;         /* objects */
  size_t n;
};

static const char *p, *error;

static void ws(void)
{
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
    p++;
}

static struct json *value(int depth);

static char *string(void)
{
  if (*p != '"') {
    error = "a string was expected";
    return NULL;
  }
  p++;
  size_t cap = 32, n = 0;
  char *s = malloc(cap);
  while (*p != '"') {
    if (!*p || (unsigned char)*p < 0x20) {
      error = "a string is not closed, or holds a control character";
      free(s);
      return NULL;
    }
    char c = *p++;
    if (c == '\\') {
      c = *p++;
      if (c == 'u') {
        for (int i = 0; i < 4; i++)
          if (!isxdigit((unsigned char)p[i])) {
            error = "bad \\u escape";
            free(s);
            return NULL;
          }
        p += 4;
        c = '?';
      } else if (!strchr("\"\\/bfnrt", c)) {
        error = "bad escape";
        free(s);
        return NULL;
      }
    }
    if (n + 2 > cap)
      s = realloc(s, cap *= 2);
    s[n++] = c;
  }
  p++;
  s[n] = 0;
  return s;
}

static bool number(double *v)
{
  const char *start = p;
  if (*p == '-')
    p++;
  if (*p == '0')
    p++;
  else if (isdigit((unsigned char)*p))
    while (isdigit((unsigned char)*p))
      p++;
  else
    return false;
  if (*p == '.') {
    p++;
    if (!isdigit((unsigned char)*p))
      return false;
    while (isdigit((unsigned char)*p))
      p++;
  }
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-')
      p++;
    if (!isdigit((unsigned char)*p))
      return false;
    while (isdigit((unsigned char)*p))
      p++;
  }
  *v = strtod(start, NULL);
  return true;
}

static void push(struct json *j, char *key, struct json *v)
{
  j->items = realloc(j->items, (j->n + 1) * sizeof *j->items);
  j->items[j->n] = v;
  if (j->type == J_OBJ) {
    j->keys = realloc(j->keys, (j->n + 1) * sizeof *j->keys);
    j->keys[j->n] = key;
  }
  j->n++;
}

static struct json *value(int depth)
{
  if (depth > 64) {
    error = "nested too deep";
    return NULL;
  }
  ws();
  struct json *j = calloc(1, sizeof *j);
  if (*p == '{' || *p == '[') {
    bool obj = *p == '{';
    char close = obj ? '}' : ']';
    j->type = obj ? J_OBJ : J_ARR;
    p++;
    ws();
    if (*p == close) {
      p++;
      return j;
    }
    for (;;) {
      char *key = NULL;
      if (obj) {
        ws();
        if (!(key = string()))
          return NULL;
        ws();
        if (*p++ != ':') {
          error = "':' was expected";
          return NULL;
        }
      }
      struct json *v = value(depth + 1);
      if (!v)
        return NULL;
      push(j, key, v);
      ws();
      if (*p == ',') {
        p++;
        continue;
      }
      if (*p == close) {
        p++;
        return j;
      }
      error = obj ? "',' or '}' was expected" : "',' or ']' was expected";
      return NULL;
    }
  }
  if (*p == '"') {
    j->type = J_STR;
    return (j->str = string()) ? j : NULL;
  }
  if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4)) {
    j->type = *p == 't' ? J_BOOL : J_NULL;
    j->num = *p == 't';
    p += 4;
    return j;
  }
  if (!strncmp(p, "false", 5)) {
    j->type = J_BOOL;
    p += 5;
    return j;
  }
  j->type = J_NUM;
  if (!number(&j->num)) {
    error = "a value was expected";
    return NULL;
  }
  return j;
}

static struct json *get(const struct json *o, const char *key)
{
  if (!o || o->type != J_OBJ)
    return NULL;
  for (size_t i = 0; i < o->n; i++)
    if (!strcmp(o->keys[i], key))
      return o->items[i];
  return NULL;
}

static const char *str(const struct json *o, const char *key)
{
  const struct json *v = get(o, key);
  return v && v->type == J_STR ? v->str : NULL;
}

static bool num(const struct json *o, const char *key, double *out)
{
  const struct json *v = get(o, key);
  if (!v || v->type != J_NUM)
    return false;
  *out = v->num;
  return true;
}

static int tap;
static void result(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void result(bool ok, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  printf("%sok %d - ", ok ? "" : "not ", ++tap);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

int main(int argc, char **argv)
{
  if (argc < 5) {
    fprintf(stderr, "usage: trace_check FILE RANKS KERNEL KERNELS\n");
    return 2;
  }
  int ranks = atoi(argv[2]), want_kernels = atoi(argv[4]);
  tap = argc > 5 ? atoi(argv[5]) - 1 : 0;
  const char *kernel = argv[3];
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    result(false, "the trace %s exists", argv[1]);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  size_t got = fread(text, 1, (size_t)size, f);
  fclose(f);
  text[got] = 0;
  p = text;
  struct json *root = value(0);
  if (root) {
    ws();
    if (*p)
      error = "text after the end", root = NULL;
  }
  result(root != NULL, "valid JSON (%ld bytes)%s%s", size, error ? ": " : "", error ? error : "");
  struct json *events = root ? get(root, "traceEvents") : NULL;
  bool format = events && events->type == J_ARR && events->n > 0;
  size_t bad = 0;
  for (size_t i = 0; format && i < events->n; i++) {
    const struct json *e = events->items[i];
    const char *ph = str(e, "ph");
    double pid, ts, dur;
    if (!ph || !num(e, "pid", &pid) || (strcmp(ph, "M") && !num(e, "ts", &ts)) ||
        (!strcmp(ph, "X") && (!num(e, "dur", &dur) || dur < 0)))
      bad++;
  }
  result(format && !bad, "trace event format: %zu events, %zu malformed",
         format ? events->n : 0, bad);
  if (!format)
    return 1;

  /* Device tracks: "device D: ..." named on the process of D's rank. */
  int ntracks = 0, device_rank[1024];
  for (int i = 0; i < 1024; i++)
    device_rank[i] = -1;
  for (size_t i = 0; i < events->n; i++) {
    const struct json *e = events->items[i];
    const char *name = str(e, "name"), *ph = str(e, "ph");
    double pid, tid;
    const char *tname = str(get(e, "args"), "name");
    unsigned d;
    if (ph && !strcmp(ph, "M") && name && !strcmp(name, "thread_name") && tname &&
        sscanf(tname, "device %u:", &d) == 1 && num(e, "pid", &pid) && num(e, "tid", &tid) &&
        d < 1024 && (unsigned)tid == d + 1) {
      device_rank[d] = (int)pid;
      ntracks++;
    }
  }
  result(ntracks >= ranks, "%d device tracks for %d ranks", ntracks, ranks);

  /* Kernels on the right track, marked actual by their owner, virtual or dropped elsewhere. */
  int kernels = 0, wrong = 0;
  for (size_t i = 0; i < events->n; i++) {
    const struct json *e = events->items[i];
    const char *name = str(e, "name"), *cat = str(e, "cat");
    double pid, tid, dev, cmd;
    if (!cat || strcmp(cat, "kernel") || !name || strcmp(name, kernel))
      continue;
    kernels++;
    if (!num(e, "pid", &pid) || !num(e, "tid", &tid) || !num(get(e, "args"), "device", &dev) ||
        !num(get(e, "args"), "command", &cmd) || dev >= 1024 || (unsigned)tid != (unsigned)dev + 1 ||
        device_rank[(unsigned)dev] != (int)pid) {
      wrong++;
      continue;
    }
    int actual = 0, elsewhere = 0;
    for (size_t k = 0; k < events->n; k++) {
      const struct json *m = events->items[k];
      const char *mph = str(m, "ph"), *mcat = str(m, "cat");
      double mpid, mcmd, mdev;
      if (!mph || strcmp(mph, "i") || !mcat || !num(m, "pid", &mpid) ||
          !num(get(m, "args"), "command", &mcmd) || mcmd != cmd ||
          !num(get(m, "args"), "device", &mdev) || mdev != dev)
        continue;
      if (!strcmp(mcat, "actual") && mpid == pid)
        actual++;
      else if ((!strcmp(mcat, "virtual") || !strcmp(mcat, "dropped")) && mpid != pid)
        elsewhere++;
    }
    if (actual != 1 || elsewhere != ranks - 1)
      wrong++;
  }
  result(kernels == want_kernels && !wrong,
         "%d %s slices (expected %d), %d not on their device's track or not marked alike",
         kernels, kernel, want_kernels, wrong);

  /* Flows: each send's arrow ends at one receive on another rank. */
  int starts = 0, matched = 0;
  for (size_t i = 0; i < events->n; i++) {
    const struct json *s = events->items[i];
    const char *ph = str(s, "ph"), *id = str(s, "id");
    double pid, fpid;
    if (!ph || strcmp(ph, "s") || !id || !num(s, "pid", &pid))
      continue;
    starts++;
    int ends = 0;
    for (size_t k = 0; k < events->n; k++) {
      const struct json *e = events->items[k];
      const char *eph = str(e, "ph"), *eid = str(e, "id");
      if (eph && !strcmp(eph, "f") && eid && !strcmp(eid, id) && num(e, "pid", &fpid) &&
          fpid != pid)
        ends++;
    }
    matched += ends == 1;
  }
  result(ranks == 1 || (starts > 0 && matched == starts),
         "%d transfers between ranks, %d with their arrow to the receiving rank", starts,
         matched);
  return 0;
}
