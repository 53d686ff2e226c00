/* Reads every TUTTI_* variable once. */
#include "config.h"

#include "runtime/base/env.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static struct tt_env env;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static const struct {
  const char *name;
  unsigned bit;
} debug_words[] = {
    {"err", TT_LOG_ERR},   {"warn", TT_LOG_WARN}, {"backend", TT_LOG_BACKEND},
    {"plan", TT_LOG_PLAN}, {"sched", TT_LOG_SCHED}, {"mm", TT_LOG_MM},
    {"mpi", TT_LOG_MPI},   {"leak", TT_LOG_LEAK},
};

unsigned tt_env_parse_debug(const char *s, const char **bad, int *badlen)
{
  unsigned mask = 0;
  if (bad)
    *bad = NULL;
  while (s && *s) {
    size_t n = strcspn(s, ",");
    if (n == 3 && !strncasecmp(s, "all", 3)) {
      mask = ~0u;
    } else if (n > 0) {
      bool found = false;
      for (size_t i = 0; i < sizeof debug_words / sizeof debug_words[0]; i++)
        if (strlen(debug_words[i].name) == n && !strncasecmp(s, debug_words[i].name, n)) {
          mask |= debug_words[i].bit;
          found = true;
        }
      if (!found && bad && !*bad) {
        *bad = s;
        *badlen = (int)n;
      }
    }
    s += n;
    if (*s == ',')
      s++;
  }
  return mask;
}

cl_device_type tt_env_parse_device_type(const char *s)
{
  if (!s || !*s)
    return 0;
  if (!strcasecmp(s, "gpu"))
    return CL_DEVICE_TYPE_GPU;
  if (!strcasecmp(s, "cpu"))
    return CL_DEVICE_TYPE_CPU;
  if (!strcasecmp(s, "accelerator"))
    return CL_DEVICE_TYPE_ACCELERATOR;
  return (cl_device_type)-1;
}

int tt_env_parse_tasks_per_node(const char *list, long node)
{
  if (!list || node < 0)
    return 0;
  for (const char *p = list;;) {
    char *end;
    errno = 0;
    long tasks = strtol(p, &end, 10), times = 1;
    if (end == p || !isdigit((unsigned char)*p) || errno || tasks > INT_MAX)
      return 0;
    if (!strncmp(end, "(x", 2)) {
      const char *t = end + 2;
      times = strtol(t, &end, 10);
      if (end == t || !isdigit((unsigned char)*t) || errno || times < 1 || *end++ != ')')
        return 0;
    }
    if (node < times)
      return (*end == ',' || !*end) ? (int)tasks : 0;
    node -= times;
    if (*end != ',')
      return 0;
    p = end + 1;
  }
}

int tt_env_parse_bytes(const char *s, size_t *out)
{
  if (!s || *s < '0' || *s > '9')
    return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno)
    return -1;
  int shift = 0;
  switch (*end) {
  case 'k': case 'K': shift = 10; break;
  case 'm': case 'M': shift = 20; break;
  case 'g': case 'G': shift = 30; break;
  case 't': case 'T': shift = 40; break;
  case '\0': break;
  default: return -1;
  }
  if (shift) {
    end++;
    if (*end == 'i' || *end == 'I')
      end++;
    if (*end == 'b' || *end == 'B')
      end++;
  }
  if (*end || (shift && v > (~0ULL >> shift)))
    return -1;
  *out = (size_t)(v << shift);
  return 0;
}

int tt_env_device_mem(const char *s, unsigned index, size_t *out)
{
  int found = 0;
  bool paired = false;
  char item[64];
  while (s && *s) {
    size_t n = strcspn(s, ",");
    if (n == 0 || n >= sizeof item)
      return -1;
    memcpy(item, s, n);
    item[n] = '\0';
    char *eq = strchr(item, '=');
    size_t v;
    if (eq) {
      *eq = '\0';
      char *end;
      errno = 0;
      unsigned long dev = strtoul(item, &end, 10);
      if (errno || end == item || *end || tt_env_parse_bytes(eq + 1, &v) != 0 || v == 0)
        return -1;
      if (dev == index) {
        *out = v;
        found = 1;
        paired = true;
      }
    } else {
      if (tt_env_parse_bytes(item, &v) != 0 || v == 0)
        return -1;
      if (!paired) {
        *out = v;
        found = 1;
      }
    }
    s += n;
    if (*s == ',' && !*++s)
      return -1;
  }
  return found;
}

static const char *nonempty(const char *name)
{
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

/* The place of variable name's value among words (a NULL-ended list, case-insensitive);
 * dflt when it is unset or empty. Anything else is reported and gives dflt. */
static int choice(const char *name, const char *const *words, int dflt)
{
  const char *v = nonempty(name);
  if (!v)
    return dflt;
  size_t n = 0;
  for (; words[n]; n++)
    if (!strcasecmp(v, words[n]))
      return (int)n;
  char list[128] = "";
  for (size_t i = 0; i < n; i++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", words[i]);
  fprintf(stderr, "[tutti] %s=%s is not one of %s: ignored\n", name, v, list);
  return dflt;
}

static void read_env(void)
{
  const char *bad = NULL;
  int badlen = 0;
  env.debug = tt_env_parse_debug(getenv("TUTTI_DEBUG"), &bad, &badlen);
  if (bad)
    fprintf(stderr, "[tutti] TUTTI_DEBUG: unknown category '%.*s' (known: err, warn, backend, "
                    "plan, sched, mm, mpi, leak, all)\n", badlen, bad);
  env.backends = nonempty("TUTTI_BACKENDS");
  env.keep_contexts = nonempty("TUTTI_KEEP_CONTEXTS");
  env.backend_vendors = nonempty("TUTTI_BACKEND_VENDORS");
  env.backend_libs = nonempty("TUTTI_BACKEND_LIBS");
  env.device_type = tt_env_parse_device_type(getenv("TUTTI_DEVICE_TYPE"));
  if (env.device_type == (cl_device_type)-1) {
    fprintf(stderr, "[tutti] TUTTI_DEVICE_TYPE=%s is not one of gpu, cpu, accelerator: ignored\n",
            getenv("TUTTI_DEVICE_TYPE"));
    env.device_type = 0;
  }
  const char *stats = getenv("TUTTI_STATS");
  env.stats = stats && *stats && strcmp(stats, "0") != 0;
  const char *check = getenv("TUTTI_CHECK");
  env.check = !(check && (!strcmp(check, "0") || !strcasecmp(check, "off")));
  if (check && *check && env.check && strcmp(check, "1") != 0 && strcasecmp(check, "on") != 0)
    fprintf(stderr, "[tutti] TUTTI_CHECK=%s is not one of on, off: the check stays on\n", check);
  env.trace = nonempty("TUTTI_TRACE");
  const char *stress = getenv("TUTTI_STRESS");
  if (stress && *stress) {
    char *end;
    unsigned long seed = strtoul(stress, &end, 10);
    if (*end || !seed)
      fprintf(stderr, "[tutti] TUTTI_STRESS=%s is not a positive number: no stress\n", stress);
    else
      env.stress = (unsigned)seed;
  }
  env.refuse = nonempty("TUTTI_REFUSE");
  static const int poll_of[] = {-1, 1, 0, 2};
  env.event_poll = poll_of[choice("TUTTI_EVENT_POLL",
                                  (const char *const[]){"auto", "on", "off", "only", NULL}, 0)];
  static const int staging_of[] = {-1, 1, 0};
  env.staging = staging_of[choice("TUTTI_STAGING", (const char *const[]){"auto", "on", "off", NULL}, 0)];
  env.piece = (size_t)4 << 20;
  const char *piece = nonempty("TUTTI_PIECE");
  if (piece) {
    size_t v = 0;
    if (tt_env_parse_bytes(piece, &v) != 0 || v < ((size_t)4 << 10) || v > ((size_t)1 << 30))
      fprintf(stderr, "[tutti] TUTTI_PIECE=%s is not a size from 4K to 1G: 4M it is\n", piece);
    else
      env.piece = v;
  }
  const char *aggregate = getenv("TUTTI_AGGREGATE");
  if (aggregate && *aggregate) {
    if (!strcasecmp(aggregate, "gpu"))
      env.aggregate = CL_DEVICE_TYPE_GPU;
    else if (!strcasecmp(aggregate, "cpu"))
      env.aggregate = CL_DEVICE_TYPE_CPU;
    else if (!strcasecmp(aggregate, "all"))
      env.aggregate = CL_DEVICE_TYPE_ALL;
    else
      fprintf(stderr, "[tutti] TUTTI_AGGREGATE=%s is not one of gpu, cpu, all: no aggregate "
              "device\n", aggregate);
  }
  env.device_mem = nonempty("TUTTI_DEVICE_MEM");
  size_t ignored;
  if (env.device_mem && tt_env_device_mem(env.device_mem, 0, &ignored) < 0) {
    fprintf(stderr, "[tutti] TUTTI_DEVICE_MEM=%s is not a size (512M) or device=size pairs "
            "(0=1G,2=256M): no budgets\n", env.device_mem);
    env.device_mem = NULL;
  }
  const char *host_mem = nonempty("TUTTI_HOST_MEM");
  if (host_mem && tt_env_parse_bytes(host_mem, &env.host_mem) != 0) {
    fprintf(stderr, "[tutti] TUTTI_HOST_MEM=%s is not a size: no limit\n", host_mem);
    env.host_mem = 0;
  }
  env.lookahead = SIZE_MAX;
  const char *lookahead = nonempty("TUTTI_LOOKAHEAD");
  if (lookahead && tt_env_parse_bytes(lookahead, &env.lookahead) != 0) {
    fprintf(stderr, "[tutti] TUTTI_LOOKAHEAD=%s is not a size: a quarter of each budget\n",
            lookahead);
    env.lookahead = SIZE_MAX;
  }
  env.spill_dir = nonempty("TUTTI_SPILL_DIR");
  if (!env.spill_dir)
    env.spill_dir = nonempty("TMPDIR");
  if (!env.spill_dir)
    env.spill_dir = "/tmp";
  env.balance = choice("TUTTI_BALANCE", (const char *const[]){"on", "off", NULL}, 0) == 0;
  env.edges_first = choice("TUTTI_EDGES_FIRST", (const char *const[]){"on", "off", NULL}, 0) == 0;
  env.auto_split = choice("TUTTI_AUTO_SPLIT",
                          (const char *const[]){"merged", "derived", "off", "merge-all", NULL},
                          TT_AUTO_MERGED);
  env.libclang = nonempty("TUTTI_LIBCLANG");
  env.evict_lru = choice("TUTTI_EVICT", (const char *const[]){"next-use", "lru", NULL}, 0) == 1;
  env.cuda = choice("TUTTI_CUDA", (const char *const[]){"auto", "on", "off", NULL}, TT_CUDA_AUTO);
  env.cuda_thread_per_gpu =
      choice("TUTTI_CUDA_THREADS", (const char *const[]){"one", "gpu", NULL}, 1) == 1;
  env.domains = choice("TUTTI_DOMAINS", (const char *const[]){"auto", "backend", "device", NULL},
                       TT_DOMAINS_AUTO);
}

const struct tt_env *tt_env(void)
{
  pthread_once(&env_once, read_env);
  return &env;
}
