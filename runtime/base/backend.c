/* Backend discovery: vendors directory, explicit library paths, and the places where GPU
 * drivers ship their OpenCL library without an .icd file. */
#include "config.h"

#include "runtime/base/backend.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/base/env.h"
#include "runtime/base/log.h"

#define MAX_LIBS 32
#define MAX_PLATFORMS 16

static struct tt_backend_platform platforms[MAX_PLATFORMS];
static cl_uint nplatforms;
static void *loaded[MAX_LIBS];
static cl_uint nloaded;
static pthread_once_t discover_once = PTHREAD_ONCE_INIT;

/* Libraries that GPU drivers install without registering an .icd file (the GPU machines
 * have NVIDIA's library but no nvidia.icd). */
static const char *const well_known[] = {
    "libnvidia-opencl.so.1",
    "/usr/local/nvidia/lib64/libnvidia-opencl.so.1",
    "/usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1",
    "/usr/lib64/libnvidia-opencl.so.1",
    "/usr/lib/aarch64-linux-gnu/libnvidia-opencl.so.1",
};

static void make_short_name(struct tt_backend_platform *bp)
{
  if (strcasestr(bp->name, "portable computing") || strcasestr(bp->name, "pocl")) {
    snprintf(bp->short_name, sizeof bp->short_name, "pocl");
    bp->serial_parts = true;
  }
  else if (strcasestr(bp->name, "nvidia")) {
    snprintf(bp->short_name, sizeof bp->short_name, "nvidia");
    bp->late_callbacks = true;
  }
  else if (strcasestr(bp->name, "amd"))
    snprintf(bp->short_name, sizeof bp->short_name, "amd");
  else if (strcasestr(bp->name, "intel"))
    snprintf(bp->short_name, sizeof bp->short_name, "intel");
  else {
    size_t i = 0;
    for (const char *c = bp->name; *c && i + 1 < sizeof bp->short_name && !isspace((unsigned char)*c); c++)
      bp->short_name[i++] = (char)tolower((unsigned char)*c);
    bp->short_name[i] = 0;
  }
}

static const char *const vendors[] = {"nvidia", "pocl", "amd", "intel"};

/* The vendor a library's file name shows ("libnvidia-opencl.so.1": nvidia), or NULL. */
static const char *vendor_of_library(const char *path)
{
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (size_t i = 0; i < sizeof vendors / sizeof vendors[0]; i++)
    if (strcasestr(base, vendors[i]))
      return vendors[i];
  return NULL;
}

/* Whether TUTTI_BACKENDS names vendors only ("pocl,nvidia"), not parts of platform names
 * ("Portable"): only then can a library be left out by its file name. */
static bool backends_by_vendor(const char *list)
{
  if (!list || !*list)
    return false;
  for (const char *s = list; *s;) {
    size_t n = strcspn(s, ",");
    bool known = n == 0;
    for (size_t i = 0; i < sizeof vendors / sizeof vendors[0] && !known; i++)
      known = strlen(vendors[i]) == n && !strncasecmp(s, vendors[i], n);
    if (!known)
      return false;
    s += n;
    if (*s == ',')
      s++;
  }
  return true;
}

static void load_library(const char *path, int quiet)
{
  /* Opening a driver costs a quarter of a second or more for some (PoCL 5 relocating LLVM,
   * NVIDIA's platform query starting CUDA), in every rank: a library whose name shows a
   * vendor that TUTTI_BACKENDS leaves out is not opened at all. */
  const char *vendor = vendor_of_library(path);
  if (vendor && backends_by_vendor(tt_env()->backends) &&
      !tt_backend_selected(tt_env()->backends, vendor, vendor)) {
    TT_LOG(TT_LOG_BACKEND, "backend library %s not opened: TUTTI_BACKENDS=%s leaves out %s",
           path, tt_env()->backends, vendor);
    return;
  }
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    if (!quiet)
      TT_WARN("backend library %s cannot be loaded: %s", path, dlerror());
    return;
  }
  for (cl_uint i = 0; i < nloaded; i++)
    if (loaded[i] == dl) {
      dlclose(dl);
      return;
    }
  /* Skip Tutti itself: a library whose clGetExtensionFunctionAddress lies in this very
   * library (the one this function is in). */
  void *gefa_sym = dlsym(dl, "clGetExtensionFunctionAddress");
  Dl_info found, self;
  bool ours = gefa_sym && dladdr(gefa_sym, &found) && dladdr((void *)load_library, &self) &&
              found.dli_fbase == self.dli_fbase;
  if (!gefa_sym || ours) {
    if (!gefa_sym && !quiet)
      TT_WARN("backend library %s has no clGetExtensionFunctionAddress: not an OpenCL ICD", path);
    dlclose(dl);
    return;
  }
  if (nloaded == MAX_LIBS) {
    dlclose(dl);
    return;
  }
  loaded[nloaded++] = dl;
  void *(*gefa)(const char *) = (void *(*)(const char *))gefa_sym;
  cl_int (*get_ids)(cl_uint, cl_platform_id *, cl_uint *) =
      (cl_int(*)(cl_uint, cl_platform_id *, cl_uint *))gefa("clIcdGetPlatformIDsKHR");
  if (!get_ids) {
    TT_WARN("backend library %s does not provide clIcdGetPlatformIDsKHR: skipped", path);
    return;
  }
  cl_uint n = 0;
  if (get_ids(0, NULL, &n) != CL_SUCCESS || n == 0) {
    TT_LOG(TT_LOG_BACKEND, "backend library %s has no platforms", path);
    return;
  }
  cl_platform_id ids[MAX_PLATFORMS];
  if (n > MAX_PLATFORMS)
    n = MAX_PLATFORMS;
  if (get_ids(n, ids, NULL) != CL_SUCCESS)
    return;
  for (cl_uint i = 0; i < n && nplatforms < MAX_PLATFORMS; i++) {
    struct tt_backend_platform *bp = &platforms[nplatforms];
    memset(bp, 0, sizeof *bp);
    bp->native = ids[i];
    bp->d = TT_NATIVE_DISPATCH(ids[i]);
    bp->dl = dl;
    if (!bp->d || !bp->d->clGetPlatformInfo || !bp->d->clGetDeviceIDs)
      continue;
    bp->d->clGetPlatformInfo(ids[i], CL_PLATFORM_NAME, sizeof bp->name, bp->name, NULL);
    if (!strcmp(bp->name, "Tutti"))
      continue;
    make_short_name(bp);
    if (!tt_backend_selected(tt_env()->backends, bp->name, bp->short_name)) {
      TT_LOG(TT_LOG_BACKEND, "platform '%s' from %s not selected by TUTTI_BACKENDS=%s", bp->name,
             path, tt_env()->backends);
      continue;
    }
    cl_uint nd = 0;
    if (bp->d->clGetDeviceIDs(ids[i], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0) {
      TT_LOG(TT_LOG_BACKEND, "platform '%s' from %s has no devices", bp->name, path);
      continue;
    }
    bp->devices = calloc(nd, sizeof *bp->devices);
    bp->library = strdup(path);
    if (!bp->devices || !bp->library ||
        bp->d->clGetDeviceIDs(ids[i], CL_DEVICE_TYPE_ALL, nd, bp->devices, NULL) != CL_SUCCESS) {
      free(bp->devices);
      free(bp->library);
      continue;
    }
    bp->ndevices = nd;
    TT_LOG(TT_LOG_BACKEND, "backend '%s' (%s) from %s: %u device(s) on this node", bp->name,
           bp->short_name, path, nd);
    nplatforms++;
  }
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
  return strcmp((*a)->d_name, (*b)->d_name);
}

static void read_vendors_dir(const char *dir)
{
  struct dirent **list;
  int n = scandir(dir, &list, NULL, by_name);
  if (n < 0) {
    TT_LOG(TT_LOG_BACKEND, "vendors directory %s cannot be read", dir);
    return;
  }
  for (int i = 0; i < n; i++) {
    const char *name = list[i]->d_name;
    size_t len = strlen(name);
    if (len > 4 && !strcmp(name + len - 4, ".icd")) {
      char path[4096], lib[4096];
      snprintf(path, sizeof path, "%s/%s", dir, name);
      FILE *f = fopen(path, "r");
      if (f) {
        /* One library name, maybe without a trailing newline (pocl.icd has none). */
        size_t got = fread(lib, 1, sizeof lib - 1, f);
        fclose(f);
        lib[got] = 0;
        char *s = lib;
        while (isspace((unsigned char)*s))
          s++;
        char *e = s + strlen(s);
        while (e > s && isspace((unsigned char)e[-1]))
          *--e = 0;
        if (*s && !strstr(s, "libtutti"))
          load_library(s, 0);
      }
    }
    free(list[i]);
  }
  free(list);
}

/* PoCL 3.1 fails (an assertion in pocl_driver_link_program, or CL_LINK_PROGRAM_FAILURE) when
 * processes compile and link the same program at once in one kernel cache: the ranks of a
 * node do exactly that. Before PoCL reads its settings, each rank of a node with several
 * gets a cache directory of its own under the usual one, tutti-rankL for local rank L. The
 * node still compiles each program once: before a build, a rank takes what the other ranks
 * of its node compiled since the job began into its own directory (tt_backend_pocl_adopt),
 * and the ranks building one program at once take turns (runtime/job/build.c, "Turns of a
 * build"). */
static char pocl_cache[4096], pocl_base[4096];
static int pocl_local = -1, pocl_nlocal;
static int64_t *pocl_seen; /* by local rank: when its directory was last looked through */

/* mkdir -p of path (a copy is changed). */
static void make_dirs(const char *path)
{
  char p[sizeof pocl_base];
  snprintf(p, sizeof p, "%s", path);
  for (char *c = p + 1; *c; c++)
    if (*c == '/') {
      *c = 0;
      mkdir(p, 0700);
      *c = '/';
    }
  mkdir(p, 0700);
}

/* The local rank's cache folder, held for the process's life by a lock beside it: a second
 * job on the node (two runs at once, tests run in parallel) takes the next free one, since
 * PoCL processes compiling into one folder at once crash (the reason for a folder per rank).
 * tutti-rankL first, then tutti-rankL.1, .2, ... False when none can be had. */
static bool claim_pocl_cache(void)
{
  make_dirs(pocl_base);
  for (int k = 0; k < 64; k++) {
    char suffix[16] = "";
    if (k)
      snprintf(suffix, sizeof suffix, ".%d", k);
    char lock[sizeof pocl_cache + 8];
    if (snprintf(pocl_cache, sizeof pocl_cache, "%s/tutti-rank%d%s", pocl_base, pocl_local,
                 suffix) >= (int)sizeof pocl_cache ||
        snprintf(lock, sizeof lock, "%s.lock", pocl_cache) >= (int)sizeof lock)
      return false;
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
      return false;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
      return true; /* fd stays open: the lock lasts as long as the process */
    close(fd);
  }
  return false;
}

static void own_pocl_cache(void)
{
  const char *local = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  const char *nlocal = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (!local)
    local = getenv("MPI_LOCALRANKID"); /* MPICH's Hydra */
  if (!nlocal)
    nlocal = getenv("MPI_LOCALNRANKS");
  char slurm[16];
  if (!local && !nlocal && (local = getenv("SLURM_LOCALID"))) { /* ranks srun started */
    const char *id = getenv("SLURM_NODEID");
    snprintf(slurm, sizeof slurm, "%d",
             id ? tt_env_parse_tasks_per_node(getenv("SLURM_STEP_TASKS_PER_NODE"), atol(id)) : 0);
    nlocal = slurm;
  }
  if (!local || !nlocal || atoi(nlocal) <= 1)
    return;
  const char *base = getenv("POCL_CACHE_DIR");
  if (base && *base)
    snprintf(pocl_base, sizeof pocl_base, "%s", base);
  else if (getenv("XDG_CACHE_HOME"))
    snprintf(pocl_base, sizeof pocl_base, "%s/pocl/kcache", getenv("XDG_CACHE_HOME"));
  else if (getenv("HOME"))
    snprintf(pocl_base, sizeof pocl_base, "%s/.cache/pocl/kcache", getenv("HOME"));
  else
    return;
  pocl_local = atoi(local);
  pocl_nlocal = atoi(nlocal);
  if (!claim_pocl_cache()) {
    pocl_cache[0] = 0;
    return;
  }
  setenv("POCL_CACHE_DIR", pocl_cache, 1);
  pocl_seen = calloc((size_t)pocl_nlocal, sizeof *pocl_seen);
  int64_t start = (int64_t)time(NULL);
  for (int i = 0; pocl_seen && i < pocl_nlocal; i++)
    pocl_seen[i] = start;
  TT_LOG(TT_LOG_BACKEND, "PoCL's kernel cache of this rank: %s", pocl_cache);
}

bool tt_backend_pocl_own_cache(void)
{
  tt_backend_discover();
  return pocl_cache[0] != 0;
}

/* a/b into out; false when it does not fit. */
static bool join(char *out, size_t cap, const char *a, const char *b)
{
  int n = snprintf(out, cap, "%s/%s", a, b);
  return n > 0 && (size_t)n < cap;
}

/* Links the files of one program's entry from/ into to/ that to/ lacks: what its build wrote
 * (the program's bitcode, its log), not the subfolders of its kernels, which PoCL fills while
 * the other rank's commands run (a kernel's code compiled at its first launch: a rank that
 * took such files half written aborted in its next build). */
static int adopt_tree(const char *from, const char *to)
{
  DIR *d = opendir(from);
  if (!d)
    return 0;
  int n = 0;
  mkdir(to, 0700);
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.' || !strncmp(e->d_name, "tempfile", 8))
      continue;
    char f[4096], t[4096];
    struct stat st;
    if (!join(f, sizeof f, from, e->d_name) || !join(t, sizeof t, to, e->d_name) ||
        stat(f, &st) != 0)
      continue;
    if (S_ISREG(st.st_mode) && access(t, F_OK) != 0 && link(f, t) == 0)
      n++;
  }
  closedir(d);
  return n;
}

/* What local rank L's cache gained since `since`: PoCL keeps a program under two levels of
 * its hash (XX/YYYY...), and only the levels whose entries changed are walked. */
static int adopt_from(const char *dir, int64_t since)
{
  DIR *top = opendir(dir);
  if (!top)
    return 0;
  int n = 0;
  for (struct dirent *e; (e = readdir(top));) {
    char l1[4096], o1[4096];
    struct stat st;
    if (e->d_name[0] == '.' || !join(l1, sizeof l1, dir, e->d_name) ||
        !join(o1, sizeof o1, pocl_cache, e->d_name) || stat(l1, &st) != 0 ||
        !S_ISDIR(st.st_mode) || st.st_mtime < since)
      continue;
    mkdir(o1, 0700);
    DIR *mid = opendir(l1);
    for (struct dirent *m; mid && (m = readdir(mid));) {
      char l2[4096], o2[4096];
      if (m->d_name[0] == '.' || !join(l2, sizeof l2, l1, m->d_name) ||
          !join(o2, sizeof o2, o1, m->d_name) || stat(l2, &st) != 0 || !S_ISDIR(st.st_mode) ||
          st.st_mtime < since)
        continue;
      n += adopt_tree(l2, o2);
    }
    if (mid)
      closedir(mid);
  }
  closedir(top);
  return n;
}

void tt_backend_pocl_adopt(void)
{
  if (!tt_backend_pocl_own_cache() || !pocl_seen)
    return;
  int n = 0;
  for (int l = 0; l < pocl_nlocal; l++) {
    char dir[4096];
    if (l == pocl_local ||
        snprintf(dir, sizeof dir, "%s/tutti-rank%d", pocl_base, l) >= (int)sizeof dir)
      continue;
    /* A second's margin: the clock's resolution in the directories' times. */
    int64_t now = (int64_t)time(NULL);
    n += adopt_from(dir, pocl_seen[l] - 1);
    pocl_seen[l] = now;
  }
  if (n)
    TT_LOG(TT_LOG_BACKEND, "PoCL's kernel cache: %d file(s) taken from the node's other ranks", n);
}

static void discover(void)
{
  const struct tt_env *env = tt_env();
  own_pocl_cache();
  read_vendors_dir(env->backend_vendors ? env->backend_vendors : "/etc/OpenCL/vendors");
  if (env->backend_libs) {
    char *copy = strdup(env->backend_libs);
    for (char *save = NULL, *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save))
      load_library(p, 0);
    free(copy);
  }
  for (size_t i = 0; i < sizeof well_known / sizeof well_known[0]; i++)
    load_library(well_known[i], 1);
  if (nplatforms == 0)
    TT_WARN("no OpenCL backend found: Tutti shows a platform without devices. Install a vendor "
            "driver (Debian: apt-get install pocl-opencl-icd; NVIDIA: the driver's OpenCL "
            "library), or name one with TUTTI_BACKEND_LIBS=/path/libvendor.so%s",
            env->backends ? " (TUTTI_BACKENDS may exclude the ones present)" : "");
  /* Drivers loaded just now may have taken signals Tutti handles (PoCL's LLVM). */
  tt_log_crash_handler_again();
}

cl_uint tt_backend_discover(void)
{
  pthread_once(&discover_once, discover);
  return nplatforms;
}

struct tt_backend_platform *tt_backend_get(cl_uint i)
{
  return i < nplatforms ? &platforms[i] : NULL;
}

bool tt_backend_polled(const cl_icd_dispatch *d)
{
  int how = tt_env()->event_poll;
  if (how >= 0)
    return how >= 1;
  for (cl_uint i = 0; i < nplatforms; i++)
    if (platforms[i].late_callbacks && TT_VENDOR_DISPATCH(platforms[i].native) == d)
      return true;
  return false;
}
