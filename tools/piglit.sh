#!/bin/sh
# make piglit: piglit's OpenCL API and custom tests (Debian package `piglit`) through Tutti and
# through PoCL directly, from the build directory; prints both summaries and fails when Tutti
# fails a test that PoCL passes (Tutti offers no images or samplers: those tests skip).
# Usage: tools/piglit.sh [results-dir]   (default: a temporary directory, removed at the end)
set -u
if ! command -v piglit > /dev/null 2>&1; then
  echo "piglit is not installed (apt-get install piglit): nothing run"
  exit 77
fi
top_builddir=${top_builddir:-$(pwd)}
out=${1:-}
if [ -z "$out" ]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
filter='^(api|custom)@'
export POCL_DEVICES=${POCL_DEVICES:-pthread}
rm -rf "$out/tutti" "$out/pocl"
OCL_ICD_VENDORS="$top_builddir/tests/vendors" OCL_ICD_FILENAMES="$(cat "$top_builddir/tests/vendors/tutti.icd")" \
  piglit run cl -t "$filter" "$out/tutti" > "$out/tutti.log" 2>&1
OCL_ICD_VENDORS=/etc/OpenCL/vendors piglit run cl -t "$filter" "$out/pocl" > "$out/pocl.log" 2>&1
counts() { piglit summary console -s "$1" 2>/dev/null | grep -E "^ *(pass|fail|crash|skip|total):" | tr -s ' ' | tr '\n' ' '; }
echo "Tutti: $(counts "$out/tutti")"
echo "PoCL:  $(counts "$out/pocl")"
python3 - "$out/tutti" "$out/pocl" <<'PY'
import bz2, glob, json, sys

def results(d):
    f = glob.glob(d + "/results.json*")[0]
    opener = bz2.open if f.endswith(".bz2") else open
    return {t: r["result"] for t, r in json.load(opener(f))["tests"].items()}

tutti, pocl = results(sys.argv[1]), results(sys.argv[2])
bad = False
for test, result in sorted(tutti.items()):
    if result == "pass":
        continue
    other = pocl.get(test, "absent")
    print(f"  {test}: Tutti {result}, PoCL {other}")
    bad |= other == "pass" and result != "skip"
print("piglit: Tutti fails tests that PoCL passes" if bad else
      "piglit: every test PoCL passes passes or skips through Tutti")
sys.exit(1 if bad else 0)
PY
