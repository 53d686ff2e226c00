/* The job's side of the host layer (runtime/job/host.h). */
#include "config.h"

#include "runtime/job/host.h"

#include <stdint.h>

#include "runtime/job/check.h"
#include "runtime/job/cluster.h"
#include "runtime/job/cluster_start.h"
#include "runtime/base/log.h"
#include "runtime/job/transport.h"
#include "runtime/job/turns.h"
#include "runtime/base/tutti_internal.h"

#define PIECE ((size_t)1 << 30)

static int host_start(int *rank)
{
  bool distributed = tt_cluster_start_job();
  *rank = tt_cluster_rank();
  return distributed ? tt_cluster_size() : 1;
}

static int host_share(const char *what, void *buf, size_t len)
{
  if (!tt_cluster_start_job())
    return 0;
  if (!tt_transport_running())
    return TUTTI_HOST_OVER;
  TT_TURN();
  if (tt_check_active) {
    uint64_t v = len;
    tt_check_call(what, 0, &v, 1);
  }
  tt_check_sync();
  TT_LOG(TT_LOG_MPI, "host layer: %s shares %zu bytes of rank 0", what, len);
  /* MPI counts are ints: pieces of at most 1 GiB (at least one, so that every rank meets). */
  size_t off = 0;
  do {
    size_t n = len - off < PIECE ? len - off : PIECE;
    if (tt_transport_bcast((char *)buf + off, n, 0) != 0) {
      TT_WARN("host layer: %s could not share rank 0's %zu bytes", what, len);
      return -1;
    }
    off += n;
  } while (off < len);
  return 0;
}

static int host_arrive(const char *what)
{
  if (!tt_cluster_start_job())
    return 0;
  if (!tt_transport_running())
    return TUTTI_HOST_OVER;
  TT_TURN();
  /* Hashed, so that a rank making a change the others do not make is named here. */
  if (tt_check_active)
    tt_check_call(what, 0, NULL, 0);
  tt_check_sync();
  int v = 0;
  return tt_transport_allreduce_min_int(&v);
}

static void host_result(const char *call, const char *path, long long ret, int err)
{
  /* With threads of the program's, the record would need the turn: answers are not kept. */
  if (tt_check_active && tt_transport_running() && !tt_turns_on())
    tt_check_result(call, path, ret, err);
}

static const struct tutti_host_ops ops = {TUTTI_HOST_OPS_VERSION, host_start, host_share,
                                          host_arrive, tt_turn_ordered, host_result};

TT_API const struct tutti_host_ops *tutti_host_interface(void)
{
  return &ops;
}
