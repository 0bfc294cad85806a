#!/usr/bin/env python3
"""The GPU check's reading of a tier's results (scripts/gpu-check.sh; docs/gpu-machines.md).

  gpu_check_table.py references RUN_DIR REFS_DIR --device cuda|cpu [--modes "eager compile"]
      PyTorch's side of every ok train result that has one: scripts/torch_reference.py for the
      convnets (each mode given), scripts/hf_reference.py (transformers + peft; torchao for fp8)
      for the language models, as REFS_DIR/<result>.<mode>.json; a reference that cannot run is
      written as {"skipped": why}.
  gpu_check_table.py fit-settings RESULT
      the benchmark options of a result, for `gpubench fit` (one per line).
  gpu_check_table.py table RUN_DIR [--refs REFS_DIR] [--smi CSV] [--device cuda|cpu]
      one row per result (status ok / failed / oom / skipped with its requirement, the figure,
      PyTorch's and the ratio, notes), then the checks the results allow: graph mode's final loss
      against eager's (deterministic pairs, within 1e-3), fit's prediction against the run's peak
      (2 % under to 10 % over), FP8 against bf16, NVML against nvidia-smi. Exit 1 when a result
      failed, a check failed, or, on the CPU (--device cpu), an entry was skipped for anything but
      a CUDA device or a LibTorch without FP8."""
import argparse
import csv
import glob
import json
import os
import subprocess
import sys

CONVNETS = {"resnet50", "resnet101", "resnet152", "vgg16", "googlenet", "inception3", "inception4",
            "ssd300", "test-tiny-cnn"}
LANGUAGE_MODELS = {"bert-large", "llama-3.2-1b", "llama-2-7b", "llama-3-8b", "llama-3.1-8b",
                   "llama-3.1-70b", "llama-3.1-405b", "test-tiny-bert",
                   "test-tiny-llama"}
# What a CPU rehearsal may lack without failing: the GPU itself, and FP8 and the integer weights
# in LibTorch 1.13.
CPU_MAY_LACK = {"cuda", "libtorch-fp8", "libtorch-int-weights"}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def results_in(run_dir):
    found = []
    for path in sorted(glob.glob(os.path.join(run_dir, "*.json"))):
        r = load(path)
        if r and str(r.get("schema", "")).startswith("gpubench.result/"):
            found.append((path, r))
    return found


def first_line(text):
    return next((line.strip() for line in (text or "").splitlines() if line.strip()), "")[:160]


def size(n):
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def label(r):
    b = r["benchmark"]
    parts = [b["model"], b["precision"]]
    if b.get("task") == "infer":
        parts.append("infer")
    if b.get("precision") == "fp8" and b.get("fp8_recipe"):
        parts.append(b["fp8_recipe"])
    if b.get("tuning") in ("lora", "qlora"):
        parts.append(b["tuning"])
    if r.get("batch_search", {}).get("searched"):
        parts.append(f"bmax<{size(b.get('memory_limit', 0))}")
    else:
        parts.append(f"b{b.get('batch_size_per_device', b.get('batch_size'))}")
    for key, short in (("seq_len", "s"), ("prompt_len", "p")):
        if b.get(key):
            parts.append(f"{short}{b[key]}")
    if b.get("kv_cache") == "fp8":
        parts.append("kv-fp8")
    if b.get("weights") in ("int8", "int4", "mxfp4"):
        parts.append(b["weights"] + (f"-g{b['weight_group']}" if b["weights"] == "int4" else ""))
    if b.get("activation_checkpointing"):
        parts.append("ckpt")
    if b.get("deterministic"):
        parts.append("det")
    if b.get("shard", "none") != "none":
        parts.append(f"shard-{b['shard']}")
    d = r.get("distributed") or {}
    if d.get("backend", "none") != "none":
        parts.append(f"{d['backend']}-group-of-{d.get('world_size')}")
    parts.append(b.get("mode", "eager"))
    return " ".join(str(p) for p in parts)


def settings(r):
    """The options that make this benchmark again, as `gpubench fit` takes them (--task infer for
    a generation, with its lengths and formats)."""
    b = r["benchmark"]
    args = ["--device", b["device"], "--model", b["model"], "--precision", b["precision"],
            "--batch-size", str(b.get("batch_size_per_device", b.get("batch_size")))]
    if b.get("task") == "infer":
        args += ["--task", "infer", "--prompt-len", str(b["prompt_len"]), "--gen-len", str(b["gen_len"])]
        for key in ("weights", "kv_cache"):
            if b.get(key) and b[key] != "auto":
                args += ["--" + key.replace("_", "-"), str(b[key])]
        if b.get("weight_group") and b.get("weights") == "int4":
            args += ["--weight-group", str(b["weight_group"])]
        return args
    if b.get("seq_len"):
        args += ["--seq-len", str(b["seq_len"])]
    if b.get("tuning"):
        args += ["--tuning", b["tuning"]]
    if b.get("activation_checkpointing"):
        args.append("--activation-checkpointing")
    return args


def reference_command(r, mode):
    """(script, arguments) of PyTorch's side of this result, or None where there is none."""
    b = r["benchmark"]
    steps = ["--warmup-steps", str(b["warmup_steps"]), "--steps", str(b["steps"]),
             "--repeat", str(b["repeat"])]
    batch = str(b.get("batch_size_per_device", b.get("batch_size")))
    if r.get("status") != "ok" or b.get("task") == "infer" or b.get("mode") != "eager":
        return None
    if b["model"] == "maskrcnn" and mode == "eager":
        return "maskrcnn_reference.py", ["throughput", "--precision", b["precision"], "--batch-size", batch,
                                         *steps]
    if b["model"] in CONVNETS and b["precision"] != "fp8":
        return "torch_reference.py", ["--model", b["model"], "--precision", b["precision"],
                                      "--batch-size", batch, "--mode", mode, *steps]
    if b["model"] in LANGUAGE_MODELS and mode == "eager":
        args = ["--model", b["model"], "--precision", b["precision"], "--batch-size", batch,
                "--seq-len", str(b.get("seq_len", 128)), "--tuning", b.get("tuning") or "full", *steps]
        if b["precision"] == "fp8":
            args += ["--fp8-recipe", b.get("fp8_recipe") or "tensorwise"]
        if b.get("activation_checkpointing"):
            args.append("--activation-checkpointing")
        return "hf_reference.py", args
    return None


def references(args):
    os.makedirs(args.refs, exist_ok=True)
    torch_imports = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0
    for path, r in results_in(args.run_dir):
        for mode in args.modes.split():
            command = reference_command(r, mode)
            if not command:
                continue
            out = os.path.join(args.refs, f"{os.path.basename(path)[:-5]}.{mode}.json")
            if not torch_imports:
                json.dump({"skipped": "torch does not import"}, open(out, "w"))
                continue
            script, argv = command
            done = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), script), *argv,
                                   "--device", args.device, "--output", out],
                                  capture_output=True, text=True, timeout=args.timeout)
            if done.returncode != 0 or not load(out):
                lines = (done.stdout + done.stderr).strip().splitlines()
                json.dump({"skipped": first_line(lines[-1] if lines else "") or f"exit {done.returncode}"},
                          open(out, "w"))
            print(f"reference {mode}: {os.path.basename(path)}", flush=True)
    return 0


def notes_of(r):
    m, b = r.get("metrics", {}), r["benchmark"]
    notes = []
    if m.get("graph_capture_ms"):
        notes.append(f"capture {m['graph_capture_ms']:.0f} ms")
    if m.get("skipped_steps"):
        notes.append(f"{m['skipped_steps']} steps skipped by the scaler")
    if b["precision"] == "fp8" and m.get("fp8_matmul_flop_share"):
        notes.append(f"FP8 {100 * m['fp8_matmul_flop_share']:.0f}% of products")
    inference = m.get("inference") or {}
    if inference.get("decode_tokens_per_second"):
        notes.append(f"decode {inference['decode_tokens_per_second']:.1f} tokens/sec")
    if r.get("experts") and b.get("task") == "infer":
        # a mixture of experts: its prefill and its experts' load, and how its weights are held
        if inference.get("prefill_tokens_per_second"):
            notes.append(f"prefill {inference['prefill_tokens_per_second']:.0f} tokens/sec")
        if r.get("experts", {}).get("load_max_over_mean"):
            notes.append(f"expert load max/mean {r['experts']['load_max_over_mean']:.2f}")
        if inference.get("weights_held"):
            notes.append(inference["weights_held"])
    if inference.get("decode_ceiling_fraction"):
        notes.append(f"{100 * inference['decode_ceiling_fraction']:.0f}% of the "
                     f"{inference['decode_ceiling_tokens_per_second']:.0f} tokens/sec ceiling "
                     f"({size(inference['bytes_per_decoded_token'])}/token, "
                     f"{inference.get('ceiling_bandwidth_source', '')})")
    if inference.get("kernels_per_decode_step"):
        notes.append(f"{inference['kernels_per_decode_step']} kernels a decode step (its CUDA graph)")
    search = r.get("batch_search") or {}
    if search.get("searched"):
        causes = sorted({p.get("oom_cause", "") for p in search.get("probes", [])
                         if p.get("outcome") == "oom"} - {""})
        notes.append(f"found {search.get('found_batch')}, predicted {search.get('predicted_batch')}, "
                     f"{len(search.get('probes', []))} probes" + (f"; oom: {', '.join(causes)}" if causes else ""))
    d = r.get("distributed") or {}
    if d.get("backend", "none") != "none":
        notes.append(f"{d['backend']} x{d.get('world_size')}, {d.get('buckets')} buckets, exposed "
                     f"{d.get('exposed_communication_ms', 0):.2f} ms/step")
    memory = m.get("memory") or {}
    if memory.get("peak_bytes"):
        notes.append(f"peak {size(memory['peak_bytes'])}")
    return notes


class Table:
    def __init__(self):
        self.lines, self.failures, self.rows = [], [], 0

    def row(self, item, status, figure="", reference="", note=""):
        self.rows += 1
        self.lines.append(f"{item:52} {status:9} {figure:26} {reference:30} {note}".rstrip())

    def check(self, item, ok, figure, note):
        self.row(item, "ok" if ok else "failed", figure, "", note)
        if not ok:
            self.failures.append(item)


def reference_cells(refs, path, r):
    cells = []
    for ref_path in sorted(glob.glob(os.path.join(refs or "", f"{os.path.basename(path)[:-5]}.*.json"))):
        mode = ref_path.rsplit(".", 2)[-2]
        ref = load(ref_path) or {}
        if "throughput" in ref:
            ratio = r["metrics"]["throughput"] / ref["throughput"] if ref["throughput"] else 0
            cells.append(f"pt {mode} {ref['throughput']:.1f} (x{ratio:.3f})")
        else:
            cells.append(f"pt {mode}: {ref.get('skipped', 'none')}")
    return "; ".join(cells)


def pair_checks(table, found):
    by_label = {label(r): r for _, r in found}
    for name, r in by_label.items():
        b = r["benchmark"]
        partner = by_label.get(name[:-len("eager")] + "graph") if name.endswith(" eager") else None
        if b.get("deterministic") and partner and r["status"] == partner["status"] == "ok":
            a, g = r["metrics"]["final_loss"], partner["metrics"]["final_loss"]
            diff = abs(a - g) / max(abs(a), 1e-12)
            table.check(f"graph vs eager final loss: {name[:-6]}", diff <= 1e-3, f"rel. diff {diff:.1e}",
                        f"{a:.6f} vs {g:.6f} (limit 1e-3)")
        if b["precision"] == "fp8" and r["status"] == "ok":
            bf16 = by_label.get(name.replace(" fp8 ", " bf16 ", 1).replace(
                f" {b.get('fp8_recipe')}", "", 1))
            if bf16 and bf16["status"] == "ok":
                speedup = r["metrics"]["throughput"] / bf16["metrics"]["throughput"]
                table.row(f"fp8 / bf16: {name}", "measured", f"x{speedup:.3f}")


# fit against the run it predicts: on a GPU within 2 % under and 10 % over. The CPU rehearsal's
# tiny models hold kilobytes, where the CPU kernels' own buffers step with the shape (predicted
# 1.12 to 1.14 of a 0.1 MiB bf16 generation on an Intel Xeon with AMX): there it checks the
# path, within 2 % under and 50 % over.
FIT_TOLERANCE = {"cuda": (0.98, 1.10), "cpu": (0.98, 1.50)}


def fit_checks(table, run_dir, found, device="cuda"):
    low, high = FIT_TOLERANCE.get(device, FIT_TOLERANCE["cuda"])
    for fit_path in sorted(glob.glob(os.path.join(run_dir, "fit-*.json"))):
        fit = load(fit_path) or {}
        target = os.path.basename(fit_path)[len("fit-"):]
        run = next((r for p, r in found if os.path.basename(p) == target), None)
        measured = ((run or {}).get("metrics", {}).get("memory") or {}).get("peak_bytes")
        if not fit.get("predicted_peak_bytes") or not measured:
            table.check(f"fit then the run: {target}", False, "", "no prediction or no measured peak")
            continue
        predicted = fit["predicted_peak_bytes"]
        ratio = predicted / measured
        table.check(f"fit then the run: {label(run)}", low <= ratio <= high, f"predicted/measured {ratio:.3f}",
                    f"fit {size(predicted)}, run {size(measured)} (tolerance {low:.2f}-{high:.2f})")


def scale_rows(table, run_dir):
    for path in sorted(glob.glob(os.path.join(run_dir, "scale-*.json"))):
        prediction = load(path) or {}
        lines = [f"{line['fabric']} {line['points'][0]['efficiency'] * 100:.1f} %"
                 for line in prediction.get("fabrics", []) if line.get("points")]
        table.check(f"predicted 8-gpu scaling: {os.path.basename(path)[len('scale-'):]}", bool(lines),
                    lines[0] + " (predicted)" if lines else "",
                    "predicted efficiency: " + ", ".join(lines) if lines else "no prediction")


def telemetry_check(table, found, smi):
    first = next((r for _, r in found if r["status"] == "ok" and r["benchmark"]["device"] == "cuda"), None)
    t = (first or {}).get("telemetry") or {}
    if not t.get("available"):
        table.row("nvml telemetry vs nvidia-smi", "skipped", "", "", f"telemetry: {t.get('reason', 'no GPU result')}")
        return
    samples = []
    try:
        with open(smi) as f:
            for record in csv.DictReader(f, skipinitialspace=True):
                # nvidia-smi heads the column clocks.current.sm whichever of its names was asked for
                clock = record.get("clocks.current.sm [MHz]") or record.get("clocks.sm [MHz]", "")
                power = record.get("power.draw [W]", "")
                power, clock = power.replace("W", "").strip(), clock.replace("MHz", "").strip()
                if power and clock and float(power) > 100:
                    samples.append((float(power), float(clock)))
    except (OSError, ValueError, TypeError):
        pass
    summary = t.get("summary", {})
    ours = f"{summary.get('mean_power_w', 0):.0f} W, SM {summary.get('median_sm_clock_mhz', 0):.0f} MHz"
    if not samples:
        table.check("nvml telemetry vs nvidia-smi", False, ours, "no nvidia-smi samples under load")
        return
    samples.sort(key=lambda p: p[1])
    clock, power = samples[len(samples) // 2][1], max(p for p, _ in samples)
    ok = (abs(summary.get("median_sm_clock_mhz", 0) - clock) <= 0.15 * clock
          and summary.get("mean_power_w", 0) <= 1.05 * power)
    table.check("nvml telemetry vs nvidia-smi", ok, ours, f"nvidia-smi under load: SM {clock:.0f} MHz, max {power:.0f} W")


def table(args):
    found = results_in(args.run_dir)
    t = Table()
    for path, r in found:
        status = r["status"]
        m = r.get("metrics", {})
        figure = f"{m['throughput']:.1f} {m.get('throughput_unit', '')}" if status == "ok" else ""
        note = "; ".join(notes_of(r)) if status == "ok" else first_line(r.get("error"))
        if status == "skipped":
            note = f"needs {r.get('requirement')}: {note}"
            if args.device == "cpu" and r.get("requirement") not in CPU_MAY_LACK:
                t.failures.append(label(r))
        elif status != "ok":
            t.failures.append(label(r))
        t.row(label(r), status, figure, reference_cells(args.refs, path, r), note)
    pair_checks(t, found)
    fit_checks(t, args.run_dir, found, args.device)
    scale_rows(t, args.run_dir)
    if args.device == "cuda":
        telemetry_check(t, found, args.smi)
    print(f"{'item':52} {'status':9} {'figure':26} {'pytorch (gpubench / pytorch)':30} notes")
    print("\n".join(t.lines))
    print(f"# {t.rows} rows; {len(t.failures)} failed" + (f": {', '.join(t.failures)}" if t.failures else ""))
    return 1 if t.failures or not found else 0


def selected(args):
    """The results in a run folder that one of the driver's extras acts on, a path a line: `fit`,
    the eager train results (infer ones where SHAPE's second value is infer), of SHAPE (model,
    tuning and seq_len, or model, infer and precision) where given, that ran and searched no
    batch; `scale`, the bf16 LoRA train results in eager mode."""
    shape = tuple(args.shape)
    infer = len(shape) > 1 and shape[1] == "infer"
    for path, r in results_in(args.run_dir):
        b = r.get("benchmark", {})
        if args.extra == "scale":
            chosen = (b.get("tuning") == "lora" and b.get("precision") == "bf16" and b.get("task") == "train"
                      and b.get("mode", "eager") == "eager")
        else:
            chosen = (r.get("status") == "ok" and b.get("task") == ("infer" if infer else "train")
                      and b.get("mode") == "eager" and not r.get("batch_search", {}).get("searched"))
            own = (b.get("model"), "infer", b.get("precision")) if infer else \
                (b.get("model"), b.get("tuning"), str(b.get("seq_len")))
            chosen = chosen and (not shape or own == shape)
        if chosen:
            print(path)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("references")
    p.add_argument("run_dir")
    p.add_argument("refs")
    p.add_argument("--device", default="cuda")
    p.add_argument("--modes", default="eager")
    p.add_argument("--timeout", type=float, default=300)
    p = sub.add_parser("fit-settings")
    p.add_argument("result")
    p = sub.add_parser("select")
    p.add_argument("extra", choices=["fit", "scale"])
    p.add_argument("run_dir")
    p.add_argument("shape", nargs="*")
    p = sub.add_parser("table")
    p.add_argument("run_dir")
    p.add_argument("--refs")
    p.add_argument("--smi", default="")
    p.add_argument("--device", default="cuda")
    args = parser.parse_args()
    if args.command == "references":
        return references(args)
    if args.command == "fit-settings":
        print("\n".join(settings(load(args.result))))
        return 0
    if args.command == "select":
        return selected(args)
    return table(args)


if __name__ == "__main__":
    sys.exit(main())
