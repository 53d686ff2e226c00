/* Builds shared between the ranks (runtime/job/build.c): every device's build results
 * gathered from its owner after a compile, link, build or creation from binaries; the turns
 * in which the ranks of a node build one program so that it is compiled once; Tutti's program
 * binaries (a header naming the backend and the binary type, then the backend's own binary),
 * each device's sent by its owner. runtime/program/program.c calls these. */
#ifndef TUTTI_JOB_BUILD_H
#define TUTTI_JOB_BUILD_H

#include "runtime/base/tutti_internal.h"

#define BINARY_MAGIC "TUTTIBIN"
#define BINARY_HEADER 40 /* magic (8 bytes), backend short name (24 bytes, zero padded),
                          * binary type (4 bytes), zero (4 bytes) */
#define BINARY_NAME 24

void tt_build_binary_header(unsigned char *out, const char *backend, cl_program_binary_type type);
/* The native part of a Tutti binary for a device of this backend (and the type it was), or
 * NULL. */
const unsigned char *tt_build_binary_payload(const unsigned char *bin, size_t len,
                                             const char *backend, cl_program_binary_type *type);

/* The native devices of domain `dom` among list (or among the program's devices). */
cl_uint tt_build_native_devices(cl_program p, cl_uint dom, cl_uint n, const cl_device_id *list,
                                cl_device_id *out);
/* Where device d is in p's device list (p->ndevices when it is not there). */
cl_uint tt_build_device_position(cl_program p, cl_device_id d);

/* Every rank, after a build, compile, link or creation from binaries: each device's status,
 * binary type and log (and how each binary was taken: `created`) from its owner; the error
 * every rank returns. */
cl_int tt_build_share_results(cl_program p, cl_int err, cl_int *created);

/* The turns of one build: tt_build_turns for the devices that build (NULL: the program's),
 * with room nd for a domain's native devices, then tt_build_turn_next gives each domain of
 * this rank that builds, in its turn. */
struct tt_turns {
  bool on;    /* some host has two ranks or more building for PoCL */
  int leader; /* the first such rank of this rank's host, or -1 */
  /* The walk over the domains (turn_next): the program, the devices that build (NULL: the
   * program's), room for a domain's native devices, whether a domain needs a native program
   * already (not for a link, which makes it), and where the walk is. */
  cl_program p;
  cl_uint num;
  const cl_device_id *list;
  cl_device_id *nd;
  bool need_native;
  int turn;
  cl_uint k;
};

struct tt_turns tt_build_turns(cl_program p, cl_uint n, const cl_device_id *list,
                               cl_device_id *nd, bool need_native);
bool tt_build_turn_next(struct tt_turns *t, cl_uint *k, cl_uint *n);

/* A device's Tutti binary (size, and bytes when out is not NULL), from its owner in a job of
 * several ranks (every rank asks alike). */
cl_int tt_build_binary_of(cl_program p, cl_device_id d, size_t *size, unsigned char *out);

#endif
