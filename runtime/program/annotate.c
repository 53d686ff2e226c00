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
#include "annotations/derive.h"
#include "runtime/base/env.h"
#include "runtime/job/check.h"

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
  tt_ann_free(k->ann_merged);
  tt_ann_free(k->ann);
  free(k->ann_text);
  free(k->params);
}

/* --- automatic splitting (doc/split.md, "Automatic splitting") ------------------------------- */

/* The derived annotation of kernel `name` of p, its program's analysis made once (NULL with
 * why when there is none: no libclang, a source clang does not parse). */
static const struct tt_derived *derived_of(cl_program p, const char *name, char *why,
                                           size_t whylen)
{
  pthread_mutex_lock(&p->obj.lock);
  if (!p->derive_done) {
    p->derive_done = true;
    const struct tt_clang *cx = tt_clang_open(tt_env()->libclang, p->derive_why,
                                              sizeof p->derive_why);
    p->nderived = cx ? tt_derive(cx, p->stripped, p->options, &p->derived, p->derive_why,
                                 sizeof p->derive_why)
                     : -1;
  }
  const struct tt_derived *d = NULL;
  for (long i = 0; i < p->nderived && !d; i++)
    if (!strcmp(p->derived[i].name, name))
      d = &p->derived[i];
  snprintf(why, whylen, "%s", p->nderived < 0 ? p->derive_why : "clang finds no such kernel");
  pthread_mutex_unlock(&p->obj.lock);
  return d;
}

/* Without libclang, merged writes still apply where OpenCL leaves no way for work-groups of
 * one launch to see each other's writes: no atomics (nor images) in the source. Every buffer
 * the kernel may write is merged, the others read whole. */
static char *merge_all_text(cl_kernel k, const char *src, char *why, size_t whylen)
{
  if (strstr(src, "atom") || strstr(src, "image")) {
    size_t n = strlen(why);
    snprintf(why + n, whylen - n, ", and its source may use atomics or images");
    return NULL;
  }
  size_t cap = 64, n = 0;
  char *t = malloc(cap);
  if (t)
    n = (size_t)snprintf(t, cap, "global [_g0] =>");
  bool any = false;
  for (long i = 0; t && i < k->nparams; i++) {
    const struct tt_ann_param *prm = &k->params[i];
    if (!prm->pointer || prm->is_const)
      continue;
    size_t need = n + strlen(prm->name) + 16;
    if (need > cap) {
      char *g = realloc(t, cap = need * 2);
      if (!g) {
        free(t);
        return NULL;
      }
      t = g;
    }
    n += (size_t)snprintf(t + n, cap - n, "%s merge %s[:]", any ? "," : "", prm->name);
    any = true;
  }
  if (t && !any) {
    snprintf(why, whylen, "it writes no buffer");
    free(t);
    return NULL;
  }
  return t;
}

/* The parameters (below 64) that annotation `ann` reduces and whose derived annotation `text`
 * reduces with the same operator: the kernel only accumulates into them with atomics, so a
 * launch of one part may work on the buffer itself. */
static uint64_t accumulated(cl_kernel k, const struct tt_ann *ann, const char *text)
{
  char err[256];
  struct tt_ann *d = text ? tt_split_kernel_parse(k, text, err, sizeof err) : NULL;
  uint64_t bits = 0;
  for (size_t r = 0; d && r < tt_ann_nrules(ann); r++) {
    struct tt_ann_rule_info w = tt_ann_rule(ann, r);
    size_t x = tt_ann_reduce_rule(d, w.param);
    if (w.mode == TT_ANN_REDUCE && w.param < 64 && x != SIZE_MAX &&
        tt_ann_rule(d, x).mode == TT_ANN_REDUCE && tt_ann_rule(d, x).op == w.op)
      bits |= (uint64_t)1 << w.param;
  }
  tt_ann_free(d);
  return bits;
}

static bool reduces(const struct tt_ann *a)
{
  for (size_t r = 0; a && r < tt_ann_nrules(a); r++)
    if (tt_ann_rule(a, r).mode == TT_ANN_REDUCE)
      return true;
  return false;
}

void tt_split_kernel_derive(cl_kernel k)
{
  const struct tt_env *env = tt_env();
  pthread_mutex_lock(&k->obj.lock);
  bool tried = k->auto_tried, written = k->ann != NULL, reduced = reduces(k->ann);
  k->auto_tried = true;
  pthread_mutex_unlock(&k->obj.lock);
  if (tried || k->nparams < 0 || env->auto_split == TT_AUTO_OFF || (written && !reduced))
    return;
  char why[512] = "";
  const struct tt_derived *d = derived_of(k->program, k->name, why, sizeof why);
  if (written) {
    /* A written annotation is used as written; what the code shows tells which of its
     * reductions the kernel only accumulates into. */
    pthread_mutex_lock(&k->obj.lock);
    if (k->ann && !k->derived && d && d->text)
      k->accumulated = accumulated(k, k->ann, d->text);
    pthread_mutex_unlock(&k->obj.lock);
    return;
  }
  char *text = NULL, *alt = NULL;
  int tier = TT_TIER_WHOLE;
  if (!d) {
    if (env->auto_split != TT_AUTO_DERIVED &&
        (text = merge_all_text(k, k->program->stripped, why, sizeof why)))
      tier = TT_TIER_MERGED;
  } else if (d->tier == TT_TIER_WHOLE) {
    snprintf(why, sizeof why, "%s", d->why);
  } else if (env->auto_split == TT_AUTO_DERIVED && d->tier == TT_TIER_MERGED) {
    snprintf(why, sizeof why, "%s (TUTTI_AUTO_SPLIT=derived)", d->why);
  } else if (env->auto_split == TT_AUTO_MERGE_ALL && d->merged) {
    text = strdup(d->merged);
    tier = TT_TIER_MERGED;
  } else {
    text = strdup(d->text);
    tier = d->tier;
    if (env->auto_split != TT_AUTO_DERIVED && d->merged)
      alt = strdup(d->merged);
  }
  char err[256] = "";
  pthread_mutex_lock(&k->obj.lock);
  struct tt_ann *a = text ? tt_split_kernel_parse(k, text, err, sizeof err) : NULL;
  struct tt_ann *b = alt ? tt_split_kernel_parse(k, alt, err, sizeof err) : NULL;
  if (text && !a) {
    /* A parameter list the scan reads otherwise than clang (macros in it). */
    snprintf(why, sizeof why, "its derived annotation does not parse: %s", err);
    tier = TT_TIER_WHOLE;
  }
  if (a && !k->ann) {
    k->accumulated = accumulated(k, a, text);
    k->ann = a;
    k->ann_text = text;
    k->ann_merged = b;
    k->derived = true;
    k->tier = tier;
    a = b = NULL;
    text = NULL;
  }
  pthread_mutex_unlock(&k->obj.lock);
  tt_ann_free(a);
  tt_ann_free(b);
  if (tier == TT_TIER_WHOLE)
    TT_LOG(TT_LOG_PLAN, "kernel '%s' runs whole on the aggregate device: %s", k->name, why);
  else
    TT_LOG(TT_LOG_PLAN, "kernel '%s' splits by %s: #pragma tutti %s", k->name,
           tier == TT_TIER_REGIONS ? "derived regions (tier 1)" : "merged writes (tier 2)",
           k->ann_text ? k->ann_text : "");
  /* Every rank derives the same from the same source, options and libclang. */
  if (tt_check_active) {
    pthread_mutex_lock(&k->obj.lock);
    uint64_t v[2] = {k->obj.id, k->ann_text ? tt_check_bytes(k->ann_text, strlen(k->ann_text)) : 0};
    pthread_mutex_unlock(&k->obj.lock);
    tt_check_call("automatic split", 0, v, 2);
  }
  free(text);
  free(alt);
}
