/* Answers shared between ranks (runtime/job/cluster_share.h). */
#include "config.h"

#include "runtime/job/cluster_share.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/base/log.h"
#include "runtime/job/check.h"
#include "runtime/job/cluster.h"
#include "runtime/job/transport.h"

/* The exchanges of answers between ranks carry each rank's place in the program
 * (tt_check_stamp): ranks that diverged stop there, and never read each other's bytes as an
 * answer of their own (a kernel's description parsed from another rank's build log crashed
 * a rank of a job stopping for divergence). */
static bool same_place(struct tt_stamp a, struct tt_stamp b)
{
  return a.calls == b.calls && a.hash == b.hash;
}

int tt_cluster_share_answer(int owner, cl_int *err, void *buf, size_t *len, size_t cap)
{
  if (!tt_cluster_distributed())
    return 0;
  tt_check_sync();
  struct tt_stamp here = tt_check_stamp("share_answer");
  uint64_t head[4] = {(uint64_t)(int64_t)*err, *len, here.calls, here.hash};
  if (tt_transport_bcast(head, sizeof head, owner) != 0)
    return -1;
  struct tt_stamp there = {head[2], head[3]};
  if (!same_place(here, there))
    tt_check_disagree("share_answer", owner, there);
  *err = (cl_int)(int64_t)head[0];
  *len = head[1] <= cap ? head[1] : cap;
  if (*len && tt_transport_bcast(buf, *len, owner) != 0)
    return -1;
  if (head[1] > cap)
    *len = head[1]; /* the caller sees it did not fit */
  return 0;
}

/* Every rank's v, with its place checked; all holds nranks entries. */
static int gather_int(const char *site, int v, int *all)
{
  struct tt_stamp here = tt_check_stamp(site);
  uint64_t mine[3] = {(uint64_t)(int64_t)v, here.calls, here.hash};
  uint64_t *every = malloc((size_t)tt_cluster_size() * sizeof mine);
  if (!every || tt_transport_allgather(mine, sizeof mine, every) != 0) {
    free(every);
    return -1;
  }
  for (int r = 0; r < tt_cluster_size(); r++) {
    struct tt_stamp there = {every[3 * r + 1], every[3 * r + 2]};
    if (!same_place(here, there))
      tt_check_disagree(site, r, there);
    all[r] = (int)(int64_t)every[3 * r];
  }
  free(every);
  return 0;
}

int tt_cluster_share_first(bool have, cl_int *err, void *buf, size_t *len, size_t cap)
{
  if (!tt_cluster_distributed())
    return have ? 0 : -1;
  tt_check_sync();
  int *haves = malloc((size_t)tt_cluster_size() * sizeof *haves), root = tt_cluster_size();
  if (!haves || gather_int("share_first", have, haves) != 0) {
    free(haves);
    return -1;
  }
  for (int r = tt_cluster_size() - 1; r >= 0; r--)
    if (haves[r])
      root = r;
  free(haves);
  if (root == tt_cluster_size())
    return -1;
  return tt_cluster_share_answer(root, err, buf, len, cap);
}

cl_int tt_cluster_agree(cl_int v)
{
  if (!tt_cluster_distributed())
    return v;
  tt_check_sync();
  int *all = malloc((size_t)tt_cluster_size() * sizeof *all);
  if (!all || gather_int("agree", v, all) != 0) {
    free(all);
    return CL_OUT_OF_RESOURCES;
  }
  int x = v;
  for (int r = 0; r < tt_cluster_size(); r++)
    if (all[r] < x)
      x = all[r];
  free(all);
  return x;
}

int tt_cluster_allgatherv(const char *site, const void *mine, size_t len, void **all,
                          size_t **lens)
{
  *all = NULL;
  *lens = NULL;
  tt_check_sync();
  struct tt_stamp here = tt_check_stamp(site);
  unsigned char *buf = malloc(sizeof here + len);
  if (!buf)
    return -1;
  memcpy(buf, &here, sizeof here);
  if (len)
    memcpy(buf + sizeof here, mine, len);
  int rc = tt_transport_allgatherv(buf, sizeof here + len, all, lens);
  free(buf);
  if (rc != 0) {
    free(*all);
    free(*lens);
    *all = NULL;
    *lens = NULL;
    return -1;
  }
  /* Each rank's record without its stamp, in place. */
  unsigned char *from = *all, *to = *all;
  for (int r = 0; r < tt_cluster_size(); r++) {
    struct tt_stamp there = {0, 0};
    if ((*lens)[r] >= sizeof there)
      memcpy(&there, from, sizeof there);
    if ((*lens)[r] < sizeof there || !same_place(here, there))
      tt_check_disagree(site, r, there);
    size_t n = (*lens)[r] - sizeof there;
    memmove(to, from + sizeof there, n);
    from += (*lens)[r];
    to += n;
    (*lens)[r] = n;
  }
  return 0;
}
