#!/usr/bin/env python3
"""The same training benchmark in PyTorch, for side-by-side comparison with gpubench: the
reference implementation of the model (torchvision's, timm's inception_v4, DeepLearningExamples'
SSD300 built on torchvision's resnet50 by ssd300_reference.py), same batch,
precision, memory format, optimiser, auxiliary-loss weights, warm-up, steps and trials, synthetic
data on the device, timed between device synchronisations. --mode picks what a PyTorch user would
run instead of gpubench: eager with PyTorch's default SGD (multi-tensor foreach kernels on CUDA),
or the model under torch.compile (mode "default", or "reduce-overhead", which replays CUDA graphs);
compilation happens in the warm-up and is timed apart. Prints one JSON object (and writes it to
--output)."""
import argparse
import contextlib
import statistics

import torch

from trial_timing import (backward_and_step, emit_result, keep_freed_host_memory, profile_trial,
                          synchronizer, time_trials)
import torchvision

import ssd300_reference


# gpubench name -> (builder, input size, auxiliary loss weights)
def reference_model(name):
    tv = torchvision.models
    if name in ("resnet50", "resnet101", "resnet152", "vgg16"):
        return getattr(tv, name)(num_classes=1000), 224, ()
    if name == "googlenet":
        return tv.googlenet(num_classes=1000, aux_logits=True, transform_input=False, init_weights=True), 224, (0.3, 0.3)
    if name == "inception3":
        return tv.inception_v3(num_classes=1000, aux_logits=True, transform_input=False, init_weights=True), 299, (0.4,)
    if name == "inception4":
        import timm
        return timm.create_model("inception_v4", num_classes=1000), 299, ()
    if name == "ssd300":
        return ssd300_reference.SSD300(), ssd300_reference.IMAGE, ()
    raise SystemExit(f"unknown model {name!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--precision", choices=["fp32", "tf32", "fp16", "bf16"], default="fp32")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--warmup-steps", type=int, default=10)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--channels-last", action=argparse.BooleanOptionalAction, default=None,
                        help="default: on for fp16/bf16, as gpubench does on CUDA")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                        help="cpu: only to rehearse scripts/gpu-check.sh on a machine without a GPU")
    parser.add_argument("--mode", choices=["eager", "compile", "reduce-overhead"], default="eager",
                        help="eager; torch.compile(model); torch.compile(model, mode='reduce-overhead')")
    parser.add_argument("--profile", metavar="FILE",
                        help="after the trials, one more under torch.profiler: its Chrome trace to FILE "
                             "(docs/profiling.md)")
    parser.add_argument("--output")
    args = parser.parse_args()

    device = torch.device(args.device)
    if device.type == "cpu":
        keep_freed_host_memory()
    tf32 = args.precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    channels_last = args.channels_last
    if channels_last is None:
        channels_last = args.precision in ("fp16", "bf16")
    memory_format = torch.channels_last if channels_last else torch.contiguous_format

    torch.manual_seed(42)
    model, size, aux_weights = reference_model(args.model)
    model = model.to(device, memory_format=memory_format)
    model.train()
    compiled = model
    if args.mode != "eager":
        compiled = torch.compile(model, mode="default" if args.mode == "compile" else args.mode)
    images = torch.randn(args.batch_size, 3, size, size, device=device).contiguous(memory_format=memory_format)
    labels = torch.randint(1000, (args.batch_size,), device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1 * args.batch_size / 256, momentum=0.9,
                                weight_decay=1e-4)
    autocast_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.precision)
    scaler = torch.amp.GradScaler(args.device) if args.precision == "fp16" else None
    loss_fn = torch.nn.CrossEntropyLoss()
    if args.model == "ssd300":  # its loss on 7 matched objects an image, as gpubench's default
        detection_loss = ssd300_reference.training_loss(args.batch_size, device)

    def step():
        if args.mode == "reduce-overhead":  # a new iteration for CUDA-graph trees
            torch.compiler.cudagraph_mark_step_begin()
        optimizer.zero_grad(set_to_none=True)
        # No autocast context at all in fp32/tf32: torch 1.13's CPU autocast refuses float32 even disabled.
        with (torch.autocast(args.device, dtype=autocast_dtype) if autocast_dtype else contextlib.nullcontext()):
            output = compiled(images)
            if args.model == "ssd300":
                loss = detection_loss(output)
            elif aux_weights:  # torchvision's InceptionOutputs / GoogLeNetOutputs in training mode
                main, *aux = output
                loss = loss_fn(main.float(), labels)
                for weight, logits in zip(aux_weights, aux):
                    loss = loss + weight * loss_fn(logits.float(), labels)
            else:
                loss = loss_fn(output.float(), labels)
        backward_and_step(loss, optimizer, scaler)

    synchronize = synchronizer(device)

    warmup_s, trials = time_trials(step, synchronize, args.warmup_steps, args.steps, args.repeat,
                                   args.batch_size)
    result = {"model": args.model, "precision": args.precision, "batch_size": args.batch_size,
              "channels_last": channels_last, "mode": args.mode, "warmup_s": warmup_s,
              "throughput": statistics.median(trials),
              "trials": trials, "torch": torch.__version__, "gpu": torch.cuda.get_device_name() if device.type == "cuda" else "cpu"}
    if args.profile:
        result["profile"] = {"trace": args.profile, "steps": args.steps, "throughput": profile_trial(
            step, synchronize, args.steps, args.batch_size, args.profile, device.type == "cuda")}
    emit_result(result, args.output)


if __name__ == "__main__":
    main()
