#!/usr/bin/env python3
"""CTest: `scripts/gpu-check.sh smoke` rehearsed on the CPU (GPUBENCH_CHECK_DEVICE=cpu) with the
build under test, into a scratch folder. Every item gives a row with a known status; what the CPU
runs is ok, and what needs CUDA (graph mode, NCCL's own collectives, NVML, fp16 autocast) is
skipped with gpubench's own line, never failed or timed out. It checks the script and gpubench's
command lines, not a GPU.
Usage: gpu_smoke_rehearsal.py SOURCE_DIR BUILD_DIR"""
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time

# Items the CPU runs through; they must be ok.
MUST_BE_OK = [
    "resnet50 fp16 b256 eager",
    "nccl group of one bf16",  # a Gloo group of one here: the exposed communication is read
    "profile resnet50 fp16 gpubench",
    "resnet50 fp16 b32 eager",
    "bert-large bf16 full s128 eager",
    "llama-3.2-1b lora fp16",
    "llama-3.2-1b lora bf16 checkpointed",
    "infer resnet50 eager",
    "infer llama-3.2-1b eager",
    "infer llama-3-8b eager",
    "fit then the run",
    "batch max under 4M",
    "transformer-xl base fp16",
    "suite of two (gpubench run)",
    "llama-3-8b lora bf16 s2048",
    "llama-3-8b lora predicted 8-gpu scaling",  # scale on that result's own timeline
]
# Graph mode needs CUDA: skipped with the line gpubench gives.
CUDA_ONLY = [
    "resnet50 fp16 b256 graph",
    "resnet50 fp16 b32 graph",
    "googlenet fp16 b128 graph",
    "bert-large bf16 full s128 graph",
    "graph vs eager losses",
    "infer resnet50 graph",
    "infer llama-3.2-1b graph",
    "infer llama-3-8b graph",
]
# FP8 beside bf16: bf16 always runs; fp8 runs where LibTorch has it (2.5+, whose CPU _scaled_mm
# the 2.11 build uses) and is otherwise skipped with gpubench's refusal.
FP8_PAIRS = ["fp8 llama-3.2-1b full s2048", "fp8 llama-3-8b lora s2048", "fp8 bert-large s128",
             "fp8 llama-3-8b decode b1"]


def main():
    source, build = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory(prefix="gpubench-smoke-") as scratch:
        out = os.path.join(scratch, "out")
        env = dict(os.environ, GPUBENCH_CHECK_DEVICE="cpu", GPUBENCH_CHECK_BUILD_DIR=build, OUT=out,
                   GPUBENCH_CHECK_SKIP_BUILD="1",
                   GPUBENCH_CHECK_RESULTS=os.path.join(scratch, "results"))
        started = time.time()
        run = subprocess.run(["bash", "scripts/gpu-check.sh", "smoke"], cwd=source, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(run.stdout)
        print(f"rehearsal: exit code {run.returncode} in {time.time() - started:.0f} s")
        rows = []
        try:
            with open(os.path.join(out, "smoke.jsonl")) as f:
                rows = [json.loads(line) for line in f]
        except OSError as error:
            failures.append(f"no smoke.jsonl: {error}")
        by_item = {row["item"]: row for row in rows}
        for row in rows:
            if row["status"] not in ("ok", "failed", "oom", "skipped", "timeout"):
                failures.append(f"{row['item']}: status {row['status']!r}")
        for item in MUST_BE_OK:
            row = by_item.get(item)
            if not row or row["status"] != "ok":
                failures.append(f"{item}: {row and row['status']} {row and row['note']} (expected ok)")
            elif not row["figure"]:
                failures.append(f"{item}: ok without a figure")
        for item in CUDA_ONLY:
            row = by_item.get(item)
            if not row or row["status"] != "skipped" or "CUDA" not in row["note"]:
                failures.append(f"{item}: {row} (expected skipped, naming CUDA)")
        for pair in FP8_PAIRS:
            bf16, fp8 = by_item.get(pair + " bf16"), by_item.get(pair + " fp8")
            if not bf16 or bf16["status"] != "ok" or not bf16["figure"]:
                failures.append(f"{pair} bf16: {bf16} (expected ok with a figure)")
            refused = fp8 and fp8["status"] == "skipped" and "needs LibTorch 2.5" in fp8["note"]
            ran = fp8 and fp8["status"] == "ok" and "fp8/bf16 x" in fp8["note"] and "% of products" in fp8["note"]
            if not (refused or ran):
                failures.append(f"{pair} fp8: {fp8} (expected ok with the speed-up and FP8's share, or "
                                "skipped by LibTorch 1.x's refusal)")
        group = by_item.get("nccl group of one bf16", {})
        if "gloo x1" not in group.get("note", ""):
            failures.append(f"group of one: {group.get('note')!r} does not name the Gloo group of one")
        if not any(r["status"] == "ok" for r in rows):
            failures.append("no item ran")
        # Every training result the smoke call writes carries the backward timeline
        # (docs/scaling.md), what `gpubench scale` predicts from.
        trained = 0
        for folder, _, names in os.walk(os.path.join(scratch, "results")):
            for name in names:
                if not name.endswith(".json"):
                    continue
                try:
                    with open(os.path.join(folder, name)) as f:
                        result = json.load(f)
                except (OSError, ValueError):
                    continue
                if not isinstance(result, dict) or result.get("status") != "ok":
                    continue
                benchmark = result.get("benchmark", {})
                if benchmark.get("task") == "train" and benchmark.get("mode") != "graph":
                    trained += 1
                    if "timeline" not in result:
                        failures.append(f"{name}: a training result without a timeline")
        if trained == 0:
            failures.append("no training result found to check for a timeline")
        # The results were packed, with the table, where the GPU call's files come back from.
        packed = os.path.join(out, "results-cpu-rehearsal.tar.gz")
        try:
            with tarfile.open(packed) as tar:
                names = tar.getnames()
            if not any(n.endswith("check-smoke.txt") for n in names) or not any(n.endswith(".json") for n in names):
                failures.append(f"{packed} lacks the table or the results: {names}")
        except (OSError, tarfile.TarError) as error:
            failures.append(f"{packed}: {error}")
        if run.returncode != 0:
            failures.append(f"gpu-check.sh smoke exited {run.returncode} (a row failed or timed out)")
    for failure in failures:
        print("FAIL:", failure)
    print(f"smoke rehearsal: {len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
