# Python's os and shutil on every rank as in one process (doc/cluster.md, "The host layer"):
# makedirs, a file written and renamed, copytree (copy2: sendfile, utime, chmod), listdir
# and scandir of folders the job changed, rmtree (scandir of a folder's descriptor, unlinkat
# relative to it). No OpenCL: the layer's first agreement starts the job. Prints
# "fs_py: ok".
import os
import pathlib
import shutil
import sys

base = pathlib.Path(sys.argv[1])
os.makedirs(base / "a" / "b")
(base / "a" / "b" / "f.txt").write_text("hello\n")
os.rename(base / "a" / "b" / "f.txt", base / "a" / "g.txt")
shutil.copytree(base / "a", base / "c")
assert sorted(os.listdir(base / "c")) == ["b", "g.txt"], os.listdir(base / "c")
assert (base / "c" / "g.txt").read_text() == "hello\n"
shutil.copy2(base / "c" / "g.txt", base / "c" / "b" / "h.txt")
names = sorted(e.name for e in os.scandir(base / "c" / "b"))
assert names == ["h.txt"], names
shutil.rmtree(base / "c")
assert not (base / "c").exists()
shutil.rmtree(base)
assert not base.exists()
print("fs_py: ok")
