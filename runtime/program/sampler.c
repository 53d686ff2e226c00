/* Samplers (runtime/program/program.h): a sampler's properties, and one native sampler in
 * every actual domain of its context, which kernel arguments take (runtime/program/kernel.c). */
#include "config.h"

#include "runtime/program/program.h"

#include <stdlib.h>

#include "runtime/base/backend.h"
#include "runtime/base/log.h"

static void destroy_sampler(struct tt_object *o)
{
  cl_sampler s = (cl_sampler)o;
  for (cl_uint i = 0; s->native && i < s->context->ndomains; i++)
    if (s->native[i])
      TT_NATIVE_DISPATCH(s->native[i])->clReleaseSampler(s->native[i]);
  free(s->native);
  TT_RELEASE(s->context);
  free(s);
}

cl_sampler tt_sampler_new(cl_context context, cl_bool normalized, cl_addressing_mode addressing,
                          cl_filter_mode filter, cl_int *errcode_ret)
{
  cl_int err = CL_SUCCESS;
  cl_sampler s = calloc(1, sizeof *s);
  cl_sampler *native = calloc(context->ndomains, sizeof *native);
  if (!s || !native) {
    free(s);
    free(native);
    tt_set_err(errcode_ret, CL_OUT_OF_HOST_MEMORY);
    return NULL;
  }
  tt_object_init(&s->obj, TT_SAMPLER, destroy_sampler);
  s->context = context;
  TT_RETAIN(context);
  s->native = native;
  s->normalized = normalized;
  s->addressing = addressing;
  s->filter = filter;
  for (cl_uint i = 0; i < context->ndomains && err == CL_SUCCESS; i++) {
    struct tt_domain *dm = &context->domains[i];
    if (dm->actual)
      native[i] = dm->bp->d->clCreateSampler(dm->native, normalized, addressing, filter, &err);
  }
  tt_set_err(errcode_ret, err);
  if (err != CL_SUCCESS) {
    TT_LOG(TT_LOG_ERR, "clCreateSampler: %s", tt_error_name(err));
    TT_RELEASE(s);
    return NULL;
  }
  return s;
}
