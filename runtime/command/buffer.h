/* The bodies of the buffer commands (runtime/command/buffer.c), called by icd/enqueue.c's
 * entry points once their arguments are checked and hashed for the divergence check, and by
 * Tutti's own code (split launches, the aggregate device, collectives) with arguments it
 * knows are valid. Arguments and results as the entry point of the same name; the rect
 * commands take the byte spans their checks computed (off, len), with the pitches made
 * explicit; tt_cmd_unmap takes the mapping's record, already taken off the buffer. */
#ifndef TUTTI_COMMAND_BUFFER_H
#define TUTTI_COMMAND_BUFFER_H

#include "runtime/base/tutti_internal.h"

cl_int tt_cmd_read(cl_command_queue q, cl_mem buffer, cl_bool blocking, size_t offset,
                   size_t size, void *ptr, cl_uint nwait, const cl_event *wait, cl_event *event);
cl_int tt_cmd_write(cl_command_queue q, cl_mem buffer, cl_bool blocking, size_t offset,
                    size_t size, const void *ptr, cl_uint nwait, const cl_event *wait,
                    cl_event *event);
cl_int tt_cmd_copy(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset,
                   size_t dst_offset, size_t size, cl_uint nwait, const cl_event *wait,
                   cl_event *event);
cl_int tt_cmd_fill(cl_command_queue q, cl_mem buffer, const void *pattern, size_t pattern_size,
                   size_t offset, size_t size, cl_uint nwait, const cl_event *wait,
                   cl_event *event);
cl_int tt_cmd_read_rect(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                        const size_t *buffer_origin, const size_t *host_origin,
                        const size_t *region, size_t buffer_row_pitch,
                        size_t buffer_slice_pitch, size_t host_row_pitch,
                        size_t host_slice_pitch, void *ptr, size_t off, size_t len,
                        cl_uint nwait, const cl_event *wait, cl_event *event);
cl_int tt_cmd_write_rect(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                         const size_t *buffer_origin, const size_t *host_origin,
                         const size_t *region, size_t buffer_row_pitch,
                         size_t buffer_slice_pitch, size_t host_row_pitch,
                         size_t host_slice_pitch, const void *ptr, size_t off, size_t len,
                         cl_uint nwait, const cl_event *wait, cl_event *event);
cl_int tt_cmd_copy_rect(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *src_origin,
                        const size_t *dst_origin, const size_t *region, size_t src_row_pitch,
                        size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch,
                        size_t soff, size_t slen, size_t doff, size_t dlen, cl_uint nwait,
                        const cl_event *wait, cl_event *event);
void *tt_cmd_map(cl_command_queue q, cl_mem buffer, cl_bool blocking, cl_map_flags flags,
                 size_t offset, size_t size, cl_uint nwait, const cl_event *wait,
                 cl_event *event, cl_int *errcode);
/* clEnqueueMapImage once checked: a copy of the region of Tutti's, packed, on every rank; its
 * pitches in *row_pitch and *slice_pitch (unless NULL). */
void *tt_cmd_map_image(cl_command_queue q, cl_mem image, cl_bool blocking, cl_map_flags flags,
                       const size_t *origin, const size_t *region, size_t *row_pitch,
                       size_t *slice_pitch, cl_uint nwait, const cl_event *wait,
                       cl_event *event, cl_int *errcode);
cl_int tt_cmd_unmap(cl_command_queue q, cl_mem memobj, void *mapped_ptr,
                    struct tt_map_record *rec, cl_uint nwait, const cl_event *wait,
                    cl_event *event);
cl_int tt_cmd_migrate(cl_command_queue q, cl_uint n, const cl_mem *mems,
                      cl_mem_migration_flags flags, cl_uint nwait, const cl_event *wait,
                      cl_event *event);

#endif
