/* Builds shared between the ranks (runtime/job/build.h). */
#include "config.h"

#include "runtime/job/build.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/base/backend.h"
#include "runtime/base/log.h"
#include "runtime/job/cluster.h"
#include "runtime/job/cluster_share.h"
#include "runtime/job/wire.h"
#include "runtime/job/transport.h"

/* Tutti's program binaries: a header naming the backend and the program's binary type (a
 * program made from the binary answers it, alike on every rank, whatever the backend makes
 * of it), then the backend's own binary. A binary made for another backend, or no Tutti
 * binary at all, is refused with CL_INVALID_BINARY instead of reaching a backend that would
 * take it (NVIDIA accepts junk until the build). */

void tt_build_binary_header(unsigned char *out, const char *backend, cl_program_binary_type type)
{
  memset(out, 0, BINARY_HEADER);
  memcpy(out, BINARY_MAGIC, 8);
  memcpy(out + 8, backend, strnlen(backend, BINARY_NAME - 1));
  uint32_t t = (uint32_t)type;
  memcpy(out + 8 + BINARY_NAME, &t, sizeof t);
}

/* The native part of a Tutti binary for a device of this backend (and the type it was), or
 * NULL. */
const unsigned char *tt_build_binary_payload(const unsigned char *bin, size_t len,
                                           const char *backend, cl_program_binary_type *type)
{
  unsigned char want[BINARY_HEADER];
  tt_build_binary_header(want, backend, 0);
  if (len <= BINARY_HEADER || memcmp(bin, want, 8 + BINARY_NAME) != 0 ||
      memcmp(bin + BINARY_HEADER - 4, want + BINARY_HEADER - 4, 4) != 0)
    return NULL;
  uint32_t t;
  memcpy(&t, bin + 8 + BINARY_NAME, sizeof t);
  if (t != CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT && t != CL_PROGRAM_BINARY_TYPE_LIBRARY &&
      t != CL_PROGRAM_BINARY_TYPE_EXECUTABLE)
    return NULL;
  *type = t;
  return bin + BINARY_HEADER;
}

/* The native devices of domain `dom` among list (or among the program's devices). */
cl_uint tt_build_native_devices(cl_program p, cl_uint dom, cl_uint n, const cl_device_id *list,
                              cl_device_id *out)
{
  if (!list) {
    n = p->ndevices;
    list = p->devices;
  }
  cl_uint k = 0;
  for (cl_uint i = 0; i < n; i++)
    if (tt_context_domain_of(p->context, list[i]) == dom)
      out[k++] = list[i]->native;
  return k;
}

cl_uint tt_build_device_position(cl_program p, cl_device_id d)
{
  for (cl_uint i = 0; i < p->ndevices; i++)
    if (p->devices[i] == d)
      return i;
  return p->ndevices;
}

/* A device's build result from some rank (tt_wire_build_results): {device, status, binary
 * type, log length, creation status}. */
struct taken {
  cl_program p;
  cl_int *created;
};

static void take_result(void *arg, const uint64_t *rec, const char *log)
{
  struct taken *t = arg;
  t->p->status[rec[0]] = (cl_build_status)(int64_t)rec[1];
  t->p->binary_type[rec[0]] = (cl_program_binary_type)rec[2];
  free(t->p->logs[rec[0]]);
  t->p->logs[rec[0]] = strndup(log, rec[3]);
  if (t->created)
    t->created[rec[0]] = (cl_int)(int64_t)rec[4];
}

/* After a build, compile, link or creation from binaries on every rank: each rank reports its
 * devices' status, binary type and log (and, from binaries, how each device's binary was
 * taken: `created`, read for this rank's devices and filled in for all), so a build error on
 * rank 3's device is seen on every rank; all ranks return the same code. In a job of one
 * rank the records are this rank's own. */
cl_int tt_build_share_results(cl_program p, cl_int err, cl_int *created)
{
  size_t len = 0, cap = 0;
  unsigned char *buf = NULL;
  pthread_mutex_lock(&p->obj.lock);
  cl_program_binary_type made = p->made;
  pthread_mutex_unlock(&p->obj.lock);
  for (cl_uint i = 0; i < p->ndevices; i++) {
    cl_device_id d = p->devices[i];
    if (!d->actual)
      continue;
    cl_uint k = tt_context_domain_of(p->context, d);
    cl_build_status st = CL_BUILD_NONE;
    cl_program_binary_type bt = CL_PROGRAM_BINARY_TYPE_NONE;
    size_t loglen = 0;
    char *log = NULL;
    if (p->native[k]) {
      const cl_icd_dispatch *disp = d->bp->d;
      disp->clGetProgramBuildInfo(p->native[k], d->native, CL_PROGRAM_BUILD_STATUS, sizeof st, &st, NULL);
      disp->clGetProgramBuildInfo(p->native[k], d->native, CL_PROGRAM_BINARY_TYPE, sizeof bt, &bt, NULL);
      disp->clGetProgramBuildInfo(p->native[k], d->native, CL_PROGRAM_BUILD_LOG, 0, NULL, &loglen);
      log = calloc(1, loglen + 1);
      if (log)
        disp->clGetProgramBuildInfo(p->native[k], d->native, CL_PROGRAM_BUILD_LOG, loglen, log, NULL);
      else
        loglen = 0;
    }
    /* What the program is where the backend made something of it: what Tutti asked for, or
     * what the binary's header says. */
    cl_int made_ok = created ? created[i] : CL_SUCCESS;
    if (created && made_ok == CL_SUCCESS)
      bt = p->binary_type[i];
    else if (made != CL_PROGRAM_BINARY_TYPE_NONE && bt != CL_PROGRAM_BINARY_TYPE_NONE)
      bt = made;
    uint64_t rec[TT_WIRE_BUILD_FIELDS] = {i, (uint64_t)(int64_t)st, bt, loglen,
                                          (uint64_t)(int64_t)made_ok};
    size_t need = len + sizeof rec + loglen;
    if (need > cap) {
      cap = need * 2;
      unsigned char *b = realloc(buf, cap);
      if (!b) {
        free(log);
        break;
      }
      buf = b;
    }
    memcpy(buf + len, rec, sizeof rec);
    memcpy(buf + len + sizeof rec, log ? log : "", loglen);
    len = need;
    free(log);
  }
  /* Every rank's records, in a job of several; this rank's own, else. */
  void *all = buf, *gathered = NULL;
  size_t total = len, *lens = NULL;
  if (tt_cluster_distributed()) {
    all = NULL;
    if (tt_cluster_allgatherv("build results", buf, len, &gathered, &lens) == 0) {
      all = gathered;
      total = 0;
      for (int r = 0; r < tt_cluster_size(); r++)
        total += lens[r];
    }
  }
  /* Threads building one program for their own devices at once each take every device's
   * results (tests/api/threads: ThreadSanitizer saw two threads replace one log). */
  struct taken t = {p, created};
  pthread_mutex_lock(&p->obj.lock);
  const char *why = all ? tt_wire_build_results(all, total, p->ndevices, take_result, &t) : NULL;
  if (why) {
    TT_WARN("a build's results from another rank cannot be read (%s)", why);
    err = CL_OUT_OF_RESOURCES;
    all = NULL;
  }
  p->recorded = all != NULL;
  pthread_mutex_unlock(&p->obj.lock);
  free(gathered);
  free(lens);
  free(buf);
  return tt_cluster_distributed() ? tt_cluster_agree(err) : err;
}

/* Turns of a build. Where the ranks of a node each have a PoCL kernel cache of their own
 * (runtime/base/backend.c), a rank about to build for a PoCL device first takes what the node's
 * other ranks compiled (a program built for one device at a time is then compiled once per
 * node); ranks of one host building one program at once take turns: the lowest builds first,
 * alone, and the others build after it, from its entries (every rank compiling everything
 * made a cold start several times one rank's: doc/testing.md, "Latest figures"). One exchange
 * between the turns, none where no host has two such ranks: every rank decides alike from
 * the device table. */

static bool pocl_device(cl_device_id d)
{
  return !strcmp(d->backend, "pocl");
}

struct tt_turns tt_build_turns(cl_program p, cl_uint n, const cl_device_id *list, cl_device_id *nd,
                             bool need_native)
{
  struct tt_turns t = {false, -1, p, n, list, nd, need_native, 0, 0};
  if (!tt_cluster_distributed())
    return t;
  if (!list) {
    n = p->ndevices;
    list = p->devices;
  }
  const char *mine = NULL;
  for (cl_uint i = 0; i < n; i++)
    if (pocl_device(list[i]) && list[i]->actual)
      mine = list[i]->host;
  for (cl_uint i = 0; i < n; i++) {
    if (!pocl_device(list[i]))
      continue;
    for (cl_uint j = 0; j < n; j++)
      if (pocl_device(list[j]) && list[j]->rank != list[i]->rank &&
          !strcmp(list[j]->host, list[i]->host))
        t.on = true;
    if (mine && !strcmp(list[i]->host, mine) && (t.leader < 0 || list[i]->rank < t.leader))
      t.leader = list[i]->rank;
  }
  return t;
}

/* Whether domain k builds in this turn (0 or 1); before it does, a PoCL domain takes the
 * node's other ranks' builds. */
static bool builds_in_turn(const struct tt_turns *t, int turn, cl_context ctx, cl_uint k)
{
  bool pocl = pocl_device(ctx->domains[k].first_device);
  bool first = !t->on || !pocl || t->leader == tt_cluster_rank();
  if (first != (turn == 0))
    return false;
  if (pocl)
    tt_backend_pocl_adopt();
  return true;
}

/* The next domain of this rank that builds (its index and its n native devices, in t->nd):
 * first those of the first turn, then, once every rank's first turn is done, the others. */
bool tt_build_turn_next(struct tt_turns *t, cl_uint *k, cl_uint *n)
{
  cl_context ctx = t->p->context;
  for (;;) {
    if (t->k == ctx->ndomains) {
      if (t->turn == 1)
        return false;
      t->turn = 1;
      t->k = 0;
      if (t->on)
        tt_cluster_agree(CL_SUCCESS); /* every rank: the leaders' builds are done */
    }
    cl_uint d = t->k++;
    cl_uint m = tt_build_native_devices(t->p, d, t->num, t->list, t->nd);
    if (!m || !ctx->domains[d].actual || (t->need_native && !t->p->native[d]) ||
        !builds_in_turn(t, t->turn, ctx, d))
      continue;
    *k = d;
    *n = m;
    return true;
  }
}

/* The Tutti binary of one device: size (and bytes, when out is not NULL). */
static cl_int device_binary(cl_program p, cl_device_id d, size_t *size, unsigned char *out)
{
  cl_uint k = tt_context_domain_of(p->context, d), pos = tt_build_device_position(p, d);
  *size = 0;
  if (k >= p->context->ndomains || !p->native[k] || pos == p->ndevices)
    return CL_SUCCESS;
  if (p->given && p->made == CL_PROGRAM_BINARY_TYPE_NONE) {
    *size = p->given_len[pos];
    if (out)
      memcpy(out, p->given[pos], *size);
    return CL_SUCCESS;
  }
  cl_program_binary_type type = p->binary_type[pos];
  if (!p->recorded)
    TT_NCALL(d->bp, clGetProgramBuildInfo, p->native[k], d->native, CL_PROGRAM_BINARY_TYPE,
             sizeof type, &type, NULL);
  if (type == CL_PROGRAM_BINARY_TYPE_NONE)
    return CL_SUCCESS;
  const cl_icd_dispatch *disp = d->bp->d;
  cl_uint n = 0;
  cl_int err = disp->clGetProgramInfo(p->native[k], CL_PROGRAM_NUM_DEVICES, sizeof n, &n, NULL);
  if (err != CL_SUCCESS)
    return err;
  cl_device_id nd[64];
  size_t sizes[64];
  unsigned char *bins[64] = {0};
  if (n > 64)
    n = 64;
  if (n)
    err = disp->clGetProgramInfo(p->native[k], CL_PROGRAM_DEVICES, n * sizeof *nd, nd, NULL);
  if (err == CL_SUCCESS && n)
    err = disp->clGetProgramInfo(p->native[k], CL_PROGRAM_BINARY_SIZES, n * sizeof *sizes, sizes, NULL);
  if (err != CL_SUCCESS)
    return err;
  cl_uint mine = n;
  for (cl_uint i = 0; i < n; i++)
    if (nd[i] == d->native)
      mine = i;
  if (mine == n || !sizes[mine])
    return CL_SUCCESS;
  *size = BINARY_HEADER + sizes[mine];
  if (!out)
    return CL_SUCCESS;
  tt_build_binary_header(out, d->backend, type);
  /* Backends fill every entry (PoCL does not skip NULL ones): give each a place. */
  for (cl_uint i = 0; i < n && err == CL_SUCCESS; i++) {
    bins[i] = i == mine ? out + BINARY_HEADER : malloc(sizes[i] ? sizes[i] : 1);
    if (!bins[i])
      err = CL_OUT_OF_HOST_MEMORY;
  }
  if (err == CL_SUCCESS)
    err = disp->clGetProgramInfo(p->native[k], CL_PROGRAM_BINARIES, n * sizeof *bins, bins, NULL);
  for (cl_uint i = 0; i < n; i++)
    if (i != mine)
      free(bins[i]);
  return err;
}

/* A device's binary, from its owner in a job of several ranks (every rank asks alike). */
cl_int tt_build_binary_of(cl_program p, cl_device_id d, size_t *size, unsigned char *out)
{
  if (!tt_cluster_distributed())
    return device_binary(p, d, size, out);
  cl_int err = d->actual ? device_binary(p, d, size, NULL) : CL_SUCCESS;
  size_t len = sizeof *size;
  if (tt_cluster_share_answer(d->rank, &err, size, &len, sizeof *size) != 0)
    return CL_OUT_OF_RESOURCES;
  if (err != CL_SUCCESS || !out || !*size)
    return err;
  if (d->actual)
    err = device_binary(p, d, size, out);
  len = *size;
  if (tt_cluster_share_answer(d->rank, &err, out, &len, *size) != 0)
    return CL_OUT_OF_RESOURCES;
  return err;
}

