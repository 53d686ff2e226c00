/* What a program's source says for split launches (runtime/program/program.h): its #pragma
 * tutti lines checked at build time, each kernel's parameters and annotation. */
#include "config.h"

#include "runtime/program/program.h"

#include "runtime/base/backend.h"
#include "runtime/base/log.h"
#include "runtime/job/cluster.h"
#include "runtime/job/devices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotations/annotation.h"

/* The pragma annotation of kernel `name` in program p, or NULL. */
static const struct tt_ann_pragma *pragma_of(cl_program p, const char *name)
{
  for (size_t i = 0; i < p->npragmas; i++)
    if (p->pragmas[i].kernel && !strcmp(p->pragmas[i].kernel, name))
      return &p->pragmas[i];
  return NULL;
}

cl_int tt_split_check_pragmas(cl_program p, const char *options, char **error)
{
  *error = NULL;
  if (!p->npragmas)
    return CL_SUCCESS;
  struct tt_ann_macro *macros;
  size_t nmacros = tt_ann_macros(options, &macros);
  char msg[512] = "";
  for (size_t i = 0; i < p->npragmas && !msg[0]; i++) {
    const struct tt_ann_pragma *pr = &p->pragmas[i];
    if (!pr->kernel) {
      snprintf(msg, sizeof msg, "line %d: #pragma tutti names no kernel and no kernel follows it",
               pr->line);
      break;
    }
    if (pragma_of(p, pr->kernel) != pr) {
      snprintf(msg, sizeof msg, "#pragma tutti of kernel '%s', line %d: the kernel's second "
               "annotation (the first is on line %d)", pr->kernel, pr->line,
               pragma_of(p, pr->kernel)->line);
      break;
    }
    struct tt_ann_param *params;
    long n = tt_ann_kernel_params(p->stripped, pr->kernel, &params);
    if (n < 0) {
      snprintf(msg, sizeof msg, "#pragma tutti of kernel '%s', line %d: the source defines no "
               "such kernel", pr->kernel, pr->line);
      break;
    }
    char err[256];
    struct tt_ann *a = tt_ann_parse(pr->text, params, (size_t)n, macros, nmacros, err, sizeof err);
    if (!a) {
      /* "column N: ..." of the annotation, made a column of the source line. */
      int col = 0;
      const char *rest = err;
      if (sscanf(err, "column %d:", &col) == 1 && (rest = strchr(err, ':')))
        rest += 2;
      snprintf(msg, sizeof msg, "#pragma tutti of kernel '%s', line %d, column %d: %s",
               pr->kernel, pr->line, pr->column + (col > 0 ? col - 1 : 0), rest);
    }
    tt_ann_free(a);
    free(params);
  }
  free(macros);
  if (msg[0]) {
    size_t len = strlen(msg);
    *error = malloc(len + 2);
    if (!*error)
      return CL_OUT_OF_HOST_MEMORY;
    snprintf(*error, len + 2, "%s\n", msg);
  }
  return CL_SUCCESS;
}

struct tt_ann *tt_split_kernel_parse(cl_kernel k, const char *text, char *err, size_t errlen)
{
  struct tt_ann_macro *macros;
  size_t nmacros = tt_ann_macros(k->program->options, &macros);
  struct tt_ann *a = tt_ann_parse(text, k->params, (size_t)k->nparams, macros, nmacros, err, errlen);
  free(macros);
  return a;
}

void tt_split_kernel_init(cl_kernel k)
{
  cl_program p = k->program;
  k->nparams = -1;
  if (!p->stripped)
    return;
  k->nparams = tt_ann_kernel_params(p->stripped, k->name, &k->params);
  /* A signature the scan reads otherwise than the backend (macros in it): no annotations. */
  if (k->nparams >= 0 && (cl_uint)k->nparams != k->nargs) {
    free(k->params);
    k->params = NULL;
    k->nparams = -1;
  }
  const struct tt_ann_pragma *pr = pragma_of(p, k->name);
  if (!pr || k->nparams < 0)
    return;
  char err[256];
  k->ann = tt_split_kernel_parse(k, pr->text, err, sizeof err);
  k->ann_text = k->ann ? strdup(pr->text) : NULL;
}


void tt_split_variants_free(struct tt_variant *v)
{
  while (v) {
    struct tt_variant *next = v->next;
    if (v->kernel)
      TT_RELEASE(v->kernel);
    if (v->program)
      TT_RELEASE(v->program);
    free(v);
    v = next;
  }
}

void tt_split_kernel_free(cl_kernel k)
{
  if (k->drop_split_state)
    k->drop_split_state(k);
  tt_split_variants_free(k->variants);
  tt_ann_free(k->ann);
  free(k->ann_text);
  free(k->params);
}
