# What the checks of `gpubench scale` against CPU ranks share (check-scale-ranks.sh,
# check-scale-tensor-parallel.sh, check-scale-shard.sh); sourced first, the functions below
# then called with $gpubench, $train and $scratch set.

# require_cores NAME RANKS: sets cores; exits 77 where this machine has fewer than a core a rank.
require_cores() {
  cores=$(nproc)
  if [ "$cores" -lt "$2" ]; then
    echo "$1: $2 ranks need $2 cores, one a rank; this machine has $cores"
    exit 77
  fi
}

# overlap_for RANKS: sets overlap to --no-overlap unless each rank has a core to spare: with
# fewer, Gloo's reductions and socket copies run on the cores that compute, and every collective
# adds to the step.
overlap_for() {
  overlap=""
  [ "$cores" -lt $((2 * $1)) ] && overlap="--no-overlap"
  return 0
}

field() {  # FILE EXPRESSION: a figure of a result or scale file
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# slowest_single_rank ROUND RANKS: RANKS single-rank runs at once (a core with its neighbours
# busy); sets basis (the slowest one's file) and basis_ms (its median step).
slowest_single_rank() {
  local round=$1 ranks=$2 r ms pids=()
  for r in $(seq 1 "$ranks"); do
    "$gpubench" $train --output "$scratch/one-$round-$r.json" >/dev/null &
    pids+=($!)
  done
  wait "${pids[@]}"
  basis="" basis_ms=0
  for r in $(seq 1 "$ranks"); do
    ms=$(field "$scratch/one-$round-$r.json" 'd["metrics"]["step_time_ms"]["median"]')
    if python3 -c "import sys; sys.exit(0 if $ms > $basis_ms else 1)"; then
      basis="$scratch/one-$round-$r.json" basis_ms=$ms
    fi
  done
}

# median_within_15_percent NAME RATIO...: prints the median of three; exit status 1 beyond 15 %.
median_within_15_percent() {
  local name=$1 median
  shift
  median=$(printf '%s\n' "$@" | sort -n | sed -n 2p)
  echo "median predicted/measured: $median"
  python3 -c "import sys; sys.exit(0 if abs($median - 1) < 0.15 else 1)" ||
    { echo "$name: the median is not within 15 %"; return 1; }
}
