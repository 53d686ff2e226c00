/* Platform and device entry points. */
#include <stdint.h>
#include <stdlib.h>

#include "tests/api/check.h"

/* The job's size or this process's rank as mpirun tells them (Open MPI's name, else the
 * PMI name of MPICH's launchers; 1 and 0 without either). */
static cl_int env_int(const char *name, cl_int dflt)
{
  const char *v = getenv(name);
  if (!v)
    v = getenv(strstr(name, "SIZE") ? "PMI_SIZE" : "PMI_RANK");
  return v ? (cl_int)atoi(v) : dflt;
}

void test_platform(struct fixture *f)
{
  cl_uint n = 0;
  cl_platform_id p;
  /* CL_INVALID_VALUE: num_entries 0 with a list; neither list nor count. */
  CHECK_ERR(CL_INVALID_VALUE, clGetPlatformIDs(0, &p, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clGetPlatformIDs(1, NULL, NULL));
  OK(clGetPlatformIDs(0, NULL, &n));
  CHECK(n >= 1);

  char s[256];
  size_t size = 0;
  OK(clGetPlatformInfo(f->platform, CL_PLATFORM_NAME, sizeof s, s, &size));
  CHECK(!strcmp(s, "Tutti") && size == 6);
  OK(clGetPlatformInfo(f->platform, CL_PLATFORM_VENDOR, sizeof s, s, NULL));
  CHECK(!strcmp(s, "Tutti"));
  OK(clGetPlatformInfo(f->platform, CL_PLATFORM_VERSION, sizeof s, s, NULL));
  CHECK(!strncmp(s, "OpenCL 1.2 Tutti ", 17));
  OK(clGetPlatformInfo(f->platform, CL_PLATFORM_PROFILE, sizeof s, s, NULL));
  CHECK(!strcmp(s, "FULL_PROFILE"));
  OK(clGetPlatformInfo(f->platform, CL_PLATFORM_EXTENSIONS, sizeof s, s, NULL));
  CHECK(strstr(s, "cl_khr_icd") != NULL);
  OK(clGetPlatformInfo(f->platform, CL_PLATFORM_ICD_SUFFIX_KHR, sizeof s, s, NULL));
  CHECK(!strcmp(s, "TUTTI"));
  cl_int ranks = 0, rank = -1;
  OK(clGetPlatformInfo(f->platform, CL_PLATFORM_TUTTI_RANKS, sizeof ranks, &ranks, NULL));
  OK(clGetPlatformInfo(f->platform, CL_PLATFORM_TUTTI_RANK, sizeof rank, &rank, NULL));
  CHECK(ranks == env_int("OMPI_COMM_WORLD_SIZE", 1) && rank == env_int("OMPI_COMM_WORLD_RANK", 0));
  /* Too small a buffer, an unknown name, a foreign platform. */
  CHECK_ERR(CL_INVALID_VALUE, clGetPlatformInfo(f->platform, CL_PLATFORM_NAME, 3, s, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clGetPlatformInfo(f->platform, 0x7777, sizeof s, s, NULL));
  CHECK_ERR(CL_INVALID_PLATFORM, clGetPlatformInfo((cl_platform_id)f->devs[0], CL_PLATFORM_NAME,
                                                   sizeof s, s, NULL));
  OK(clUnloadPlatformCompiler(f->platform));
  CHECK(clGetExtensionFunctionAddressForPlatform(f->platform, "clNoSuchFunction") == NULL);
}

void test_device(struct fixture *f)
{
  cl_uint n = 0;
  cl_device_id d[8];
  /* CL_INVALID_DEVICE_TYPE for a type that is no combination of types. */
  CHECK_ERR(CL_INVALID_DEVICE_TYPE, clGetDeviceIDs(f->platform, (cl_device_type)1 << 40, 8, d, &n));
  CHECK_ERR(CL_INVALID_DEVICE_TYPE, clGetDeviceIDs(f->platform, 0, 8, d, &n));
  CHECK_ERR(CL_INVALID_VALUE, clGetDeviceIDs(f->platform, CL_DEVICE_TYPE_ALL, 0, d, NULL));
  CHECK_ERR(CL_INVALID_VALUE, clGetDeviceIDs(f->platform, CL_DEVICE_TYPE_ALL, 1, NULL, NULL));
  CHECK_ERR(CL_INVALID_PLATFORM, clGetDeviceIDs((cl_platform_id)f->ctx, CL_DEVICE_TYPE_ALL, 8, d, &n));
  OK(clGetDeviceIDs(f->platform, CL_DEVICE_TYPE_DEFAULT, 8, d, &n));
  CHECK(n == 1 && d[0] == f->devs[0]);
  /* Fewer entries than devices: the count still says how many exist. */
  OK(clGetDeviceIDs(f->platform, CL_DEVICE_TYPE_ALL, 1, d, &n));
  CHECK(n == f->ndevs);
  /* The backend the devices must come from: PoCL here; TT_TEST_BACKEND=nvidia on the GPU
   * machines, "any" for a mix. PoCL's devices are CPUs: no GPU unless TUTTI_DEVICE_TYPE
   * says so. */
  const char *backend = getenv("TT_TEST_BACKEND") ? getenv("TT_TEST_BACKEND") : "pocl";
  const char *forced = getenv("TUTTI_DEVICE_TYPE");
  cl_int gpu = clGetDeviceIDs(f->platform, CL_DEVICE_TYPE_GPU, 8, d, &n);
  if (!strcmp(backend, "pocl"))
    CHECK(forced && !strcmp(forced, "gpu") ? gpu == CL_SUCCESS : gpu == CL_DEVICE_NOT_FOUND);
  else if (!strcmp(backend, "nvidia"))
    CHECK(gpu == CL_SUCCESS);

  for (cl_uint i = 0; i < f->ndevs; i++) {
    cl_device_id dev = f->devs[i];
    char s[512];
    cl_platform_id p;
    cl_bool b = CL_TRUE;
    cl_int rank = -1;
    cl_device_type t = 0;
    OK(clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof p, &p, NULL));
    CHECK(p == f->platform);
    OK(clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof t, &t, NULL));
    /* One type each; CL_DEVICE_TYPE_DEFAULT is a query (answered by the first device). */
    CHECK(t != 0 && (t & (t - 1)) == 0 && !(t & CL_DEVICE_TYPE_DEFAULT));
    /* Image support and limits are the backend's (PoCL's CPU devices have images). */
    size_t image_width = 0;
    OK(clGetDeviceInfo(dev, CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof image_width, &image_width, NULL));
    OK(clGetDeviceInfo(dev, CL_DEVICE_VERSION, sizeof s, s, NULL));
    CHECK(!strncmp(s, "OpenCL 1.2", 10));
    OK(clGetDeviceInfo(dev, CL_DEVICE_OPENCL_C_VERSION, sizeof s, s, NULL));
    CHECK(!strncmp(s, "OpenCL C 1.2", 12));
    OK(clGetDeviceInfo(dev, CL_DEVICE_IMAGE_SUPPORT, sizeof b, &b, NULL));
    CHECK(b == CL_FALSE || image_width >= 2048); /* the least OpenCL 1.2 allows with images */
    /* Double precision: only the bits OpenCL 1.2 defines for it (no correctly rounded
     * divide and sqrt, a single-precision bit). */
    cl_device_fp_config fp = 0;
    OK(clGetDeviceInfo(dev, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL));
    CHECK(!(fp & ~(cl_device_fp_config)0x7F));
    OK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof s, s, NULL));
    CHECK(strlen(s) > 0);
    /* Ranks list their devices in rank order, each as many (tests/api/api runs so). */
    cl_int ranks = env_int("OMPI_COMM_WORLD_SIZE", 1), me = env_int("OMPI_COMM_WORLD_RANK", 0);
    OK(clGetDeviceInfo(dev, CL_DEVICE_TUTTI_RANK, sizeof rank, &rank, NULL));
    CHECK(rank == (cl_int)(i / (f->ndevs / (cl_uint)ranks)));
    OK(clGetDeviceInfo(dev, CL_DEVICE_TUTTI_BACKEND, sizeof s, s, NULL));
    CHECK(!strcmp(backend, "any") ? strlen(s) > 0 : !strcmp(s, backend));
    OK(clGetDeviceInfo(dev, CL_DEVICE_TUTTI_HOST, sizeof s, s, NULL));
    CHECK(strlen(s) > 0);
    /* How its bytes move to other GPUs of its host, and why. */
    OK(clGetDeviceInfo(dev, CL_DEVICE_TUTTI_GPU_COPIES, sizeof s, s, NULL));
    CHECK(!strcmp(backend, "pocl") ? !strcmp(s, "through host memory: not an NVIDIA device")
                                   : !strncmp(s, "copy engines of CUDA device ", 28) ||
                                         !strncmp(s, "through host memory: ", 21));
    OK(clGetDeviceInfo(dev, CL_DEVICE_TUTTI_ACTUAL, sizeof b, &b, NULL));
    CHECK(b == (rank == me ? CL_TRUE : CL_FALSE));
    OK(clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof s, s, NULL));
    CHECK(strstr(s, "cl_khr_icd") == NULL && strstr(s, "gl_sharing") == NULL);
    cl_device_exec_capabilities caps = 0;
    OK(clGetDeviceInfo(dev, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL));
    CHECK(caps & CL_EXEC_KERNEL);
    cl_uint refs = 0;
    OK(clGetDeviceInfo(dev, CL_DEVICE_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    CHECK(refs == 1);
    CHECK_ERR(CL_INVALID_VALUE, clGetDeviceInfo(dev, CL_DEVICE_NAME, 1, s, NULL));
    OK(clRetainDevice(dev));
    OK(clReleaseDevice(dev));
  }
  /* Garbage and foreign handles are refused without being touched. */
  char s[64];
  CHECK_ERR(CL_INVALID_DEVICE, clGetDeviceInfo((cl_device_id)GARBAGE, CL_DEVICE_NAME, sizeof s, s, NULL));
  CHECK_ERR(CL_INVALID_DEVICE, clGetDeviceInfo((cl_device_id)f->ctx, CL_DEVICE_NAME, sizeof s, s, NULL));
  CHECK_ERR(CL_INVALID_DEVICE, clRetainDevice(NULL));
  CHECK_ERR(CL_INVALID_DEVICE, clReleaseDevice((cl_device_id)GARBAGE));
}
