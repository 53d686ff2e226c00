/* The object model shared by icd/ and runtime/: every cl_* handle Tutti hands out.
 *
 * Each object starts with the ICD dispatch pointer (the loader requires it), then the
 * common header of runtime/base/object.h. Objects that exist inside a backend hold one native
 * handle per memory domain of their context: a domain is one backend platform's context
 * (all PoCL devices of a context share one, an NVIDIA GPU is another). */
#ifndef TUTTI_INTERNAL_H
#define TUTTI_INTERNAL_H

#include "runtime/base/cl.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "runtime/base/env.h"
#include "runtime/base/object.h"

#define TT_API __attribute__((visibility("default")))
#define TT_NOT_ATTACHED UINT32_MAX

struct tt_backend_platform;
struct tt_rangemap;
struct tt_access;
struct tt_ann;
struct tt_split_memo;
struct tt_ann_param;
struct tt_ann_pragma;
struct tt_variant;
struct tt_distribution;
struct tt_spill;

struct _cl_platform_id {
  struct tt_object obj;
};

/* One entry of the global device table (runtime/job/cluster.h), the same on every rank. Actual
 * devices belong to this rank and carry a native handle; virtual devices belong to another
 * rank and answer queries from the description their owner sent at start-up. */
struct _cl_device_id {
  struct tt_object obj;
  cl_uint index;        /* position in the global device table */
  int rank;             /* owning rank */
  bool actual;          /* owned by this rank */
  cl_device_type type;  /* as presented (TUTTI_DEVICE_TYPE, DEFAULT bit) */
  bool on_cores;        /* its kernels run on its host's cores (natively a CPU device) */
  cl_uint bp_index;     /* index of its backend platform on the owning rank */
  cl_uint native_index; /* its place among that platform's devices */
  struct tt_backend_platform *bp; /* actual devices only, once loaded (tt_cluster_device_load) */
  cl_device_id native;            /* actual devices only, once loaded */
  char host[64];
  char backend[32];               /* backend short name ("pocl", "nvidia") */
  char backend_platform[128];     /* backend platform name */
  int cuda;                       /* its CUDA device on its host (runtime/base/cuda.h), or -1: its
                                   * memory is not shared through CUDA; every rank alike */
  uint32_t cuda_peers;            /* bit j: it and CUDA device j of its host reach each other's
                                   * memory (peer access); 0 where cuda is -1 */
  char gpu_copies[160];           /* how its bytes move to other GPUs of its host, and why
                                   * (CL_DEVICE_TUTTI_GPU_COPIES) */
  unsigned char *info;            /* the owner's answers to device queries (multi-rank jobs) */
  size_t info_len;
  /* The aggregate device (TUTTI_AGGREGATE, runtime/command/aggregate.c): its members, every device
   * of its type in the job; its other fields are its first member's. */
  cl_uint nmembers;
  cl_device_id *members;
  /* A sub-device (clCreateSubDevices, runtime/job/devices.c): the device it was made from and
   * the partition asked for (0-terminated); NULL for a device of the job's table. */
  cl_device_id parent;
  cl_device_partition_property partition[8];
};

/* A native in-order queue, shared by the Tutti queue that made it and by the access records
 * of commands issued on it (which may outlive that queue): released at the last reference. */
struct tt_nqueue {
  cl_command_queue native;
  const cl_icd_dispatch *d;
  atomic_uint refs;
  /* A command that may fail (its wait list held an event that can end in an error) was
   * issued here: the backend may fail the commands after it too (runtime/order/order.h). Plan
   * lock; never cleared. */
  bool may_fail;
  /* Commands issued on it, and the most of that count a clFinish on it covered (one that
   * ended well, runtime/command/queue.c): equal, nothing has been issued since the queue was
   * last empty. */
  atomic_uint_fast64_t issued, drained;
  /* User events of Tutti's gating commands here that another thread will set once bytes
   * from another rank are in (tt_nqueue_gate): a host wait waits for them before it waits
   * in the backend (tt_nqueue_wait_gates). */
  atomic_int gates;
  /* The native event of the last command done without a command of the backend here (a
   * migration of bytes in Tutti's memory, runtime/command/buffer.c), retained while it may
   * not be complete: the queue's next commands wait for it, as an in-order queue's would, and so
   * does clFinish. Set under the plan lock; clFinish reads it without the lock first, so
   * that a queue without one takes no lock. */
  _Atomic(cl_event) lazy;
};

/* A memory domain of a context: the devices of one backend platform on one rank (or one
 * device, TUTTI_DOMAINS=device). Local domains (this rank's) have a native context; remote
 * ones exist only in the plan, which decides the same for them on every rank. */
struct tt_domain {
  int rank;
  cl_uint bp_index;
  bool actual;                    /* this rank's (its native context and queues are here) */
  struct tt_backend_platform *bp; /* actual domains only */
  cl_context native;              /* actual domains only */
  struct native_ctx *native_ctx;  /* and who holds it (runtime/program/context.c) */
  struct tt_nqueue *internal; /* lazily made in-order queue for transfers */
  struct tt_nqueue *unmaps;   /* lazily made queue for the unmaps of transfer pieces: they
                               * wait for nothing, so nothing waits behind them */
  struct tt_staging *staging; /* pinned host memory for transfers (device-memory backends) */
  int host_unified;           /* -1 unknown, else CL_DEVICE_HOST_UNIFIED_MEMORY */
  int direct;                 /* -1 unknown, else whether buffers live in host memory Tutti
                               * allocates (tt_domain_direct_memory) */
  cl_device_id first_device;  /* Tutti device used for the internal queue */
  int cuda;                   /* first_device->cuda: its buffers live in CUDA memory (a
                               * domain of one device), or -1 */
  /* Spilling (runtime/memory/window.h, plan lock): bytes of windows on the domain's devices, and
   * the most Tutti keeps there (0 until first needed). */
  size_t held, budget;
  /* Host copies of evicted windows that came back: free for the next eviction read, which
   * goes on the internal queue after their writes (runtime/memory/window.c). */
  struct tt_spill *spill_blocks;
  /* Prefetch (runtime/memory/window.c): the window the domain's commands used last, by its buffer
   * (NULL: none) and a byte in it; every rank alike. Prefetching starts with the domain's
   * first eviction: until then every window is on its device. */
  cl_mem last_root;
  size_t last_at;
  bool evicted;
  /* Backends with serial_parts (runtime/base/backend.h): the last part of a split launch issued
   * on each of the domain's devices (by native_index; bp->ndevices entries, made at the
   * first), retained while it may not be complete; plan lock. */
  struct tt_last_part *last_part;
};

struct tt_last_part {
  cl_event ev;           /* its native event */
  struct tt_nqueue *nq;  /* the native queue it went to (a reference) */
  bool may_fail;         /* it may end in an error that is not the next part's */
};

struct _cl_context {
  struct tt_object obj;
  cl_uint ndevices;
  cl_device_id *devices;
  cl_uint ndomains;
  struct tt_domain *domains;
  cl_context_properties *props; /* as given, zero-terminated copy, or NULL */
  size_t nprops;                 /* entries in props, terminator included */
  void (CL_CALLBACK *notify)(const char *, const void *, size_t, void *);
  void *notify_data;
  /* The devices as the program listed them, the aggregate device among them when it was
   * (devices holds its members instead). */
  cl_device_id aggregate;
  cl_uint nuser_devices;
  cl_device_id *user_devices;
  /* Its windowed buffers (runtime/memory/window.h, plan lock): where eviction looks. */
  cl_mem *windowed;
  size_t nwindowed, capwindowed;
  /* Tutti's adding kernels of the collective reductions (runtime/command/collective.c), built
   * at the first reduction and kept with the context: they hold no reference on it. */
  _Atomic(cl_program) reduce;
  /* The program set a user event of it to an error: commands may fail through it on their
   * owner alone (through Tutti's ordering, or the backend's: PoCL fails an in-order queue's
   * later commands), so from then on blocking commands return their owner's result on every
   * rank (tt_cmd_drive) and reads to every rank complete with their owner's status. Alike on
   * every rank (program order). */
  atomic_bool may_fail;
};

/* A growable list of retained events. */
struct tt_events {
  cl_event *ev;
  size_t n, cap;
};

struct _cl_command_queue {
  struct tt_object obj;
  cl_context context;
  cl_device_id device;
  cl_uint domain;
  cl_command_queue_properties props;
  cl_command_queue native; /* nq->native */
  struct tt_nqueue *nq;
  /* Jobs of several ranks, guarded by obj.lock (runtime/order/event.h): the events handed to the
   * program for this queue's commands since their last status batch, alike on every rank
   * (program order); and this rank's reads whose bytes are still on their way (its own). */
  struct tt_events tracked, broadcasts;
  /* Another rank's in-order queue: the user events its commands wait for, directly or
   * through earlier commands, that this rank's host had not set yet (tt_event_gate). */
  struct tt_events gates;
  /* A queue of the aggregate device: it is its first member's queue (device), with a queue of its
   * own for every other member; kernels are split over them all (runtime/command/aggregate.c). */
  cl_device_id aggregate;
  cl_uint nmembers;
  cl_command_queue *members; /* [0] is the queue itself (not retained) */
  /* The program's references (its create and retains less its releases): when they end, at
   * the same program step on every rank, the member queues go; Tutti's own references (its
   * events') may end at any time, on each rank apart. */
  atomic_uint program_refs;
};

struct tt_map_record {
  void *ptr;
  cl_uint domain;
  bool writes;
  size_t offset, size;
  size_t origin[3], region[3]; /* an image's: the region mapped (into Tutti's copy, packed) */
  bool owned;     /* ptr is Tutti's copy (a map of another rank's device) */
  cl_event done;  /* with owned: the map's event, waited for before the copy goes */
  struct tt_map_record *next;
};

/* A buffer's distribution over devices (clSetBufferDistributionTUTTI, icd/split_api.c). */
struct tt_distribution {
  cl_uint kind, ndims;
  size_t elem_size, extents[3], chunk[3];
  cl_uint ndevices;
  cl_device_id *devices;
};

struct _cl_mem {
  struct tt_object obj;
  cl_context context;
  cl_mem_flags flags;
  size_t size;
  void *host_ptr;
  cl_mem parent;     /* sub-buffers: the buffer they were made from (retained) */
  cl_mem root;       /* the buffer owning consistency state (self for buffers) */
  size_t origin;     /* offset in root */
  bool transient;    /* Tutti's own, for one command (a reduction copy): prefetch does not
                      * follow its windows (runtime/memory/window.c) */
  cl_mem *native;    /* one per domain of the context */
  void **direct;     /* buffers: per domain, the host memory its native buffer lives in when
                      * Tutti allocated it (tt_domain_direct_memory), or NULL; whole array NULL
                      * when none */
  /* Consistency and ordering state: only in roots, guarded by the plan lock. */
  struct tt_rangemap *latest;   /* which domains hold the newest bytes of each range */
  struct tt_access *accesses;   /* recent commands touching the buffer, for conflict order,
                                 * by first byte (runtime/command/coherence.c) */
  size_t naccesses;
  size_t access_longest;        /* no access is longer */
  size_t access_prune_at;       /* accesses pruned again from this many */
  struct tt_map_record *maps;   /* live mappings (guarded by obj.lock) */
  /* clAttachBufferToDevice (roots only, plan lock): the domain that always holds the newest
   * bytes, or TT_NOT_ATTACHED; whether anything was ever written (else attaching zeroes). */
  cl_uint attached;
  bool written;
  atomic_uint map_count;
  /* clSetBufferDistributionTUTTI (roots only): how split launches place its parts. */
  struct tt_distribution *dist;
  /* Windowed roots (runtime/memory/window.h, plan lock): per domain, the native buffers holding its
   * bytes there; native[] and direct[] then stay NULL. */
  struct tt_window_set *windows;
  atomic_uint nsubs; /* roots: sub-buffers alive (they need native buffers of the whole) */
  /* clSetMemObjectDestructorCallback, newest first (the order they run in); obj.lock. */
  struct tt_destructor *destructors;
  /* Images (else NULL): runtime/memory/image.h. */
  struct tt_image *image;
};

/* An image as Tutti keeps it (runtime/memory/image.h): its bytes packed, rows of
 * desc.image_width pixels, slices of rows (of image_height rows; an array's layers are its
 * slices), so that the byte-range map and transfers treat it as bytes. Every use covers whole
 * rows. A 1D image made from a buffer shares that buffer's bytes: its root is the buffer's. */
struct tt_image {
  cl_image_format format;
  cl_image_desc desc;   /* pitches as given; desc.buffer the program's buffer (retained) */
  size_t pixel;         /* bytes of a pixel */
  size_t row, slice;    /* packed pitches */
  size_t rows, slices;  /* rows of a slice (1 for 1D images), slices (depth or layers) */
};

struct _cl_program {
  struct tt_object obj;
  cl_context context;   /* referenced, but by a context's own program (weak) */
  bool weak;
  cl_uint nnative;
  cl_program *native;   /* one per domain (nnative); NULL where the program has no device there */
  cl_uint ndevices;
  cl_device_id *devices;
  char *source;
  char *stripped;       /* the source without its `#pragma tutti` lines (what backends build) */
  struct tt_ann_pragma *pragmas; /* those lines (annotations/annotation.h) */
  size_t npragmas;
  char *ann_error;      /* the last build's annotation error ("kernel 'k', line 3, column 9:
                         * ..."): every device's build failed with it as log */
  char *options;        /* user's options of the last build (without Tutti's additions) */
  /* Its kernels' derived annotations (annotations/derive.h), made at the first launch that
   * needs one, for the source and options of the last build (obj.lock): nderived -1 with
   * derive_why when they cannot be made. */
  bool derive_done;
  struct tt_derived *derived;
  long nderived;
  char derive_why[256];
  atomic_uint nkernels; /* kernels alive: CL_INVALID_OPERATION for rebuilds */
  /* Build results of every device, as their owners reported them (multi-rank jobs): one
   * entry per device of the program. binary_type is every device's answer once `recorded`
   * (after a compile, link, build or creation from binaries, on every rank). */
  cl_build_status *status;
  cl_program_binary_type *binary_type;
  char **logs;
  bool recorded;
  /* What the last compile, link or build made (NONE: created from binaries, whose headers
   * tell each device's type): the answer where the backend's build succeeded, since backends
   * misname some (PoCL 3 calls a library a compiled object). */
  cl_program_binary_type made;
  /* A program made from binaries: each device's Tutti binary as given, answered for
   * CL_PROGRAM_BINARIES until the program is built (PoCL has none to give before). */
  unsigned char **given;
  size_t *given_len;
};

enum tt_arg_kind { TT_ARG_VALUE, TT_ARG_MEM, TT_ARG_LOCAL, TT_ARG_SAMPLER, TT_ARG_IMAGE };

struct tt_kernel_arg {
  enum tt_arg_kind kind;
  bool is_const;    /* const or __constant: the kernel only reads the buffer */
  bool known;       /* kind from argument info (else guessed from the value) */
  uint32_t size;    /* TT_ARG_VALUE: bytes of its type when known from its name, else 0;
                     * TT_ARG_LOCAL: bytes of the type it points to, when known */
  size_t local;     /* TT_ARG_LOCAL: bytes asked for */
  bool set;
  cl_mem mem;       /* TT_ARG_MEM value (may be NULL) */
  uint64_t mem_id;  /* id of mem when set, to detect a released and reused handle */
  void *value;      /* TT_ARG_VALUE: the bytes set (split launches evaluate annotations with
                     * them and set them on program variants) */
  size_t value_size;
};

/* What the launch checks need of a kernel on one device, from the device's owner at
 * clCreateKernel, so that every rank refuses a launch alike (clGetKernelWorkGroupInfo). */
struct tt_kernel_device {
  bool known;
  size_t wg_size, compile_wg[3], preferred_multiple;
  cl_ulong local_mem, private_mem;
  bool local_aligned; /* the backend aligns __local arguments (tt_kernel_local_bytes) */
};

struct _cl_kernel {
  struct tt_object obj;
  cl_program program;
  cl_context context;
  cl_kernel *native;  /* one per domain */
  bool *built_on;     /* by global device index: the program has an executable there (fixed
                       * while the kernel lives: no rebuild with kernels attached) */
  cl_uint nargs;
  struct tt_kernel_arg *args;
  struct tt_kernel_device *dev; /* by global device index */
  char *name;
  /* Split launches (runtime/program/annotate.c, runtime/command/split.c): the parameters as the
   * source declares them (none for programs from binaries), the annotation in force and its text,
   * the program variants built for launch shapes. Guarded by obj.lock. */
  struct tt_ann_param *params;
  long nparams;
  struct tt_ann *ann;
  char *ann_text;
  /* Without a written annotation (TUTTI_AUTO_SPLIT, runtime/program/annotate.c): ann derived
   * from the kernel's code (derived true; tier 1 or 2, annotations/derive.h), and the tier-2
   * annotation merging every written buffer, for launches whose derived parts overlap. */
  bool auto_tried, derived;
  int tier;
  struct tt_ann *ann_merged;
  /* Reduced parameters (bits, below 64) the kernel only accumulates into with atomics of the
   * reduction's operator, as its code shows: a launch of one part works on the buffer. */
  uint64_t accumulated;
  struct tt_variant *variants;
  bool warned_whole; /* the one warning of launches run whole */
  bool rebase_refused; /* its source's parameters cannot take windows (tt_ann_rebase) */
  /* The weights of its parts (runtime/command/balance.c, under that file's lock) and the plan
   * of its last split launch (runtime/command/split.c). */
  struct tt_balance *balance;
  struct tt_split_memo *split_memo;
  /* Drops balance and split_memo when the kernel goes: set by the layer that keeps them
   * (runtime/program/kernel.c knows neither). */
  void (*drop_split_state)(cl_kernel k);
};

struct tt_callback;

/* An event is either native-backed (the command of an actual device: it completes when the
 * backend says so) or managed by Tutti: user events (set by the program), virtual events (a
 * command of another rank: set when its owner's completion message arrives), reads whose
 * bytes go on to other ranks (set when the last send is done). */
struct _cl_event {
  struct tt_object obj;
  cl_context context;
  cl_command_queue queue;  /* NULL for user events */
  cl_command_type type;
  cl_uint domain;          /* domain of native */
  cl_event native;         /* backend event; NULL for managed events */
  cl_event prof;           /* a managed event's native command on its owner: its status
                            * and profiling times (reads whose bytes go on to other ranks) */
  bool may_fail;           /* the command may end in an error through its wait list */
  bool broadcast;          /* a read whose bytes go to every rank: complete here once they
                            * are in this rank's host memory (and sent, on the owner) */
  /* A broadcast read on a rank that receives its bytes: whether they are all here, and the
   * owner's final status when it came before them (guarded by obj.lock). The owner's word
   * alone never completes it: the program may free the memory the bytes arrive in once the
   * event says complete (tt_event_bytes_here). */
  bool bytes_here;
  bool owner_said;
  cl_int owner_status;
  cl_int bytes_status;     /* the bytes' arrival, when the owner's status is awaited after them
                            * (a blocking read: its result must be the owner's on every rank) */
  uint64_t seq;            /* the command's number (program order, alike on every rank) */
  uint64_t gid;            /* id drawn alike on every rank: names completion messages */
  int owner;               /* rank that executes the command */
  /* Managed events: status, mirrored into native user events made on demand in each local
   * domain that waits on it. Guarded by obj.lock. */
  cl_int user_status;
  cl_event *user_mirrors;  /* one per domain, lazily */
  struct tt_callback *callbacks;
  pthread_cond_t cond;
  /* Completion messages: on the owner, the ranks it sends to; elsewhere, whether the
   * receive is posted. Decided in program order on every rank alike. */
  unsigned char *notified;
  bool receiving;
  /* A split launch's event (runtime/command/split.c): its parts' events (retained), whose profiling
   * times it spans, first start to last end. */
  cl_event *span;
  cl_uint nspan;
  /* The command's time on its device (profiling end - start), as its owner's status batch
   * gave it (0: not measured); runtime/command/balance.c. */
  uint64_t ns;
  /* A command behind a gate (runtime/order/order.h): the gate's status, which the command's own
   * status shows where the backend ran it anyway (NVIDIA runs a command whose wait list
   * failed); NULL otherwise. */
  struct tt_fail *fail;
  /* The status the program was last told, once final (tt_event_agreed_status): every rank
   * heard the same answer, so later queries answer it without a message. Guarded by
   * obj.lock. */
  bool settled;
  cl_int settled_status;
  /* Another rank's command, on this rank: the user events of this rank it waits for that
   * were not set when it was enqueued (retained), and how many are still not set. Its
   * owner's status waits in held_status until they are: the owner may run it once the
   * owner's host set them, before this host did (tt_event_gate). Guarded by obj.lock. */
  struct tt_events gates;
  int holds;
  bool held;
  cl_int held_status;
};

/* The first error among a gated command's dependencies, shared by the gate and the command's
 * event (runtime/order/order.c). */
struct tt_fail {
  atomic_int status; /* CL_COMPLETE, or that error */
  atomic_int refs;
};
void tt_fail_put(struct tt_fail *f);

/* A sampler (runtime/program/sampler.c): its properties, and one native sampler per domain of
 * its context (actual domains only). */
struct _cl_sampler {
  struct tt_object obj;
  cl_context context;
  cl_bool normalized;
  cl_addressing_mode addressing;
  cl_filter_mode filter;
  cl_sampler *native;
};

/* Why a device has a memory domain of its own rather than sharing its backend's (NULL: it
 * shares): always with TUTTI_DOMAINS=device or when its memory is CUDA's (runtime/base/cuda.h),
 * otherwise never with TUTTI_DOMAINS=backend, and by default for NVIDIA's GPUs: NVIDIA's one
 * context of several GPUs moves a buffer that a kernel on another GPU uses through host
 * memory, whole, at each use (doc/testing.md, "Latest figures"), while PoCL's devices
 * share host memory and one context suits them. The device table is every rank's, so every
 * rank decides alike. */
static inline const char *tt_domain_own(cl_device_id d)
{
  int how = tt_env()->domains;
  if (d->cuda >= 0)
    return "its memory is CUDA's (TUTTI_CUDA=on)";
  if (how == TT_DOMAINS_DEVICE)
    return "TUTTI_DOMAINS=device";
  if (how == TT_DOMAINS_AUTO && !strcmp(d->backend, "nvidia"))
    return "an NVIDIA GPU (TUTTI_DOMAINS=auto)";
  return NULL;
}

/* Index of a device's memory domain in a context, or ctx->ndomains when the device is not
 * in it. A domain is a backend platform's devices, or one device (tt_domain_own). */
static inline cl_uint tt_context_domain_of(cl_context ctx, cl_device_id d)
{
  bool per_device = tt_domain_own(d) != NULL;
  for (cl_uint i = 0; i < ctx->ndomains; i++)
    if (ctx->domains[i].rank == d->rank && ctx->domains[i].bp_index == d->bp_index &&
        (!per_device || ctx->domains[i].first_device == d))
      return i;
  return ctx->ndomains;
}

static inline bool tt_context_has_device(cl_context ctx, cl_device_id d)
{
  for (cl_uint i = 0; i < ctx->ndevices; i++)
    if (ctx->devices[i] == d)
      return true;
  return false;
}

/* Whether every one of the n handles of list is a valid device of ctx (the specification's
 * CL_INVALID_DEVICE for device lists). */
static inline bool tt_context_has_devices(cl_context ctx, cl_uint n, const cl_device_id *list)
{
  for (cl_uint i = 0; i < n; i++)
    if (!tt_object_valid(list[i], TT_DEVICE) || !tt_context_has_device(ctx, list[i]))
      return false;
  return true;
}

#endif
