/* Answers shared between ranks (runtime/job/cluster_share.c): collectives every rank makes at
 * the same program step, each checked to be at the same place in the program
 * (runtime/job/check.h). */
#ifndef TUTTI_CLUSTER_SHARE_H
#define TUTTI_CLUSTER_SHARE_H

#include "runtime/job/cluster.h"

/* Collective, every rank at the same program step: `owner` computed an answer (*err and
 * *len bytes in buf, at most cap); afterwards every rank holds it. */
int tt_cluster_share_answer(int owner, cl_int *err, void *buf, size_t *len, size_t cap);

/* Collective: the lowest rank whose `have` is true shares its answer, as above; returns -1
 * (and shares nothing) when no rank has one. */
int tt_cluster_share_first(bool have, cl_int *err, void *buf, size_t *len, size_t cap);

/* Collective: every rank's len bytes, as tt_transport_allgatherv gives them (malloc'd, for
 * the caller to free), once every rank is found at the same place in the program (`site`
 * names the exchange: runtime/job/check.h). */
int tt_cluster_allgatherv(const char *site, const void *mine, size_t len, void **all,
                          size_t **lens);

/* Collective: the minimum of v over all ranks (errors are negative: every rank then returns
 * the same, most negative, code). */
cl_int tt_cluster_agree(cl_int v);

#endif
