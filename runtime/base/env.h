/* All of Tutti's settings: environment variables read once, at the first OpenCL call.
 * doc/environment.md lists each one. */
#ifndef TUTTI_ENV_H
#define TUTTI_ENV_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/base/cl.h"

enum tt_log_category {
  TT_LOG_ERR = 1u << 0,     /* every refused call, with the clause that refused it */
  TT_LOG_WARN = 1u << 1,    /* misconfiguration and degraded behaviour */
  TT_LOG_BACKEND = 1u << 2, /* vendor libraries, platforms and devices found */
  TT_LOG_PLAN = 1u << 3,    /* consistency decisions: transfers, dependencies */
  TT_LOG_SCHED = 1u << 4,   /* commands issued to backends */
  TT_LOG_MM = 1u << 5,      /* device memory */
  TT_LOG_MPI = 1u << 6,     /* MPI traffic */
  TT_LOG_LEAK = 1u << 7,    /* objects still alive at exit */
};

/* TUTTI_DOMAINS: which devices of a rank share memory (icd/icd.h, tt_domain_own). */
enum { TT_DOMAINS_AUTO, TT_DOMAINS_BACKEND, TT_DOMAINS_DEVICE };

enum { TT_CUDA_AUTO, TT_CUDA_ON, TT_CUDA_OFF };

struct tt_env {
  unsigned debug;             /* TUTTI_DEBUG bitmask */
  const char *backends;       /* TUTTI_BACKENDS: comma list of platform-name substrings */
  const char *keep_contexts;  /* TUTTI_KEEP_CONTEXTS: backends whose native contexts are kept
                               * for reuse (runtime/program/context.c); default "nvidia", "none" */
  const char *backend_vendors;/* TUTTI_BACKEND_VENDORS: vendors directory to read */
  const char *backend_libs;   /* TUTTI_BACKEND_LIBS: colon list of vendor library paths */
  cl_device_type device_type; /* TUTTI_DEVICE_TYPE: 0, or the type every device shows */
  int domains;                /* TUTTI_DOMAINS: TT_DOMAINS_AUTO (default), _BACKEND, _DEVICE */
  int cuda;                   /* TUTTI_CUDA: TT_CUDA_AUTO (default), _ON, _OFF: NVIDIA devices'
                               * memory through the CUDA driver, shared (runtime/base/cuda.h);
                               * auto and on alike but for how loudly its absence is said */
  bool cuda_thread_per_gpu;   /* TUTTI_CUDA_THREADS: gpu (default: a copy thread per GPU of
                               * the rank), or one (one thread for all) */
  int event_poll;             /* TUTTI_EVENT_POLL: -1 auto (backends whose callbacks come
                               * late: NVIDIA), 0 off, 1 on (every backend), 2 only (every
                               * backend, its own callbacks never asked for: tests) */
  int staging;                /* TUTTI_STAGING: -1 auto, 0 off (maps), 1 on (pinned staging) */
  bool stats;                 /* TUTTI_STATS: print counts at exit */
  bool check;                 /* TUTTI_CHECK: divergence detection (default on) */
  const char *trace;          /* TUTTI_TRACE: file for the job's trace, or NULL */
  cl_device_type aggregate;   /* TUTTI_AGGREGATE: 0 none, else the type of the devices the
                               * aggregate device spans (CL_DEVICE_TYPE_ALL: all) */
  size_t piece;               /* TUTTI_PIECE: bytes per piece of a transfer between ranks */
  unsigned stress;            /* TUTTI_STRESS: 0 off, else the seed of random delays in the
                               * progress thread and MPI polling (finds races in tests) */
  const char *refuse;         /* TUTTI_REFUSE: the name of commands (a kernel's, else the
                               * entry point's) whose native enqueue fails as if the backend
                               * had refused it (tests), or NULL */
  const char *device_mem;     /* TUTTI_DEVICE_MEM as given (checked), or NULL: budgets of
                               * device memory (tt_env_device_mem) */
  size_t host_mem;            /* TUTTI_HOST_MEM: bytes of evicted data a rank keeps in its
                               * memory before the rest goes to files; 0: no limit */
  const char *spill_dir;      /* TUTTI_SPILL_DIR: where those files go (TMPDIR, else /tmp) */
  bool balance;               /* TUTTI_BALANCE (default on): split launches re-weighted from
                               * measured times (runtime/command/balance.c) */
  bool edges_first;           /* TUTTI_EDGES_FIRST (default on): a stencil's parts run the
                               * work-groups its neighbours read first (runtime/command/split.c) */
  size_t lookahead;           /* TUTTI_LOOKAHEAD: bytes of windows brought back ahead of use
                               * per command; SIZE_MAX: not given (a quarter of the budget) */
  bool evict_lru;             /* TUTTI_EVICT=lru: evictions least recently used first, not
                               * the window needed again last (runtime/memory/window.c) */
  int auto_split;             /* TUTTI_AUTO_SPLIT: how kernels without annotations split
                               * (runtime/program/annotate.c) */
  const char *libclang;       /* TUTTI_LIBCLANG: the libclang to open, or NULL */
};

/* TUTTI_AUTO_SPLIT's values: merged writes too (the default), derived regions only, neither,
 * and every written buffer merged (to measure tier 2 where tier 1 applies). */
enum { TT_AUTO_MERGED, TT_AUTO_DERIVED, TT_AUTO_OFF, TT_AUTO_MERGE_ALL };

/* Reads the environment once (thread safe); later calls return the same settings. */
const struct tt_env *tt_env(void);

/* Parses a size in bytes with an optional K, M, G or T suffix (powers of 1024; "KiB",
 * "MB" and the like are read alike). Returns 0 and *out, or -1 for anything else. Exposed
 * for the unit tests. */
int tt_env_parse_bytes(const char *s, size_t *out);
/* Slurm's tasks per node ("4", "2(x3),1": SLURM_STEP_TASKS_PER_NODE): node's count (from
 * 0), or 0 when the list is malformed, NULL or too short. */
int tt_env_parse_tasks_per_node(const char *list, long node);

/* The budget a TUTTI_DEVICE_MEM value s gives device `index` (global device index): a size
 * for every device ("512M"), `index=size` pairs for some ("0=1G,3=256M"), or both ("1G,2=64M",
 * a pair winning over the plain size). Returns 1 and *out when s names a budget for it, 0
 * when not, -1 when s is malformed. Exposed for the unit tests. */
int tt_env_device_mem(const char *s, unsigned index, size_t *out);

/* Parses a TUTTI_DEBUG value ("err,warn,plan" or "all"); unknown words are reported through
 * *bad (first one) and ignored. Exposed for the unit tests. */
unsigned tt_env_parse_debug(const char *s, const char **bad, int *badlen);

/* Parses a TUTTI_DEVICE_TYPE value; 0 for empty, (cl_device_type)-1 for unknown. */
cl_device_type tt_env_parse_device_type(const char *s);

#endif
