/* Unit test of which buffers take the CUDA path (runtime/base/cuda.h): the sizes a native
 * buffer in CUDA memory may have, and the buffers windowed from the start because they may
 * not (too large for NVIDIA's import, among two or more GPUs on the path). No OpenCL, no MPI,
 * no CUDA. */
#include "runtime/base/cuda.h"
#include "tests/unit/unit.h"

int main(void)
{
  const size_t mib = (size_t)1 << 20;
  /* Native buffers: 64 KiB to 510 MiB, never the program's own memory. */
  CHECK(!tt_cuda_fits(TT_CUDA_MIN - 1, CL_MEM_READ_WRITE));
  CHECK(tt_cuda_fits(TT_CUDA_MIN, CL_MEM_READ_WRITE));
  CHECK(tt_cuda_fits(510 * mib, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR));
  CHECK(!tt_cuda_fits(510 * mib + 1, CL_MEM_READ_WRITE));
  CHECK(!tt_cuda_fits(512 * mib, CL_MEM_READ_WRITE));
  CHECK(!tt_cuda_fits(mib, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR));
  /* Windowed from the start: over 510 MiB, at least two GPUs on the path in the context. */
  CHECK(tt_cuda_windows(512 * mib, CL_MEM_READ_WRITE, 2));
  CHECK(tt_cuda_windows(4096 * mib, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, 4));
  CHECK(!tt_cuda_windows(512 * mib, CL_MEM_READ_WRITE, 1));
  CHECK(!tt_cuda_windows(512 * mib, CL_MEM_READ_WRITE, 0));
  CHECK(!tt_cuda_windows(510 * mib, CL_MEM_READ_WRITE, 4));
  CHECK(!tt_cuda_windows(512 * mib, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, 4));
  /* Every window of a buffer split over its GPUs can be CUDA memory when each part fits. */
  CHECK(tt_cuda_fits(1024 * mib / 4 + 4096, CL_MEM_READ_WRITE));
  printf("unit_cuda: %s\n", failures ? "FAILED" : "passed");
  return failures != 0;
}
