#!/usr/bin/env bash
# Start a real, private, single-node SLURM cluster (Debian packages) for the workflow's tests.
#
# Usage: start_cluster.sh SCRATCH_DIR
#
# Everything the cluster writes (munge key and socket, state, spool, logs, PID files, job
# completion log) lives in SCRATCH_DIR; the only files written outside it are
# /etc/slurm/slurm.conf and /etc/slurm/gres.conf (srun inside a job finds its configuration
# only there, because the job-step plugin clears inherited SLURM_* variables such as
# SLURM_CONF) and, where the hostname does not resolve, one line in /etc/hosts. Each carries
# the marker below so stop_cluster.sh removes exactly what was added here. An existing
# slurm.conf without the marker (a real cluster) is never touched: the script stops instead.
#
# The node advertises one GPU (gres gpu:fake:1 backed by /dev/null): SLURM schedules it,
# sets CUDA_VISIBLE_DEVICES, and rejects requests for more, but no CUDA device exists.
# There is no accounting database: job records come from the job completion log
# (jobcomp/filetxt, SCRATCH_DIR/jobcomp.log) and job states from squeue, so a Snakemake run
# against this cluster needs `--slurm-status-command squeue` (MinJobAge below is large
# enough for the plugin to accept it).
#
# Exit status: 0 cluster up; 2 usage or not root; 3 packages cannot be installed;
# 4 a foreign SLURM configuration is present; 5 a daemon failed to start in time.
# Every wait is bounded; on failure the daemons started so far are stopped again.
set -euo pipefail

MARKER="# written by isotropy tests/slurm/start_cluster.sh"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [[ $# -ne 1 ]]; then
    echo "usage: $0 SCRATCH_DIR" >&2
    exit 2
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "start_cluster.sh: must run as root (installs packages, starts daemons)" >&2
    exit 2
fi
SCRATCH="$(mkdir -p "$1" && cd "$1" && pwd)"
# munged walks the socket's parent folders and needs to traverse them as user munge.
chmod 755 "$SCRATCH"

log() { echo "[start_cluster $(date +%T)] $*"; }

fail_and_stop() {
    local code=$1
    shift
    echo "start_cluster.sh: $*" >&2
    for f in slurmd.log slurmctld.log munge/munged.log; do
        if [[ -f "$SCRATCH/$f" ]]; then
            echo "--- tail of $SCRATCH/$f" >&2
            tail -n 20 "$SCRATCH/$f" >&2 || true
        fi
    done
    "$HERE/stop_cluster.sh" "$SCRATCH" >&2 || true
    exit "$code"
}

wait_for() {
    # wait_for SECONDS DESCRIPTION COMMAND...: poll COMMAND every 0.5 s until it succeeds.
    local limit=$1 what=$2
    shift 2
    local deadline=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            fail_and_stop 5 "$what did not happen within ${limit} s"
        fi
        sleep 0.5
    done
}

# --- 1. packages -------------------------------------------------------------------------
PACKAGES=(slurm-wlm slurmctld slurmd slurm-client munge)
missing=0
for cmd in slurmctld slurmd sbatch squeue sinfo srun munged mungekey; do
    command -v "$cmd" >/dev/null 2>&1 || missing=1
done
if ((missing)); then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "start_cluster.sh: SLURM is not installed and apt-get is not available" >&2
        exit 3
    fi
    log "installing ${PACKAGES[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if ! timeout 600 apt-get -o DPkg::Lock::Timeout=300 update -qq >"$SCRATCH/apt.log" 2>&1 ||
        ! timeout 900 apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${PACKAGES[@]}" >>"$SCRATCH/apt.log" 2>&1; then
        tail -n 20 "$SCRATCH/apt.log" >&2
        echo "start_cluster.sh: apt-get could not install ${PACKAGES[*]}" >&2
        exit 3
    fi
fi

# --- 2. configuration --------------------------------------------------------------------
for f in /etc/slurm/slurm.conf /etc/slurm/gres.conf; do
    if [[ -e $f ]] && ! grep -qF "$MARKER" "$f"; then
        echo "start_cluster.sh: $f exists and was not written by this script;" \
            "refusing to replace a real cluster's configuration" >&2
        exit 4
    fi
done

HOST="$(hostname -s)"
if ! getent hosts "$HOST" >/dev/null; then
    echo "127.0.0.1 $HOST $MARKER" >>/etc/hosts
fi

NCPU="$(nproc)"
MEM_MB="$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)"
mkdir -p "$SCRATCH"/{state,spool,munge} /etc/slurm

cat >/etc/slurm/slurm.conf <<EOF
$MARKER
# Private single-node test cluster; every path points into $SCRATCH.
ClusterName=isotropy-test
MpiDefault=none
MailProg=/bin/true
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SCRATCH/munge/munge.socket
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$SCRATCH/state
SlurmdSpoolDir=$SCRATCH/spool
SlurmctldPidFile=$SCRATCH/slurmctld.pid
SlurmdPidFile=$SCRATCH/slurmd.pid
SlurmctldLogFile=$SCRATCH/slurmctld.log
SlurmdLogFile=$SCRATCH/slurmd.log
# No cgroups in containers: track processes through /proc; task/none breaks srun's binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
ReturnToService=2
# Finished jobs stay visible to squeue this long: the Snakemake plugin only trusts squeue
# for status checks when MinJobAge >= 3 x its first status-check delay.
MinJobAge=600
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
# No accounting database; every finished job is recorded in the job completion log.
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$SCRATCH/jobcomp.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
Waittime=0
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$NCPU RealMemory=$MEM_MB Gres=gpu:fake:1 State=UNKNOWN
# Two partitions over the one node, so a test can route GPU rules to their own partition.
PartitionName=main Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$HOST MaxTime=INFINITE State=UP
EOF
cat >/etc/slurm/gres.conf <<EOF
$MARKER
NodeName=$HOST Name=gpu Type=fake File=/dev/null
EOF

# --- 3. munge (private key and socket) ----------------------------------------------------
chown munge:munge "$SCRATCH/munge"
# Clients (slurmd jobs, srun) must reach the socket: munged insists on 755.
chmod 755 "$SCRATCH/munge"
runuser -u munge -- mungekey --create --keyfile="$SCRATCH/munge/munge.key" --force
chmod 400 "$SCRATCH/munge/munge.key"
log "starting munged"
runuser -u munge -- /usr/sbin/munged \
    --socket="$SCRATCH/munge/munge.socket" \
    --key-file="$SCRATCH/munge/munge.key" \
    --pid-file="$SCRATCH/munge/munged.pid" \
    --log-file="$SCRATCH/munge/munged.log" \
    --seed-file="$SCRATCH/munge/munged.seed" ||
    fail_and_stop 5 "munged did not start"
munge_ok() { munge -n --socket="$SCRATCH/munge/munge.socket" | unmunge --socket="$SCRATCH/munge/munge.socket"; }
wait_for 20 "munge credential round trip" munge_ok

# --- 4. SLURM daemons ---------------------------------------------------------------------
log "starting slurmctld and slurmd"
/usr/sbin/slurmctld -i || fail_and_stop 5 "slurmctld did not start"
wait_for 30 "slurmctld answering" scontrol ping
/usr/sbin/slurmd || fail_and_stop 5 "slurmd did not start"
node_idle() { [[ "$(sinfo -h -N -o %T | sort -u)" == idle ]]; }
wait_for 60 "node idle" node_idle

# --- 5. smoke test: one job step through the whole chain (munge, slurmctld, slurmd) -------
if ! out="$(timeout 60 srun -t 1 -n1 --gpus=1 printenv CUDA_VISIBLE_DEVICES 2>&1)" || [[ "$out" != 0 ]]; then
    fail_and_stop 5 "smoke test 'srun --gpus=1' failed: $out"
fi
log "cluster up: node $HOST, $NCPU CPUs, $MEM_MB MB, 1 GPU (fake); scratch $SCRATCH"
