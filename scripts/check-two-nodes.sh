#!/usr/bin/env bash
# Two "nodes" on one machine: two network namespaces joined by a veth pair, each rank with its
# own host name (a UTS namespace), so gpubench's cross-node path runs for real: rendezvous at a
# non-loopback MASTER_ADDR, Gloo over GLOO_SOCKET_IFNAME, nodes counted from host names. Checks a
# torchrun-style and a Slurm-style launch. Needs root (ip netns, unshare); exits 77 (CTest's
# "skipped") where namespaces cannot be made.
#   bash scripts/check-two-nodes.sh build/gpubench
set -euo pipefail
export GPUBENCH_TEST_HOOKS=1  # the hidden test model test-tiny-cnn
gpubench=$(realpath "${1:-build/gpubench}")
tag="gb$$"
work=$(mktemp -d)
cleanup() {
  ip netns del "${tag}a" 2>/dev/null || true
  ip netns del "${tag}b" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
if ! ip netns add "${tag}a" 2>/dev/null || ! ip netns add "${tag}b" 2>/dev/null ||
   ! ip link add "${tag}va" type veth peer name "${tag}vb" 2>/dev/null; then
  echo "check-two-nodes: cannot create network namespaces here (needs root and iproute2): skipped"
  exit 77
fi
for side in a b; do
  address=$([ "$side" = a ] && echo 10.77.0.1 || echo 10.77.0.2)
  ip link set "${tag}v$side" netns "${tag}$side"
  ip netns exec "${tag}$side" ip addr add "$address/24" dev "${tag}v$side"
  ip netns exec "${tag}$side" ip link set "${tag}v$side" up
  ip netns exec "${tag}$side" ip link set lo up
done

run_args="--log-level warn train --device cpu --model test-tiny-cnn --batch-size 1 --warmup-steps 1 \
--steps 2 --repeat 1 --threads 1 --timeout 60"
# launch NAME VARIABLES_FOR_RANK_0 VARIABLES_FOR_RANK_1: both ranks, each on its own "node".
launch() {
  local name=$1 pids=()
  for rank in 0 1; do
    local side=$([ "$rank" = 0 ] && echo a || echo b)
    local vars=$([ "$rank" = 0 ] && echo "$2" || echo "$3")
    ip netns exec "${tag}$side" unshare --uts sh -c \
      "hostname node$rank && env $vars MASTER_ADDR=10.77.0.1 GLOO_SOCKET_IFNAME=${tag}v$side \
       $gpubench $run_args --output $work/$name.json" > "$work/$name-$rank.log" 2>&1 &
    pids+=($!)
  done
  local failed=0
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  if [ "$failed" != 0 ]; then tail -5 "$work/$name"-*.log; echo "check-two-nodes: $name failed"; exit 1; fi
  python3 - "$work/$name.json" "$name" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
d = result["distributed"]
ok = result["status"] == "ok" and d["world_size"] == 2 and d["nodes"] == 2 and d["backend"] == "gloo"
print(f"check-two-nodes: {sys.argv[2]}: status {result['status']}, launcher {d['launcher']}, "
      f"world {d['world_size']}, nodes {d['nodes']}, {result['metrics']['throughput']:.2f} images/sec")
sys.exit(0 if ok else 1)
PY
}
launch torchrun "RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_PORT=29555" \
                "RANK=1 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_PORT=29555"
launch slurm "SLURM_PROCID=0 SLURM_STEP_NUM_TASKS=2 SLURM_STEP_NUM_NODES=2 SLURM_LOCALID=0 SLURM_STEP_NODELIST=node[0-1] SLURM_JOB_ID=77" \
             "SLURM_PROCID=1 SLURM_STEP_NUM_TASKS=2 SLURM_STEP_NUM_NODES=2 SLURM_LOCALID=0 SLURM_STEP_NODELIST=node[0-1] SLURM_JOB_ID=77"
