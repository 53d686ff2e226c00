// C++'s std::filesystem on every rank as in one process (doc/cluster.md, "The host layer"):
// create_directories, a file written with an ofstream, rename, copy_file, copy of a folder,
// permissions, resize_file, remove and remove_all (which works through openat and unlinkat),
// between OpenCL calls. Every call either succeeds or throws; what remove_all counts and
// what exists afterwards must be what one process gets. Prints "fs_std: ok".
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

namespace fs = std::filesystem;

static void need(bool ok, const std::string &what)
{
  if (!ok) {
    std::cerr << "fs_std: " << what << std::endl;
    std::exit(1);
  }
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    std::cerr << "usage: fs_std DIR" << std::endl;
    return 2;
  }
  cl_platform_id platform;
  cl_uint ndev = 0;
  need(clGetPlatformIDs(1, &platform, nullptr) == CL_SUCCESS, "no platform");
  need(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &ndev) == CL_SUCCESS, "no device");
  fs::path base = argv[1];
  try {
    need(fs::create_directories(base / "foo" / "bar"), "create_directories made nothing");
    need(!fs::create_directories(base / "foo" / "bar"), "create_directories made it twice");
    {
      std::ofstream out(base / "foo" / "bar" / "h.h");
      out << "#define VALUE 42\n";
    }
    need(fs::file_size(base / "foo" / "bar" / "h.h") == 17, "the header's size");
    fs::rename(base / "foo" / "bar" / "h.h", base / "foo" / "h.h");
    need(fs::copy_file(base / "foo" / "h.h", base / "foo" / "bar" / "copy.h"),
         "copy_file copied nothing");
    fs::permissions(base / "foo" / "bar" / "copy.h", fs::perms::owner_read | fs::perms::owner_write);
    fs::resize_file(base / "foo" / "bar" / "copy.h", 8);
    fs::copy(base / "foo", base / "again", fs::copy_options::recursive);
    need(fs::file_size(base / "again" / "bar" / "copy.h") == 8, "the copied folder's file");
    {
      std::ifstream in(base / "again" / "h.h");
      std::string line;
      std::getline(in, line);
      need(line == "#define VALUE 42", "the copied header reads \"" + line + "\"");
    }
    need(fs::remove(base / "again" / "h.h"), "remove removed nothing");
    need(!fs::remove(base / "again" / "h.h"), "remove removed it twice");
    // again/bar/copy.h, again/bar, again: 3; foo/h.h, foo/bar/copy.h, foo/bar, foo: 4.
    std::uintmax_t n = fs::remove_all(base / "again");
    need(n == 3, "remove_all(again) counted " + std::to_string(n));
    n = fs::remove_all(base);
    need(n == 5, "remove_all(base) counted " + std::to_string(n));
    need(!fs::exists(base), "the folder is still there");
    need(fs::remove_all(base) == 0, "remove_all of nothing counted something");
  } catch (const fs::filesystem_error &e) {
    std::cerr << "fs_std: " << e.what() << std::endl;
    return 1;
  }
  std::printf("fs_std: ok on %u devices\n", ndev);
  return 0;
}
