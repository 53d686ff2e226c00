#!/bin/sh
# make piglit: piglit's OpenCL API and custom tests and its image and sampler programs (Debian
# package `piglit`) through Tutti and through PoCL directly, from the build directory; prints
# both summaries and fails when Tutti fails a test that PoCL passes.
# With PIGLIT_RANKS=N (default 2; 0 skips it) every test Tutti ran is run again under
# `tutti-run -n N` and its results (subtests included) compared with the one-rank run.
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
filter='^(api|custom)@|^program@execute@(image|sampler)'
export POCL_DEVICES=${POCL_DEVICES:-pthread}
rm -rf "$out/tutti" "$out/pocl"
# Limits against hangs only, far above what a run takes on a busy machine (about 20 s on an
# idle 2-core one); every rank's run below has one of its own.
limit="timeout -k 10 900"
OCL_ICD_VENDORS="$top_builddir/tests/vendors" OCL_ICD_FILENAMES="$(cat "$top_builddir/tests/vendors/tutti.icd")" \
  $limit piglit run cl -t "$filter" "$out/tutti" > "$out/tutti.log" 2>&1
OCL_ICD_VENDORS=/etc/OpenCL/vendors $limit piglit run cl -t "$filter" "$out/pocl" > "$out/pocl.log" 2>&1
counts() { piglit summary console -s "$1" 2>/dev/null | grep -E "^ *(pass|fail|crash|skip|total):" | tr -s ' ' | tr '\n' ' '; }
echo "Tutti: $(counts "$out/tutti")"
echo "PoCL:  $(counts "$out/pocl")"
python3 - "$out/tutti" "$out/pocl" "${PIGLIT_RANKS:-2}" "$top_builddir" <<'PY'
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

# The same tests under tutti-run at several ranks: each result (subtests included) alike.
import os, subprocess
ranks, top = int(sys.argv[3]), sys.argv[4]
if ranks > 1:
    f = glob.glob(sys.argv[1] + "/results.json*")[0]
    opener = bz2.open if f.endswith(".bz2") else open
    runs = json.load(opener(f))["tests"]
    # Several piglit programs pass uninitialized values (an int3, a struct, a handle) as
    # kernel arguments: their ranks differ there, which the divergence check stops; the
    # kernels never run, so the comparison runs without it (with it, see the first lines).
    env = dict(os.environ, OCL_ICD_VENDORS=top + "/tests/vendors",
               TUTTI_ICD=top + "/tests/vendors/tutti.icd", TUTTI_CHECK="off")
    # Its host data differs between ranks (it writes uninitialized memory and checks that it
    # reads back what this rank wrote; the owner wrote its own): not Tutti's to fix.
    rank_dependent = {"api@clenqueuereadbuffer and clenqueuewritebuffer"}
    same = differ = 0
    # Two programs at a time (each a job of its own); the results are read in test order.
    from concurrent.futures import ThreadPoolExecutor

    def at_ranks(r):
        return subprocess.run([top + "/tutti-run", "-n", str(ranks)] + r["command"].split(),
                              env=env, capture_output=True, text=True, timeout=600).stdout

    tests = sorted(runs.items())
    with ThreadPoolExecutor(max_workers=2) as pool:
        outs = list(pool.map(at_ranks, [r for _, r in tests]))
    for (test, r), out in zip(tests, outs):
        got = {}
        for line in out.splitlines():
            if line.startswith("PIGLIT: "):
                j = json.loads(line[8:])
                got.update({test + "/" + k.lower(): v for k, v in j.get("subtest", {}).items()})
                if "result" in j:
                    got[test] = j["result"]
        want = {test: r["result"]}
        want.update({test + "/" + k: v for k, v in r.get("subtests", {}).items()
                     if not k.startswith("__")})
        for k, v in want.items():
            if got.get(k) == v:
                same += 1
            elif k in rank_dependent:
                print(f"  {k}: {v} at 1 rank, {got.get(k, 'nothing')} at {ranks} ranks "
                      "(the program's host data differs between ranks)")
            else:
                differ += 1
                print(f"  {k}: {v} at 1 rank, {got.get(k, 'nothing')} at {ranks} ranks")
    print(f"piglit at {ranks} ranks: {same} results as at 1 rank, {differ} otherwise")
    bad |= differ > 0
sys.exit(1 if bad else 0)
PY
