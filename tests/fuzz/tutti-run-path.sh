#!/bin/sh
# Makes folder $1 the PATH tutti-run runs with under tests/fuzz/fuzz_tutti_run.c: stand-ins
# for mpirun and srun that start nothing, and the utilities tutti-run uses (links), nothing
# else, so that no program a fuzzed argument names can run.
set -eu
dir=$1
mkdir -p "$dir"
printf '#!/bin/sh\necho "mpirun (Open MPI) 4.1.4"\n' > "$dir/mpirun"
printf '#!/bin/sh\necho "slurm 22.05.8"\n' > "$dir/srun"
chmod +x "$dir/mpirun" "$dir/srun"
for u in sh cat dirname id getconf sed grep env head tail mktemp rm tee cmp tr kill; do
  p=$(command -v "$u" 2>/dev/null) || continue
  case "$p" in /*) ln -sf "$p" "$dir/$u" ;; esac
done
