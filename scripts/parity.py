#!/usr/bin/env python3
"""gpubench against PyTorch eager on the same model, in interleaved pairs (docs/profiling.md):
each pair runs `gpubench train` and the reference script (torch_reference.py for the convnets and
SSD300, maskrcnn_reference.py for Mask R-CNN, hf_reference.py for BERT and the Llamas) one after the other with the same batch, precision,
warm-up, steps and trials, alternating which goes first so that a drift of the machine falls on
both sides alike. Prints each pair's ratio (gpubench / PyTorch, of the median trials) and the
median ratio, and writes them as JSON with --output.

    scripts/parity.py --model resnet50 --precision fp32 --batch-size 8 --threads 2 --pairs 3 \\
        --gpubench build-torch2/gpubench --python .deps/torch-2.11.0-venv/bin/python

The reference runs under --python, which must import the same LibTorch that gpubench was built
against for the comparison to mean anything (the 2.11 wheel, or Debian's python3-torch for 1.13).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TRANSFORMERS = ("bert", "llama", "test-tiny-bert", "test-tiny-llama")


def run(argv, env=None):
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=dict(os.environ, **(env or {})))
    if done.returncode != 0:
        sys.exit(f"parity: {' '.join(argv)} exited {done.returncode}:\n{done.stdout[-2000:]}")
    return done.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seq-len", type=int, help="BERT and the Llamas")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--warmup-steps", type=int, default=2)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--gpubench", default="build/gpubench")
    parser.add_argument("--python", default=sys.executable, help="the reference's interpreter")
    parser.add_argument("--pytorch-malloc", choices=["same", "default"], default="same",
                        help="same: the reference keeps freed host memory as gpubench does "
                             "(trial_timing.keep_freed_host_memory); default: glibc's defaults")
    parser.add_argument("--output")
    args = parser.parse_args()

    common = ["--precision", args.precision, "--batch-size", str(args.batch_size),
              "--warmup-steps", str(args.warmup_steps), "--steps", str(args.steps),
              "--repeat", str(args.repeat)]
    transformer = args.model.startswith(TRANSFORMERS)
    ours_argv = [args.gpubench, "--log-level", "warn", "train", "--model", args.model,
                 "--device", "cpu", "--threads", str(args.threads), *common]
    script = "hf_reference.py" if transformer else "torch_reference.py"
    command = []
    if args.model == "maskrcnn":  # torchvision's MaskRCNN, trained as its recipe trains it
        script, command = "maskrcnn_reference.py", ["throughput"]
    theirs_argv = [args.python, os.path.join(HERE, script), *command, "--model", args.model,
                   "--device", "cpu", *common]
    if args.seq_len:
        ours_argv += ["--seq-len", str(args.seq_len)]
        theirs_argv += ["--seq-len", str(args.seq_len)]
    if not transformer:  # torchvision's ResNets train contiguous on the CPU, as gpubench does
        theirs_argv += ["--no-channels-last"]
    test_hooks = {"GPUBENCH_TEST_HOOKS": "1"} if args.model.startswith("test-") else {}
    threads = {"OMP_NUM_THREADS": str(args.threads),
               "GPUBENCH_REFERENCE_DEFAULT_MALLOC": "1" if args.pytorch_malloc == "default" else "0"}

    pairs = []
    with tempfile.TemporaryDirectory(prefix="gpubench-parity-") as scratch:
        for i in range(args.pairs):
            figures = {}
            for side in (("ours", "theirs") if i % 2 == 0 else ("theirs", "ours")):
                path = os.path.join(scratch, f"{side}-{i}.json")
                if side == "ours":
                    run(ours_argv + ["--output", path], test_hooks)
                else:
                    run(theirs_argv + ["--output", path], threads)
                with open(path) as f:
                    result = json.load(f)
                figures[side] = (result["metrics"]["throughput"] if side == "ours"
                                 else result["throughput"])
            ratio = figures["ours"] / figures["theirs"]
            pairs.append({"gpubench": figures["ours"], "pytorch": figures["theirs"], "ratio": ratio})
            print(f"pair {i + 1}: gpubench {figures['ours']:.4g}, pytorch {figures['theirs']:.4g}, "
                  f"ratio {ratio:.3f}", flush=True)
    median = statistics.median(p["ratio"] for p in pairs)
    print(f"{args.model} {args.precision} batch {args.batch_size}, {args.threads} threads: "
          f"median gpubench / pytorch over {len(pairs)} pairs {median:.3f} (pytorch's malloc: "
          f"{args.pytorch_malloc})")
    if args.output:
        with open(args.output, "w") as f:
            json.dump({"model": args.model, "precision": args.precision,
                       "batch_size": args.batch_size, "threads": args.threads,
                       "pytorch_malloc": args.pytorch_malloc, "pairs": pairs,
                       "median_ratio": median}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
