#!/usr/bin/env bash
# Stop the private SLURM cluster started by start_cluster.sh and undo what it wrote.
#
# Usage: stop_cluster.sh SCRATCH_DIR
#
# Cancels the cluster's remaining jobs, stops slurmd, slurmctld and munged by the PID files
# in SCRATCH_DIR (only a PID whose process name matches is signalled; TERM, then KILL after
# 15 s), and removes /etc/slurm/{slurm,gres}.conf and the /etc/hosts line only where they
# carry start_cluster.sh's marker. SCRATCH_DIR itself is left for the caller to delete
# (its logs help when a test failed). Safe to run twice or after a partial start.
set -uo pipefail

MARKER="# written by isotropy tests/slurm/start_cluster.sh"
if [[ $# -ne 1 ]]; then
    echo "usage: $0 SCRATCH_DIR" >&2
    exit 2
fi
SCRATCH="$1"

# Jobs first, while slurmctld still answers; bounded so a dead controller cannot hang us.
if [[ -f "$SCRATCH/slurmctld.pid" ]] && command -v squeue >/dev/null 2>&1; then
    ids="$(timeout 10 squeue -h -o %i 2>/dev/null || true)"
    if [[ -n "$ids" ]]; then
        # shellcheck disable=SC2086
        timeout 10 scancel $ids 2>/dev/null || true
    fi
fi

stop_pid_file() {
    # stop_pid_file PIDFILE EXPECTED_NAME
    local pid_file=$1 name=$2 pid
    [[ -f "$pid_file" ]] || return 0
    pid="$(tr -dc 0-9 <"$pid_file")"
    if [[ -n "$pid" ]] && [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == "$name" ]]; then
        kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 30); do
            [[ -d "/proc/$pid" ]] || break
            sleep 0.5
        done
        if [[ -d "/proc/$pid" ]]; then
            echo "stop_cluster.sh: $name ($pid) ignored TERM for 15 s, killing" >&2
            kill -KILL "$pid" 2>/dev/null
        fi
    fi
    rm -f "$pid_file"
}

stop_pid_file "$SCRATCH/slurmd.pid" slurmd
stop_pid_file "$SCRATCH/slurmctld.pid" slurmctld
stop_pid_file "$SCRATCH/munge/munged.pid" munged

for f in /etc/slurm/slurm.conf /etc/slurm/gres.conf; do
    if [[ -f $f ]] && grep -qF "$MARKER" "$f"; then
        rm -f "$f"
    fi
done
if grep -qF "$MARKER" /etc/hosts 2>/dev/null; then
    # /etc/hosts may be a bind mount: rewrite in place rather than replace the file.
    kept="$(grep -vF "$MARKER" /etc/hosts)"
    printf '%s\n' "$kept" >/etc/hosts
fi
exit 0
