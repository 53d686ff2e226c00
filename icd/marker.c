/* Markers, barriers and clEnqueueWaitForEvents: their checks, then their commands
 * (runtime/command/marker.c). */
#include "config.h"

#include "icd/icd.h"

#include "runtime/command/launch.h"
#include "runtime/job/check.h"
#include "runtime/job/turns.h"

cl_int CL_API_CALL tt_clEnqueueMarkerWithWaitList(cl_command_queue command_queue,
                                                  cl_uint num_events_in_wait_list,
                                                  const cl_event *event_wait_list,
                                                  cl_event *event)
{
  TT_TURN_CHECK(tt_check_id(command_queue), tt_check_ids(event_wait_list, num_events_in_wait_list), event != NULL);
  CHECK_QUEUE(command_queue);
  return tt_cmd_marker(command_queue, num_events_in_wait_list, event_wait_list, event);
}

cl_int CL_API_CALL tt_clEnqueueBarrierWithWaitList(cl_command_queue command_queue,
                                                   cl_uint num_events_in_wait_list,
                                                   const cl_event *event_wait_list,
                                                   cl_event *event)
{
  TT_TURN_CHECK(tt_check_id(command_queue), tt_check_ids(event_wait_list, num_events_in_wait_list), event != NULL);
  CHECK_QUEUE(command_queue);
  return tt_cmd_barrier(command_queue, num_events_in_wait_list, event_wait_list, event);
}

cl_int CL_API_CALL tt_clEnqueueMarker(cl_command_queue command_queue, cl_event *event)
{
  TT_TURN_CHECK(tt_check_id(command_queue));
  CHECK_QUEUE(command_queue);
  /* CL_INVALID_VALUE if event is a NULL value. */
  TT_RETURN_IF(event == NULL, CL_INVALID_VALUE);
  return tt_cmd_marker(command_queue, 0, NULL, event);
}

cl_int CL_API_CALL tt_clEnqueueBarrier(cl_command_queue command_queue)
{
  TT_TURN_CHECK(tt_check_id(command_queue));
  CHECK_QUEUE(command_queue);
  return tt_cmd_barrier(command_queue, 0, NULL, NULL);
}

cl_int CL_API_CALL tt_clEnqueueWaitForEvents(cl_command_queue command_queue, cl_uint num_events,
                                             const cl_event *event_list)
{
  TT_TURN_CHECK(tt_check_id(command_queue), tt_check_ids(event_list, num_events));
  CHECK_QUEUE(command_queue);
  /* CL_INVALID_VALUE if num_events is zero or event_list is NULL. */
  TT_RETURN_IF(num_events == 0 || event_list == NULL, CL_INVALID_VALUE);
  /* CL_INVALID_EVENT if event objects specified in event_list are not valid events. */
  for (cl_uint i = 0; i < num_events; i++)
    TT_RETURN_IF(!tt_object_valid(event_list[i], TT_EVENT), CL_INVALID_EVENT);
  return tt_cmd_barrier(command_queue, num_events, event_list, NULL);
}
