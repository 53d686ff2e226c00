/* Devices as OpenCL sees them: the types a request may name, the devices of a type, and the
 * aggregate device (TUTTI_AGGREGATE, doc/split.md), one more device standing for every device
 * of its type in the job, with its answers to device queries. What a queue or a launch on the
 * aggregate device does lives above, in runtime/command/aggregate.c. */
#ifndef TUTTI_DEVICES_H
#define TUTTI_DEVICES_H

#include "runtime/job/cluster.h"

/* Device types: whether a requested type is valid, and whether a device matches it. */
bool tt_device_type_valid(cl_device_type t);
bool tt_device_matches(cl_device_id d, cl_device_type t);

/* The devices of a type, the aggregate device first (as clGetDeviceIDs lists them): up to
 * cap into out (NULL: only counted); returns how many there are. */
cl_uint tt_devices_of_type(cl_device_type type, cl_uint cap, cl_device_id *out);

/* The aggregate device, made at the first question (NULL without TUTTI_AGGREGATE); a device
 * with its aggregate replaced by its first member; a device list with aggregates replaced by
 * their members, without repeats (malloc'd; the count, 0 without memory). */
cl_device_id tt_aggregate_device(void);
cl_device_id tt_device_resolve(cl_device_id d);
cl_uint tt_devices_expand(cl_uint n, const cl_device_id *in, cl_device_id **out);

/* clGetDeviceInfo of a valid device: Tutti's own answers (OpenCL 1.2, no images, the
 * extensions it carries through), the owner's for the rest; the aggregate device combines its
 * members' (sums, smallest limits, the first member's words). */
cl_int tt_device_info(cl_device_id device, cl_device_info param_name, size_t param_value_size,
                      void *param_value, size_t *param_value_size_ret);
cl_int tt_aggregate_device_info(cl_device_id agg, cl_device_info param_name,
                                size_t param_value_size, void *param_value,
                                size_t *param_value_size_ret);

/* clCreateSubDevices once checked (runtime/job/subdevices.c): the owner of `in` partitions it
 * as props say and every rank adds the sub-devices to its table alike; *num_ret their count,
 * out (unless NULL, then none is made) at least num_devices entries. */
cl_int tt_devices_partition(cl_device_id in, const cl_device_partition_property *props,
                            cl_uint num_devices, cl_device_id *out, cl_uint *num_ret);
/* A device's answers about partitions: its parent and partition (a sub-device's), its
 * reference count (1 for the table's), how it can be partitioned (the backend's). */
cl_int tt_devices_partition_info(cl_device_id device, cl_device_info param_name,
                                 size_t param_value_size, void *param_value,
                                 size_t *param_value_size_ret);

#endif
