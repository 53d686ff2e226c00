#!/bin/sh
# The Debian package, from the build directory (as root, debhelper installed): built by
# `make deb`, installed into this machine with dpkg, used from /usr (tutti-info --check and
# the demo at 4 ranks under the installed tutti-run), then purged, with nothing of it left.
# Prints what it did and its time; exits nonzero at the first failure (the package purged).
set -u
t0=$(date +%s)
top=${top_builddir:-$(pwd)}
fail() {
  echo "deb-check: $*" >&2
  dpkg --purge tutti >/dev/null 2>&1
  exit 1
}
if [ "$(id -u)" != 0 ] || ! command -v dh >/dev/null 2>&1; then
  echo "deb-check: needs root and debhelper (tools/bootstrap.sh check installs it)" >&2
  exit 77
fi
make -C "$top" deb > "$top/deb-check.log" 2>&1 || {
  tail -n 30 "$top/deb-check.log"
  fail "make deb failed"
}
deb=$(ls "$top"/tutti_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || fail "make deb made no tutti_*.deb"
echo "deb-check: built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
dpkg-deb -f "$deb" Depends | grep -q ocl-icd-libopencl1 || fail "its dependencies are not declared"
dpkg -i "$deb" >> "$top/deb-check.log" 2>&1 || fail "dpkg -i failed (deb-check.log)"
[ "$(cat /etc/OpenCL/vendors/tutti.icd)" = "$(dpkg -L tutti | grep '/libtutti.so$')" ] ||
  fail "/etc/OpenCL/vendors/tutti.icd does not name the installed library"
export POCL_DEVICES="${POCL_DEVICES:-pthread}"
out=$(cd / && tutti-run -n 4 tutti-info --check 2>&1) || fail "tutti-info --check at 4 ranks: $out"
echo "$out" | grep -q "Platform: Tutti" || fail "tutti-info shows no Tutti platform: $out"
demo=$(cd / && TUTTI_DEVICE_TYPE=gpu tutti-run -n 4 "$top/apps/vecadd" 2>&1) ||
  fail "the demo at 4 ranks: $demo"
echo "$demo" | grep -q "PASSED" || fail "the demo did not pass: $demo"
man -w tutti-run >/dev/null 2>&1 || ! command -v man >/dev/null || fail "no man page tutti-run(1)"
echo "deb-check: installed, tutti-info --check and the demo at 4 ranks pass from /usr"
files=$(dpkg -L tutti | while read -r f; do [ -f "$f" ] && echo "$f"; done)
dpkg --purge tutti >> "$top/deb-check.log" 2>&1 || fail "dpkg --purge failed"
for f in $files; do
  [ ! -e "$f" ] || fail "$f is still there after the purge"
done
rm -f "$top"/tutti_*.deb "$top"/tutti_*.buildinfo "$top"/tutti_*.changes "$top/deb-check.log"
echo "deb-check: purged, nothing left; $(( $(date +%s) - t0 )) s"
