#!/usr/bin/env bash
# The accuracy of `gpubench scale --shard` against CPU ranks (docs/scaling.md#sharded-data-
# parallelism): test-deep-llama (6 blocks of hidden 256, batch 4 of 64 tokens, float32, one
# thread a rank) sharded over N Gloo ranks, predicted from single-rank runs and the measured Gloo
# all-reduce curve, then run; three rounds, each printed, and the median of predicted/measured.
# A benchmark of the predictor, run by hand, never by CTest: it times the machine it runs on.
# Exit 0 when the median is within 15 %, 1 when not, 77 on a machine with fewer cores than ranks.
#   usage: check-scale-shard.sh [full|grads (full)] [RANKS (2)] [BUILD_DIR (build)]
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-full}
ranks=${2:-2}
gpubench="$(cd "${3:-build}" && pwd)/gpubench"
source scripts/scale-check-common.sh
require_cores check-scale-shard "$ranks"
overlap_for "$ranks"
export GPUBENCH_TEST_HOOKS=1  # the test model
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
train="train --model test-deep-llama --device cpu --batch-size 4 --seq-len 64 --threads 1 --warmup-steps 3 --steps 10 --repeat 3 --log-level warn"
"$gpubench" allreduce --device cpu --gpus "$ranks" -b 4K -e 16M -n 10 -o "$scratch/ar.json" >/dev/null
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), $cores cores; $ranks Gloo ranks, --shard $mode${overlap:+, no overlap}"
ratios=()
for round in 1 2 3; do
  slowest_single_rank "$round" "$ranks"
  sharded="$scratch/sharded-$round.json"
  "$gpubench" $train --gpus "$ranks" --shard "$mode" --output "$sharded" >/dev/null
  "$gpubench" scale "$basis" --fabric "$scratch/ar.json" --shard "$mode" --gpus "$ranks" \
    --gpus-per-node "$ranks" $overlap -f json >"$scratch/scale-$round.json"
  point='d["fabrics"][0]["points"][0]'
  predicted=$(field "$scratch/scale-$round.json" "$point[\"step_ms\"]")
  predicted_comm=$(field "$scratch/scale-$round.json" "$point[\"gather_ms\"] + $point[\"reduce_scatter_ms\"]")
  measured=$(field "$sharded" 'd["metrics"]["step_time_ms"]["median"]')
  waited=$(field "$sharded" 'd["distributed"]["exposed_communication_ms"] + d["distributed"].get("exposed_in_passes_ms", 0)')
  ratio=$(python3 -c "print(f'{$predicted / $measured:.3f}')")
  ratios+=("$ratio")
  printf 'round %d: one rank %.1f ms; sharded over %d: predicted %.1f ms (collectives %.1f), measured %.1f ms (waited %.1f), predicted/measured %s\n' \
    "$round" "$basis_ms" "$ranks" "$predicted" "$predicted_comm" "$measured" "$waited" "$ratio"
done
median_within_15_percent check-scale-shard "${ratios[@]}"
