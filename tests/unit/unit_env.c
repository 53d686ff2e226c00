/* Unit test of the settings parsers (no OpenCL backend, no MPI). */
#include <stdio.h>
#include <string.h>

#include "runtime/base/backend.h"
#include "runtime/base/env.h"
#include "tests/unit/unit.h"

int main(void)
{
  const char *bad;
  int badlen;
  CHECK(tt_env_parse_debug("err,warn", &bad, &badlen) == (TT_LOG_ERR | TT_LOG_WARN) && !bad);
  CHECK(tt_env_parse_debug("all", &bad, &badlen) == ~0u);
  CHECK(tt_env_parse_debug("", &bad, &badlen) == 0);
  CHECK(tt_env_parse_debug(NULL, &bad, &badlen) == 0);
  CHECK(tt_env_parse_debug("plan,bogus,mm", &bad, &badlen) == (TT_LOG_PLAN | TT_LOG_MM));
  CHECK(bad && badlen == 5 && !strncmp(bad, "bogus", 5));
  CHECK(tt_env_parse_debug("PLAN", &bad, &badlen) == TT_LOG_PLAN);

  CHECK(tt_env_parse_device_type("gpu") == CL_DEVICE_TYPE_GPU);
  CHECK(tt_env_parse_device_type("CPU") == CL_DEVICE_TYPE_CPU);
  CHECK(tt_env_parse_device_type("accelerator") == CL_DEVICE_TYPE_ACCELERATOR);
  CHECK(tt_env_parse_device_type("") == 0);
  CHECK(tt_env_parse_device_type("fpga") == (cl_device_type)-1);

  size_t v = 0;
  CHECK(tt_env_parse_bytes("4096", &v) == 0 && v == 4096);
  CHECK(tt_env_parse_bytes("64K", &v) == 0 && v == 64 << 10);
  CHECK(tt_env_parse_bytes("4m", &v) == 0 && v == (size_t)4 << 20);
  CHECK(tt_env_parse_bytes("16GiB", &v) == 0 && v == (size_t)16 << 30);
  CHECK(tt_env_parse_bytes("2GB", &v) == 0 && v == (size_t)2 << 30);
  CHECK(tt_env_parse_bytes("1T", &v) == 0 && v == (size_t)1 << 40);
  v = 7;
  CHECK(tt_env_parse_bytes("", &v) == -1 && v == 7);
  CHECK(tt_env_parse_bytes("-1", &v) == -1);
  CHECK(tt_env_parse_bytes("12Q", &v) == -1);
  CHECK(tt_env_parse_bytes("4 M", &v) == -1);
  CHECK(tt_env_parse_bytes("M", &v) == -1);
  CHECK(tt_env_parse_bytes("99999999999999999999", &v) == -1);

  /* Slurm's tasks per node, by node */
  CHECK(tt_env_parse_tasks_per_node("4", 0) == 4);
  CHECK(tt_env_parse_tasks_per_node("4", 1) == 0);
  CHECK(tt_env_parse_tasks_per_node("2(x3),1", 0) == 2);
  CHECK(tt_env_parse_tasks_per_node("2(x3),1", 2) == 2);
  CHECK(tt_env_parse_tasks_per_node("2(x3),1", 3) == 1);
  CHECK(tt_env_parse_tasks_per_node("2(x3),1", 4) == 0);
  CHECK(tt_env_parse_tasks_per_node("1,8(x2),3", 2) == 8);
  CHECK(tt_env_parse_tasks_per_node("1,8(x2),3", 3) == 3);
  CHECK(tt_env_parse_tasks_per_node(NULL, 0) == 0);
  CHECK(tt_env_parse_tasks_per_node("", 0) == 0);
  CHECK(tt_env_parse_tasks_per_node("2(x", 0) == 0);
  CHECK(tt_env_parse_tasks_per_node("2(x0),1", 0) == 0);
  CHECK(tt_env_parse_tasks_per_node("2(x2", 0) == 0);
  CHECK(tt_env_parse_tasks_per_node("2;3", 0) == 0);
  CHECK(tt_env_parse_tasks_per_node("-2", 0) == 0);
  CHECK(tt_env_parse_tasks_per_node("2,", 1) == 0);
  CHECK(tt_env_parse_tasks_per_node("99999999999999999999", 0) == 0);
  CHECK(tt_env_parse_bytes("17179869184G", &v) == -1);

  /* TUTTI_DEVICE_MEM: one size for all, device=size pairs, both (a pair wins). */
  CHECK(tt_env_device_mem("512M", 3, &v) == 1 && v == (size_t)512 << 20);
  CHECK(tt_env_device_mem("0=1G,2=256M", 2, &v) == 1 && v == (size_t)256 << 20);
  CHECK(tt_env_device_mem("0=1G,2=256M", 0, &v) == 1 && v == (size_t)1 << 30);
  v = 7;
  CHECK(tt_env_device_mem("0=1G,2=256M", 1, &v) == 0 && v == 7);
  CHECK(tt_env_device_mem("1G,2=64M", 2, &v) == 1 && v == (size_t)64 << 20);
  CHECK(tt_env_device_mem("2=64M,1G", 2, &v) == 1 && v == (size_t)64 << 20);
  CHECK(tt_env_device_mem("1G,2=64M", 5, &v) == 1 && v == (size_t)1 << 30);
  CHECK(tt_env_device_mem("", 0, &v) == 0);
  CHECK(tt_env_device_mem("0", 0, &v) == -1);
  CHECK(tt_env_device_mem("1=0", 1, &v) == -1);
  CHECK(tt_env_device_mem("x=1G", 0, &v) == -1);
  CHECK(tt_env_device_mem("1G,", 0, &v) == -1);
  CHECK(tt_env_device_mem("1G,,2=1M", 0, &v) == -1);
  CHECK(tt_env_device_mem("=1G", 0, &v) == -1);
  CHECK(tt_env_device_mem("1=1Q", 1, &v) == -1);

  CHECK(tt_backend_selected(NULL, "Portable Computing Language", "pocl"));
  CHECK(tt_backend_selected("pocl", "Portable Computing Language", "pocl"));
  CHECK(tt_backend_selected("nvidia,pocl", "Portable Computing Language", "pocl"));
  CHECK(tt_backend_selected("NVIDIA", "NVIDIA CUDA", "nvidia"));
  CHECK(tt_backend_selected("computing", "Portable Computing Language", "pocl"));
  CHECK(!tt_backend_selected("nvidia", "Portable Computing Language", "pocl"));
  CHECK(!tt_backend_selected("intel,amd", "NVIDIA CUDA", "nvidia"));

  printf("unit_env: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
