/* Programs: one native program per memory domain. Every build adds -cl-kernel-arg-info, so
 * the plan can tell which buffer arguments a kernel only reads (const or __constant). */
#include "config.h"

#include "runtime/program/program.h"

#include "runtime/base/backend.h"
#include "runtime/base/log.h"
#include "runtime/job/cluster.h"
#include "runtime/job/cluster_share.h"
#include "runtime/job/devices.h"

#include "annotations/annotation.h"
#include "annotations/derive.h"

#include "runtime/job/check.h"
#include "runtime/job/turns.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "runtime/base/backend.h"
#include "runtime/job/build.h"
#include "runtime/job/transport.h"

#define ARG_INFO_OPTION " -cl-kernel-arg-info"

static void destroy_program(struct tt_object *o)
{
  cl_program p = (cl_program)o;
  /* Not through the context: a weak program may outlive it. */
  for (cl_uint i = 0; p->native && i < p->nnative; i++)
    if (p->native[i])
      TT_NATIVE_DISPATCH(p->native[i])->clReleaseProgram(p->native[i]);
  for (cl_uint i = 0; p->logs && i < p->ndevices; i++)
    free(p->logs[i]);
  for (cl_uint i = 0; p->given && i < p->ndevices; i++)
    free(p->given[i]);
  free(p->given);
  free(p->given_len);
  free(p->logs);
  free(p->status);
  free(p->binary_type);
  free(p->native);
  free(p->devices);
  free(p->source);
  free(p->stripped);
  tt_derived_free(p->derived, p->nderived > 0 ? (size_t)p->nderived : 0);
  tt_ann_pragmas_free(p->pragmas, p->npragmas);
  free(p->ann_error);
  free(p->options);
  if (!p->weak)
    TT_RELEASE(p->context);
  free(p);
}

static cl_program alloc_program(cl_context ctx, cl_uint ndevices, const cl_device_id *devices)
{
  cl_program p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->native = calloc(ctx->ndomains, sizeof *p->native);
  p->nnative = ctx->ndomains;
  p->devices = malloc(ndevices * sizeof *p->devices);
  p->status = calloc(ndevices, sizeof *p->status);
  p->binary_type = calloc(ndevices, sizeof *p->binary_type);
  p->logs = calloc(ndevices, sizeof *p->logs);
  if (!p->native || !p->devices || !p->status || !p->binary_type || !p->logs) {
    free(p->native);
    free(p->devices);
    free(p->status);
    free(p->binary_type);
    free(p->logs);
    free(p);
    return NULL;
  }
  for (cl_uint i = 0; i < ndevices; i++)
    p->status[i] = CL_BUILD_NONE;
  tt_object_init(&p->obj, TT_PROGRAM, destroy_program);
  p->context = ctx;
  TT_RETAIN(ctx);
  p->ndevices = ndevices;
  memcpy(p->devices, devices, ndevices * sizeof *devices);
  return p;
}

static bool program_has_device(cl_program p, cl_device_id d)
{
  for (cl_uint i = 0; i < p->ndevices; i++)
    if (p->devices[i] == d)
      return true;
  return false;
}

/* What a backend compiles: the source under the macros OpenCL C predefines as Tutti's devices
 * report them (OpenCL 1.2: runtime/job/devices.c), not as the backend's own compiler would
 * (PoCL 3 defines __OPENCL_VERSION__ 300); __IMAGE_SUPPORT__ as the backend says, since its
 * devices' image support is theirs. Line numbers kept. */
static const char source_prelude[] =
    "#undef __OPENCL_VERSION__\n"
    "#define __OPENCL_VERSION__ 120\n"
    "#if defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ > 120\n"
    "#undef __OPENCL_C_VERSION__\n"
    "#define __OPENCL_C_VERSION__ 120\n"
    "#endif\n"
    "#line 1\n";


cl_program tt_program_with_source(cl_context context, cl_uint count, const char **strings,
                                  const size_t *lengths, cl_int *errcode_ret)
{
  cl_int err = CL_SUCCESS;
  size_t total = 0;
  for (cl_uint i = 0; i < count; i++)
    total += lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
  cl_program p = alloc_program(context, context->ndevices, context->devices);
  TT_GOTO_IF(!p, CL_OUT_OF_HOST_MEMORY);
  p->source = malloc(total + 1);
  TT_GOTO_IF(!p->source, CL_OUT_OF_HOST_MEMORY);
  char *w = p->source;
  for (cl_uint i = 0; i < count; i++) {
    size_t n = lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
    memcpy(w, strings[i], n);
    w += n;
  }
  *w = 0;
  /* Backends build the source without Tutti's pragmas (line numbers kept). */
  p->stripped = tt_ann_strip(p->source, &p->pragmas, &p->npragmas);
  TT_GOTO_IF(!p->stripped, CL_OUT_OF_HOST_MEMORY);
  for (cl_uint i = 0; i < context->ndomains; i++) {
    struct tt_domain *dm = &context->domains[i];
    if (!dm->actual)
      continue;
    const char *src[2] = {source_prelude, p->stripped};
    p->native[i] = dm->bp->d->clCreateProgramWithSource(dm->native, 2, src, NULL, &err);
    TT_GOTO_IF(!p->native[i], err ? err : CL_OUT_OF_RESOURCES);
  }
out:
  tt_set_err(errcode_ret, err);
  if (err != CL_SUCCESS && p) {
    TT_RELEASE(p);
    p = NULL;
  }
  return p;
}

static cl_program with_binary(cl_context context, cl_uint num_devices,
                              const cl_device_id *device_list, const size_t *lengths,
                              const unsigned char **binaries, cl_int *binary_status,
                              cl_int *errcode_ret);

/* The native program of this rank's domain k from the binaries of its devices (scratch: nd,
 * nb, nl, ns, num_devices entries each); created[i]: how device i's was taken. Returns the
 * backend's error when it made no program. */
static cl_int native_binaries(cl_program p, cl_uint k, cl_uint num_devices,
                              const cl_device_id *device_list, const size_t *lengths,
                              const unsigned char **binaries, cl_device_id *nd,
                              const unsigned char **nb, size_t *nl, cl_int *ns, cl_int *created)
{
  cl_context context = p->context;
  struct tt_domain *dm = &context->domains[k];
  if (!dm->actual)
    return CL_SUCCESS;
  cl_uint n = 0;
  for (cl_uint i = 0; i < num_devices; i++)
    if (tt_context_domain_of(context, device_list[i]) == k) {
      nd[n] = device_list[i]->native;
      nb[n] = binaries[i] + BINARY_HEADER;
      nl[n] = lengths[i] - BINARY_HEADER;
      n++;
    }
  if (!n)
    return CL_SUCCESS;
  cl_int e = CL_SUCCESS;
  p->native[k] = dm->bp->d->clCreateProgramWithBinary(dm->native, n, nd, nl, nb, ns, &e);
  n = 0;
  for (cl_uint i = 0; i < num_devices; i++)
    if (tt_context_domain_of(context, device_list[i]) == k) {
      created[i] = p->native[k] ? ns[n] : (e ? e : CL_INVALID_BINARY);
      n++;
    }
  return p->native[k] ? CL_SUCCESS : e ? e : CL_INVALID_BINARY;
}

/* The aggregate device takes the binary given for it on every member. */
cl_program tt_program_with_binary(cl_context context, cl_uint num_devices,
                                  const cl_device_id *device_list,
                                  const size_t *lengths,
                                  const unsigned char **binaries,
                                  cl_int *binary_status, cl_int *errcode_ret)
{
  cl_device_id agg = tt_object_valid(context, TT_CONTEXT) ? context->aggregate : NULL;
  cl_uint at = num_devices;
  for (cl_uint i = 0; agg && device_list && lengths && binaries && i < num_devices; i++)
    if (device_list[i] == agg)
      at = i;
  if (at == num_devices)
    return with_binary(context, num_devices, device_list, lengths, binaries, binary_status,
                       errcode_ret);
  cl_uint n = num_devices - 1 + agg->nmembers;
  cl_device_id *d = malloc(n * sizeof *d);
  size_t *l = malloc(n * sizeof *l);
  const unsigned char **b = malloc(n * sizeof *b);
  cl_int *st = calloc(n, sizeof *st);
  cl_program p = NULL;
  if (!d || !l || !b || !st) {
    tt_set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  } else {
    cl_uint k = 0;
    for (cl_uint i = 0; i < num_devices; i++)
      for (cl_uint j = 0; j < (i == at ? agg->nmembers : 1); j++, k++) {
        d[k] = i == at ? agg->members[j] : device_list[i];
        l[k] = lengths[i];
        b[k] = binaries[i];
      }
    p = with_binary(context, n, d, l, b, st, errcode_ret);
    for (cl_uint i = 0, k = 0; binary_status && i < num_devices; i++) {
      binary_status[i] = CL_SUCCESS;
      for (cl_uint j = 0; j < (i == at ? agg->nmembers : 1); j++, k++)
        if (st[k] != CL_SUCCESS)
          binary_status[i] = st[k];
    }
  }
  free(d);
  free(l);
  free(b);
  free(st);
  return p;
}

static cl_program with_binary(cl_context context, cl_uint num_devices,
                              const cl_device_id *device_list, const size_t *lengths,
                              const unsigned char **binaries, cl_int *binary_status,
                              cl_int *errcode_ret)
{
  TT_TURN_CHECK(tt_check_id(context), tt_check_ids(device_list, num_devices));
  cl_int err = CL_SUCCESS;
  cl_program p = NULL;
  cl_device_id *nd = NULL;
  const unsigned char **nb = NULL;
  size_t *nl = NULL;
  cl_int *ns = NULL;
  cl_int *created = NULL;
  /* CL_INVALID_CONTEXT if context is not a valid context. */
  TT_GOTO_IF(!tt_object_valid(context, TT_CONTEXT), CL_INVALID_CONTEXT);
  /* CL_INVALID_VALUE if device_list is NULL or num_devices is zero. */
  TT_GOTO_IF(device_list == NULL || num_devices == 0, CL_INVALID_VALUE);
  /* CL_INVALID_DEVICE if OpenCL devices listed in device_list are not in the list of devices
   * associated with context. */
  TT_GOTO_IF(!tt_context_has_devices(context, num_devices, device_list), CL_INVALID_DEVICE);
  /* CL_INVALID_VALUE if lengths or binaries are NULL or if any entry in lengths[i] is zero
   * or binaries[i] is NULL. */
  TT_GOTO_IF(lengths == NULL || binaries == NULL, CL_INVALID_VALUE);
  for (cl_uint i = 0; i < num_devices; i++)
    TT_GOTO_IF(lengths[i] == 0 || binaries[i] == NULL, CL_INVALID_VALUE);
  p = alloc_program(context, num_devices, device_list);
  nd = malloc(num_devices * sizeof *nd);
  nb = malloc(num_devices * sizeof *nb);
  nl = malloc(num_devices * sizeof *nl);
  ns = malloc(num_devices * sizeof *ns);
  TT_GOTO_IF(!p || !nd || !nb || !nl || !ns, CL_OUT_OF_HOST_MEMORY);
  cl_int first_err = CL_SUCCESS;
  created = calloc(num_devices, sizeof *created);
  p->given = calloc(num_devices, sizeof *p->given);
  p->given_len = calloc(num_devices, sizeof *p->given_len);
  TT_GOTO_IF(!created || !p->given || !p->given_len, CL_OUT_OF_HOST_MEMORY);
  for (cl_uint i = 0; i < num_devices; i++) {
    p->given[i] = malloc(lengths[i]);
    TT_GOTO_IF(!p->given[i], CL_OUT_OF_HOST_MEMORY);
    memcpy(p->given[i], binaries[i], lengths[i]);
    p->given_len[i] = lengths[i];
  }
  /* CL_INVALID_BINARY if an invalid program binary was encountered for any device:
   * binary_status tells which. */
  for (cl_uint i = 0; i < num_devices; i++)
    if (!tt_build_binary_payload(binaries[i], lengths[i], device_list[i]->backend, &p->binary_type[i])) {
      if (binary_status)
        binary_status[i] = CL_INVALID_BINARY;
      first_err = CL_INVALID_BINARY;
    }
  if (first_err != CL_SUCCESS) {
    err = first_err;
    TT_LOG(TT_LOG_ERR, "clCreateProgramWithBinary: CL_INVALID_BINARY (not a Tutti binary for "
                       "the device's backend)");
    goto out;
  }
  for (cl_uint k = 0; k < context->ndomains; k++) {
    cl_int e = native_binaries(p, k, num_devices, device_list, lengths, binaries, nd, nb, nl, ns,
                               created);
    if (first_err == CL_SUCCESS)
      first_err = e;
  }
  /* Each device's owner tells how its binary was taken, alike on every rank. */
  err = tt_build_share_results(p, first_err, created);
  for (cl_uint i = 0; binary_status && i < num_devices; i++)
    binary_status[i] = created[i];
  /* CL_INVALID_BINARY if an invalid program binary was encountered for any device. */
  for (cl_uint i = 0; err == CL_SUCCESS && i < num_devices; i++)
    if (created[i] != CL_SUCCESS)
      err = CL_INVALID_BINARY;
out:
  free(nd);
  free(nb);
  free(nl);
  free(ns);
  free(created);
  tt_set_err(errcode_ret, err);
  if (err != CL_SUCCESS && p) {
    TT_RELEASE(p);
    p = NULL;
  }
  return p;
}


/* Checks shared by build and compile: the device list and the callback. */
static cl_int check_build_args(cl_program program, cl_uint num_devices, const cl_device_id *list,
                               void (CL_CALLBACK *pfn)(cl_program, void *), void *user_data)
{
  /* CL_INVALID_PROGRAM if program is not a valid program object. */
  TT_RETURN_IF(!tt_object_valid(program, TT_PROGRAM), CL_INVALID_PROGRAM);
  /* CL_INVALID_VALUE if device_list is NULL and num_devices is greater than zero, or if
   * device_list is not NULL and num_devices is zero. */
  TT_RETURN_IF((list == NULL) != (num_devices == 0), CL_INVALID_VALUE);
  /* CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL. */
  TT_RETURN_IF(pfn == NULL && user_data != NULL, CL_INVALID_VALUE);
  /* CL_INVALID_DEVICE if OpenCL devices listed in device_list are not in the list of devices
   * associated with program. */
  for (cl_uint i = 0; i < num_devices; i++)
    TT_RETURN_IF(!tt_object_valid(list[i], TT_DEVICE) || !program_has_device(program, list[i]),
                 CL_INVALID_DEVICE);
  /* CL_INVALID_OPERATION if there are kernel objects attached to program. */
  TT_RETURN_IF(atomic_load(&program->nkernels) > 0, CL_INVALID_OPERATION);
  return CL_SUCCESS;
}

static char *with_arg_info(const char *options)
{
  size_t n = options ? strlen(options) : 0;
  char *s = malloc(n + sizeof ARG_INFO_OPTION);
  if (s)
    snprintf(s, n + sizeof ARG_INFO_OPTION, "%s%s", options ? options : "", ARG_INFO_OPTION);
  return s;
}

static cl_int remember_options(cl_program program, const char *options)
{
  char *copy = strdup(options ? options : "");
  if (!copy)
    return CL_OUT_OF_HOST_MEMORY;
  free(program->options);
  program->options = copy;
  /* Derived annotations follow the source and options of the last build. */
  tt_derived_free(program->derived, program->nderived > 0 ? (size_t)program->nderived : 0);
  program->derived = NULL;
  program->nderived = 0;
  program->derive_done = false;
  return CL_SUCCESS;
}

/* Whether options hold one that OpenCL 1.2 does not define (section 5.6.4) and no vendor
 * prefix claims. A backend that fails such a build with CL_BUILD_PROGRAM_FAILURE (NVIDIA)
 * answers CL_INVALID_BUILD_OPTIONS through Tutti, as the specification says. */
static bool unknown_option(const char *options)
{
  static const char *const known[] = {
      "-cl-single-precision-constant", "-cl-denorms-are-zero",
      "-cl-fp32-correctly-rounded-divide-sqrt", "-cl-opt-disable", "-cl-mad-enable",
      "-cl-no-signed-zeros", "-cl-unsafe-math-optimizations", "-cl-finite-math-only",
      "-cl-fast-relaxed-math", "-w", "-Werror", "-cl-kernel-arg-info", "-create-library",
      "-enable-link-options", "-cl-std=CL1.1", "-cl-std=CL1.2", "-g",
  };
  static const char *const prefixes[] = {"-D", "-I", "-cl-nv-", "-nv-", "-cl-amd-", "-cl-intel-", "-O"};
  const char *s = options ? options : "";
  while (*s) {
    while (*s == ' ' || *s == '\t')
      s++;
    size_t n = strcspn(s, " \t");
    if (!n)
      break;
    bool ok = false;
    for (size_t i = 0; !ok && i < sizeof known / sizeof known[0]; i++)
      ok = strlen(known[i]) == n && !strncmp(known[i], s, n);
    for (size_t i = 0; !ok && i < sizeof prefixes / sizeof prefixes[0]; i++)
      ok = !strncmp(prefixes[i], s, strlen(prefixes[i]));
    if (!ok)
      return true;
    /* "-D name" and "-I dir": the next word is the option's. */
    bool takes_next = (n == 2 && (!strncmp(s, "-D", 2) || !strncmp(s, "-I", 2)));
    s += n;
    if (takes_next) {
      while (*s == ' ' || *s == '\t')
        s++;
      s += strcspn(s, " \t");
    }
  }
  return false;
}

/* The error of several domains' builds: a failure wins over success. */
static cl_int merge_error(cl_int sofar, cl_int e)
{
  return sofar != CL_SUCCESS ? sofar : e;
}


/* The devices of domain k that hold a build of program and are not among the n native devices
 * in nd are added to them: PoCL keeps one executable per program, so that a build for some of
 * its devices drops the others' (its launches there then abort), as happens when threads
 * build one program each for its own device. They are built again with the new options; and
 * builds of one program from several threads take turns (program_lock), so that each sees
 * the one before. */
static cl_uint with_earlier_builds(cl_program program, cl_uint k, cl_device_id *nd, cl_uint n)
{
  for (cl_uint i = 0; i < program->ndevices; i++) {
    cl_device_id d = program->devices[i];
    if (tt_context_domain_of(program->context, d) != k ||
        tt_program_build_status(program, d) != CL_BUILD_SUCCESS)
      continue;
    cl_uint j = 0;
    while (j < n && nd[j] != d->native)
      j++;
    if (j == n)
      nd[n++] = d->native;
  }
  return n;
}

/* Builds of one program from several threads, one at a time (locks shared by programs whose
 * addresses meet modulo 16). */
static pthread_mutex_t *program_lock(cl_program program)
{
  static pthread_mutex_t locks[16] = {
      PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
      PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
      PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
      PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
      PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
      PTHREAD_MUTEX_INITIALIZER};
  return &locks[((uintptr_t)program >> 6) % 16];
}

cl_int tt_program_build(cl_program program, cl_uint num_devices, const cl_device_id *device_list,
                        const char *options, void (CL_CALLBACK *pfn_notify)(cl_program, void *),
                        void *user_data)
{
  cl_int err = check_build_args(program, num_devices, device_list, pfn_notify, user_data);
  if (err != CL_SUCCESS)
    return err;
  char *opts = with_arg_info(options);
  TT_RETURN_IF(!opts, CL_OUT_OF_HOST_MEMORY);
  /* Threads may build one program for their own devices at once: its options and pragmas
   * are theirs in turn (tests/api/threads under ThreadSanitizer: two builds freed the
   * options one had remembered). */
  pthread_mutex_t *one_at_a_time = program_lock(program);
  pthread_mutex_lock(one_at_a_time);
  if (remember_options(program, options) != CL_SUCCESS) {
    pthread_mutex_unlock(one_at_a_time);
    free(opts);
    return CL_OUT_OF_HOST_MEMORY;
  }
  /* The pragmas are checked first, alike on every rank (the same source and options): one
   * that does not parse fails the build on every device, with the message as its log. */
  free(program->ann_error);
  program->ann_error = NULL;
  err = tt_split_check_pragmas(program, options, &program->ann_error);
  bool refused = err != CL_SUCCESS || program->ann_error;
  if (program->ann_error)
    TT_LOG(TT_LOG_ERR, "clBuildProgram: program #%llu: %s", (unsigned long long)program->obj.id,
           program->ann_error);
  pthread_mutex_unlock(one_at_a_time);
  if (refused) {
    free(opts);
    if (pfn_notify && err == CL_SUCCESS)
      pfn_notify(program, user_data);
    /* CL_BUILD_PROGRAM_FAILURE if there is a failure to build the program executable. */
    return err != CL_SUCCESS ? err : CL_BUILD_PROGRAM_FAILURE;
  }
  cl_device_id *nd = malloc(program->ndevices * sizeof *nd);
  if (!nd) {
    free(opts);
    return CL_OUT_OF_HOST_MEMORY;
  }
  cl_context ctx = program->context;
  pthread_mutex_lock(&program->obj.lock); /* threads may build one program at once */
  program->made = CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
  pthread_mutex_unlock(&program->obj.lock);
  struct tt_turns t = tt_build_turns(program, num_devices, device_list, nd, true);
  pthread_mutex_lock(one_at_a_time);
  for (cl_uint k, n; tt_build_turn_next(&t, &k, &n);) {
    n = with_earlier_builds(program, k, nd, n);
    /* Builds are synchronous: the callback, if any, runs once they are done. */
    cl_int e = ctx->domains[k].bp->d->clBuildProgram(program->native[k], n, nd, opts, NULL, NULL);
    if (e != CL_SUCCESS)
      TT_LOG(TT_LOG_ERR, "clBuildProgram: program #%llu on %s: %s",
             (unsigned long long)program->obj.id, ctx->domains[k].bp->short_name,
             tt_error_name(e));
    err = merge_error(err, e);
  }
  pthread_mutex_unlock(one_at_a_time);
  free(nd);
  free(opts);
  err = tt_build_share_results(program, err, NULL);
  /* CL_INVALID_BUILD_OPTIONS if the build options specified by options are invalid. */
  if (err == CL_BUILD_PROGRAM_FAILURE && unknown_option(options))
    err = CL_INVALID_BUILD_OPTIONS;
  if (pfn_notify)
    pfn_notify(program, user_data);
  return err;
}

cl_int tt_program_compile(cl_program program, cl_uint num_devices,
                          const cl_device_id *device_list, const char *options,
                          cl_uint num_input_headers,
                          const cl_program *input_headers,
                          const char **header_include_names,
                          void (CL_CALLBACK *pfn_notify)(cl_program, void *),
                          void *user_data)
{
  cl_int err = check_build_args(program, num_devices, device_list, pfn_notify, user_data);
  if (err != CL_SUCCESS)
    return err;
  /* CL_INVALID_VALUE if num_input_headers is zero and header_include_names or input_headers
   * are not NULL, or if num_input_headers is not zero and either is NULL. */
  TT_RETURN_IF(num_input_headers == 0 && (header_include_names || input_headers), CL_INVALID_VALUE);
  TT_RETURN_IF(num_input_headers && (!header_include_names || !input_headers), CL_INVALID_VALUE);
  for (cl_uint i = 0; i < num_input_headers; i++)
    TT_RETURN_IF(!tt_object_valid(input_headers[i], TT_PROGRAM) ||
                     input_headers[i]->context != program->context,
                 CL_INVALID_PROGRAM);
  /* CL_INVALID_OPERATION if program was not created with clCreateProgramWithSource. */
  TT_RETURN_IF(!program->source, CL_INVALID_OPERATION);
  char *opts = with_arg_info(options);
  cl_device_id *nd = malloc(program->ndevices * sizeof *nd);
  cl_program *nh = malloc((num_input_headers + 1) * sizeof *nh);
  pthread_mutex_t *one_at_a_time = program_lock(program);
  pthread_mutex_lock(one_at_a_time); /* threads may compile one program at once */
  cl_int remembered = opts && nd && nh ? remember_options(program, options) : CL_OUT_OF_HOST_MEMORY;
  pthread_mutex_unlock(one_at_a_time);
  if (remembered != CL_SUCCESS) {
    free(opts);
    free(nd);
    free(nh);
    return CL_OUT_OF_HOST_MEMORY;
  }
  cl_context ctx = program->context;
  pthread_mutex_lock(&program->obj.lock);
  program->made = CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT;
  pthread_mutex_unlock(&program->obj.lock);
  struct tt_turns t = tt_build_turns(program, num_devices, device_list, nd, true);
  for (cl_uint k, n; tt_build_turn_next(&t, &k, &n);) {
    for (cl_uint i = 0; i < num_input_headers; i++)
      nh[i] = input_headers[i]->native[k];
    cl_int e = ctx->domains[k].bp->d->clCompileProgram(
        program->native[k], n, nd, opts, num_input_headers, num_input_headers ? nh : NULL,
        header_include_names, NULL, NULL);
    err = merge_error(err, e);
  }
  free(nd);
  free(nh);
  free(opts);
  err = tt_build_share_results(program, err, NULL);
  /* CL_INVALID_COMPILER_OPTIONS if the compiler options specified by options are invalid. */
  if (err == CL_COMPILE_PROGRAM_FAILURE && unknown_option(options))
    err = CL_INVALID_COMPILER_OPTIONS;
  if (pfn_notify)
    pfn_notify(program, user_data);
  return err;
}

cl_program tt_program_link(cl_context context, cl_uint num_devices,
                           const cl_device_id *device_list, const char *options,
                           cl_uint num_input_programs,
                           const cl_program *input_programs,
                           void (CL_CALLBACK *pfn_notify)(cl_program, void *),
                           void *user_data, cl_int *errcode_ret)
{
  cl_int err = CL_SUCCESS;
  cl_program p = NULL;
  cl_device_id *nd = NULL;
  cl_program *np = NULL;
  /* CL_INVALID_CONTEXT if context is not a valid context. */
  TT_GOTO_IF(!tt_object_valid(context, TT_CONTEXT), CL_INVALID_CONTEXT);
  /* CL_INVALID_VALUE if device_list is NULL and num_devices is greater than zero, or if
   * device_list is not NULL and num_devices is zero. */
  TT_GOTO_IF((device_list == NULL) != (num_devices == 0), CL_INVALID_VALUE);
  /* CL_INVALID_VALUE if num_input_programs is zero and input_programs is NULL or if
   * num_input_programs is zero and input_programs is not NULL or if num_input_programs is not
   * zero and input_programs is NULL. */
  TT_GOTO_IF(num_input_programs == 0 || input_programs == NULL, CL_INVALID_VALUE);
  /* CL_INVALID_PROGRAM if programs specified in input_programs are not valid. */
  for (cl_uint i = 0; i < num_input_programs; i++)
    TT_GOTO_IF(!tt_object_valid(input_programs[i], TT_PROGRAM) ||
                   input_programs[i]->context != context,
               CL_INVALID_PROGRAM);
  /* CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL. */
  TT_GOTO_IF(pfn_notify == NULL && user_data != NULL, CL_INVALID_VALUE);
  /* CL_INVALID_DEVICE if devices listed in device_list are not in the list of devices
   * associated with context. */
  TT_GOTO_IF(!tt_context_has_devices(context, num_devices, device_list), CL_INVALID_DEVICE);
  if (!device_list) {
    num_devices = context->ndevices;
    device_list = context->devices;
  }
  p = alloc_program(context, num_devices, device_list);
  nd = malloc(num_devices * sizeof *nd);
  np = malloc(num_input_programs * sizeof *np);
  TT_GOTO_IF(!p || !nd || !np, CL_OUT_OF_HOST_MEMORY);
  err = remember_options(p, options);
  if (err != CL_SUCCESS)
    goto out;
  p->made = options && strstr(options, "-create-library") ? CL_PROGRAM_BINARY_TYPE_LIBRARY
                                                          : CL_PROGRAM_BINARY_TYPE_EXECUTABLE;
  struct tt_turns t = tt_build_turns(p, 0, NULL, nd, false);
  for (cl_uint k, n; tt_build_turn_next(&t, &k, &n);) {
    for (cl_uint i = 0; i < num_input_programs; i++)
      np[i] = input_programs[i]->native[k];
    cl_int e = CL_SUCCESS;
    p->native[k] = context->domains[k].bp->d->clLinkProgram(
        context->domains[k].native, n, nd, options, num_input_programs, np, NULL, NULL, &e);
    if (!p->native[k] && e == CL_SUCCESS)
      e = CL_LINK_PROGRAM_FAILURE;
    err = merge_error(err, e);
  }
  err = tt_build_share_results(p, err, NULL);
  /* A failed link still returns a program whose build log tells why: on every rank, whether
   * or not this rank's backend made one (the outcome is the job's, shared above). */
  if (err == CL_LINK_PROGRAM_FAILURE) {
    if (pfn_notify)
      pfn_notify(p, user_data);
    free(nd);
    free(np);
    tt_set_err(errcode_ret, err);
    return p;
  }
  if (err == CL_SUCCESS && pfn_notify)
    pfn_notify(p, user_data);
out:
  free(nd);
  free(np);
  tt_set_err(errcode_ret, err);
  if (err != CL_SUCCESS && p) {
    TT_RELEASE(p);
    p = NULL;
  }
  return p;
}

/* Build status of the program for one device (CL_BUILD_NONE when unknown). */
cl_build_status tt_program_build_status(cl_program p, cl_device_id d)
{
  if (p->ann_error)
    return CL_BUILD_ERROR;
  if (!d->actual) {
    cl_uint i = tt_build_device_position(p, d);
    return i < p->ndevices ? p->status[i] : CL_BUILD_NONE;
  }
  cl_uint k = tt_context_domain_of(p->context, d);
  cl_build_status st = CL_BUILD_NONE;
  if (k < p->context->ndomains && p->native[k])
    TT_NCALL(d->bp, clGetProgramBuildInfo, p->native[k], d->native, CL_PROGRAM_BUILD_STATUS,
             sizeof st, &st, NULL);
  return st;
}

/* The first domain whose native program has an executable: for kernel names. */
static cl_int built_native(cl_program p, cl_uint *dom)
{
  for (cl_uint i = 0; i < p->ndevices; i++)
    if (p->devices[i]->actual &&
        tt_program_build_status(p, p->devices[i]) == CL_BUILD_SUCCESS) {
      *dom = tt_context_domain_of(p->context, p->devices[i]);
      return CL_SUCCESS;
    }
  return CL_INVALID_PROGRAM_EXECUTABLE;
}

cl_int tt_program_kernels(cl_program program, cl_program_info which, void *out, size_t cap,
                          size_t *len)
{
  /* Asked of a rank that built it (every rank asks alike). */
  cl_uint dom;
  *len = 0;
  bool have = built_native(program, &dom) == CL_SUCCESS;
  cl_int err = have ? TT_NCALL(program->context->domains[dom].bp, clGetProgramInfo,
                               program->native[dom], which, cap, out, len)
                    : CL_INVALID_PROGRAM_EXECUTABLE;
  if (tt_cluster_distributed() && tt_cluster_share_first(have, &err, out, len, cap) != 0)
    err = CL_INVALID_PROGRAM_EXECUTABLE;
  return err;
}

cl_int tt_program_info(cl_program program, cl_program_info param_name,
                       size_t param_value_size, void *param_value,
                       size_t *param_value_size_ret)
{
  /* CL_INVALID_PROGRAM if program is not a valid program object. */
  TT_RETURN_IF(!tt_object_valid(program, TT_PROGRAM), CL_INVALID_PROGRAM);
  cl_uint u;
  cl_int err;
  switch (param_name) {
  case CL_PROGRAM_REFERENCE_COUNT:
    u = (cl_uint)atomic_load(&program->obj.refcount);
    return TT_INFO(u);
  case CL_PROGRAM_CONTEXT:
    return TT_INFO(program->context);
  case CL_PROGRAM_NUM_DEVICES:
    return TT_INFO(program->ndevices);
  case CL_PROGRAM_DEVICES:
    return tt_info(param_value_size, param_value, param_value_size_ret, program->devices,
                   program->ndevices * sizeof(cl_device_id));
  case CL_PROGRAM_SOURCE:
    return TT_INFO_STR(program->source ? program->source : "");
  case CL_PROGRAM_BINARY_SIZES: {
    size_t sizes[64];
    cl_uint n = program->ndevices < 64 ? program->ndevices : 64;
    for (cl_uint i = 0; i < n; i++) {
      err = tt_build_binary_of(program, program->devices[i], &sizes[i], NULL);
      if (err != CL_SUCCESS)
        return err;
    }
    return tt_info(param_value_size, param_value, param_value_size_ret, sizes, n * sizeof *sizes);
  }
  case CL_PROGRAM_BINARIES: {
    size_t need = program->ndevices * sizeof(unsigned char *);
    err = tt_info(param_value_size, NULL, param_value_size_ret, NULL, need);
    /* CL_INVALID_VALUE if param_value_size is smaller than the array of pointers. */
    TT_RETURN_IF(param_value && param_value_size < need, CL_INVALID_VALUE);
    if (!param_value)
      return err;
    unsigned char **out = param_value;
    for (cl_uint i = 0; i < program->ndevices; i++) {
      size_t size;
      if (!out[i])
        continue;
      err = tt_build_binary_of(program, program->devices[i], &size, out[i]);
      if (err != CL_SUCCESS)
        return err;
    }
    return CL_SUCCESS;
  }
  case CL_PROGRAM_NUM_KERNELS:
  case CL_PROGRAM_KERNEL_NAMES:
    /* CL_INVALID_PROGRAM_EXECUTABLE if param_name is CL_PROGRAM_NUM_KERNELS or
     * CL_PROGRAM_KERNEL_NAMES and a successful program executable has not been built for at
     * least one device in the list of devices associated with program. */
  {
    char names[8192];
    size_t len = 0;
    err = tt_program_kernels(program, param_name, names, sizeof names, &len);
    TT_RETURN_IF(err == CL_INVALID_PROGRAM_EXECUTABLE, CL_INVALID_PROGRAM_EXECUTABLE);
    if (err != CL_SUCCESS)
      return err;
    return tt_info(param_value_size, param_value, param_value_size_ret, names, len);
  }
  default:
    /* CL_INVALID_VALUE if param_name is not valid. */
    TT_RETURN_IF(1, CL_INVALID_VALUE);
  }
}

/* A build's status, binary type or log, as asked. */
static cl_int build_answer(cl_program_build_info param_name, cl_build_status status,
                           cl_program_binary_type type, const char *log, size_t param_value_size,
                           void *param_value, size_t *param_value_size_ret)
{
  if (param_name == CL_PROGRAM_BUILD_STATUS)
    return TT_INFO(status);
  if (param_name == CL_PROGRAM_BINARY_TYPE)
    return TT_INFO(type);
  return TT_INFO_STR(log);
}

cl_int tt_program_build_info(cl_program program, cl_device_id device,
                             cl_program_build_info param_name,
                             size_t param_value_size, void *param_value,
                             size_t *param_value_size_ret)
{
  /* CL_INVALID_PROGRAM if program is not a valid program object. */
  TT_RETURN_IF(!tt_object_valid(program, TT_PROGRAM), CL_INVALID_PROGRAM);
  /* The aggregate device answers with its first member. */
  if (tt_object_valid(device, TT_DEVICE) && device == program->context->aggregate)
    device = tt_device_resolve(device);
  /* CL_INVALID_DEVICE if device is not in the list of devices associated with program. */
  TT_RETURN_IF(!tt_object_valid(device, TT_DEVICE) || !program_has_device(program, device),
               CL_INVALID_DEVICE);
  cl_uint k = tt_context_domain_of(program->context, device);
  cl_uint pos = tt_build_device_position(program, device);
  switch (param_name) {
  case CL_PROGRAM_BUILD_OPTIONS:
    return TT_INFO_STR(program->options ? program->options : "");
  case CL_PROGRAM_BUILD_STATUS:
  case CL_PROGRAM_BUILD_LOG:
  case CL_PROGRAM_BINARY_TYPE:
    /* An annotation error failed the build everywhere, before any backend saw it. */
    if (program->ann_error)
      return build_answer(param_name, CL_BUILD_ERROR, CL_PROGRAM_BINARY_TYPE_NONE,
                          program->ann_error, param_value_size, param_value, param_value_size_ret);
    /* What each device's owner reported after the last compile, link, build or creation
     * from binaries, on every rank alike (the binary type as Tutti knows it: backends
     * misname some, and PoCL refuses to log for a program made from a binary). */
    if (!device->actual || program->recorded)
      return build_answer(param_name, program->status[pos], program->binary_type[pos],
                          program->logs[pos] ? program->logs[pos] : "", param_value_size,
                          param_value, param_value_size_ret);
    if (!program->native[k])
      return build_answer(param_name, CL_BUILD_NONE, CL_PROGRAM_BINARY_TYPE_NONE, "",
                          param_value_size, param_value, param_value_size_ret);
    return TT_NCALL(device->bp, clGetProgramBuildInfo, program->native[k], device->native,
                    param_name, param_value_size, param_value, param_value_size_ret);
  default:
    /* CL_INVALID_VALUE if param_name is not valid. */
    TT_RETURN_IF(1, CL_INVALID_VALUE);
  }
}
