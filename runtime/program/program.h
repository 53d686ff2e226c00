/* Contexts, programs and kernels: one native context, program and kernel per memory domain, builds
 * shared by the ranks of a node (runtime/job/build.h), each kernel's view of its arguments, and
 * what a kernel's source says for split launches (its parameters, its #pragma tutti). The entry
 * points (icd/program.c, icd/kernel.c) feed the divergence check and call the bodies here, which
 * check their arguments as the specification says; Tutti's own programs (split launches' variants,
 * the collectives' reductions) are made through them too. */
#ifndef TUTTI_PROGRAM_H
#define TUTTI_PROGRAM_H

#include "runtime/base/tutti_internal.h"

/* --- contexts (runtime/program/context.c) ------------------------------------------------- */

/* A context of the given devices (checked valid; the aggregate device stands for its
 * members): a memory domain per backend platform or per device with a domain of its own,
 * one native context each (NVIDIA's kept and taken again: TUTTI_KEEP_CONTEXTS). */
cl_context tt_context_new(const cl_context_properties *properties, cl_uint num_devices,
                          const cl_device_id *devices,
                          void (CL_CALLBACK *pfn_notify)(const char *, const void *, size_t,
                                                         void *),
                          void *user_data, cl_int *errcode_ret);

/* --- programs (runtime/program/program.c) ------------------------------------------------- */

/* clCreateProgramWithSource, clCreateProgramWithBinary (the aggregate device taking the
 * binary given for it on every member), clBuildProgram of a device list without aggregates
 * (its own checks of the devices and the callback stay), clCompileProgram, clLinkProgram,
 * clGetProgramInfo and clGetProgramBuildInfo. */
cl_program tt_program_with_source(cl_context context, cl_uint count, const char **strings,
                                  const size_t *lengths, cl_int *errcode_ret);
cl_program tt_program_with_binary(cl_context context, cl_uint num_devices,
                                  const cl_device_id *device_list, const size_t *lengths,
                                  const unsigned char **binaries, cl_int *binary_status,
                                  cl_int *errcode_ret);
cl_int tt_program_build(cl_program program, cl_uint num_devices, const cl_device_id *device_list,
                        const char *options, void (CL_CALLBACK *pfn_notify)(cl_program, void *),
                        void *user_data);
cl_int tt_program_compile(cl_program program, cl_uint num_devices,
                          const cl_device_id *device_list, const char *options,
                          cl_uint num_input_headers, const cl_program *input_headers,
                          const char **header_include_names,
                          void (CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data);
cl_program tt_program_link(cl_context context, cl_uint num_devices,
                           const cl_device_id *device_list, const char *options,
                           cl_uint num_input_programs, const cl_program *input_programs,
                           void (CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data,
                           cl_int *errcode_ret);
cl_int tt_program_info(cl_program program, cl_program_info param_name, size_t param_value_size,
                       void *param_value, size_t *param_value_size_ret);
cl_int tt_program_build_info(cl_program program, cl_device_id device,
                             cl_program_build_info param_name, size_t param_value_size,
                             void *param_value, size_t *param_value_size_ret);

/* Build status of a program for one of its devices (CL_BUILD_NONE when unknown). */
cl_build_status tt_program_build_status(cl_program p, cl_device_id d);
/* CL_PROGRAM_NUM_KERNELS or CL_PROGRAM_KERNEL_NAMES (which) of a built program into out (cap
 * bytes, *len used), alike on every rank; CL_INVALID_PROGRAM_EXECUTABLE without a build. */
cl_int tt_program_kernels(cl_program program, cl_program_info which, void *out, size_t cap,
                          size_t *len);

/* --- kernels (runtime/program/kernel.c) --------------------------------------------------- */

/* clCreateKernel, clCreateKernelsInProgram, clSetKernelArg (with its checks), clGetKernelInfo,
 * clGetKernelWorkGroupInfo, clGetKernelArgInfo. */
cl_kernel tt_kernel_new(cl_program program, const char *kernel_name, cl_int *errcode_ret);
cl_int tt_kernels_in_program(cl_program program, cl_uint num_kernels, cl_kernel *kernels,
                             cl_uint *num_kernels_ret);
cl_int tt_kernel_arg_check_set(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                               const void *arg_value);
cl_int tt_kernel_info(cl_kernel kernel, cl_kernel_info param_name, size_t param_value_size,
                      void *param_value, size_t *param_value_size_ret);
cl_int tt_kernel_work_group_info(cl_kernel kernel, cl_device_id device,
                                 cl_kernel_work_group_info param_name, size_t param_value_size,
                                 void *param_value, size_t *param_value_size_ret);
cl_int tt_kernel_arg_info(cl_kernel kernel, cl_uint arg_indx, cl_kernel_arg_info param_name,
                          size_t param_value_size, void *param_value,
                          size_t *param_value_size_ret);

/* What clSetKernelArg's value is for the divergence check (a memory object's id, a value's
 * bytes: the same on every rank). */
uint64_t tt_kernel_arg_hash(cl_kernel k, cl_uint index, size_t size, const void *value);

/* Argument arg_index of kernel set to arg_size bytes at arg_value, as clSetKernelArg checked
 * them; Tutti's own kernels and launches set theirs here. */
cl_int tt_kernel_arg_set(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                         const void *arg_value);

/* The local memory a launch of k on the device of kd takes with its __local arguments as
 * set now: its own and theirs, each with its type's alignment (at least 16 bytes) where the
 * backend pads them, so that no launch the checks pass runs out of it (the kernel's lock). */
cl_ulong tt_kernel_local_bytes(cl_kernel k, const struct tt_kernel_device *kd);

/* --- what the source says for split launches (runtime/program/annotate.c) ----------------- */

/* Checks a program's pragmas at clBuildProgram: sets *error (malloc'd) to the first bad one's
 * message, or leaves it NULL. */
cl_int tt_split_check_pragmas(cl_program p, const char *options, char **error);
/* A new kernel's parameters and pragma annotation; what a kernel keeps for split launches,
 * released (the planner's state through k->drop_split_state). */
void tt_split_kernel_init(cl_kernel k);
void tt_split_kernel_free(cl_kernel k);
/* An annotation's text parsed for kernel k's parameters (NULL, with err, when it does not
 * parse; the caller holds k's lock). */
struct tt_ann *tt_split_kernel_parse(cl_kernel k, const char *text, char *err, size_t errlen);
/* Gives k an annotation derived from its code when it has none (TUTTI_AUTO_SPLIT; once per
 * kernel, at its first launch that splits; the program's analysis once per program). */
void tt_split_kernel_derive(cl_kernel k);

enum variant_kind { VARIANT_SHAPE, VARIANT_COMBINE };

/* A program built for a kernel's split launches: the prelude's variant for one launch shape, or the
 * kernel combining the partial results of one reduce rule (runtime/command/split_variant.c). */
struct tt_variant {
  struct tt_variant *next;
  enum variant_kind kind;
  cl_uint work_dim;
  size_t off[3], gws[3], lws[3];
  bool prelude;    /* answers the whole launch's builtins */
  uint64_t rebase; /* parameters taking windows (bit i: parameter i) */
  size_t rule;
  cl_program program;
  cl_kernel kernel;
};

/* A kernel's variants, released. */
void tt_split_variants_free(struct tt_variant *v);

/* A sampler of context with these properties, checked by icd/image.c: one native sampler in
 * every actual domain (runtime/program/sampler.c). */
cl_sampler tt_sampler_new(cl_context context, cl_bool normalized, cl_addressing_mode addressing,
                          cl_filter_mode filter, cl_int *errcode_ret);

#endif
