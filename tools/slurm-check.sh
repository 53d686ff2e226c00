#!/bin/sh
# Tutti under a real Slurm: Debian's slurmctld and slurmd with munge, configured and started
# in a temporary folder (their own ports, key, state and logs), stopped at the end. Jobs of 1,
# 2 and 4 ranks by sbatch (tutti-run taking its ranks from the allocation, and the job
# script's own srun line after eval "$(tutti-run --env)") and by srun alone: tutti-info's
# table, the demo and tests/cluster/cluster exact; tutti-run --launcher=mpirun inside an
# allocation; a failing rank reported; and every test of tests/cluster through srun inside an
# allocation of 4 tasks. From the build directory after make check, as root; prints its
# time. Exit 77 where Slurm or munge is not installed.
set -u
t0=$(date +%s)
top=${top_builddir:-$(pwd)}
cd "$top" || exit 1
for c in munged munge slurmctld slurmd sbatch srun salloc sinfo scontrol; do
  if ! command -v $c >/dev/null 2>&1; then
    echo "slurm-check: $c is missing (apt-get install slurmctld slurmd slurm-client munge)" >&2
    exit 77
  fi
done
if [ "$(id -u)" != 0 ]; then
  echo "slurm-check: slurmd runs jobs as root here: run as root" >&2
  exit 77
fi
make -j"$(nproc)" tutti-run tutti-info apps/vecadd tests/cluster/cluster tests/cluster/die \
  >/dev/null || exit 1

dir=$(mktemp -d "${TMPDIR:-/tmp}/tutti-slurm.XXXXXX") || exit 1
chmod 700 "$dir"
host=$(hostname -s)
# Ports of this run's own, so that a Slurm of the machine or another run is not disturbed.
port=$(( 20000 + ($$ % 10000) * 2 ))
stop() {
  for p in slurmd slurmctld munged; do
    pid=$(cat "$dir/$p.pid" 2>/dev/null) && kill "$pid" 2>/dev/null
  done
  # The daemons are gone before their folder is (slurmd ends its jobs first).
  for p in slurmd slurmctld munged; do
    pid=$(cat "$dir/$p.pid" 2>/dev/null) || continue
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  done
  rm -rf "$dir"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$dir/munge.key"
munged --force --key-file="$dir/munge.key" --socket="$dir/munge.sock" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" || {
  echo "slurm-check: munged did not start" >&2
  exit 1
}
mkdir "$dir/state" "$dir/spool"
# One node of 4 CPUs whatever the machine has (config_overrides), so that jobs of 4 ranks
# run on 2 cores; no cgroups, no accounting.
cat > "$dir/slurm.conf" <<EOF
ClusterName=tutti
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=4 State=UNKNOWN
PartitionName=tutti Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF" && slurmd -f "$SLURM_CONF" -N "$host" || {
  cat "$dir"/slurm*.log >&2
  echo "slurm-check: slurmctld or slurmd did not start" >&2
  exit 1
}
# Waiting for the daemons (not for a test's result): the node is up once sinfo says idle.
i=0
until [ "$(sinfo -h -o %t 2>/dev/null)" = idle ]; do
  i=$((i + 1))
  if [ $i -gt 300 ]; then
    tail -n 20 "$dir"/slurm*.log >&2
    echo "slurm-check: the node did not come up in 60 s" >&2
    exit 1
  fi
  sleep 0.2
done
echo "slurm-check: Slurm $(sinfo -V | cut -d' ' -f2) on $host (ports $port-$((port + 1)))"

export POCL_DEVICES=pthread TUTTI_DEVICE_TYPE=gpu
export POCL_CACHE_DIR="$dir/pocl"
export TUTTI_ICD="$top/tests/vendors/tutti.icd"
export OCL_ICD_VENDORS="$top/tests/vendors"
n=0
failed=0
# ok WHAT STATUS OUTPUT-FILE PATTERN...: every pattern is a line of the output.
ok() {
  what=$1 st=$2 out=$3
  shift 3
  good=1
  for pattern in "$@"; do grep -q -- "$pattern" "$out" || { good=0; echo "#   no line '$pattern'"; }; done
  n=$((n + 1))
  if [ $good = 1 ] && [ "$st" = 0 ]; then
    echo "ok $n - $what"
  else
    sed 's/^/#   /' "$out" | tail -n 15
    echo "not ok $n - $what (exit $st)"
    failed=$((failed + 1))
  fi
}

# A job script: tutti-run takes the allocation's ranks; then the program started by srun
# itself, with Tutti's environment from tutti-run --env.
cat > "$dir/job.sh" <<EOF
#!/bin/sh
"$top/tutti-run" "$top/tutti-info" || exit 1
"$top/tutti-run" "$top/apps/vecadd" || exit 1
"$top/tutti-run" "$top/tests/cluster/cluster" || exit 1
eval "\$("$top/tutti-run" --env)"
srun "$top/apps/vecadd" || exit 1
srun "$top/tests/cluster/cluster" || exit 1
EOF
for ranks in 1 2 4; do
  sbatch --wait -Q -n $ranks -o "$dir/sbatch.$ranks" "$dir/job.sh"
  st=$?
  tests=$(grep -c "^ok " "$dir/sbatch.$ranks")
  ok "sbatch -n $ranks: tutti-run and srun, the demo and tests/cluster/cluster ($tests checks)" \
    $st "$dir/sbatch.$ranks" "^Platform: Tutti .*, $ranks ranks*\$" "PASSED" "^ok 10 "
  if grep -q "^not ok" "$dir/sbatch.$ranks" || [ "$tests" != 20 ] ||
     [ "$(grep -c PASSED "$dir/sbatch.$ranks")" != 2 ]; then
    echo "not ok $n - sbatch -n $ranks: $tests checks passed of 20, $(grep -c PASSED "$dir/sbatch.$ranks") demos of 2"
    failed=$((failed + 1))
  fi
done

# srun alone (an allocation of its own) with Tutti's environment.
for ranks in 1 2 4; do
  ( eval "$("$top/tutti-run" --env)"
    srun -Q -n $ranks "$top/apps/vecadd" && srun -Q -n $ranks "$top/tests/cluster/cluster" ) \
    > "$dir/srun.$ranks" 2>&1
  ok "srun -n $ranks: the demo and tests/cluster/cluster" $? "$dir/srun.$ranks" \
    "on $ranks devices* of platform Tutti: PASSED" "^ok 10 "
done

# Open MPI's mpirun inside an allocation reads it.
salloc -Q -n 2 "$top/tutti-run" --launcher=mpirun "$top/tests/cluster/cluster" \
  > "$dir/mpirun" 2>&1
ok "salloc -n 2 tutti-run --launcher=mpirun: tests/cluster/cluster" $? "$dir/mpirun" "^ok 10 "

# A failing rank: the job stops, named as tutti-run names it under mpirun.
salloc -Q -n 2 "$top/tutti-run" "$top/tests/cluster/die" exit > "$dir/die" 2>&1
st=$?
[ $st != 0 ] && st=0 || st=1
ok "a rank leaving early stops the job and is named" $st "$dir/die" \
  "tutti-run: rank 0 stopped the job" "tutti-run: rank 1 was stopped with the job"

# Every test of tests/cluster, tutti-run starting each job through srun.
salloc -Q -n 4 env TUTTI_LAUNCHER=srun make check TESTS="$(echo tests/cluster/*.test)" \
  TEST_SUITE_LOG=slurm-suite.log > "$dir/cluster" 2>&1
st=$?
pass=$(sed -n 's/^# PASS: *//p' slurm-suite.log | head -n 1)
ok "tests/cluster through srun in an allocation of 4: ${pass:-0} passed" $st "$dir/cluster" \
  "^# FAIL: *0\$"

echo "slurm-check: $((n - failed)) of $n passed; $(( $(date +%s) - t0 )) s"
[ $failed = 0 ] && rm -f slurm-suite.log
[ $failed = 0 ]
