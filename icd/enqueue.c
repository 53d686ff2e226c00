/* Enqueue entry points of buffers. Each one checks its arguments (the specification's
 * clauses), hashes them for the divergence check, then calls its command's body
 * (runtime/command/buffer.h). */
#include "config.h"

#include "icd/icd.h"

#include "runtime/job/check.h"
#include "runtime/job/turns.h"

#include <stdlib.h>

#include "runtime/command/buffer.h"

/* A buffer argument: valid, of the queue's context, usable on the queue's device. */
static cl_int check_buffer(cl_command_queue q, cl_mem m)
{
  /* CL_INVALID_MEM_OBJECT if the buffer is not a valid buffer object. */
  TT_RETURN_IF(!tt_object_valid(m, TT_MEM) || m->image, CL_INVALID_MEM_OBJECT);
  /* CL_INVALID_CONTEXT if the context associated with command_queue and the buffer are not
   * the same. */
  TT_RETURN_IF(m->context != q->context, CL_INVALID_CONTEXT);
  /* CL_MISALIGNED_SUB_BUFFER_OFFSET if the buffer is a sub-buffer whose offset is not
   * aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN for the device of command_queue. */
  if (m->parent) {
    cl_uint bits = 8;
    tt_cluster_device_query(q->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL);
    TT_RETURN_IF(bits >= 8 && m->origin % (bits / 8) != 0, CL_MISALIGNED_SUB_BUFFER_OFFSET);
    TT_RETURN_IF(q->device->actual && !m->native[q->domain], CL_MISALIGNED_SUB_BUFFER_OFFSET);
  }
  return CL_SUCCESS;
}

/* CL_INVALID_VALUE if the region (offset, size) is out of bounds or size is 0. */
static cl_int check_range(cl_mem m, size_t off, size_t size)
{
  TT_RETURN_IF(size == 0 || off > m->size || size > m->size - off, CL_INVALID_VALUE);
  return CL_SUCCESS;
}

static cl_int host_may_read(cl_mem m)
{
  /* CL_INVALID_OPERATION if called on buffer created with CL_MEM_HOST_WRITE_ONLY or
   * CL_MEM_HOST_NO_ACCESS. */
  TT_RETURN_IF(m->flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS), CL_INVALID_OPERATION);
  return CL_SUCCESS;
}

static cl_int host_may_write(cl_mem m)
{
  /* CL_INVALID_OPERATION if called on buffer created with CL_MEM_HOST_READ_ONLY or
   * CL_MEM_HOST_NO_ACCESS. */
  TT_RETURN_IF(m->flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS), CL_INVALID_OPERATION);
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clEnqueueReadBuffer(cl_command_queue command_queue, cl_mem buffer,
                                          cl_bool blocking_read, size_t offset, size_t size,
                                          void *ptr, cl_uint num_events_in_wait_list,
                                          const cl_event *event_wait_list, cl_event *event)
{
  CHECK_QUEUE(command_queue);
  TT_TRY(check_buffer(command_queue, buffer));
  TT_TRY(check_range(buffer, offset, size));
  /* CL_INVALID_VALUE if ptr is a NULL value. */
  TT_RETURN_IF(ptr == NULL, CL_INVALID_VALUE);
  TT_TRY(host_may_read(buffer));
  /* Checked after the handles were. */
  TT_TURN_CHECK(command_queue->obj.id, buffer->obj.id, blocking_read, offset, size, num_events_in_wait_list, event != NULL);
  return tt_cmd_read(command_queue, buffer, blocking_read, offset, size, ptr, num_events_in_wait_list,
                     event_wait_list, event);
}

cl_int CL_API_CALL tt_clEnqueueWriteBuffer(cl_command_queue command_queue, cl_mem buffer,
                                           cl_bool blocking_write, size_t offset, size_t size,
                                           const void *ptr, cl_uint num_events_in_wait_list,
                                           const cl_event *event_wait_list, cl_event *event)
{
  CHECK_QUEUE(command_queue);
  TT_TRY(check_buffer(command_queue, buffer));
  TT_TRY(check_range(buffer, offset, size));
  /* CL_INVALID_VALUE if ptr is a NULL value. */
  TT_RETURN_IF(ptr == NULL, CL_INVALID_VALUE);
  TT_TRY(host_may_write(buffer));
  /* Checked after the handles were. */
  TT_TURN_CHECK(command_queue->obj.id, buffer->obj.id, blocking_write, offset, size, num_events_in_wait_list, event != NULL);
  return tt_cmd_write(command_queue, buffer, blocking_write, offset, size, ptr, num_events_in_wait_list,
                      event_wait_list, event);
}

cl_int CL_API_CALL tt_clEnqueueCopyBuffer(cl_command_queue command_queue, cl_mem src_buffer,
                                          cl_mem dst_buffer, size_t src_offset,
                                          size_t dst_offset, size_t size,
                                          cl_uint num_events_in_wait_list,
                                          const cl_event *event_wait_list, cl_event *event)
{
  CHECK_QUEUE(command_queue);
  TT_TRY(check_buffer(command_queue, src_buffer));
  TT_TRY(check_buffer(command_queue, dst_buffer));
  TT_TRY(check_range(src_buffer, src_offset, size));
  TT_TRY(check_range(dst_buffer, dst_offset, size));
  /* CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same buffer or sub-buffer
   * object (or sub-buffers of the same buffer) and the source and destination regions
   * overlap. */
  size_t s = src_buffer->origin + src_offset, d = dst_buffer->origin + dst_offset;
  TT_RETURN_IF(src_buffer->root == dst_buffer->root && s < d + size && d < s + size,
               CL_MEM_COPY_OVERLAP);
  /* Checked after the handles were. */
  TT_TURN_CHECK(command_queue->obj.id, src_buffer->obj.id, dst_buffer->obj.id, src_offset, dst_offset, size, num_events_in_wait_list, event != NULL);
  return tt_cmd_copy(command_queue, src_buffer, dst_buffer, src_offset, dst_offset, size,
                     num_events_in_wait_list, event_wait_list, event);
}

/* A rectangle of a buffer: checks it (the clauses of clEnqueueReadBufferRect) and gives the
 * byte range it spans. Zero pitches are replaced by their defaults. */
static cl_int rect_extent(const size_t *origin, const size_t *region, size_t *row_pitch,
                          size_t *slice_pitch, size_t limit, size_t *off, size_t *len)
{
  /* CL_INVALID_VALUE if any region array element is 0. */
  TT_RETURN_IF(!origin || !region || region[0] == 0 || region[1] == 0 || region[2] == 0,
               CL_INVALID_VALUE);
  /* CL_INVALID_VALUE if row_pitch is not 0 and is less than region[0]. */
  TT_RETURN_IF(*row_pitch != 0 && *row_pitch < region[0], CL_INVALID_VALUE);
  if (*row_pitch == 0)
    *row_pitch = region[0];
  /* CL_INVALID_VALUE if slice_pitch is not 0 and is less than region[1] * row_pitch or not a
   * multiple of row_pitch. */
  TT_RETURN_IF(*slice_pitch != 0 &&
                   (*slice_pitch < region[1] * *row_pitch || *slice_pitch % *row_pitch != 0),
               CL_INVALID_VALUE);
  if (*slice_pitch == 0)
    *slice_pitch = region[1] * *row_pitch;
  *off = origin[2] * *slice_pitch + origin[1] * *row_pitch + origin[0];
  *len = (region[2] - 1) * *slice_pitch + (region[1] - 1) * *row_pitch + region[0];
  /* CL_INVALID_VALUE if the region being read or written is out of bounds. */
  TT_RETURN_IF(limit != SIZE_MAX && (*off > limit || *len > limit - *off), CL_INVALID_VALUE);
  return CL_SUCCESS;
}

static cl_int rect_common(cl_command_queue q, cl_mem buffer, const size_t *buffer_origin,
                          const size_t *host_origin, const size_t *region,
                          size_t *buffer_row_pitch, size_t *buffer_slice_pitch,
                          size_t *host_row_pitch, size_t *host_slice_pitch, const void *ptr,
                          size_t *off, size_t *len)
{
  CHECK_QUEUE(q);
  TT_TRY(check_buffer(q, buffer));
  /* CL_INVALID_VALUE if ptr is a NULL value. */
  TT_RETURN_IF(ptr == NULL, CL_INVALID_VALUE);
  size_t hoff, hlen;
  TT_TRY(rect_extent(host_origin, region, host_row_pitch, host_slice_pitch, SIZE_MAX, &hoff, &hlen));
  return rect_extent(buffer_origin, region, buffer_row_pitch, buffer_slice_pitch, buffer->size,
                     off, len);
}

cl_int CL_API_CALL tt_clEnqueueReadBufferRect(cl_command_queue command_queue, cl_mem buffer,
                                              cl_bool blocking_read, const size_t *buffer_origin,
                                              const size_t *host_origin, const size_t *region,
                                              size_t buffer_row_pitch, size_t buffer_slice_pitch,
                                              size_t host_row_pitch, size_t host_slice_pitch,
                                              void *ptr, cl_uint num_events_in_wait_list,
                                              const cl_event *event_wait_list, cl_event *event)
{
  size_t off, len;
  TT_TRY(rect_common(command_queue, buffer, buffer_origin, host_origin, region, &buffer_row_pitch,
                  &buffer_slice_pitch, &host_row_pitch, &host_slice_pitch, ptr, &off, &len));
  TT_TRY(host_may_read(buffer));
  /* Checked after the handles were. */
  TT_TURN_CHECK(command_queue->obj.id, buffer->obj.id, blocking_read, tt_check_bytes(buffer_origin, 3 * sizeof(size_t)), tt_check_bytes(region, 3 * sizeof(size_t)), buffer_row_pitch, buffer_slice_pitch, num_events_in_wait_list, event != NULL);
  return tt_cmd_read_rect(command_queue, buffer, blocking_read, buffer_origin, host_origin, region,
                          buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch,
                          ptr, off, len, num_events_in_wait_list, event_wait_list, event);
}

cl_int CL_API_CALL tt_clEnqueueWriteBufferRect(cl_command_queue command_queue, cl_mem buffer,
                                               cl_bool blocking_write,
                                               const size_t *buffer_origin,
                                               const size_t *host_origin, const size_t *region,
                                               size_t buffer_row_pitch,
                                               size_t buffer_slice_pitch, size_t host_row_pitch,
                                               size_t host_slice_pitch, const void *ptr,
                                               cl_uint num_events_in_wait_list,
                                               const cl_event *event_wait_list, cl_event *event)
{
  size_t off, len;
  TT_TRY(rect_common(command_queue, buffer, buffer_origin, host_origin, region, &buffer_row_pitch,
                  &buffer_slice_pitch, &host_row_pitch, &host_slice_pitch, ptr, &off, &len));
  TT_TRY(host_may_write(buffer));
  /* Checked after the handles were. */
  TT_TURN_CHECK(command_queue->obj.id, buffer->obj.id, blocking_write, tt_check_bytes(buffer_origin, 3 * sizeof(size_t)), tt_check_bytes(region, 3 * sizeof(size_t)), buffer_row_pitch, buffer_slice_pitch, num_events_in_wait_list, event != NULL);
  return tt_cmd_write_rect(command_queue, buffer, blocking_write, buffer_origin, host_origin, region,
                           buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch,
                           ptr, off, len, num_events_in_wait_list, event_wait_list, event);
}

cl_int CL_API_CALL tt_clEnqueueCopyBufferRect(cl_command_queue command_queue, cl_mem src_buffer,
                                              cl_mem dst_buffer, const size_t *src_origin,
                                              const size_t *dst_origin, const size_t *region,
                                              size_t src_row_pitch, size_t src_slice_pitch,
                                              size_t dst_row_pitch, size_t dst_slice_pitch,
                                              cl_uint num_events_in_wait_list,
                                              const cl_event *event_wait_list, cl_event *event)
{
  CHECK_QUEUE(command_queue);
  TT_TRY(check_buffer(command_queue, src_buffer));
  TT_TRY(check_buffer(command_queue, dst_buffer));
  size_t soff, slen, doff, dlen;
  TT_TRY(rect_extent(src_origin, region, &src_row_pitch, &src_slice_pitch, src_buffer->size, &soff,
                  &slen));
  TT_TRY(rect_extent(dst_origin, region, &dst_row_pitch, &dst_slice_pitch, dst_buffer->size, &doff,
                  &dlen));
  /* CL_INVALID_VALUE if src_buffer and dst_buffer are the same buffer object and
   * src_slice_pitch is not equal to dst_slice_pitch and src_row_pitch is not equal to
   * dst_row_pitch. */
  TT_RETURN_IF(src_buffer == dst_buffer && src_slice_pitch != dst_slice_pitch &&
                   src_row_pitch != dst_row_pitch,
               CL_INVALID_VALUE);
  /* CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same buffer or sub-buffers of
   * the same buffer and the source and destination regions overlap. With equal pitches the
   * rectangles are compared box by box; otherwise by the bytes they span. */
  if (src_buffer->root == dst_buffer->root) {
    size_t s = src_buffer->origin + soff, d = dst_buffer->origin + doff;
    bool overlap;
    if (src_row_pitch == dst_row_pitch && src_slice_pitch == dst_slice_pitch) {
      size_t so[3] = {s % src_row_pitch, (s / src_row_pitch) % (src_slice_pitch / src_row_pitch),
                      s / src_slice_pitch};
      size_t dd[3] = {d % src_row_pitch, (d / src_row_pitch) % (src_slice_pitch / src_row_pitch),
                      d / src_slice_pitch};
      overlap = true;
      for (int i = 0; i < 3; i++)
        overlap &= so[i] < dd[i] + region[i] && dd[i] < so[i] + region[i];
    } else {
      overlap = s < d + dlen && d < s + slen;
    }
    TT_RETURN_IF(overlap, CL_MEM_COPY_OVERLAP);
  }
  /* Checked after the handles were. */
  TT_TURN_CHECK(command_queue->obj.id, src_buffer->obj.id, dst_buffer->obj.id, tt_check_bytes(src_origin, 3 * sizeof(size_t)), tt_check_bytes(dst_origin, 3 * sizeof(size_t)), tt_check_bytes(region, 3 * sizeof(size_t)), num_events_in_wait_list, event != NULL);
  return tt_cmd_copy_rect(command_queue, src_buffer, dst_buffer, src_origin, dst_origin, region,
                          src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch, soff, slen,
                          doff, dlen, num_events_in_wait_list, event_wait_list, event);
}

cl_int CL_API_CALL tt_clEnqueueFillBuffer(cl_command_queue command_queue, cl_mem buffer,
                                          const void *pattern, size_t pattern_size,
                                          size_t offset, size_t size,
                                          cl_uint num_events_in_wait_list,
                                          const cl_event *event_wait_list, cl_event *event)
{
  CHECK_QUEUE(command_queue);
  TT_TRY(check_buffer(command_queue, buffer));
  TT_TRY(check_range(buffer, offset, size));
  /* CL_INVALID_VALUE if pattern is NULL or if pattern_size is 0 or if pattern_size is not
   * one of {1, 2, 4, 8, 16, 32, 64, 128}; if offset and size are not a multiple of
   * pattern_size. */
  TT_RETURN_IF(pattern == NULL || pattern_size == 0 || pattern_size > 128 ||
                   (pattern_size & (pattern_size - 1)) != 0,
               CL_INVALID_VALUE);
  TT_RETURN_IF(offset % pattern_size != 0 || size % pattern_size != 0, CL_INVALID_VALUE);
  /* Checked after the handles were. */
  TT_TURN_CHECK(command_queue->obj.id, buffer->obj.id, tt_check_bytes(pattern, pattern ? pattern_size : 0), offset, size, num_events_in_wait_list, event != NULL);
  return tt_cmd_fill(command_queue, buffer, pattern, pattern_size, offset, size,
                     num_events_in_wait_list, event_wait_list, event);
}

void *CL_API_CALL tt_clEnqueueMapBuffer(cl_command_queue command_queue, cl_mem buffer,
                                        cl_bool blocking_map, cl_map_flags map_flags,
                                        size_t offset, size_t size,
                                        cl_uint num_events_in_wait_list,
                                        const cl_event *event_wait_list, cl_event *event,
                                        cl_int *errcode_ret)
{
  TT_TURN();
  cl_int err = CL_SUCCESS;
  void *p = NULL;
#define CHECK(x)                                                                                  \
  do {                                                                                            \
    err = (x);                                                                                    \
    if (err != CL_SUCCESS)                                                                        \
      goto out;                                                                                   \
  } while (0)
  TT_GOTO_IF(!tt_object_valid(command_queue, TT_QUEUE), CL_INVALID_COMMAND_QUEUE);
  CHECK(check_buffer(command_queue, buffer));
  CHECK(check_range(buffer, offset, size));
  /* CL_INVALID_VALUE if values specified in map_flags are not valid. */
  const cl_map_flags all = CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
  TT_GOTO_IF(map_flags & ~all, CL_INVALID_VALUE);
  TT_GOTO_IF((map_flags & CL_MAP_WRITE_INVALIDATE_REGION) && (map_flags & (CL_MAP_READ | CL_MAP_WRITE)),
             CL_INVALID_VALUE);
  if (map_flags & CL_MAP_READ)
    CHECK(host_may_read(buffer));
  if (map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION))
    CHECK(host_may_write(buffer));
  /* Checked after the handles were. */
  TT_HASH(command_queue->obj.id, buffer->obj.id, blocking_map, map_flags, offset, size, num_events_in_wait_list, event != NULL);
  p = tt_cmd_map(command_queue, buffer, blocking_map, map_flags, offset, size,
                 num_events_in_wait_list, event_wait_list, event, &err);
out:
#undef CHECK
  tt_set_err(errcode_ret, err);
  return err == CL_SUCCESS ? p : NULL;
}

cl_int CL_API_CALL tt_clEnqueueUnmapMemObject(cl_command_queue command_queue, cl_mem memobj,
                                              void *mapped_ptr, cl_uint num_events_in_wait_list,
                                              const cl_event *event_wait_list, cl_event *event)
{
  CHECK_QUEUE(command_queue);
  /* CL_INVALID_MEM_OBJECT if memobj is not a valid memory object. */
  TT_RETURN_IF(!tt_object_valid(memobj, TT_MEM), CL_INVALID_MEM_OBJECT);
  /* CL_INVALID_CONTEXT if context associated with command_queue and memobj are not the
   * same. */
  TT_RETURN_IF(memobj->context != command_queue->context, CL_INVALID_CONTEXT);
  pthread_mutex_lock(&memobj->obj.lock);
  struct tt_map_record **pp = &memobj->maps, *rec = NULL;
  for (; *pp; pp = &(*pp)->next)
    if ((*pp)->ptr == mapped_ptr) {
      rec = *pp;
      *pp = rec->next;
      break;
    }
  pthread_mutex_unlock(&memobj->obj.lock);
  /* CL_INVALID_VALUE if mapped_ptr is not a valid pointer returned by clEnqueueMapBuffer
   * for memobj. */
  TT_RETURN_IF(!rec, CL_INVALID_VALUE);
  /* Checked after the handles were. */
  TT_TURN_CHECK(command_queue->obj.id, memobj->obj.id, num_events_in_wait_list, event != NULL);
  return tt_cmd_unmap(command_queue, memobj, mapped_ptr, rec, num_events_in_wait_list,
                      event_wait_list, event);
}

cl_int CL_API_CALL tt_clEnqueueMigrateMemObjects(cl_command_queue command_queue,
                                                 cl_uint num_mem_objects,
                                                 const cl_mem *mem_objects,
                                                 cl_mem_migration_flags flags,
                                                 cl_uint num_events_in_wait_list,
                                                 const cl_event *event_wait_list, cl_event *event)
{
  TT_TURN_CHECK(tt_check_id(command_queue), tt_check_ids(mem_objects, num_mem_objects), flags, tt_check_ids(event_wait_list, num_events_in_wait_list), event != NULL);
  CHECK_QUEUE(command_queue);
  /* CL_INVALID_VALUE if num_mem_objects is zero or if mem_objects is NULL, or if flags is
   * not 0 or any of the values described in the table above. */
  TT_RETURN_IF(num_mem_objects == 0 || mem_objects == NULL, CL_INVALID_VALUE);
  TT_RETURN_IF(flags & ~(cl_mem_migration_flags)(CL_MIGRATE_MEM_OBJECT_HOST |
                                                 CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED),
               CL_INVALID_VALUE);
  for (cl_uint i = 0; i < num_mem_objects; i++)
    TT_TRY(check_buffer(command_queue, mem_objects[i]));
  return tt_cmd_migrate(command_queue, num_mem_objects, mem_objects, flags, num_events_in_wait_list,
                        event_wait_list, event);
}
