/* Kernels: one native kernel per memory domain where the program was built. Tutti keeps its
 * own view of every argument (which ones are buffers, which buffers are only read) because
 * the plan needs it at enqueue time and garbage handles must be refused, not passed on. */
#include "config.h"

#include "runtime/program/program.h"

#include "runtime/base/backend.h"
#include "runtime/base/log.h"
#include "runtime/job/cluster.h"
#include "runtime/job/cluster_share.h"
#include "runtime/job/devices.h"

#include "annotations/annotation.h"

#include "runtime/job/check.h"

#include <stdlib.h>

#include "runtime/job/transport.h"

static void destroy_kernel(struct tt_object *o)
{
  cl_kernel k = (cl_kernel)o;
  /* Native kernels go before the native program: PoCL asserts on the other order. */
  for (cl_uint i = 0; k->native && i < k->context->ndomains; i++)
    if (k->native[i])
      k->context->domains[i].bp->d->clReleaseKernel(k->native[i]);
  free(k->native);
  free(k->built_on);
  tt_split_kernel_free(k);
  for (cl_uint i = 0; k->args && i < k->nargs; i++)
    free(k->args[i].value);
  free(k->args);
  free(k->dev);
  free(k->name);
  atomic_fetch_sub(&k->program->nkernels, 1);
  TT_RELEASE(k->program);
  TT_RELEASE(k->context);
  free(k);
}

/* Fills the argument table from the backend's argument info (-cl-kernel-arg-info). */
static void read_arg_info(cl_kernel k, cl_uint dom)
{
  const cl_icd_dispatch *d = k->context->domains[dom].bp->d;
  for (cl_uint i = 0; i < k->nargs; i++) {
    struct tt_kernel_arg *a = &k->args[i];
    cl_kernel_arg_address_qualifier aq = CL_KERNEL_ARG_ADDRESS_PRIVATE;
    cl_kernel_arg_type_qualifier tq = 0;
    char type[256] = "";
    cl_int err = d->clGetKernelArgInfo
                     ? d->clGetKernelArgInfo(k->native[dom], i, CL_KERNEL_ARG_ADDRESS_QUALIFIER,
                                             sizeof aq, &aq, NULL)
                     : CL_KERNEL_ARG_INFO_NOT_AVAILABLE;
    if (err != CL_SUCCESS) {
      /* No argument info (some binaries): decided from the value at clSetKernelArg. */
      a->kind = TT_ARG_VALUE;
      continue;
    }
    a->known = true;
    d->clGetKernelArgInfo(k->native[dom], i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, NULL);
    d->clGetKernelArgInfo(k->native[dom], i, CL_KERNEL_ARG_TYPE_NAME, sizeof type - 1, type, NULL);
    if (strstr(type, "image") && !strchr(type, '*')) {
      /* Before the address qualifier: backends say __global of images too (and NVIDIA names
       * them with their access qualifier: "__read_only image2d_t"). */
      a->kind = TT_ARG_IMAGE;
      cl_kernel_arg_access_qualifier acc = CL_KERNEL_ARG_ACCESS_NONE;
      d->clGetKernelArgInfo(k->native[dom], i, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof acc, &acc,
                            NULL);
      a->is_const = acc == CL_KERNEL_ARG_ACCESS_READ_ONLY;
    } else if (aq == CL_KERNEL_ARG_ADDRESS_GLOBAL || aq == CL_KERNEL_ARG_ADDRESS_CONSTANT) {
      a->kind = TT_ARG_MEM;
      a->is_const = aq == CL_KERNEL_ARG_ADDRESS_CONSTANT || (tq & CL_KERNEL_ARG_TYPE_CONST);
    } else if (aq == CL_KERNEL_ARG_ADDRESS_LOCAL) {
      a->kind = TT_ARG_LOCAL;
      char *star = strchr(type, '*');
      if (star)
        *star = 0;
      a->size = tt_ann_type_size(type);

    } else if (!strcmp(type, "sampler_t")) {
      a->kind = TT_ARG_SAMPLER;
    } else {
      a->kind = TT_ARG_VALUE;
      a->size = tt_ann_type_size(type);
    }
  }
}

/* Whether the backend pads __local arguments: with each set to one byte, it counts more than
 * the kernel's own local memory and those bytes (NVIDIA aligns each, and counts 8 bytes for a
 * 4-byte argument of a kernel whose own is 1). The user sets every argument again before a
 * launch. */
static bool local_aligned(cl_kernel k, const cl_icd_dispatch *d, cl_device_id dev, cl_kernel native,
                          cl_ulong own)
{
  cl_ulong n = 0;
  for (cl_uint i = 0; i < k->nargs; i++)
    if (k->args[i].kind == TT_ARG_LOCAL && d->clSetKernelArg(native, i, 1, NULL) == CL_SUCCESS)
      n++;
  cl_ulong used = 0;
  return n && d->clGetKernelWorkGroupInfo(native, dev->native, CL_KERNEL_LOCAL_MEM_SIZE,
                                          sizeof used, &used, NULL) == CL_SUCCESS &&
         used > own + n;
}

/* The kernel's work-group facts on an actual device. */
static void read_device_info(cl_kernel k, cl_device_id dev, cl_kernel native)
{
  struct tt_kernel_device *kd = &k->dev[dev->index];
  const cl_icd_dispatch *d = dev->bp->d;
  bool ok = d->clGetKernelWorkGroupInfo(native, dev->native, CL_KERNEL_WORK_GROUP_SIZE,
                                        sizeof kd->wg_size, &kd->wg_size, NULL) == CL_SUCCESS;
  d->clGetKernelWorkGroupInfo(native, dev->native, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                              sizeof kd->compile_wg, kd->compile_wg, NULL);
  d->clGetKernelWorkGroupInfo(native, dev->native, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                              sizeof kd->preferred_multiple, &kd->preferred_multiple, NULL);
  d->clGetKernelWorkGroupInfo(native, dev->native, CL_KERNEL_LOCAL_MEM_SIZE,
                              sizeof kd->local_mem, &kd->local_mem, NULL);
  d->clGetKernelWorkGroupInfo(native, dev->native, CL_KERNEL_PRIVATE_MEM_SIZE,
                              sizeof kd->private_mem, &kd->private_mem, NULL);
  kd->local_aligned = local_aligned(k, d, dev, native, kd->local_mem);
  kd->known = ok;
}

cl_ulong tt_kernel_local_bytes(cl_kernel k, const struct tt_kernel_device *kd)
{
  cl_ulong bytes = kd->local_mem;
  for (cl_uint i = 0; i < k->nargs; i++) {
    const struct tt_kernel_arg *a = &k->args[i];
    if (a->kind != TT_ARG_LOCAL || !a->set)
      continue;
    bytes += a->local;
    /* Its type's alignment, at least 16 bytes (a vector's is its size, up to 128). */
    if (kd->local_aligned)
      bytes += a->size > 16 ? a->size : 16;
  }
  return bytes;
}

static bool built_in_domain(cl_program p, cl_uint dom)
{
  for (cl_uint i = 0; i < p->ndevices; i++)
    if (tt_context_domain_of(p->context, p->devices[i]) == dom &&
        tt_program_build_status(p, p->devices[i]) == CL_BUILD_SUCCESS)
      return true;
  return false;
}

/* What each rank knows of a new kernel, exchanged so that every rank holds the same tables:
 * the outcome and argument table of the lowest rank that made a native kernel, and the
 * work-group facts of every device from its owner. Every rank creates the kernel at the same
 * program step. */
struct kinfo_head {
  int32_t tried, err;
  uint32_t nargs, ndev;
};
struct kinfo_arg {
  uint8_t kind, is_const, known, pad;
  uint32_t size;
};
struct kinfo_dev {
  uint32_t index, local_aligned;
  uint64_t wg, compile_wg[3], preferred_multiple, local_mem, private_mem;
};

static cl_int share_kernel_info(cl_kernel k, bool tried, cl_int err)
{
  struct kinfo_head h = {tried, err, tried && err == CL_SUCCESS ? k->nargs : 0, 0};
  cl_uint ndev = tt_cluster_ndevices();
  for (cl_uint i = 0; i < ndev; i++)
    h.ndev += k->dev[i].known;
  size_t len = sizeof h + h.nargs * sizeof(struct kinfo_arg) + h.ndev * sizeof(struct kinfo_dev);
  unsigned char *buf = malloc(len);
  if (!buf)
    return CL_OUT_OF_HOST_MEMORY;
  memcpy(buf, &h, sizeof h);
  unsigned char *at = buf + sizeof h;
  for (cl_uint i = 0; i < h.nargs; i++, at += sizeof(struct kinfo_arg)) {
    const struct tt_kernel_arg *a = &k->args[i];
    struct kinfo_arg r = {(uint8_t)a->kind, a->is_const, a->known, 0, a->size};
    memcpy(at, &r, sizeof r);
  }
  for (cl_uint i = 0; i < ndev; i++) {
    const struct tt_kernel_device *kd = &k->dev[i];
    if (!kd->known)
      continue;
    struct kinfo_dev r = {i, kd->local_aligned, kd->wg_size, {kd->compile_wg[0], kd->compile_wg[1], kd->compile_wg[2]},
                          kd->preferred_multiple, kd->local_mem, kd->private_mem};
    memcpy(at, &r, sizeof r);
    at += sizeof r;
  }
  void *all = NULL;
  size_t *lens = NULL;
  int rc = tt_cluster_allgatherv("kernel info", buf, len, &all, &lens);
  free(buf);
  if (rc != 0) {
    free(all);
    free(lens);
    return CL_OUT_OF_RESOURCES;
  }
  bool chosen = false;
  err = CL_INVALID_PROGRAM_EXECUTABLE; /* no rank could make it */
  at = all;
  for (int r = 0; r < tt_cluster_size(); r++) {
    unsigned char *rec = at;
    at += lens[r];
    if (lens[r] < sizeof h)
      continue;
    memcpy(&h, rec, sizeof h);
    rec += sizeof h;
    if (lens[r] != sizeof h + (size_t)h.nargs * sizeof(struct kinfo_arg) +
                      (size_t)h.ndev * sizeof(struct kinfo_dev)) {
      TT_WARN("clCreateKernel: rank %d's description of kernel '%s' is malformed", r, k->name);
      continue;
    }
    if (h.tried && !chosen) {
      chosen = true;
      err = h.err;
      if (err == CL_SUCCESS) {
        struct tt_kernel_arg *args = calloc(h.nargs ? h.nargs : 1, sizeof *args);
        if (!args) {
          err = CL_OUT_OF_HOST_MEMORY;
          break;
        }
        for (cl_uint i = 0; i < h.nargs; i++) {
          struct kinfo_arg a;
          memcpy(&a, rec + i * sizeof a, sizeof a);
          args[i] = (struct tt_kernel_arg){.kind = (enum tt_arg_kind)a.kind, .is_const = a.is_const,
                                           .known = a.known, .size = a.size};
        }
        free(k->args);
        k->args = args;
        k->nargs = h.nargs;
      }
    }
    rec += h.nargs * sizeof(struct kinfo_arg);
    for (cl_uint i = 0; i < h.ndev; i++) {
      struct kinfo_dev d;
      memcpy(&d, rec + i * sizeof d, sizeof d);
      if (d.index < ndev)
        k->dev[d.index] = (struct tt_kernel_device){true, d.wg, {d.compile_wg[0], d.compile_wg[1],
                                                                  d.compile_wg[2]},
                                                    d.preferred_multiple, d.local_mem, d.private_mem,
                                                    d.local_aligned != 0};
    }
  }
  free(all);
  free(lens);
  return err;
}


cl_kernel tt_kernel_new(cl_program program, const char *kernel_name, cl_int *errcode_ret)
{
  cl_int err = CL_SUCCESS;
  cl_kernel k = NULL;
  /* CL_INVALID_PROGRAM if program is not a valid program object. */
  TT_GOTO_IF(!tt_object_valid(program, TT_PROGRAM), CL_INVALID_PROGRAM);
  /* CL_INVALID_VALUE if kernel_name is NULL. */
  TT_GOTO_IF(kernel_name == NULL, CL_INVALID_VALUE);
  cl_context ctx = program->context;
  bool any = false;
  for (cl_uint i = 0; i < program->ndevices; i++)
    any |= tt_program_build_status(program, program->devices[i]) == CL_BUILD_SUCCESS;
  /* CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built executable for program
   * (PoCL crashes when asked anyway). */
  TT_GOTO_IF(!any, CL_INVALID_PROGRAM_EXECUTABLE);
  k = calloc(1, sizeof *k);
  TT_GOTO_IF(!k, CL_OUT_OF_HOST_MEMORY);
  k->native = calloc(ctx->ndomains, sizeof *k->native);
  k->built_on = calloc(tt_cluster_ndevices(), sizeof *k->built_on);
  k->dev = calloc(tt_cluster_ndevices(), sizeof *k->dev);
  k->name = strdup(kernel_name);
  if (!k->native || !k->name || !k->built_on || !k->dev) {
    free(k->native);
    free(k->built_on);
    free(k->dev);
    free(k->name);
    free(k);
    k = NULL;
    TT_GOTO_IF(1, CL_OUT_OF_HOST_MEMORY);
  }
  tt_object_init(&k->obj, TT_KERNEL, destroy_kernel);
  k->program = program;
  TT_RETAIN(program);
  atomic_fetch_add(&program->nkernels, 1);
  k->context = ctx;
  TT_RETAIN(ctx);
  cl_uint first = ctx->ndomains;
  bool tried = false;
  for (cl_uint i = 0; i < ctx->ndomains && err == CL_SUCCESS; i++) {
    if (!ctx->domains[i].actual || !program->native[i] || !built_in_domain(program, i))
      continue;
    tried = true;
    k->native[i] = ctx->domains[i].bp->d->clCreateKernel(program->native[i], kernel_name, &err);
    /* CL_INVALID_KERNEL_NAME if kernel_name is not found in program;
     * CL_INVALID_KERNEL_DEFINITION if the function definition differs between devices. */
    if (k->native[i] && first == ctx->ndomains)
      first = i;
  }
  for (cl_uint i = 0; i < program->ndevices; i++)
    k->built_on[program->devices[i]->index] =
        tt_program_build_status(program, program->devices[i]) == CL_BUILD_SUCCESS;
  if (err == CL_SUCCESS && first < ctx->ndomains) {
    TT_NCALL(ctx->domains[first].bp, clGetKernelInfo, k->native[first], CL_KERNEL_NUM_ARGS,
             sizeof k->nargs, &k->nargs, NULL);
    k->args = calloc(k->nargs ? k->nargs : 1, sizeof *k->args);
    TT_GOTO_IF(!k->args, CL_OUT_OF_HOST_MEMORY);
    read_arg_info(k, first);
  }
  for (cl_uint i = 0; err == CL_SUCCESS && i < program->ndevices; i++) {
    cl_device_id dev = program->devices[i];
    cl_uint dom = tt_context_domain_of(ctx, dev);
    if (dev->actual && k->native[dom] && k->built_on[dev->index])
      read_device_info(k, dev, k->native[dom]);
  }
  if (tt_cluster_distributed())
    err = share_kernel_info(k, tried, err);
  if (err == CL_SUCCESS)
    tt_split_kernel_init(k);
out:
  tt_set_err(errcode_ret, err);
  if (err != CL_SUCCESS && k) {
    TT_RELEASE(k);
    k = NULL;
  }
  return k;
}

cl_int tt_kernels_in_program(cl_program program, cl_uint num_kernels,
                             cl_kernel *kernels, cl_uint *num_kernels_ret)
{
  /* CL_INVALID_PROGRAM if program is not a valid program object. */
  TT_RETURN_IF(!tt_object_valid(program, TT_PROGRAM), CL_INVALID_PROGRAM);
  size_t size = 0;
  /* CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built executable for any
   * device in program. */
  char *names = malloc(8192 + 1);
  TT_RETURN_IF(!names, CL_OUT_OF_HOST_MEMORY);
  cl_int err = tt_program_kernels(program, CL_PROGRAM_KERNEL_NAMES, names, 8192, &size);
  if (err != CL_SUCCESS) {
    free(names);
    TT_RETURN_IF(err == CL_INVALID_PROGRAM_EXECUTABLE, CL_INVALID_PROGRAM_EXECUTABLE);
    return err;
  }
  names[size < 8192 ? size : 8192] = 0;
  cl_uint n = 0;
  for (char *s = names; err == CL_SUCCESS && *s;) {
    size_t len = strcspn(s, ";");
    if (len)
      n++;
    s += len + (s[len] == ';');
  }
  /* CL_INVALID_VALUE if kernels is not NULL and num_kernels is less than the number of
   * kernels in program. */
  if (err == CL_SUCCESS && kernels && num_kernels < n) {
    TT_LOG(TT_LOG_ERR, "clCreateKernelsInProgram: CL_INVALID_VALUE (num_kernels %u < %u)",
           num_kernels, n);
    err = CL_INVALID_VALUE;
  }
  if (err == CL_SUCCESS && kernels) {
    cl_uint made = 0;
    for (char *s = names; *s;) {
      size_t len = strcspn(s, ";");
      char save = s[len];
      s[len] = 0;
      if (len) {
        kernels[made] = tt_kernel_new(program, s, &err);
        if (err != CL_SUCCESS)
          break;
        made++;
      }
      s[len] = save;
      s += len + (save == ';');
    }
    if (err != CL_SUCCESS)
      while (made)
        TT_RELEASE(kernels[--made]);
  }
  free(names);
  if (err == CL_SUCCESS && num_kernels_ret)
    *num_kernels_ret = n;
  return err;
}


/* What clSetKernelArg's value is for the divergence check: for a parameter declared a memory
 * object, sampler or image the handle's id (0 for one that is no live object: a garbage
 * address differs from rank to rank), else its bytes. */
uint64_t tt_kernel_arg_hash(cl_kernel k, cl_uint index, size_t size, const void *value)
{
  if (tt_object_valid(k, TT_KERNEL) && index < k->nargs && k->args[index].known &&
      k->args[index].kind != TT_ARG_VALUE && k->args[index].kind != TT_ARG_LOCAL) {
    const void *h = NULL;
    if (value && size == sizeof h)
      memcpy(&h, value, sizeof h);
    return tt_check_id(h);
  }
  return tt_check_arg(size, value);
}

/* What argument a's value is: without argument info, a value the size of a handle naming a
 * live buffer is a buffer; with it, an 8-byte number is a number, whatever it happens to
 * equal. */
static enum tt_arg_kind arg_kind(const struct tt_kernel_arg *a, size_t arg_size,
                                 const void *arg_value)
{
  if (a->kind == TT_ARG_VALUE && !a->known && arg_size == sizeof(cl_mem) && arg_value) {
    const void *h; /* the value need not be aligned */
    memcpy(&h, arg_value, sizeof h);
    enum tt_tag t = tt_object_lookup(h, NULL);
    if (t == TT_MEM)
      return ((cl_mem)h)->image ? TT_ARG_IMAGE : TT_ARG_MEM;
    if (t == TT_SAMPLER)
      return TT_ARG_SAMPLER;
  }
  return a->kind;
}

static cl_int arg_set(cl_kernel kernel, cl_uint arg_index, enum tt_arg_kind kind,
                      size_t arg_size, const void *arg_value);

cl_int tt_kernel_arg_check_set(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                               const void *arg_value)
{
  /* CL_INVALID_KERNEL if kernel is not a valid kernel object. */
  TT_RETURN_IF(!tt_object_valid(kernel, TT_KERNEL), CL_INVALID_KERNEL);
  /* CL_INVALID_ARG_INDEX if arg_index is not a valid argument index. */
  TT_RETURN_IF(arg_index >= kernel->nargs, CL_INVALID_ARG_INDEX);
  struct tt_kernel_arg *a = &kernel->args[arg_index];
  cl_context ctx = kernel->context;
  cl_mem mem = NULL;
  enum tt_arg_kind kind = arg_kind(a, arg_size, arg_value);
  switch (kind) {
  case TT_ARG_MEM:
    /* CL_INVALID_ARG_SIZE if arg_size does not match the size of the data type for an
     * argument that is a memory object. */
    TT_RETURN_IF(arg_size != sizeof(cl_mem), CL_INVALID_ARG_SIZE);
    mem = arg_value ? *(const cl_mem *)arg_value : NULL;
    /* CL_INVALID_MEM_OBJECT for an argument declared to be a memory object when the specified
     * arg_value is not a valid memory object (NULL is allowed). */
    TT_RETURN_IF(mem && (!tt_object_valid(mem, TT_MEM) || mem->context != ctx || mem->image),
                 CL_INVALID_MEM_OBJECT);
    break;
  case TT_ARG_LOCAL:
    /* CL_INVALID_ARG_VALUE if arg_value is not NULL for an argument declared with the
     * __local qualifier; CL_INVALID_ARG_SIZE if arg_size is zero for it. */
    TT_RETURN_IF(arg_value != NULL, CL_INVALID_ARG_VALUE);
    TT_RETURN_IF(arg_size == 0, CL_INVALID_ARG_SIZE);
    break;
  case TT_ARG_SAMPLER: {
    /* CL_INVALID_ARG_SIZE if arg_size does not match the size of the data type for an
     * argument that is a sampler. */
    TT_RETURN_IF(arg_size != sizeof(cl_sampler), CL_INVALID_ARG_SIZE);
    /* CL_INVALID_SAMPLER for an argument declared to be of type sampler_t when the specified
     * arg_value is not a valid sampler object. */
    cl_sampler s = arg_value ? *(const cl_sampler *)arg_value : NULL;
    TT_RETURN_IF(!tt_object_valid(s, TT_SAMPLER) || s->context != ctx, CL_INVALID_SAMPLER);
    break;
  }
  case TT_ARG_IMAGE:
    /* CL_INVALID_ARG_SIZE for an image argument of another size than a memory object's;
     * CL_INVALID_MEM_OBJECT when its value is not a valid image of the kernel's context. */
    TT_RETURN_IF(arg_size != sizeof(cl_mem), CL_INVALID_ARG_SIZE);
    mem = arg_value ? *(const cl_mem *)arg_value : NULL;
    TT_RETURN_IF(!tt_object_valid(mem, TT_MEM) || !mem->image || mem->context != ctx,
                 CL_INVALID_MEM_OBJECT);
    break;
  case TT_ARG_VALUE:
    /* CL_INVALID_ARG_VALUE if arg_value specified is NULL for an argument that is not
     * declared with the __local qualifier. */
    TT_RETURN_IF(arg_value == NULL, CL_INVALID_ARG_VALUE);
    /* CL_INVALID_ARG_SIZE if arg_size does not match the size of the data type for an
     * argument that is not a memory object (decided here, alike on every rank, for the
     * built-in types; the backends decide for the others). */
    TT_RETURN_IF(a->size && arg_size != a->size, CL_INVALID_ARG_SIZE);
    break;
  }
  return arg_set(kernel, arg_index, kind, arg_size, arg_value);
}

cl_int tt_kernel_arg_set(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                         const void *arg_value)
{
  return arg_set(kernel, arg_index, arg_kind(&kernel->args[arg_index], arg_size, arg_value),
                 arg_size, arg_value);
}

/* Argument arg_index of kernel, of kind `kind`, set natively in every domain and recorded. */
static cl_int arg_set(cl_kernel kernel, cl_uint arg_index, enum tt_arg_kind kind,
                      size_t arg_size, const void *arg_value)
{
  struct tt_kernel_arg *a = &kernel->args[arg_index];
  cl_context ctx = kernel->context;
  bool is_mem = kind == TT_ARG_MEM || kind == TT_ARG_IMAGE;
  cl_mem mem = is_mem && arg_value ? *(const cl_mem *)arg_value : NULL;
  cl_sampler sampler = kind == TT_ARG_SAMPLER ? *(const cl_sampler *)arg_value : NULL;
  cl_int err = CL_SUCCESS;
  for (cl_uint i = 0; i < ctx->ndomains && err == CL_SUCCESS; i++) {
    if (!kernel->native[i])
      continue;
    const cl_icd_dispatch *d = ctx->domains[i].bp->d;
    if (is_mem) {
      cl_mem nm = mem ? mem->native[i] : NULL;
      err = d->clSetKernelArg(kernel->native[i], arg_index, sizeof nm, mem ? &nm : NULL);
    } else if (sampler) {
      err = d->clSetKernelArg(kernel->native[i], arg_index, sizeof(cl_sampler),
                              &sampler->native[i]);
    } else {
      err = d->clSetKernelArg(kernel->native[i], arg_index, arg_size, arg_value);
    }
  }
  if (err != CL_SUCCESS)
    return err;
  void *value = NULL;
  if (kind == TT_ARG_VALUE || kind == TT_ARG_SAMPLER) { /* a sampler's handle, for copies */
    value = malloc(arg_size ? arg_size : 1);
    TT_RETURN_IF(!value, CL_OUT_OF_HOST_MEMORY);
    memcpy(value, arg_value, arg_size);
  }
  pthread_mutex_lock(&kernel->obj.lock);
  free(a->value);
  a->value = value;
  a->value_size = value ? arg_size : 0;
  a->set = true;
  a->local = kind == TT_ARG_LOCAL ? arg_size : 0;
  a->mem = mem;
  a->mem_id = mem ? mem->obj.id : 0;
  if (kind != TT_ARG_VALUE && a->kind == TT_ARG_VALUE)
    a->kind = kind;
  pthread_mutex_unlock(&kernel->obj.lock);
  return CL_SUCCESS;
}

/* Some domain's native kernel (all agree on the queried properties). */
static cl_uint any_native(cl_kernel k)
{
  for (cl_uint i = 0; i < k->context->ndomains; i++)
    if (k->native[i])
      return i;
  return k->context->ndomains;
}

/* A kernel query that any native kernel answers: in a job of several ranks, the lowest rank
 * with one answers for all. */
static cl_int kernel_query(cl_kernel k, cl_int (*ask)(cl_kernel, cl_uint, const void *, void *,
                                                      size_t, size_t *),
                           const void *what, size_t param_value_size, void *param_value,
                           size_t *param_value_size_ret)
{
  unsigned char v[4096];
  size_t len = 0;
  cl_uint d = any_native(k);
  bool have = d < k->context->ndomains;
  cl_int err = have ? ask(k, d, what, v, sizeof v, &len) : CL_INVALID_KERNEL;
  if (tt_cluster_distributed() && tt_cluster_share_first(have, &err, v, &len, sizeof v) != 0)
    err = CL_INVALID_KERNEL;
  if (err != CL_SUCCESS)
    return err;
  return tt_info(param_value_size, param_value, param_value_size_ret, v, len);
}

/* The attributes as the specification returns them: each as declared inside
 * __attribute__((...)) without whitespace, several separated by one space (PoCL returns
 * "__attribute__((work_group_size_hint(1, 1, 1 )))" for "work_group_size_hint(1,1,1)"). */
static void normalize_attributes(char *s)
{
  char *out = s;
  const char *in = s;
  static const char wrap[] = "__attribute__";
  while (*in) {
    while (*in == ' ' || *in == '\t' || *in == '\n')
      in++;
    if (!*in)
      break;
    /* "__attribute__((", spaces allowed before the parentheses. */
    const char *at = in + sizeof wrap - 1;
    while (*at == ' ' || *at == '\t' || *at == '\n')
      at++;
    bool wrapped = !strncmp(in, wrap, sizeof wrap - 1) && at[0] == '(' && at[1] == '(';
    if (wrapped)
      in = at + 2;
    if (out != s)
      *out++ = ' ';
    /* One attribute: up to the end of its parentheses (or of the wrapper). */
    int depth = 0;
    for (; *in; in++) {
      if (*in == '(')
        depth++;
      else if (*in == ')') {
        if (depth == 0)
          break;
        depth--;
      } else if (depth == 0 && !wrapped && (*in == ' ' || *in == ',')) {
        break;
      }
      if (*in != ' ' && *in != '\t' && *in != '\n')
        *out++ = *in;
      if (wrapped && depth == 0 && *in == ')')
        break;
    }
    if (wrapped)
      while (*in == ')')
        in++;
    else if (*in == ',' || *in == ')')
      in++;
  }
  *out = 0;
}

static cl_int ask_attributes(cl_kernel k, cl_uint d, const void *what, void *v, size_t size,
                             size_t *len)
{
  cl_int err = TT_NCALL(k->context->domains[d].bp, clGetKernelInfo, k->native[d],
                        CL_KERNEL_ATTRIBUTES, size - 1, v, len);
  /* A string: its size is its length and the terminator, whatever the backend said. */
  if (err == CL_SUCCESS) {
    ((char *)v)[*len < size ? *len : size - 1] = 0;
    normalize_attributes(v);
    *len = strlen(v) + 1;
  }
  return err;
}

struct arg_question {
  cl_uint index;
  cl_kernel_arg_info param;
};

static cl_int ask_arg_info(cl_kernel k, cl_uint d, const void *what, void *v, size_t size,
                           size_t *len)
{
  const struct arg_question *q = what;
  return TT_NCALL(k->context->domains[d].bp, clGetKernelArgInfo, k->native[d], q->index, q->param,
                  size, v, len);
}

cl_int tt_kernel_info(cl_kernel kernel, cl_kernel_info param_name,
                      size_t param_value_size, void *param_value,
                      size_t *param_value_size_ret)
{
  /* CL_INVALID_KERNEL if kernel is not a valid kernel object. */
  TT_RETURN_IF(!tt_object_valid(kernel, TT_KERNEL), CL_INVALID_KERNEL);
  cl_uint u, k;
  switch (param_name) {
  case CL_KERNEL_FUNCTION_NAME:
    return TT_INFO_STR(kernel->name);
  case CL_KERNEL_NUM_ARGS:
    return TT_INFO(kernel->nargs);
  case CL_KERNEL_REFERENCE_COUNT:
    u = (cl_uint)atomic_load(&kernel->obj.refcount);
    return TT_INFO(u);
  case CL_KERNEL_CONTEXT:
    return TT_INFO(kernel->context);
  case CL_KERNEL_PROGRAM:
    return TT_INFO(kernel->program);
  case CL_KERNEL_ATTRIBUTES:
    (void)k;
    return kernel_query(kernel, ask_attributes, NULL, param_value_size, param_value,
                        param_value_size_ret);
  default:
    /* CL_INVALID_VALUE if param_name is not valid. */
    TT_RETURN_IF(1, CL_INVALID_VALUE);
  }
}

cl_int tt_kernel_work_group_info(cl_kernel kernel, cl_device_id device,
                                 cl_kernel_work_group_info param_name,
                                 size_t param_value_size, void *param_value,
                                 size_t *param_value_size_ret)
{
  /* CL_INVALID_KERNEL if kernel is not a valid kernel object. */
  TT_RETURN_IF(!tt_object_valid(kernel, TT_KERNEL), CL_INVALID_KERNEL);
  cl_program p = kernel->program;
  /* The aggregate device answers with its first member. */
  if (device && tt_object_valid(device, TT_DEVICE) && device == kernel->context->aggregate)
    device = tt_device_resolve(device);
  /* CL_INVALID_DEVICE if device is not in the list of devices associated with kernel or if
   * device is NULL but there is more than one device associated with kernel. */
  if (!device) {
    TT_RETURN_IF(p->ndevices != 1, CL_INVALID_DEVICE);
    device = p->devices[0];
  }
  bool found = false;
  for (cl_uint i = 0; i < p->ndevices; i++)
    found |= p->devices[i] == device;
  TT_RETURN_IF(!tt_object_valid(device, TT_DEVICE) || !found, CL_INVALID_DEVICE);
  /* The facts every launch check uses, alike on every rank (from the device's owner at
   * clCreateKernel). */
  const struct tt_kernel_device *kd = kernel->dev ? &kernel->dev[device->index] : NULL;
  if (kd && kd->known) {
    switch (param_name) {
    case CL_KERNEL_WORK_GROUP_SIZE:
      return TT_INFO(kd->wg_size);
    case CL_KERNEL_COMPILE_WORK_GROUP_SIZE:
      return TT_INFO(kd->compile_wg);
    case CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
      return TT_INFO(kd->preferred_multiple);
    case CL_KERNEL_LOCAL_MEM_SIZE: {
      /* The kernel's own local memory and what its __local arguments ask for now, as the
       * launch checks count them. */
      pthread_mutex_lock(&kernel->obj.lock);
      cl_ulong bytes = tt_kernel_local_bytes(kernel, kd);
      pthread_mutex_unlock(&kernel->obj.lock);
      return TT_INFO(bytes);
    }
    case CL_KERNEL_PRIVATE_MEM_SIZE:
      return TT_INFO(kd->private_mem);
    default:
      break;
    }
  }
  cl_uint k = tt_context_domain_of(kernel->context, device);
  if (!tt_cluster_distributed()) {
    TT_RETURN_IF(!kernel->native[k], CL_INVALID_DEVICE);
    return TT_NCALL(device->bp, clGetKernelWorkGroupInfo, kernel->native[k], device->native,
                    param_name, param_value_size, param_value, param_value_size_ret);
  }
  /* The device's owner answers for every rank. */
  unsigned char v[256];
  size_t len = 0;
  cl_int err = CL_INVALID_DEVICE;
  if (device->actual && kernel->native[k])
    err = TT_NCALL(device->bp, clGetKernelWorkGroupInfo, kernel->native[k], device->native,
                   param_name, sizeof v, v, &len);
  if (tt_cluster_share_answer(device->rank, &err, v, &len, sizeof v) != 0)
    err = CL_OUT_OF_RESOURCES;
  if (err != CL_SUCCESS)
    return err;
  return tt_info(param_value_size, param_value, param_value_size_ret, v, len);
}

cl_int tt_kernel_arg_info(cl_kernel kernel, cl_uint arg_indx,
                          cl_kernel_arg_info param_name, size_t param_value_size,
                          void *param_value, size_t *param_value_size_ret)
{
  /* CL_INVALID_KERNEL if kernel is not a valid kernel object. */
  TT_RETURN_IF(!tt_object_valid(kernel, TT_KERNEL), CL_INVALID_KERNEL);
  /* CL_INVALID_ARG_INDEX if arg_indx is not a valid argument index. */
  TT_RETURN_IF(arg_indx >= kernel->nargs, CL_INVALID_ARG_INDEX);
  /* CL_KERNEL_ARG_INFO_NOT_AVAILABLE if the argument information is not available for
   * kernel: Tutti builds every program with -cl-kernel-arg-info for itself, but answers as
   * the program's own options would have. */
  const char *opts = kernel->program->options;
  TT_RETURN_IF(!opts || !strstr(opts, "-cl-kernel-arg-info"), CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
  struct arg_question q = {arg_indx, param_name};
  return kernel_query(kernel, ask_arg_info, &q, param_value_size, param_value,
                      param_value_size_ret);
}
