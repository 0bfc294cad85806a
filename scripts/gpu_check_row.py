#!/usr/bin/env python3
"""One row of the GPU check's table (scripts/gpu-check.sh): a gpubench result file beside the
PyTorch reference run of the same benchmark (scripts/torch_reference.py), and their ratio.
Usage: gpu_check_row.py header | gpu_check_row.py row LABEL GPUBENCH_JSON [PYTORCH_JSON]"""
import json
import os
import sys

COLUMNS = f"{'benchmark':34} {'gpubench':>10} {'unit':11} {'pytorch':>10} {'ratio':>6} {'peak GiB':>8} {'TFLOP/s':>8}  status"


def load(path):
    if not path or not os.path.exists(path):
        return None
    try:
        return json.load(open(path))
    except ValueError:
        return None


def row(label, gpubench_path, pytorch_path=None):
    result, reference = load(gpubench_path), load(pytorch_path)
    if result is None:
        return f"{label:34} {'-':>10} {'':11} {'-':>10} {'-':>6} {'-':>8} {'-':>8}  no result file"
    metrics = result.get("metrics", {})
    ok = result.get("status") == "ok"
    ours = metrics.get("throughput") if ok else None
    theirs = reference.get("throughput") if reference else None
    ratio = f"{ours / theirs:6.3f}" if ours and theirs else f"{'-':>6}"
    peak = metrics.get("peak_memory_bytes")
    tflops = metrics.get("achieved_tflops")
    status = result.get("status", "?")
    if not ok:
        status += ": " + result.get("error", "").splitlines()[0][:120] if result.get("error") else ""
    distributed = result.get("distributed", {})
    if distributed.get("backend") not in (None, "none"):
        status += (f" [{distributed['backend']} x{distributed['world_size']}, {distributed['buckets']} buckets,"
                   f" exposed comm {distributed['exposed_communication_ms']:.2f} ms/step]")
    if result.get("benchmark", {}).get("optimizer_impl"):
        status += f", {result['benchmark']['optimizer_impl']} SGD"
    if metrics.get("skipped_steps"):
        status += f" ({metrics['skipped_steps']} fp16 steps skipped by the loss scaler)"
    return (f"{label:34} {ours or 0:10.1f} {metrics.get('throughput_unit', ''):11} "
            f"{theirs if theirs is not None else 0:10.1f} {ratio} "
            f"{peak / 2**30 if peak else 0:8.1f} {tflops or 0:8.1f}  {status}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["header"]:
        print(COLUMNS)
    elif sys.argv[1:2] == ["row"] and 3 <= len(sys.argv) <= 5:
        print(row(*sys.argv[2:]))
    else:
        sys.exit(__doc__)
