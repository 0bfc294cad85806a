#!/usr/bin/env python3
"""The GPU check's smoke stage (scripts/gpu-check.sh smoke): every CUDA path of gpubench once,
with few steps, in one call of at most 480 s on one H200, the build included. Each item runs
under its own timeout, a failing item never stops the others, the time budget skips what is left,
and the results are packed after every item. The output is one summary table, item by item:
status (ok, failed, oom, skipped, timeout), the headline figure, PyTorch's where there is one,
and the first error line or what the item checked.

Started by scripts/gpu-check.sh after its build, with:
  gpu_smoke.py --gpubench BIN --device cuda|cpu --folder results/gpu/<gpu> --out OUT
               --deadline EPOCH_SECONDS [--scratch DIR] [--only ITEM,...]
--device cpu is the rehearsal: the same items on gpubench's tiny test models in CPU precisions;
graph mode, NCCL and NVML are then "skipped" with the line gpubench gives. It checks this
script and gpubench's command lines, not a GPU."""
import argparse
import csv
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import time

STATUSES = ("ok", "failed", "oom", "skipped", "timeout")


class Smoke:
    def __init__(self, args):
        self.binary = args.gpubench
        self.device = args.device
        self.cpu = args.device == "cpu"
        self.folder = args.folder
        self.out = args.out
        self.deadline = args.deadline
        self.scratch = args.scratch or os.path.join(args.out, "scratch")
        os.makedirs(self.folder, exist_ok=True)
        os.makedirs(self.scratch, exist_ok=True)
        self.log = open(os.path.join(args.out, "smoke.log"), "a")
        self.table = args.table or os.path.join(self.folder, "check-smoke.txt")
        self.rows = []
        self.stamp = time.strftime("%Y-%m-%dT%H%M%S", time.gmtime())
        self.torch_imports = None

    # --- running things -------------------------------------------------------------------------

    def left(self):
        return self.deadline - time.time()

    def run(self, argv, timeout, env=None):
        """Runs argv in its own session under `timeout` seconds; on a timeout the whole group gets
        SIGTERM, then SIGKILL. Returns (exit code or None on timeout, output)."""
        timeout = max(1.0, min(timeout, self.left()))
        self.log.write(f"$ {' '.join(argv)}\n")
        self.log.flush()
        merged = dict(os.environ, **(env or {}))
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   errors="replace", env=merged, start_new_session=True)
        try:
            output, _ = process.communicate(timeout=timeout)
            code = process.returncode
        except subprocess.TimeoutExpired:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(process.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    process.wait(timeout=5)
                    break
                except subprocess.TimeoutExpired:
                    continue
            output, _ = process.communicate()
            code = None
        self.log.write(output or "")
        self.log.write(f"-> {'timeout' if code is None else code}\n")
        self.log.flush()
        return code, output or ""

    def gpubench(self, name, argv, timeout, env=None, keep=True):
        """One gpubench command whose result goes to the item's file. Returns (status, error,
        result) with status one of STATUSES."""
        folder = self.folder if keep else self.scratch
        path = os.path.join(folder, f"{self.stamp}_{name}.json")
        code, output = self.run([self.binary, "--log-level", "warn", *argv, "--output", path],
                                timeout, env)
        result = load(path)
        if code is None:
            return "timeout", f"killed after {timeout:.0f} s", result
        if result is not None and result.get("status") in ("ok", "failed", "oom"):
            return result["status"], first_line(result.get("error", "")), result
        line = first_line(output) or f"exit code {code}"
        if code == 2 and self.cpu and re.search(r"needs a CUDA device|CUDA|NVML|nccl|needs LibTorch", line):
            return "skipped", line, result  # the rehearsal: what the CPU cannot run
        return "failed", line, result

    def reference(self, script, argv, timeout):
        """PyTorch's side (scripts/torch_reference.py or hf_reference.py): its figure or why none."""
        if self.torch_imports is None:
            code, _ = self.run([sys.executable, "-c", "import torch"], 60)
            self.torch_imports = code == 0
        if not self.torch_imports:
            return None, "torch does not import"
        if self.left() < 15:
            return None, "skipped: time budget"
        path = os.path.join(self.scratch, f"reference-{len(self.rows)}.json")
        code, output = self.run([sys.executable, os.path.join("scripts", script), *argv,
                                 "--device", self.device, "--output", path], timeout)
        result = load(path)
        if code is None:
            return None, "timeout"
        if code != 0 or not result:
            return None, first_line(output.strip().splitlines()[-1] if output.strip() else "") or "failed"
        with open(os.path.join(self.out, "pytorch.jsonl"), "a") as jsonl:
            jsonl.write(json.dumps(result) + "\n")
        return result, ""

    # --- the table --------------------------------------------------------------------------------

    def row(self, item, status, figure="", pytorch="", note=""):
        assert status in STATUSES, status
        self.rows.append((item, status, figure, pytorch, note))
        line = f"{item:34} {status:8} {figure:28} {pytorch:22} {note}"
        print(line, flush=True)
        with open(self.table, "a") as table:
            table.write(line.rstrip() + "\n")
        with open(os.path.join(self.out, "smoke.jsonl"), "a") as jsonl:
            jsonl.write(json.dumps(dict(zip(("item", "status", "figure", "pytorch", "note"),
                                            (item, status, figure, pytorch, note)))) + "\n")
        self.pack()

    def pack(self):
        with tarfile.open(os.path.join(self.out, f"results-{os.path.basename(self.folder)}.tar.gz"),
                          "w:gz") as tar:
            relative = os.path.relpath(self.folder)
            tar.add(self.folder, arcname=os.path.basename(self.folder) if relative.startswith("..") else relative)

    def header(self):
        with open(self.table, "a") as table:
            table.write(f"{'item':34} {'status':8} {'figure':28} {'pytorch':22} first error line / note\n")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def first_line(text):
    for line in (text or "").splitlines():
        line = line.strip()
        if line:
            return line[:160]
    return ""


def figure(result):
    if not result or result.get("status") != "ok":
        return ""
    m = result["metrics"]
    return f"{m['throughput']:.1f} {m['throughput_unit']}"


def ratio(ours, theirs):
    if ours and theirs and ours.get("status") == "ok":
        return f"x{ours['metrics']['throughput'] / theirs['throughput']:.3f} of PyTorch"
    return ""


def size(n):
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def peak_bytes(result):
    return (((result or {}).get("metrics") or {}).get("memory") or {}).get("peak_bytes", 0)


def peak(result):
    memory = ((result or {}).get("metrics") or {}).get("memory") or {}
    return f"peak {size(memory.get('peak_bytes', 0))} ({memory.get('basis', '')})" if memory else ""


def notes(*parts):
    return "; ".join(p for p in parts if p)


# --- the items: GPU sizes, and the rehearsal's tiny ones --------------------------------------------

class Sizes:
    def __init__(self, cpu):
        self.cpu = cpu
        self.half = "bf16" if cpu else "fp16"  # fp16 autocast is a CUDA path
        self.resnet = "test-tiny-cnn" if cpu else "resnet50"
        self.googlenet = "test-tiny-cnn" if cpu else "googlenet"
        self.bert = "test-tiny-bert" if cpu else "bert-large"
        self.llama_1b = "test-tiny-llama" if cpu else "llama-3.2-1b"
        self.llama_8b = "test-tiny-llama" if cpu else "llama-3-8b"
        self.txl = "test-tiny-transformerxl" if cpu else "transformerxl-base"
        self.big_batch = 2 if cpu else 256
        self.small_batch = 2 if cpu else 32
        self.seq = 16 if cpu else 128
        self.long_seq = 32 if cpu else 2048
        self.llama_seq = 32 if cpu else 512
        self.timed = ["--warmup-steps", "3", "--steps", "2" if cpu else "20", "--repeat", "1" if cpu else "3"]
        self.short = ["--warmup-steps", "3", "--steps", "2" if cpu else "5", "--repeat", "1"]
        self.memory_limit = "4M" if cpu else "8G"
        self.infer_batches = "1,4" if cpu else "1,256"
        self.prompt, self.generated = ("16", "8") if cpu else ("512", "64")


def train(s, model, precision, batch, steps, *extra):
    args = ["train", "--device", s.device, "--model", model, "--precision", precision, *steps, *extra]
    if batch:
        args += ["--batch-size", str(batch)]
    return args


def resnet_fp16_b256(s, z):
    common = [z.resnet, z.half, z.big_batch, z.timed]
    eager = s.gpubench("resnet50_fp16_b256", train(s, *common), 90)
    s.row("resnet50 fp16 b256 eager", eager[0], figure(eager[2]), "", notes(eager[1], peak(eager[2])))
    graph = s.gpubench("resnet50_fp16_b256_graph", train(s, *common, "--mode", "graph"), 90)
    capture = ((graph[2] or {}).get("metrics") or {}).get("graph_capture_ms")
    # Graph mode measures its step's memory in the last warm-up, before the graph's pool: its
    # peak should be near eager's, not twice it.
    both = peak_bytes(graph[2]) and peak_bytes(eager[2])
    s.row("resnet50 fp16 b256 graph", graph[0], figure(graph[2]), "",
          notes(graph[1], capture and f"capture {capture:.0f} ms", peak(graph[2]),
                both and f"graph/eager peak {peak_bytes(graph[2]) / peak_bytes(eager[2]):.2f}"))
    pt, why = s.reference("torch_reference.py", ["--model", z.resnet, "--precision", z.half, "--batch-size",
                                                 str(z.big_batch), *z.timed], 120)
    ours = eager[2] if eager[0] == "ok" else None
    s.row("resnet50 fp16 b256 pytorch eager", "ok" if pt else "skipped",
          f"{pt['throughput']:.1f} {pt.get('unit', '')}".strip() if pt else "",
          "", notes(why, ratio(ours, pt) and "gpubench eager " + ratio(ours, pt),
                    pt and ratio(graph[2], pt) and "gpubench graph " + ratio(graph[2], pt)))


def profile_resnet(s, z):
    """One ResNet-50 fp16 step profiled on each side (docs/profiling.md), and their op table."""
    steps = ["--warmup-steps", "3", "--steps", "1", "--repeat", "1"]
    ours_trace = os.path.join(s.scratch, f"{s.stamp}_gpubench-trace.json")
    # Kept out of the results folder: one profiled step is no figure for a report.
    ours = s.gpubench("profile_resnet50_fp16", train(s, z.resnet, z.half, z.big_batch, steps,
                                                     "--profile", ours_trace), 90, keep=False)
    s.row("profile resnet50 fp16 gpubench", ours[0] if (ours[2] or {}).get("profile") or ours[0] != "ok"
          else "failed", figure(ours[2]), "", notes(ours[1], ours[0] == "ok" and not (ours[2] or {}).get(
              "profile") and "no profile block"))
    theirs_trace = os.path.join(s.scratch, f"{s.stamp}_pytorch-trace.json")
    pt, why = s.reference("torch_reference.py", ["--model", z.resnet, "--precision", z.half, "--batch-size",
                                                 str(z.big_batch), *steps, "--profile", theirs_trace], 120)
    if not pt or ours[0] != "ok":
        s.row("profile resnet50 fp16 op table", "skipped", "", "", why or "gpubench's side did not run")
        return
    table = os.path.join(s.folder, "check-profile-resnet50.md")
    code, output = s.run([sys.executable, os.path.join("scripts", "profile_diff.py"),
                          ours[2]["profile"]["trace"], theirs_trace, "--top", "25", "--output", table], 60)
    top = ""
    if code == 0:
        with open(table) as f:
            rows = [line for line in f if line.startswith("| ") and "calls/step" not in line
                    and line.count("|") > 8]
        top = rows[0].split("|")[1].strip() + " " + rows[0].split("|")[6].strip() + " ms" if rows else ""
    s.row("profile resnet50 fp16 op table", "ok" if code == 0 else "failed", "", "",
          notes(code != 0 and first_line(output), top and f"largest difference: {top}",
                code == 0 and os.path.basename(table)))


def resnet_fp16_b32(s, z):
    for mode in ("eager", "graph"):
        r = s.gpubench(f"resnet50_fp16_b32_{mode}", train(s, z.resnet, z.half, z.small_batch, z.timed,
                                                          "--mode", mode), 60)
        s.row(f"resnet50 fp16 b32 {mode}", r[0], figure(r[2]), "", notes(r[1], peak(r[2])))


def graph_vs_eager_losses(s, z):
    runs = {}
    for mode in ("eager", "graph"):
        runs[mode] = s.gpubench(f"losses_{mode}", train(
            s, z.resnet, "fp32", z.small_batch, ["--warmup-steps", "10", "--steps", "10", "--repeat", "1"],
            "--mode", mode, "--deterministic"), 60, keep=False)
    eager, graph = runs["eager"], runs["graph"]
    if eager[0] != "ok" or graph[0] != "ok":
        bad = eager if eager[0] != "ok" else graph
        s.row("graph vs eager losses", "skipped" if bad[0] == "skipped" else bad[0], "", "", bad[1])
        return
    a, b = eager[2]["metrics"]["final_loss"], graph[2]["metrics"]["final_loss"]
    difference = abs(a - b) / max(abs(a), 1e-12)
    s.row("graph vs eager losses", "ok" if difference <= 1e-3 else "failed", f"rel. diff {difference:.1e}",
          "", f"{a:.6f} vs {b:.6f} after 20 deterministic fp32 steps (limit 1e-3)")


def googlenet_graph(s, z):
    r = s.gpubench("googlenet_fp16_b128_graph", train(s, z.googlenet, z.half, 2 if z.cpu else 128, z.short,
                                                      "--mode", "graph"), 60)
    s.row("googlenet fp16 b128 graph", r[0], figure(r[2]), "", notes(r[1], peak(r[2])))


def nccl_group_of_one(s, z):
    env = {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29517"}
    r = s.gpubench("resnet50_bf16_group_of_one", train(s, z.resnet, "bf16", 2 if z.cpu else 128, z.short),
                   60, env=env, keep=False)
    d = (r[2] or {}).get("distributed", {})
    s.row("nccl group of one bf16", r[0], figure(r[2]), "", notes(
        r[1], d and f"{d.get('backend')} x{d.get('world_size')}, {d.get('buckets')} buckets, "
                    f"exposed comm {d.get('exposed_communication_ms', 0):.2f} ms/step"))


def bert_large(s, z):
    for mode in ("eager", "graph"):
        r = s.gpubench(f"bert-large_bf16_s128_{mode}", train(s, z.bert, "bf16", 2 if z.cpu else 32, z.short,
                                                              "--seq-len", str(z.seq), "--mode", mode), 90)
        s.row(f"bert-large bf16 full s128 {mode}", r[0], figure(r[2]), "", notes(r[1], peak(r[2])))


def llama_1b(s, z):
    r = s.gpubench("llama-3.2-1b_lora_fp16", train(s, z.llama_1b, z.half, 2 if z.cpu else 4, z.short,
                                                   "--seq-len", str(z.llama_seq), "--tuning", "lora"), 90)
    skipped = (r[2] or {}).get("metrics", {}).get("skipped_steps", 0)
    s.row("llama-3.2-1b lora fp16", r[0], figure(r[2]), "", notes(
        r[1], f"{skipped} overflowing steps skipped by the scaler" if r[0] == "ok" else "", peak(r[2])))
    r = s.gpubench("llama-3.2-1b_lora_bf16_ckpt", train(s, z.llama_1b, "bf16", 2 if z.cpu else 4, z.short,
                                                        "--seq-len", str(z.llama_seq), "--tuning", "lora",
                                                        "--activation-checkpointing"), 90)
    s.row("llama-3.2-1b lora bf16 checkpointed", r[0], figure(r[2]), "", notes(r[1], peak(r[2])))


def scale_llama_8b_lora(s, result):
    """The 8B LoRA step's own timeline, on this GPU, predicted on 8x L40S (PCIe) and 8x A100 SXM
    (docs/scaling.md, whose table rests on CPU timelines and an assumed throughput)."""
    out = os.path.join(s.folder, "check-scale-llama-3-8b-lora.json")
    code, output = s.run([s.binary, "scale", result, "--fabric", "L40S", "--fabric", "A100-80GB-SXM",
                          "--gpus", "8", "-f", "json", "-o", out], 30)
    prediction = load(out) if code == 0 else None
    if not prediction:
        s.row("llama-3-8b lora predicted 8-gpu scaling", "failed", "", "",
              first_line(output) or f"exit code {code}")
        return
    lines = [f"{line['fabric']} {line['points'][0]['efficiency'] * 100:.1f} %"
             for line in prediction["fabrics"] if line["points"]]
    s.row("llama-3-8b lora predicted 8-gpu scaling", "ok", lines[0] + " (predicted)", "",
          "predicted efficiency: " + ", ".join(lines) + "; " + os.path.basename(out))


def llama_8b_lora(s, z):
    args = ["--seq-len", str(z.long_seq), "--batch-size", "1", "--tuning", "lora", "--precision", "bf16"]
    r = s.gpubench("llama-3-8b_lora_bf16_s2048", train(s, z.llama_8b, "bf16", 1, z.short, "--seq-len",
                                                       str(z.long_seq), "--tuning", "lora"), 120)
    s.row("llama-3-8b lora bf16 s2048", r[0], figure(r[2]), "", notes(r[1], peak(r[2])))
    if r[0] == "ok":
        scale_llama_8b_lora(s, os.path.join(s.folder, f"{s.stamp}_llama-3-8b_lora_bf16_s2048.json"))
    code, _ = s.run([sys.executable, "-c", "import transformers, peft"], 60)
    if code != 0:
        s.row("llama-3-8b lora hugging face", "skipped", "", "", "transformers + peft do not import")
        return
    hf, why = s.reference("hf_reference.py", ["--model", z.llama_8b, *args, *z.short], 150)
    s.row("llama-3-8b lora hugging face", "ok" if hf else "skipped",
          f"{hf['throughput']:.1f} tokens/sec" if hf else "", "",
          notes(why, hf and r[2] and ratio(r[2], hf) and "gpubench " + ratio(r[2], hf),
                hf and f"peak {hf.get('peak_memory_bytes', 0) / 2**30:.2f} GiB"))


def fit_then_run(s, z):
    settings = ["--device", s.device, "--model", z.llama_1b, "--precision", "bf16", "--seq-len",
                str(z.long_seq if z.cpu else 1024), "--batch-size", "4", "--tuning", "lora"]
    fit_path = os.path.join(s.folder, f"{s.stamp}_fit_llama-3.2-1b.json")
    code, output = s.run([s.binary, "--log-level", "warn", "fit", *settings, "--memory", "48GB,80GB",
                          "--format", "json", "--output", fit_path], 90)
    fit = load(fit_path)
    if code is None or fit is None:
        s.row("fit llama-3.2-1b lora", "timeout" if code is None else "failed", "", "",
              first_line(output) if code is not None else "")
        return
    r = s.gpubench("llama-3.2-1b_lora_bf16_fitted", ["train", *settings, *z.short], 90)
    predicted = fit["predicted_peak_bytes"]
    measured = ((r[2] or {}).get("metrics", {}).get("memory") or {}).get("peak_bytes")
    # fit's own tolerance (docs/memory.md): 2 % under, which its reserve covers, to 10 % over.
    within = measured and 0.98 * measured <= predicted <= 1.10 * measured
    s.row("fit then the run", r[0] if r[0] != "ok" else ("ok" if within else "failed"),
          f"predicted/measured {predicted / measured:.3f}" if measured else "", "",
          notes(r[1], f"fit {size(predicted)}, run {size(measured)}" if measured else "",
                measured and predicted < measured and f"under the run's peak by {size(measured - predicted)}",
                "" if within or not measured else "outside [0.98, 1.10]"))


def batch_max(s, z):
    r = s.gpubench("resnet50_bmax", train(s, z.resnet, z.half, 0, z.short, "--batch-size", "max",
                                          "--memory-limit", z.memory_limit), 150)
    search = (r[2] or {}).get("batch_search") or {}
    causes = sorted({p.get("oom_cause", "") for p in search.get("probes", []) if p.get("outcome") == "oom"} - {""})
    s.row(f"batch max under {z.memory_limit}", r[0] if search.get("found_batch") or r[0] != "ok" else "failed",
          f"batch {search.get('found_batch', 0)}" if search else "", "",
          notes(r[1], search and f"predicted {search.get('predicted_batch')}, {len(search.get('probes', []))} probes",
                causes and "oom causes: " + ", ".join(causes)))


def infer(s, z):
    lengths = ["--prompt-len", z.prompt, "--gen-len", z.generated]
    for real, model, batches, extra in (("resnet50", z.resnet, z.infer_batches, []),
                                        ("llama-3.2-1b", z.llama_1b, "1", lengths),
                                        ("llama-3-8b", z.llama_8b, "1", lengths)):
        for mode in ("eager", "graph"):
            folder = os.path.join(s.scratch, f"infer-{real}-{mode}")
            os.makedirs(folder, exist_ok=True)
            precision = z.half if model == z.resnet else "bf16"
            steps = ["--warmup-steps", "3", "--steps", "2" if z.cpu else "10", "--repeat", "1"]
            if model != z.resnet:
                steps = ["--warmup-steps", "1", "--steps", "2", "--repeat", "1"]
            code, output = s.run([s.binary, "--log-level", "warn", "infer", "--device", s.device, "--model", model,
                                  "--precision", precision, "--batch-size", batches, *extra, *steps,
                                  "--mode", mode, "--output", folder], 90)
            results = [load(os.path.join(folder, f)) for f in sorted(os.listdir(folder)) if f.endswith(".json")]
            results = [r for r in results if r]
            for result in results:
                with open(os.path.join(s.folder, f"{s.stamp}_infer_{real}_{mode}_b"
                                       f"{result['benchmark'].get('batch_size_per_device')}.json"), "w") as f:
                    json.dump(result, f, indent=2)
            label = f"infer {real} {mode}"
            if code is None:
                s.row(label, "timeout", "", "", "")
            elif not results:
                line = first_line(output) or f"exit code {code}"
                cpu_only = code == 2 and z.cpu and "CUDA" in line
                s.row(label, "skipped" if cpu_only else "failed", "", "", line)
            else:
                bad = [r for r in results if r["status"] != "ok"]
                inference = results[-1]["metrics"].get("inference", {})
                extra_note = (f"decode {inference['decode_tokens_per_second']:.1f} tokens/sec, TTFT p50 "
                              f"{inference['time_to_first_token_ms']['p50']:.1f} ms"
                              if inference.get("decode_tokens_per_second") else "")
                s.row(label, bad[0]["status"] if bad else "ok", figure(results[-1]), "",
                      notes(bad and first_line(bad[0].get("error")), f"batches {batches}", extra_note))


def fp8_pair(s, z, label, name, argv, timeout):
    """The same benchmark in bf16 and fp8, one after the other: both results, the FP8/BF16
    speed-up and the share of the products FP8 ran."""
    runs = {}
    for precision in ("bf16", "fp8"):
        runs[precision] = s.gpubench(f"{name}_{precision}", [*argv, "--precision", precision], timeout)
    bf16, fp8 = runs["bf16"], runs["fp8"]
    share = ((fp8[2] or {}).get("metrics") or {}).get("fp8_matmul_flop_share")
    speedup = ""
    if bf16[0] == "ok" and fp8[0] == "ok":
        speedup = f"fp8/bf16 x{fp8[2]['metrics']['throughput'] / bf16[2]['metrics']['throughput']:.3f}"
    s.row(f"{label} bf16", bf16[0], figure(bf16[2]), "", notes(bf16[1], peak(bf16[2])))
    s.row(f"{label} fp8", fp8[0], figure(fp8[2]), "",
          notes(fp8[1], speedup, share and f"FP8 {100 * share:.0f}% of products", peak(fp8[2])))
    return runs


FP8_LORA = ["--tuning", "lora", "--batch-size", "1"]


def fp8(s, z):
    """FP8 beside bf16 (docs/fp8.md), each pair in one call: Llama 3.2 1B full training at 2048
    tokens, Llama 3 8B LoRA at 2048, BERT-large at 128, Llama 3 8B decode at batch 1. The H200's
    goals: 8B LoRA fp8 >= 1.3x bf16, BERT-large >= 1.25x, 8B decode >= 1.6x."""
    seq = ["--seq-len", str(z.long_seq)]
    fp8_pair(s, z, "fp8 llama-3.2-1b full s2048", "llama-3.2-1b_full_s2048",
             ["train", "--device", s.device, "--model", z.llama_1b, *z.short, *seq, "--batch-size", "1"], 120)
    fp8_pair(s, z, "fp8 llama-3-8b lora s2048", "llama-3-8b_lora_s2048",
             ["train", "--device", s.device, "--model", z.llama_8b, *z.short, *seq, *FP8_LORA], 150)
    fp8_pair(s, z, "fp8 bert-large s128", "bert-large_s128",
             ["train", "--device", s.device, "--model", z.bert, *z.short, *fp8_bert(z)], 90)
    fp8_pair(s, z, "fp8 llama-3-8b decode b1", "llama-3-8b_decode_b1",
             ["infer", "--device", s.device, "--model", z.llama_8b, "--batch-size", "1", "--prompt-len",
              z.prompt, "--gen-len", z.generated, "--warmup-steps", "1", "--steps", "2", "--repeat", "1"], 120)


def fp8_bert(z):
    return ["--seq-len", str(z.seq), "--batch-size", str(2 if z.cpu else 32)]


def fp8_pytorch(s, z):
    """torchao's float8 training of the fp8 item's training benchmarks, as PyTorch's side (plain
    bf16 where torchao does not import); last, since the gpubench pairs matter more."""
    for label, name, model, argv in (
            ("fp8 llama-3-8b lora s2048", "llama-3-8b_lora_s2048", z.llama_8b,
             ["--seq-len", str(z.long_seq), *FP8_LORA]),
            ("fp8 bert-large s128", "bert-large_s128", z.bert, fp8_bert(z))):
        ours = load(os.path.join(s.folder, f"{s.stamp}_{name}_fp8.json"))
        hf, why = s.reference("hf_reference.py", ["--model", model, *argv, "--precision", "fp8", *z.short], 150)
        s.row(f"{label} pytorch fp8", "ok" if hf else "skipped",
              f"{hf['throughput']:.1f} {hf.get('throughput_unit', '')}".strip() if hf else "", "",
              notes(why, hf and hf.get("reference"), hf and ours and "gpubench fp8 " + ratio(ours, hf)))


def transformer_xl(s, z):
    r = s.gpubench("transformerxl-base_fp16", train(s, z.txl, z.half, 0, z.short), 90)
    s.row("transformer-xl base fp16", r[0], figure(r[2]), "", notes(r[1], peak(r[2])))


def suite(s, z):
    path = os.path.join(s.scratch, "smoke-suite.yaml")
    with open(path, "w") as f:
        f.write(f"defaults:\n  device: {s.device}\n  warmup_steps: 3\n  steps: {2 if z.cpu else 5}\n  repeat: 1\n"
                f"benchmarks:\n  - model: {z.resnet}\n    precision: {z.half}\n    batch_size: {z.small_batch}\n"
                f"  - model: {z.bert}\n    precision: bf16\n    seq_len: {z.seq}\n    batch_size: 2\n")
    out = os.path.join(s.scratch, "suite")
    code, output = s.run([s.binary, "--log-level", "warn", "run", path, "--output", out], 150)
    results = [load(os.path.join(out, f)) for f in sorted(os.listdir(out))] if os.path.isdir(out) else []
    ok = [r for r in results if r and r.get("status") == "ok"]
    status = "timeout" if code is None else ("ok" if code == 0 and len(ok) == 2 else "failed")
    s.row("suite of two (gpubench run)", status, f"{len(ok)} of 2 results ok", "",
          "" if status == "ok" else first_line(output))


def telemetry(s, z):
    """NVML's samples in the first eager ResNet-50 result against nvidia-smi's own during it."""
    result = load(os.path.join(s.folder, f"{s.stamp}_resnet50_fp16_b256.json"))
    t = (result or {}).get("telemetry") or {}
    if not t.get("available"):
        s.row("nvml telemetry vs nvidia-smi", "skipped" if z.cpu else "failed", "", "",
              f"telemetry: {t.get('source', 'none')}: {t.get('reason', 'no result')}")
        return
    summary = t.get("summary", {})
    ours = f"{summary.get('mean_power_w', 0):.0f} W, SM {summary.get('median_sm_clock_mhz', 0):.0f} MHz"
    smi = os.path.join(s.folder, "nvidia-smi-smoke.csv")
    samples = []
    try:
        with open(smi) as f:
            for record in csv.DictReader(f, skipinitialspace=True):
                power = record.get("power.draw [W]", "").replace("W", "").strip()
                # nvidia-smi heads the column clocks.current.sm whichever of its names was asked for.
                clock = (record.get("clocks.current.sm [MHz]") or record.get("clocks.sm [MHz]", "")
                         ).replace("MHz", "").strip()
                if power and clock and float(power) > 100:  # samples while a benchmark ran
                    samples.append((float(power), float(clock)))
    except (OSError, ValueError):
        pass
    if not samples:
        s.row("nvml telemetry vs nvidia-smi", "skipped", ours, "", "no nvidia-smi samples under load")
        return
    samples.sort(key=lambda p: p[1])
    smi_clock = samples[len(samples) // 2][1]
    smi_power = max(p for p, _ in samples)
    clock_ok = abs(summary.get("median_sm_clock_mhz", 0) - smi_clock) <= 0.15 * smi_clock
    power_ok = summary.get("mean_power_w", 0) <= 1.05 * smi_power
    s.row("nvml telemetry vs nvidia-smi", "ok" if clock_ok and power_ok else "failed", ours, "",
          f"nvidia-smi under load: median SM {smi_clock:.0f} MHz, max {smi_power:.0f} W")


# In order of what matters most: the budget skips from the end.
ITEMS = [
    ("resnet50-fp16-b256", resnet_fp16_b256),
    ("nccl-group-of-one", nccl_group_of_one),
    ("profile-resnet50", profile_resnet),
    ("resnet50-fp16-b32", resnet_fp16_b32),
    ("graph-vs-eager-losses", graph_vs_eager_losses),
    ("googlenet-graph", googlenet_graph),
    ("bert-large", bert_large),
    ("llama-3.2-1b", llama_1b),
    ("fp8", fp8),
    ("infer", infer),
    ("fit-then-run", fit_then_run),
    ("batch-max", batch_max),
    ("transformer-xl", transformer_xl),
    ("suite", suite),
    ("telemetry", telemetry),
    ("llama-3-8b-lora", llama_8b_lora),
    ("fp8-pytorch", fp8_pytorch),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpubench", required=True)
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--folder", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--deadline", type=float, required=True)
    parser.add_argument("--scratch")
    parser.add_argument("--table", help="the table file (default: FOLDER/check-smoke.txt)")
    parser.add_argument("--only", help="comma-separated items (default: all): " +
                        ", ".join(name for name, _ in ITEMS))
    args = parser.parse_args()
    names = [name for name, _ in ITEMS]
    only = args.only.split(",") if args.only else names
    unknown = sorted(set(only) - set(names))
    if unknown:
        print(f"gpu_smoke: unknown item(s) {', '.join(unknown)}; items: {', '.join(names)}", file=sys.stderr)
        return 2
    smoke = Smoke(args)
    sizes = Sizes(smoke.cpu)
    sizes.device = args.device
    smoke.device = args.device
    smoke.header()
    for name, item in ITEMS:
        if name not in only:
            continue
        if smoke.left() < 15:
            smoke.row(name, "skipped", "", "", "time budget spent")
            continue
        started = time.time()
        try:
            item(smoke, sizes)
        except Exception as error:  # a bug in this script must not stop the other items
            smoke.row(name, "failed", "", "", f"smoke script: {type(error).__name__}: {first_line(str(error))}")
        smoke.log.write(f"== {name}: {time.time() - started:.0f} s\n")
    counts = {status: sum(1 for r in smoke.rows if r[1] == status) for status in STATUSES}
    summary = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
    with open(smoke.table, "a") as table:
        table.write(f"# {len(smoke.rows)} rows: {summary}\n")
    print(f"smoke: {len(smoke.rows)} rows: {summary}")
    smoke.pack()
    return 1 if counts["failed"] or counts["timeout"] else 0


if __name__ == "__main__":
    sys.exit(main())
