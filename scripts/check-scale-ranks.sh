#!/usr/bin/env bash
# The accuracy of `gpubench scale` against CPU ranks (docs/scaling.md#checked-against-cpu-ranks):
# N Gloo ranks of ResNet-50 (batch 2, one thread a rank) predicted from single-rank runs and the
# measured Gloo all-reduce curve, then run; three rounds, each printed, and the median of
# predicted/measured. A benchmark of the predictor, run by hand, never by CTest: it times the
# machine it runs on. Exit 0 when the median is within 15 %, 1 when not, 77 on a machine with
# fewer cores than ranks.
#   usage: check-scale-ranks.sh [RANKS (2)] [BUILD_DIR (build)]
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${1:-2}
gpubench="$(cd "${2:-build}" && pwd)/gpubench"
source scripts/scale-check-common.sh
require_cores check-scale-ranks "$ranks"
overlap_for "$ranks"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
train="train --model resnet50 --device cpu --batch-size 2 --threads 1 --warmup-steps 2 --steps 6 --repeat 1 --log-level warn"
"$gpubench" allreduce --device cpu --gpus "$ranks" -b 4K -e 64M -n 5 -o "$scratch/ar.json" >/dev/null
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), $cores cores; $ranks Gloo ranks${overlap:+, no overlap}"
ratios=()
for round in 1 2 3; do
  slowest_single_rank "$round" "$ranks"
  many="$scratch/many-$round.json"
  "$gpubench" $train --gpus "$ranks" --output "$many" >/dev/null
  # The basis on the data-parallel run's clock: the ratio of their forward passes, which carry
  # no communication in either (the machine's speed drifts between runs).
  clock=$(python3 -c "import json; f = lambda p: json.load(open(p))['timeline']['forward_ms']; print(f('$many') / f('$basis'))")
  throughput=$(python3 -c "import json; print(json.load(open('$basis'))['metrics']['throughput'] / $clock)")
  "$gpubench" scale "$basis" --fabric "$scratch/ar.json" --gpus "$ranks" --throughput "$throughput" \
    $overlap -f json >"$scratch/scale-$round.json"
  predicted=$(field "$scratch/scale-$round.json" 'd["fabrics"][0]["points"][0]["step_ms"]')
  measured=$(field "$many" 'd["metrics"]["step_time_ms"]["median"]')
  ratio=$(python3 -c "print(f'{$predicted / $measured:.3f}')")
  ratios+=("$ratio")
  printf 'round %d: single ranks at once (slowest) %.0f ms, forward ratio %.3f, predicted %.0f ms, measured %.0f ms, predicted/measured %s\n' \
    "$round" "$basis_ms" "$clock" "$predicted" "$measured" "$ratio"
done
median_within_15_percent check-scale-ranks "${ratios[@]}"
