/* The job's side of the host layer (runtime/host.h). */
#include "config.h"

#include "runtime/host.h"

#include <stdint.h>

#include "runtime/check.h"
#include "runtime/cluster.h"
#include "runtime/log.h"
#include "runtime/transport.h"
#include "runtime/tutti_internal.h"

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
  if (tt_check_active) {
    uint64_t v = len;
    tt_check_call(what, 0, &v, 1);
  }
  tt_check_sync();
  TT_LOG(TT_LOG_MPI, "host layer: %s shares %zu bytes of rank 0", what, len);
  for (size_t off = 0; off < len || off == 0; off += PIECE) {
    size_t n = len - off < PIECE ? len - off : PIECE;
    if (tt_transport_bcast((char *)buf + off, n, 0) != 0) {
      TT_WARN("host layer: %s could not share rank 0's %zu bytes", what, len);
      return -1;
    }
    if (len == 0)
      break;
  }
  return 0;
}

static const struct tutti_host_ops ops = {TUTTI_HOST_OPS_VERSION, host_start, host_share};

TT_API const struct tutti_host_ops *tutti_host_interface(void)
{
  return &ops;
}
