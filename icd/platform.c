/* Platform entry points and the ICD loader's entry into Tutti. */
#include "config.h"

#include "icd/icd.h"

#include <CL/tutti.h>

#define TT_PLATFORM_VERSION "OpenCL 1.2 Tutti " PACKAGE_VERSION
#define TT_ICD_SUFFIX "TUTTI"

/* Every object starts with the dispatch table, from the library's load on. */
__attribute__((constructor)) static void hand_over_dispatch(void)
{
  tt_object_set_dispatch(&tt_dispatch);
}

static cl_int get_platform_ids(cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms)
{
  /* CL_INVALID_VALUE if num_entries is equal to zero and platforms is not NULL or if both
   * num_platforms and platforms are NULL. */
  TT_RETURN_IF(num_entries == 0 && platforms != NULL, CL_INVALID_VALUE);
  TT_RETURN_IF(num_platforms == NULL && platforms == NULL, CL_INVALID_VALUE);
  tt_cluster_init();
  if (platforms)
    platforms[0] = &tt_platform;
  if (num_platforms)
    *num_platforms = 1;
  return CL_SUCCESS;
}

TT_API cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id *platforms,
                                                 cl_uint *num_platforms)
{
  return get_platform_ids(num_entries, platforms, num_platforms);
}

cl_int CL_API_CALL tt_clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms,
                                       cl_uint *num_platforms)
{
  return get_platform_ids(num_entries, platforms, num_platforms);
}

/* The platform's extensions: cl_khr_icd and what every device offers. */
static const char *platform_extensions(void)
{
  return "cl_khr_icd cl_tutti_attach_buffer cl_tutti_collective cl_tutti_split";
}

cl_int CL_API_CALL tt_clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
                                        size_t param_value_size, void *param_value,
                                        size_t *param_value_size_ret)
{
  tt_cluster_init();
  /* CL_INVALID_PLATFORM if platform is not a valid platform. */
  TT_RETURN_IF(platform && platform != &tt_platform, CL_INVALID_PLATFORM);
  cl_int n;
  switch (param_name) {
  case CL_PLATFORM_PROFILE:
    return TT_INFO_STR("FULL_PROFILE");
  case CL_PLATFORM_VERSION:
    return TT_INFO_STR(TT_PLATFORM_VERSION);
  case CL_PLATFORM_NAME:
    return TT_INFO_STR("Tutti");
  case CL_PLATFORM_VENDOR:
    return TT_INFO_STR("Tutti");
  case CL_PLATFORM_EXTENSIONS:
    return TT_INFO_STR(platform_extensions());
  case CL_PLATFORM_ICD_SUFFIX_KHR:
    return TT_INFO_STR(TT_ICD_SUFFIX);
  case CL_PLATFORM_TUTTI_RANKS:
    n = tt_cluster_size();
    return TT_INFO(n);
  case CL_PLATFORM_TUTTI_RANK:
    n = tt_cluster_rank();
    return TT_INFO(n);
  case CL_PLATFORM_TUTTI_BACKENDS: {
    /* The node's, as its first rank opened them (this rank may not have yet). */
    char list[4096] = "";
    tt_cluster_backends_text(list, sizeof list);
    return TT_INFO_STR(list);
  }
  default:
    /* CL_INVALID_VALUE if param_name is not one of the supported values. */
    TT_RETURN_IF(1, CL_INVALID_VALUE);
  }
}

cl_int CL_API_CALL tt_clUnloadCompiler(void)
{
  return CL_SUCCESS;
}

cl_int CL_API_CALL tt_clUnloadPlatformCompiler(cl_platform_id platform)
{
  /* CL_INVALID_PLATFORM if platform is not a valid platform. */
  TT_RETURN_IF(platform != &tt_platform, CL_INVALID_PLATFORM);
  return CL_SUCCESS;
}

static void *extension_function(const char *name)
{
  if (!name)
    return NULL;
  /* The ICD loader asks for these two to find and identify the platform. */
  if (!strcmp(name, "clIcdGetPlatformIDsKHR"))
    return (void *)clIcdGetPlatformIDsKHR;
  if (!strcmp(name, "clGetPlatformInfo"))
    return (void *)tt_clGetPlatformInfo;
  /* cl_tutti_attach_buffer */
  if (!strcmp(name, "clAttachBufferToDeviceTUTTI"))
    return (void *)tt_clAttachBufferToDeviceTUTTI;
  if (!strcmp(name, "clAttachBufferToDevice"))
    return (void *)tt_clAttachBufferToDevice;
  /* cl_tutti_collective */
  static const struct {
    const char *name;
    void *fn;
  } collectives[] = {
      {"clEnqueueAlltoAllBuffer", (void *)tt_clEnqueueAlltoAllBuffer},
      {"clEnqueueBroadcastBuffer", (void *)tt_clEnqueueBroadcastBuffer},
      {"clEnqueueScatterBuffer", (void *)tt_clEnqueueScatterBuffer},
      {"clEnqueueGatherBuffer", (void *)tt_clEnqueueGatherBuffer},
      {"clEnqueueAllGatherBuffer", (void *)tt_clEnqueueAllGatherBuffer},
      {"clEnqueueReduceBuffer", (void *)tt_clEnqueueReduceBuffer},
      {"clEnqueueAllReduceBuffer", (void *)tt_clEnqueueAllReduceBuffer},
      {"clEnqueueReduceScatterBuffer", (void *)tt_clEnqueueReduceScatterBuffer},
      {"clEnqueueScanBuffer", (void *)tt_clEnqueueScanBuffer},
      /* cl_tutti_split */
      {"clSetKernelAnnotationTUTTI", (void *)tt_clSetKernelAnnotationTUTTI},
      {"clSetBufferDistributionTUTTI", (void *)tt_clSetBufferDistributionTUTTI},
      {"clEnqueueSplitNDRangeKernelTUTTI", (void *)tt_clEnqueueSplitNDRangeKernelTUTTI},
  };
  for (size_t i = 0; i < sizeof collectives / sizeof collectives[0]; i++)
    if (!strcmp(name, collectives[i].name))
      return collectives[i].fn;
  return NULL;
}

TT_API void *CL_API_CALL clGetExtensionFunctionAddress(const char *func_name)
{
  return extension_function(func_name);
}

void *CL_API_CALL tt_clGetExtensionFunctionAddress(const char *func_name)
{
  return extension_function(func_name);
}

void *CL_API_CALL tt_clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                              const char *func_name)
{
  if (platform != &tt_platform)
    return NULL;
  return extension_function(func_name);
}

cl_int tt_unsupported(const char *name)
{
  TT_LOG(TT_LOG_ERR, "%s: CL_INVALID_OPERATION (not supported by Tutti)", name);
  return CL_INVALID_OPERATION;
}

void *tt_unsupported_untyped(void)
{
  return NULL;
}
