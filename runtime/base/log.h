/* Log lines: "[tutti RANK file:line] message", one category each (runtime/base/env.h), enabled
 * by TUTTI_DEBUG and compiled out with --disable-debug (warnings always print). */
#ifndef TUTTI_LOG_H
#define TUTTI_LOG_H

#include "runtime/base/env.h"

#include <stdio.h>
#include <string.h>

/* The rank each line names (0 until the job's start tells: runtime/job/cluster_start.c). */
void tt_log_set_rank(int rank);

/* Where Tutti's messages go: standard error, or the one the host layer kept when it
 * discarded this rank's console. */
FILE *tt_log_file(void);

/* A crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) prints the stack on Tutti's log once,
 * then the signal's default action ends the rank; SIGQUIT prints every thread's stack, then
 * ends it likewise (unless the program or MPI had its own handler). Installed once MPI
 * started; _again takes them back from drivers loaded since (a no-op before). */
void tt_log_crash_handler(void);
void tt_log_crash_handler_again(void);

/* Tutti stops the job from this rank (MPI_Abort follows): under tutti-run the rank's status
 * file says so, for tutti-run's closing lines. */
void tt_log_stopping_job(void);

void tt_log_line(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Name of an OpenCL error code ("CL_INVALID_VALUE"), for messages. */
const char *tt_error_name(cl_int err);

#ifdef TT_ENABLE_DEBUG
#define TT_LOG(cat, ...)                                                                          \
  do {                                                                                            \
    if (tt_env()->debug & (cat))                                                                  \
      tt_log_line(__FILE__, __LINE__, __VA_ARGS__);                                               \
  } while (0)
#else
#define TT_LOG(cat, ...) do { } while (0)
#endif

/* Always printed: the user must see these (no backend, bad settings). */
#define TT_WARN(...) tt_log_line(__FILE__, __LINE__, __VA_ARGS__)

/* Argument checks of the entry points. The clause of the specification is quoted above each
 * use; with TUTTI_DEBUG=err the refused condition is logged under the error's name. */
/* Sets *errcode_ret (when given) to err. */
static inline void tt_set_err(cl_int *errcode_ret, cl_int err)
{
  if (errcode_ret)
    *errcode_ret = err;
}

#define TT_RETURN_IF(cond, err)                                                                   \
  do {                                                                                            \
    if (__builtin_expect(!!(cond), 0)) {                                                          \
      TT_LOG(TT_LOG_ERR, "%s: %s (%s)", __func__, #err, #cond);                                   \
      return (err);                                                                               \
    }                                                                                             \
  } while (0)

/* Returns the code of a call that failed (a check of its own already said why). */
#define TT_TRY(x)                                                                                 \
  do {                                                                                            \
    cl_int e_ = (x);                                                                              \
    if (e_ != CL_SUCCESS)                                                                         \
      return e_;                                                                                  \
  } while (0)

/* For constructors: sets the local `err` and jumps to the single `out:` label. */
#define TT_GOTO_IF(cond, code)                                                                    \
  do {                                                                                            \
    if (__builtin_expect(!!(cond), 0)) {                                                          \
      TT_LOG(TT_LOG_ERR, "%s: %s (%s)", __func__, #code, #cond);                                  \
      err = (code);                                                                               \
      goto out;                                                                                   \
    }                                                                                             \
  } while (0)

/* Copies an info value out with the specification's size rules:
 * CL_INVALID_VALUE if param_value is not NULL and param_value_size is smaller than the
 * value. */
static inline cl_int tt_info(size_t size, void *value, size_t *size_ret, const void *src,
                             size_t src_size)
{
  if (value) {
    if (size < src_size) {
      TT_LOG(TT_LOG_ERR, "info query: CL_INVALID_VALUE (param_value_size %zu < %zu)", size,
             src_size);
      return CL_INVALID_VALUE;
    }
    if (src_size)
      memcpy(value, src, src_size);
  }
  if (size_ret)
    *size_ret = src_size;
  return CL_SUCCESS;
}

#define TT_INFO(v) tt_info(param_value_size, param_value, param_value_size_ret, &(v), sizeof(v))
#define TT_INFO_STR(s) tt_info(param_value_size, param_value, param_value_size_ret, (s), strlen(s) + 1)

#endif
