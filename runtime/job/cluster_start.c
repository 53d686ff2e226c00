/* Starting the job (runtime/job/cluster_start.h): MPI start-up, device sharing on a node, the
 * device exchange, and the end of the job at exit. */
#include "config.h"

#include "runtime/job/cluster_start.h"
#include "runtime/job/cluster_impl.h"
#include "runtime/base/cuda.h"

#include <dlfcn.h>
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/base/backend.h"
#include "runtime/base/env.h"
#include "runtime/base/log.h"
#include "runtime/job/check.h"
#include "runtime/job/stats.h"
#include "runtime/job/trace.h"
#include "runtime/job/transport.h"
#include "runtime/job/turns.h"

static bool mpi_owned; /* Tutti started MPI and finalizes it */
static MPI_Comm world = MPI_COMM_NULL;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool init_done;
static atomic_bool backends_opened; /* tt_cluster_device_load opened them here */

/* Device queries whose answers travel with a device's description: every standard one of
 * OpenCL 1.0 to 3.0 and the vendors' (NVIDIA 0x4000.., AMD 0x4030.., Intel 0x4190..); those a
 * backend does not answer are left out and answer CL_INVALID_VALUE everywhere. */
static const struct {
  cl_uint first, last;
} info_ranges[] = {{0x1000, 0x1080}, {0x4000, 0x4060}, {0x4190, 0x41a0}};

static bool in_mpi_rank(void)
{
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

/* The preloaded shim (tools/mpishim.c), when tutti-run put it there. */
static int (*shim_initializing)(void);
static void (*shim_register)(int, void (*)(void));

static void find_shim(void)
{
  shim_initializing = (int (*)(void))dlsym(RTLD_DEFAULT, "tutti_shim_initializing");
  shim_register = (void (*)(int, void (*)(void)))dlsym(RTLD_DEFAULT, "tutti_shim_register");
}

/* The program is about to finalize the MPI it started: Tutti's traffic stops first. */
static void before_program_finalize(void)
{
  tt_check_finish();
  tt_trace_finish();
  tt_transport_goodbye();
  tt_transport_stop();
  if (world != MPI_COMM_NULL)
    MPI_Comm_free(&world);
}

/* Registered when MPI starts and again once the backends are loaded: exit handlers run in
 * reverse order, so the second registration runs before the drivers' own (NVIDIA's tears
 * its worker threads down at exit), while commands still complete and owed sends still go;
 * whichever runs first does the work. */
static void at_exit(void)
{
  static atomic_bool left;
  if (atomic_exchange(&left, true))
    return;
  int fin = 0;
  MPI_Finalized(&fin);
  if (fin)
    return;
  tt_check_finish();
  tt_trace_finish();
  TT_LOG(TT_LOG_MPI, "leaving: goodbye to the other ranks");
  tt_transport_goodbye();
  tt_transport_stop();
  TT_LOG(TT_LOG_MPI, "leaving: transport stopped");
  if (world != MPI_COMM_NULL)
    MPI_Comm_free(&world);
  if (mpi_owned)
    PMPI_Finalize();
  TT_LOG(TT_LOG_MPI, "leaving: MPI finalized");
}

static bool start_mpi(void)
{
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    return false;
  if (!initialized) {
    int provided = 0;
    /* PMPI: the shim's MPI_Init_thread is the program's. */
    if (PMPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
      TT_WARN("MPI_Init_thread failed: running as a job of one rank");
      return false;
    }
    mpi_owned = true;
    if (provided < MPI_THREAD_MULTIPLE)
      TT_WARN("the MPI library gives thread level %d, not MPI_THREAD_MULTIPLE: transfers "
              "between ranks may fail", provided);
  } else {
    int provided = 0;
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE)
      TT_WARN("the program started MPI at thread level %d; Tutti needs MPI_THREAD_MULTIPLE "
              "(call MPI_Init_thread, or let Tutti start MPI)", provided);
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &world);
  MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
  MPI_Comm_rank(world, &tt_job.rank);
  MPI_Comm_size(world, &tt_job.size);
  tt_log_set_rank(tt_job.rank);
  if (shim_register)
    shim_register(mpi_owned, before_program_finalize);
  else if (!mpi_owned)
    TT_WARN("the program started MPI without tutti-run's libtutti-mpi.so: its MPI_Finalize "
            "must come after its last OpenCL call");
  atexit(at_exit);
  return true;
}

static void append(unsigned char **buf, size_t *len, size_t *cap, const void *p, size_t n)
{
  if (*len + n > *cap) {
    size_t c = *cap ? *cap * 2 : 4096;
    while (c < *len + n)
      c *= 2;
    unsigned char *b = realloc(*buf, c);
    if (!b) {
      TT_WARN("out of memory describing devices");
      abort();
    }
    *buf = b;
    *cap = c;
  }
  memcpy(*buf + *len, p, n);
  *len += n;
}

/* Appends the description of one actual device: its header, and with answers, its answers
 * to every device query (read in jobs of several ranks; one rank asks its backends). */
void tt_cluster_describe(struct _cl_device_id *d, bool answers, unsigned char **buf,
                         size_t *len, size_t *cap)
{
  size_t start = *len;
  cl_uint total = 0;
  append(buf, len, cap, &total, sizeof total);
  struct tt_wire_device h;
  memset(&h, 0, sizeof h);
  h.bp_index = d->bp_index;
  h.native_index = d->native_index;
  h.type = d->type;
  h.on_cores = d->on_cores;
  h.cuda = d->cuda;
  h.cuda_peers = d->cuda_peers;
  memcpy(h.gpu_copies, d->gpu_copies, sizeof h.gpu_copies);
  memcpy(h.host, d->host, sizeof h.host);
  memcpy(h.backend, d->backend, sizeof h.backend);
  memcpy(h.backend_platform, d->backend_platform, sizeof h.backend_platform);
  append(buf, len, cap, &h, sizeof h);
  unsigned char value[8192];
  for (size_t r = 0; answers && r < sizeof info_ranges / sizeof info_ranges[0]; r++)
    for (cl_uint p = info_ranges[r].first; p < info_ranges[r].last; p++) {
      size_t size = 0;
      if (d->bp->d->clGetDeviceInfo(d->native, p, 0, NULL, &size) != CL_SUCCESS ||
          size > sizeof value ||
          d->bp->d->clGetDeviceInfo(d->native, p, size, value, NULL) != CL_SUCCESS)
        continue;
      cl_uint rec[2] = {p, (cl_uint)size};
      append(buf, len, cap, rec, sizeof rec);
      append(buf, len, cap, value, size);
    }
  total = (cl_uint)(*len - start);
  memcpy(*buf + start, &total, sizeof total);
}

/* This rank's share of the node's devices: local rank i of k takes every k-th one; with
 * fewer devices than ranks, ranks share them. */
static bool mine(cl_uint j, cl_uint n, int local_rank, int local_size)
{
  if (n >= (cl_uint)local_size)
    return j % (cl_uint)local_size == (cl_uint)local_rank;
  return j == (cl_uint)local_rank % n;
}

/* Fills a device of the table from its description (owner rank r; actual: r is this one). */
void tt_cluster_from_description(struct _cl_device_id *d, const unsigned char *desc, int r,
                                 bool actual)
{
  cl_uint total;
  struct tt_wire_device h;
  memcpy(&total, desc, sizeof total);
  memcpy(&h, desc + sizeof total, sizeof h);
  d->rank = r;
  d->actual = actual;
  d->bp_index = h.bp_index;
  d->native_index = h.native_index;
  d->type = h.type;
  d->on_cores = h.on_cores != 0;
  d->cuda = h.cuda;
  d->cuda_peers = h.cuda_peers;
  memcpy(d->gpu_copies, h.gpu_copies, sizeof d->gpu_copies);
  d->gpu_copies[sizeof d->gpu_copies - 1] = 0;
  memcpy(d->host, h.host, sizeof d->host);
  memcpy(d->backend, h.backend, sizeof d->backend);
  memcpy(d->backend_platform, h.backend_platform, sizeof d->backend_platform);
  d->info = malloc(total);
  if (d->info)
    memcpy(d->info, desc, total);
  d->info_len = d->info ? total : 0;
}

/* The node's catalogue (local rank 0, or a job of one rank): {u32 nbp, per backend its
 * {short name, name, library, u32 devices}, u32 ndevices, per device its description}. */
struct catalogue_backend {
  char short_name[32];
  char name[128];
  char library[256];
  cl_uint ndevices;
};

static struct catalogue_backend *node_backends;
static cl_uint nnode_backends;

static void node_catalogue(bool answers, unsigned char **buf, size_t *len)
{
  size_t cap = 0;
  cl_uint nbp = tt_backend_discover(), ndev = 0;
  append(buf, len, &cap, &nbp, sizeof nbp);
  for (cl_uint i = 0; i < nbp; i++) {
    struct tt_backend_platform *bp = tt_backend_get(i);
    struct catalogue_backend b;
    memset(&b, 0, sizeof b);
    snprintf(b.short_name, sizeof b.short_name, "%s", bp->short_name);
    snprintf(b.name, sizeof b.name, "%s", bp->name);
    snprintf(b.library, sizeof b.library, "%s", bp->library ? bp->library : "");
    b.ndevices = bp->ndevices;
    append(buf, len, &cap, &b, sizeof b);
    ndev += bp->ndevices;
  }
  append(buf, len, &cap, &ndev, sizeof ndev);
  cl_device_type forced = tt_env()->device_type;
  bool engines = false;
  char why[200] = "the node has no device";
  for (cl_uint i = 0; i < nbp; i++) {
    struct tt_backend_platform *bp = tt_backend_get(i);
    for (cl_uint k = 0; k < bp->ndevices; k++) {
      struct _cl_device_id d;
      memset(&d, 0, sizeof d);
      d.bp = bp;
      d.bp_index = i;
      d.native_index = k;
      d.native = bp->devices[k];
      cl_device_type t = CL_DEVICE_TYPE_CPU;
      TT_NCALL(bp, clGetDeviceInfo, d.native, CL_DEVICE_TYPE, sizeof t, &t, NULL);
      d.type = forced ? forced : t & ~(cl_device_type)CL_DEVICE_TYPE_DEFAULT;
      d.on_cores = (t & CL_DEVICE_TYPE_CPU) != 0;
      d.cuda = tt_cuda_device_of(bp, d.native, d.gpu_copies, sizeof d.gpu_copies,
                                 &d.cuda_peers);
      engines |= d.cuda >= 0;
      if (i == 0 && k == 0)
        snprintf(why, sizeof why, "device 0 of the node: %s", d.gpu_copies);
      snprintf(d.host, sizeof d.host, "%s", tt_job.hostname);
      snprintf(d.backend, sizeof d.backend, "%s", bp->short_name);
      snprintf(d.backend_platform, sizeof d.backend_platform, "%s", bp->name);
      tt_cluster_describe(&d, answers, buf, len, &cap);
    }
  }
  /* Asked for by name: say when nothing on this node can take it (once, by its first rank). */
  if (tt_env()->cuda == TT_CUDA_ON && !engines)
    TT_WARN("TUTTI_CUDA=on, but no device of %s moves bytes by the copy engines (%s)",
            tt_job.hostname, why);
}

/* Keeps the catalogue's backends (CL_PLATFORM_TUTTI_BACKENDS); returns its device count. */
static cl_uint catalogue_parse(const unsigned char *cat)
{
  cl_uint nbp;
  memcpy(&nbp, cat, sizeof nbp);
  node_backends = calloc(nbp ? nbp : 1, sizeof *node_backends);
  if (node_backends) {
    memcpy(node_backends, cat + sizeof nbp, nbp * sizeof *node_backends);
    nnode_backends = nbp;
  }
  cl_uint ndev;
  memcpy(&ndev, cat + sizeof nbp + nbp * sizeof(struct catalogue_backend), sizeof ndev);
  return ndev;
}

static const unsigned char *catalogue_devices(const unsigned char *cat)
{
  cl_uint nbp;
  memcpy(&nbp, cat, sizeof nbp);
  return cat + sizeof nbp + nbp * sizeof(struct catalogue_backend) + sizeof(cl_uint);
}

size_t tt_cluster_backends_text(char *buf, size_t cap)
{
  size_t len = 0;
  if (cap)
    buf[0] = 0;
  for (cl_uint i = 0; i < nnode_backends && len < cap; i++) {
    struct catalogue_backend *b = &node_backends[i];
    len += (size_t)snprintf(buf + len, cap - len, "%s%s: %s (%s), %u device%s", i ? "\n" : "",
                            b->short_name, b->name, b->library, b->ndevices,
                            b->ndevices == 1 ? "" : "s");
  }
  return len;
}

cl_int tt_cluster_device_load(cl_device_id d)
{
  if (!d->actual || d->bp)
    return CL_SUCCESS;
  static pthread_mutex_t loading = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&loading);
  cl_int err = CL_SUCCESS;
  if (!d->bp) {
    bool first = tt_backend_discover() && !atomic_exchange(&backends_opened, true);
    /* The drivers' exit handlers are now registered: Tutti's must run before them; and
     * their signal handlers too (NVIDIA's, Open MPI's): Tutti's stack printing goes first,
     * then theirs (wherever init installed it: a job of one rank under tutti-run too). */
    if (first && tt_cluster_distributed())
      atexit(at_exit);
    if (first)
      tt_log_crash_handler_again();
    struct tt_backend_platform *bp =
        d->bp_index < tt_backend_discover() ? tt_backend_get(d->bp_index) : NULL;
    if (!bp || strcmp(bp->name, d->backend_platform) || d->native_index >= bp->ndevices) {
      TT_WARN("rank %d opened its backends but found no device %u of '%s' there, as the first "
              "rank of its node did (is the environment the same for every rank of a node?)",
              tt_job.rank, d->native_index, d->backend_platform);
      err = CL_DEVICE_NOT_AVAILABLE;
    } else {
      d->native = bp->devices[d->native_index];
      d->bp = bp;
    }
  }
  pthread_mutex_unlock(&loading);
  return err;
}

/* MPI and the transport, without the devices: the first OpenCL call or the host layer's
 * first agreement (runtime/job/host.c) starts them. Caller holds init_lock. */
static bool job_started, job_distributed;

static bool start_job(void)
{
  if (job_started)
    return job_distributed;
  job_started = true;
  gethostname(tt_job.hostname, sizeof tt_job.hostname - 1);
  job_distributed = in_mpi_rank() && start_mpi();
  if (job_distributed) {
    if (tt_transport_start(&world) != 0)
      TT_WARN("cannot start the transport thread");
    tt_check_start();
    tt_turns_start();
  }
  tt_trace_start();
  if (tt_trace_on && !job_distributed)
    atexit(tt_trace_finish);
  return job_distributed;
}

/* The node's device catalogue, made by local rank 0 (cat there), given to every rank of the
 * node. */
static unsigned char *share_catalogue(MPI_Comm node, int local_rank, unsigned char *cat,
                                      size_t catlen)
{
  unsigned long long n = catlen;
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, node);
  if (local_rank != 0 && !(cat = malloc(n ? n : 1))) {
    TT_WARN("out of memory for the node's device catalogue");
    MPI_Abort(world, 1);
  }
  catlen = n;
  for (size_t at = 0; at < catlen; at += (size_t)1 << 30)
    MPI_Bcast(cat + at, (int)(catlen - at < ((size_t)1 << 30) ? catlen - at : (size_t)1 << 30),
              MPI_BYTE, 0, node);
  static const size_t fields[] = {offsetof(struct catalogue_backend, short_name),
                                  offsetof(struct catalogue_backend, name),
                                  offsetof(struct catalogue_backend, library)};
  static const size_t sizes[] = {sizeof((struct catalogue_backend *)0)->short_name,
                                 sizeof((struct catalogue_backend *)0)->name,
                                 sizeof((struct catalogue_backend *)0)->library};
  const char *why = tt_wire_catalogue_check(cat, catlen, sizeof(struct catalogue_backend), fields,
                                            sizes, 3);
  if (why) {
    MPI_Group g_node, g_world;
    int zero = 0, first = -1;
    MPI_Comm_group(node, &g_node);
    MPI_Comm_group(world, &g_world);
    MPI_Group_translate_ranks(g_node, 1, &zero, g_world, &first);
    tt_transport_check_what(first, "the node's device catalogue", why);
  }
  return cat;
}

/* This rank's share of the node's catalogue of nlocal_all devices (all of them without ranks
 * sharing the node), its backends' handles taken where it opened them already: *n of them. */
static struct _cl_device_id *own_devices(const unsigned char *cat, cl_uint nlocal_all,
                                         bool distributed, int local_rank, int local_size,
                                         cl_uint *n)
{
  struct _cl_device_id *own = calloc(nlocal_all ? nlocal_all : 1, sizeof *own);
  const unsigned char *q = catalogue_devices(cat);
  for (cl_uint j = 0; j < nlocal_all; j++) {
    cl_uint total;
    memcpy(&total, q, sizeof total);
    if (!distributed || mine(j, nlocal_all, local_rank, local_size)) {
      struct _cl_device_id *d = &own[(*n)++];
      tt_cluster_from_description(d, q, tt_job.rank, true);
      if (!distributed || local_rank == 0)
        tt_cluster_device_load(d); /* opened already: just the handles */
    }
    q += total;
  }
  return own;
}

/* The job's device table: every rank's own devices (own, nown of them), exchanged, in rank
 * order; this rank's keep the backend handles it has. */
static void job_table(struct _cl_device_id *own, cl_uint nown)
{
  unsigned char *buf = NULL;
  size_t len = 0, cap = 0;
  cl_uint count = nown;
  append(&buf, &len, &cap, &count, sizeof count);
  for (cl_uint i = 0; i < nown; i++)
    append(&buf, &len, &cap, own[i].info, own[i].info_len);
  void *all = NULL;
  size_t *lens = NULL;
  if (tt_transport_allgatherv(buf, len, &all, &lens) != 0) {
    TT_WARN("the device exchange between ranks failed");
    MPI_Abort(world, 1);
  }
  free(buf);
  /* Check, count, then fill the table in rank order. */
  unsigned char *p = all;
  tt_job.ntable = 0;
  for (int r = 0; r < tt_job.size; r++) {
    cl_uint c;
    tt_transport_check_what(r, "its devices", tt_wire_devices_check(p, lens[r], &c));
    tt_job.ntable += c;
    p += lens[r];
  }
  tt_job.table = calloc(tt_job.ntable ? tt_job.ntable : 1, sizeof *tt_job.table);
  p = all;
  cl_uint t = 0;
  for (int r = 0; r < tt_job.size; r++) {
    unsigned char *q = p + sizeof(cl_uint);
    cl_uint c;
    memcpy(&c, p, sizeof c);
    for (cl_uint i = 0; i < c; i++, t++) {
      cl_uint total;
      memcpy(&total, q, sizeof total);
      struct _cl_device_id *d = &tt_job.table[t];
      if (r == tt_job.rank) {
        /* Its backend handles, when opened already. */
        d->bp = own[i].bp;
        d->native = own[i].native;
        free(own[i].info);
      }
      tt_cluster_from_description(d, q, r, r == tt_job.rank);
      q += total;
    }
    p += lens[r];
  }
  free(all);
  free(lens);
  free(own);
}

static void init(void)
{
  if (!tt_platform.obj.dispatch)
    tt_object_init(&tt_platform.obj, TT_PLATFORM, NULL);
  /* Its exit reports (TUTTI_STATS, TUTTI_DEBUG=leak) registered before the job's own exit
   * handler, so that they run after it: once the transport stopped, no message under way
   * still holds an object (an event of a status batch was listed as alive: the API fuzzer). */
  tt_stats_start();
  bool distributed = start_job();
  /* Crash reports and SIGQUIT's stacks in jobs of several ranks, and in a job of one that
   * tutti-run started (TUTTI_OUTPUT): never behind the back of a program run on its own. */
  if (distributed || getenv("TUTTI_OUTPUT"))
    tt_log_crash_handler();
  int local_rank = 0, local_size = 1;
  MPI_Comm node = MPI_COMM_NULL;
  if (distributed) {
    MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, tt_job.rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_size(node, &local_size);
  }
  /* The node's devices: in a job of several ranks, local rank 0 alone opens the backends to
   * describe them to the node; every rank takes its share from that catalogue (each gets at
   * least one device where the node has any). The other ranks open their backends meanwhile,
   * before they wait for the catalogue (opening a driver takes a while): opened at their
   * first context instead, they reached it that much later than the first rank, whose first
   * read reaching every rank then waited for them (doc/testing.md, "Latest figures"). On a thread
   * of their own they would share their core with the main thread's spinning wait for the
   * catalogue. */
  unsigned char *cat = NULL;
  size_t catlen = 0;
  if (distributed && local_rank != 0)
    tt_backend_discover();
  if (!distributed || local_rank == 0)
    node_catalogue(distributed, &cat, &catlen);
  if (distributed) {
    cat = share_catalogue(node, local_rank, cat, catlen);
    MPI_Comm_free(&node);
    atexit(at_exit);
  }
  cl_uint nlocal_all = catalogue_parse(cat), nown = 0;
  struct _cl_device_id *own = own_devices(cat, nlocal_all, distributed, local_rank, local_size,
                                          &nown);
  free(cat);
  /* A rank none of whose devices computes on the host's cores may poll for the whole of a
   * host wait (runtime/job/transport.h). */
  bool on_cores = false;
  for (cl_uint i = 0; i < nown; i++)
    on_cores |= own[i].on_cores;
  if (distributed)
    tt_transport_kernels_on_cores(on_cores || nown == 0);
  /* The backends' lines count the node's devices; this says which are the rank's. */
  TT_LOG(TT_LOG_BACKEND, "rank %d (local rank %d of %d): %u of the node's %u device(s) are "
         "this rank's%s%s", tt_job.rank, local_rank, local_size, nown, nlocal_all,
         nlocal_all < (cl_uint)local_size ? " (fewer devices than ranks: ranks share them)" : "",
         distributed && !on_cores && nown ? "; none computes on the host's cores: its host "
                                            "waits for messages poll throughout"
                                          : "");
  if (!distributed) {
    tt_job.table = own;
    tt_job.ntable = nown;
  } else {
    job_table(own, nown);
  }
  for (cl_uint i = 0; i < tt_job.ntable; i++) {
    tt_object_init(&tt_job.table[i].obj, TT_DEVICE, NULL);
    tt_job.table[i].index = i;
  }
  /* One device of the platform carries CL_DEVICE_TYPE_DEFAULT: the first. */
  if (tt_job.ntable)
    tt_job.table[0].type |= CL_DEVICE_TYPE_DEFAULT;
  if (distributed)
    TT_LOG(TT_LOG_MPI, "rank %d of %d (local %d of %d): %u device(s) in the job", tt_job.rank,
           tt_job.size, local_rank, local_size, tt_job.ntable);
}

bool tt_cluster_start_job(void)
{
  pthread_mutex_lock(&init_lock);
  find_shim();
  bool inside_mpi_init = shim_initializing && shim_initializing();
  bool d = !inside_mpi_init && start_job();
  pthread_mutex_unlock(&init_lock);
  return d;
}

void tt_cluster_init(void)
{
  if (atomic_load_explicit(&init_done, memory_order_acquire))
    return;
  pthread_mutex_lock(&init_lock);
  if (!atomic_load(&init_done)) {
    find_shim();
    /* Called from inside MPI_Init (hwloc loads every OpenCL driver there): show no devices
     * for now and start for real at the program's first call. */
    if (shim_initializing && shim_initializing()) {
      pthread_mutex_unlock(&init_lock);
      return;
    }
    init();
    atomic_store_explicit(&init_done, true, memory_order_release);
  }
  pthread_mutex_unlock(&init_lock);
}
