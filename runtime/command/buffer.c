/* The bodies of the buffer commands (runtime/command/buffer.h): what each enqueue entry point
 * of icd/enqueue.c calls once its arguments are checked and hashed for the divergence check.
 * Each describes its command (the buffer ranges it uses, the bytes it leaves in host memory,
 * its arguments) to the one command driver (runtime/command/driver.h), which plans and issues
 * it; maps and unmaps, which keep records of their own, still drive their steps here. */
#include "config.h"

#include "runtime/command/buffer.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/base/cuda.h"
#include "runtime/base/log.h"
#include "runtime/command/command.h"
#include "runtime/command/driver.h"
#include "runtime/command/coherence.h"
#include "runtime/command/image.h"
#include "runtime/job/callback.h"
#include "runtime/job/trace.h"
#include "runtime/memory/window.h"
#include "runtime/order/event.h"

cl_int tt_cmd_read(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read,
                   size_t offset, size_t size, void *ptr, cl_uint num_events_in_wait_list,
                   const cl_event *event_wait_list, cl_event *event)
{
  /* Its bytes reach every rank. */
  struct tt_cmd_work w = {.op = TT_OP_READ, .entry = "tt_clEnqueueReadBuffer",
                          .type = CL_COMMAND_READ_BUFFER, .blocking = blocking_read,
                          .use = {{buffer, offset, size, true, false}}, .nuse = 1,
                          .host = ptr, .host_len = size, .off = {offset}, .size = size,
                          .ptr = ptr};
  return tt_cmd_drive(command_queue, &w, num_events_in_wait_list, event_wait_list, event);
}

cl_int tt_cmd_write(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write,
                    size_t offset, size_t size, const void *ptr, cl_uint num_events_in_wait_list,
                    const cl_event *event_wait_list, cl_event *event)
{
  struct tt_cmd_work w = {.op = TT_OP_WRITE, .entry = "tt_clEnqueueWriteBuffer",
                          .type = CL_COMMAND_WRITE_BUFFER, .blocking = blocking_write,
                          .discardable = true,
                          .use = {{buffer, offset, size, false, true}}, .nuse = 1,
                          .off = {offset}, .size = size, .cptr = ptr};
  return tt_cmd_drive(command_queue, &w, num_events_in_wait_list, event_wait_list, event);
}

cl_int tt_cmd_copy(cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer,
                   size_t src_offset, size_t dst_offset, size_t size,
                   cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                   cl_event *event)
{
  /* Source bytes on another GPU of the host: its copy engine writes them into dst (no copy
   * of src made here, none on this device after; the driver leaves the source's use out). */
  struct tt_cmd_work w = {.op = TT_OP_COPY, .entry = "tt_clEnqueueCopyBuffer",
                          .type = CL_COMMAND_COPY_BUFFER, .discardable = true,
                          .use = {{src_buffer, src_offset, size, true, false},
                                  {dst_buffer, dst_offset, size, false, true}},
                          .nuse = 2, .off = {src_offset, dst_offset}, .size = size};
  return tt_cmd_drive(command_queue, &w, num_events_in_wait_list, event_wait_list, event);
}

static size_t host_span_off(const size_t *o, size_t row, size_t slice, const size_t *region)
{
  row = row ? row : region[0];
  slice = slice ? slice : region[1] * row;
  return o[2] * slice + o[1] * row + o[0];
}

static size_t host_span_len(const size_t *region, size_t row, size_t slice)
{
  row = row ? row : region[0];
  slice = slice ? slice : region[1] * row;
  return (region[2] - 1) * slice + (region[1] - 1) * row + region[0];
}

cl_int tt_cmd_read_rect(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read,
                        const size_t *buffer_origin, const size_t *host_origin,
                        const size_t *region, size_t buffer_row_pitch,
                        size_t buffer_slice_pitch, size_t host_row_pitch,
                        size_t host_slice_pitch, void *ptr, size_t off, size_t len,
                        cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                        cl_event *event)
{
  /* The rectangle's span of host memory goes to the other ranks (its gaps hold the same
   * bytes everywhere: host memory is replicated). */
  struct tt_cmd_work w = {
    .op = TT_OP_READ_RECT, .entry = "tt_clEnqueueReadBufferRect",
    .type = CL_COMMAND_READ_BUFFER_RECT, .blocking = blocking_read,
    .use = {{buffer, off, len, true, false}}, .nuse = 1,
    .host = (char *)ptr + host_span_off(host_origin, host_row_pitch, host_slice_pitch, region),
    .host_len = host_span_len(region, host_row_pitch, host_slice_pitch), .ptr = ptr,
    .origin = {buffer_origin, host_origin}, .region = region,
    .pitch = {buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch}};
  return tt_cmd_drive(command_queue, &w, num_events_in_wait_list, event_wait_list, event);
}

cl_int tt_cmd_write_rect(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write,
                         const size_t *buffer_origin, const size_t *host_origin,
                         const size_t *region, size_t buffer_row_pitch,
                         size_t buffer_slice_pitch, size_t host_row_pitch,
                         size_t host_slice_pitch, const void *ptr, size_t off, size_t len,
                         cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                         cl_event *event)
{
  /* The rectangle may leave gaps inside its span: those bytes must arrive too (read). */
  struct tt_cmd_work w = {
    .op = TT_OP_WRITE_RECT, .entry = "tt_clEnqueueWriteBufferRect",
    .type = CL_COMMAND_WRITE_BUFFER_RECT, .blocking = blocking_write,
    .discardable = true, .use = {{buffer, off, len, true, true}}, .nuse = 1, .cptr = ptr,
    .origin = {buffer_origin, host_origin}, .region = region,
    .pitch = {buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch}};
  return tt_cmd_drive(command_queue, &w, num_events_in_wait_list, event_wait_list, event);
}

cl_int tt_cmd_copy_rect(cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer,
                        const size_t *src_origin, const size_t *dst_origin,
                        const size_t *region, size_t src_row_pitch, size_t src_slice_pitch,
                        size_t dst_row_pitch, size_t dst_slice_pitch, size_t soff, size_t slen,
                        size_t doff, size_t dlen, cl_uint num_events_in_wait_list,
                        const cl_event *event_wait_list, cl_event *event)
{
  struct tt_cmd_work w = {
    .op = TT_OP_COPY_RECT, .entry = "tt_clEnqueueCopyBufferRect",
    .type = CL_COMMAND_COPY_BUFFER_RECT, .discardable = true,
    .use = {{src_buffer, soff, slen, true, false}, {dst_buffer, doff, dlen, true, true}},
    .nuse = 2, .origin = {src_origin, dst_origin}, .region = region,
    .pitch = {src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch}};
  return tt_cmd_drive(command_queue, &w, num_events_in_wait_list, event_wait_list, event);
}

cl_int tt_cmd_fill(cl_command_queue command_queue, cl_mem buffer, const void *pattern,
                   size_t pattern_size, size_t offset, size_t size,
                   cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                   cl_event *event)
{
  struct tt_cmd_work w = {.op = TT_OP_FILL, .entry = "tt_clEnqueueFillBuffer",
                          .type = CL_COMMAND_FILL_BUFFER, .discardable = true,
                          .use = {{buffer, offset, size, false, true}}, .nuse = 1,
                          .off = {offset}, .size = size, .cptr = pattern,
                          .pattern_size = pattern_size};
  return tt_cmd_drive(command_queue, &w, num_events_in_wait_list, event_wait_list, event);
}

/* Records a live mapping of m (or puts one back when its unmap failed). */
static void keep_map(cl_mem m, struct tt_map_record *rec)
{
  pthread_mutex_lock(&m->obj.lock);
  rec->next = m->maps;
  m->maps = rec;
  pthread_mutex_unlock(&m->obj.lock);
}

/* A map's record and event, kept by map_issued. */
struct map_state {
  struct tt_map_record *rec;
  cl_mem buffer;
  cl_event *event; /* the program's */
  cl_event done;   /* Tutti's, when the program asked for none */
  bool broadcast;
};

/* A map issued (or failed): its record kept; Tutti's copy must outlive the bytes arriving into
 * it, so a map whose copy is Tutti's keeps the map's event (made when the program asked for
 * none: only ranks that copy have it). */
static void map_issued(struct tt_cmd *c, struct tt_cmd_work *w, cl_int err, cl_event ev)
{
  (void)ev;
  struct map_state *st = w->state;
  if (err == CL_SUCCESS) {
    *st->rec = (struct tt_map_record){.ptr = w->ptr, .domain = c->dom,
                                      .writes = w->map_flags != CL_MAP_READ,
                                      .offset = w->off[0], .size = w->size, .owned = w->owned};
    for (int i = 0; w->op == TT_OP_MAP_IMAGE && i < 3; i++) {
      st->rec->origin[i] = w->origin[0][i];
      st->rec->region[i] = w->region[i];
    }
    keep_map(st->buffer, st->rec);
    atomic_fetch_add(&st->buffer->map_count, 1);
  } else {
    free(st->rec);
    st->rec = NULL;
    w->ptr = NULL;
  }
  st->broadcast = c->broadcast;
  if (st->rec && w->owned && c->broadcast && !st->event) {
    w->end_event = &st->done;
    c->own_event = true;
  }
}

/* A map into Tutti's copy whose bytes reach every rank: its record keeps the map's event
 * (the program's, or Tutti's own), waited for before the copy goes. */
static void keep_copy_event(struct map_state *st, const struct tt_cmd_work *w, cl_event *event)
{
  if (!st->rec || !st->broadcast)
    return;
  cl_event *out = w->end_event ? w->end_event : event;
  st->rec->done = *out;
  if (out != &st->done)
    TT_RETAIN(st->rec->done);
}

void *tt_cmd_map(cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_map,
                 cl_map_flags map_flags, size_t offset, size_t size,
                 cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                 cl_event *event, cl_int *errcode)
{
  struct map_state st = {calloc(1, sizeof *st.rec), buffer, event, NULL, false};
  if (!st.rec) {
    *errcode = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  /* Its bytes reach every rank unless the map invalidates them. */
  bool invalidate = map_flags & CL_MAP_WRITE_INVALIDATE_REGION;
  struct tt_cmd_work w = {.op = TT_OP_MAP, .entry = "tt_clEnqueueMapBuffer",
                          .type = CL_COMMAND_MAP_BUFFER, .blocking = blocking_map,
                          .use = {{buffer, offset, size, !invalidate, false}}, .nuse = 1,
                          .host_len = invalidate ? 0 : size, .off = {offset}, .size = size,
                          .map_flags = map_flags, .issued = map_issued, .state = &st};
  cl_int err = tt_cmd_drive(command_queue, &w, num_events_in_wait_list, event_wait_list, event);
  if (w.owned && err == CL_SUCCESS)
    keep_copy_event(&st, &w, event);
  *errcode = err;
  return err == CL_SUCCESS ? w.ptr : NULL;
}

void *tt_cmd_map_image(cl_command_queue q, cl_mem image, cl_bool blocking, cl_map_flags flags,
                       const size_t *origin, const size_t *region, size_t *row_pitch,
                       size_t *slice_pitch, cl_uint nwait, const cl_event *wait,
                       cl_event *event, cl_int *errcode)
{
  /* Every rank maps into a copy of its own, packed: the owner reads the region into it, and
   * its bytes reach every rank (unless the map invalidates them); the unmap writes it back. */
  const struct tt_image *im = image->image;
  size_t n = tt_image_packed(im, region);
  struct map_state st = {calloc(1, sizeof *st.rec), image, event, NULL, false};
  void *copy = malloc(n ? n : 1);
  if (!st.rec || !copy) {
    free(st.rec);
    free(copy);
    *errcode = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  bool invalidate = flags & CL_MAP_WRITE_INVALIDATE_REGION;
  struct tt_cmd_use u = tt_image_rows_use(image, origin, region, !invalidate, false);
  struct tt_cmd_work w = {.op = TT_OP_MAP_IMAGE, .entry = "tt_clEnqueueMapImage",
                          .type = CL_COMMAND_MAP_IMAGE, .blocking = blocking, .use = {u},
                          .nuse = 1, .host = copy, .host_len = invalidate ? 0 : n,
                          .off = {u.off}, .size = u.len, .ptr = copy, .owned = true,
                          .origin = {origin}, .region = region, .map_flags = flags,
                          .issued = map_issued, .state = &st};
  cl_int err = tt_cmd_drive(q, &w, nwait, wait, event);
  if (err == CL_SUCCESS)
    keep_copy_event(&st, &w, event);
  if (err != CL_SUCCESS) {
    free(copy);
    *errcode = err;
    return NULL;
  }
  bool array1d = im->desc.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
  *row_pitch = region[0] * im->pixel;
  if (slice_pitch)
    *slice_pitch = array1d ? *row_pitch
                   : im->slices > 1 ? *row_pitch * region[1]
                                    : 0;
  *errcode = CL_SUCCESS;
  return copy;
}

/* An unmap runs where its map ran; on the program's queue when that is the same domain, else
 * on Tutti's own queue there. */
static cl_int unmap_setup(struct tt_cmd *c, struct tt_cmd_work *w)
{
  struct tt_map_record *rec = w->state;
  if (rec->domain == c->dom)
    return CL_SUCCESS;
  c->dom = rec->domain;
  c->actual = c->ctx->domains[c->dom].actual;
  c->rank = c->ctx->domains[c->dom].rank;
  c->d = c->actual ? c->ctx->domains[c->dom].bp->d : NULL;
  c->nq = NULL;
  cl_int e = c->actual ? tt_order_internal_queue(c->ctx, c->dom, &c->nq) : CL_SUCCESS;
  if (e != CL_SUCCESS)
    keep_map(w->use[0].mem, rec);
  return e;
}

static void CL_CALLBACK copy_free(cl_event ev, cl_int status, void *ptr)
{
  (void)ev, (void)status;
  free(ptr);
}

/* The unmap issued: the record goes (after the bytes that arrived into Tutti's copy), or is
 * kept when it failed (still mapped). */
static void unmap_issued(struct tt_cmd *c, struct tt_cmd_work *w, cl_int err, cl_event ev)
{
  (void)ev;
  struct tt_map_record *rec = w->state;
  cl_mem memobj = w->use[0].mem;
  if (err != CL_SUCCESS) {
    keep_map(memobj, rec);
    return;
  }
  atomic_fetch_sub(&memobj->map_count, 1);
  if (c->actual && c->nq != c->q->nq)
    c->d->clFlush(c->nq->native);
  if (rec->done) {
    tt_event_wait(rec->done);
    TT_RELEASE(rec->done);
  }
  if (rec->owned && ev && memobj->image) {
    /* The owner's write back reads the copy until it completes. */
    c->d->clRetainEvent(ev);
    if (tt_native_callback(ev, CL_COMPLETE, copy_free, rec->ptr) != CL_SUCCESS) {
      c->d->clWaitForEvents(1, &ev);
      free(rec->ptr);
    }
    c->d->clReleaseEvent(ev);
  } else if (rec->owned) {
    free(rec->ptr);
  }
  free(rec);
}

cl_int tt_cmd_unmap(cl_command_queue command_queue, cl_mem memobj, void *mapped_ptr,
                    struct tt_map_record *rec, cl_uint num_events_in_wait_list,
                    const cl_event *event_wait_list, cl_event *event)
{
  struct tt_cmd_work w = {.op = TT_OP_UNMAP, .entry = "tt_clEnqueueUnmapMemObject",
                          .type = CL_COMMAND_UNMAP_MEM_OBJECT,
                          .use = {{memobj, rec->offset, rec->size, false, rec->writes}},
                          .nuse = 1, .ptr = mapped_ptr, .setup = unmap_setup,
                          .issued = unmap_issued, .state = rec};
  if (memobj->image) {
    /* An image's region goes back from Tutti's copy (a write of part of a row reads it). */
    w.op = TT_OP_UNMAP_IMAGE;
    w.use[0] = tt_image_rows_use(memobj, rec->origin, rec->region, false, rec->writes);
    w.origin[0] = rec->origin;
    w.region = rec->region;
    w.map_flags = rec->writes ? CL_MAP_WRITE : CL_MAP_READ;
  }
  return tt_cmd_drive(command_queue, &w, num_events_in_wait_list, event_wait_list, event);
}

cl_int tt_cmd_migrate(cl_command_queue command_queue, cl_uint num_mem_objects,
                      const cl_mem *mem_objects, cl_mem_migration_flags flags,
                      cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
                      cl_event *event)
{
  /* Its uses, one per buffer, follow from the flags (runtime/command/driver.c). */
  struct tt_cmd_work w = {.op = TT_OP_MIGRATE, .entry = "tt_clEnqueueMigrateMemObjects",
                          .type = CL_COMMAND_MIGRATE_MEM_OBJECTS, .discardable = true,
                          .mems = mem_objects,
                          .nmems = num_mem_objects, .flags = flags};
  return tt_cmd_drive(command_queue, &w, num_events_in_wait_list, event_wait_list, event);
}
