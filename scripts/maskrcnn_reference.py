#!/usr/bin/env python3
"""torchvision's Mask R-CNN ResNet-50-FPN as its detection recipe trains it (the backbone as
maskrcnn_resnet50_fpn builds it from ImageNet weights: FrozenBatchNorm2d, trainable layers 3; 91
classes), for gpubench's maskrcnn (models/mask_rcnn.cpp): the reference it is checked against
and timed beside. No weights are downloaded: the backbone is built as the pretrained path builds
it, with torchvision's initialisation.

    maskrcnn_reference.py fixture OUT.pt [--height 96 --width 128 --objects 3]
        torch.save of one dict: the model's state dict ("state"), two images in [0, 1] at the
        given size (min_size and max_size set to it), their objects ("boxes" [N, K, 4] in pixels,
        "labels" [N, K], "masks" [N, K, H, W] uint8), the seed set before the forward, and the
        training-mode forward's five losses by torchvision's names.
    maskrcnn_reference.py throughput --batch-size 2 [--height 800 --width 1333] [--output F] ...
        training steps timed as torch_reference.py times them (JSON on stdout and to F), for
        parity.py and the GPU check's compare tier.

Needs torch and torchvision; the test runs it with the interpreter whose LibTorch gpubench was
built against (GPUBENCH_REFERENCE_PYTHON in CMake)."""
import argparse
import contextlib
import statistics

import torch
import torchvision
from torchvision.models.detection.backbone_utils import _resnet_fpn_extractor
from torchvision.models.detection.mask_rcnn import MaskRCNN
from torchvision.ops import misc as misc_nn_ops

from trial_timing import (backward_and_step, emit_result, keep_freed_host_memory, profile_trial,
                          synchronizer, time_trials)

SEED = 7


def build(height, width):
    backbone = torchvision.models.resnet50(norm_layer=misc_nn_ops.FrozenBatchNorm2d)
    backbone = _resnet_fpn_extractor(backbone, 3)
    return MaskRCNN(backbone, num_classes=91, min_size=min(height, width), max_size=max(height, width))


def synthetic(batch, objects, height, width, device="cpu"):
    """As gpubench draws them: centres anywhere, sides 5 % to 50 %, each mask its box's pixels."""
    extent = torch.tensor([float(width), float(height)])
    centre = torch.rand(batch, objects, 2) * extent
    half = (0.05 + 0.45 * torch.rand(batch, objects, 2)) * extent / 2
    low = (centre - half).clamp(min=0).floor()
    high = torch.minimum(centre + half, extent).ceil()
    boxes = torch.cat([low, high], 2)
    labels = torch.randint(1, 91, (batch, objects))
    ys = torch.arange(height).view(1, 1, -1, 1)
    xs = torch.arange(width).view(1, 1, 1, -1)
    corner = lambda c: boxes[:, :, c].view(batch, objects, 1, 1)
    masks = ((xs >= corner(0)) & (xs < corner(2)) & (ys >= corner(1)) & (ys < corner(3))).to(torch.uint8)
    images = torch.rand(batch, 3, height, width)
    return images.to(device), boxes.to(device), labels.to(device), masks.to(device)


def targets_of(boxes, labels, masks):
    return [{"boxes": b, "labels": l, "masks": m} for b, l, m in zip(boxes, labels, masks)]


def write_fixture(path, height, width, objects):
    torch.manual_seed(0)
    model = build(height, width).train()
    images, boxes, labels, masks = synthetic(2, objects, height, width)
    state = {name: t.detach().clone() for name, t in model.state_dict().items()}
    torch.manual_seed(SEED)
    losses = model(list(images), targets_of(boxes, labels, masks))
    document = {"state": state, "images": images, "boxes": boxes, "labels": labels, "masks": masks,
                "seed": torch.tensor(SEED),
                "parameters": torch.tensor(sum(p.numel() for p in model.parameters())),
                "trainable": torch.tensor(sum(p.numel() for p in model.parameters() if p.requires_grad))}
    document.update({name: loss.detach() for name, loss in losses.items()})
    torch.save(document, path)


def throughput(args):
    device = torch.device(args.device)
    if device.type == "cpu":
        keep_freed_host_memory()
    torch.manual_seed(args.seed)
    model = build(args.height, args.width).to(device).train()
    images, boxes, labels, masks = synthetic(args.batch_size, args.objects, args.height, args.width, device)
    images, targets = list(images), targets_of(boxes, labels, masks)
    # gpubench's SGD: learning rate 0.1 x batch / 256. torchvision's recipe's 0.02 (for 16 images,
    # after a warm-up) sends these random weights to NaN in two steps, after which the RPN keeps
    # next to no proposals and the step's work collapses.
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad],
                                lr=0.1 * args.batch_size / 256, momentum=0.9, weight_decay=1e-4)
    autocast_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.precision)
    scaler = torch.amp.GradScaler(args.device) if args.precision == "fp16" else None

    def step():
        optimizer.zero_grad(set_to_none=True)
        with (torch.autocast(args.device, dtype=autocast_dtype) if autocast_dtype else contextlib.nullcontext()):
            loss = sum(model(images, targets).values())
        backward_and_step(loss, optimizer, scaler)

    synchronize = synchronizer(device)

    warmup_s, trials = time_trials(step, synchronize, args.warmup_steps, args.steps, args.repeat, args.batch_size)
    result = {"model": "maskrcnn", "precision": args.precision, "batch_size": args.batch_size,
              "warmup_s": warmup_s, "throughput": statistics.median(trials), "trials": trials,
              "torch": str(torch.__version__), "torchvision": str(torchvision.__version__)}
    if args.profile:
        result["profile"] = {"trace": args.profile, "steps": args.steps, "throughput": profile_trial(
            step, synchronize, args.steps, args.batch_size, args.profile, device.type == "cuda")}
    emit_result(result, args.output)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["fixture", "throughput"])
    parser.add_argument("path", nargs="?", help="fixture: the file to write")
    parser.add_argument("--output", help="throughput: also write the JSON here")
    parser.add_argument("--height", type=int, default=None)
    parser.add_argument("--width", type=int, default=None)
    parser.add_argument("--objects", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--seed", type=int, default=42, help="throughput: the weights' and objects' seed")
    parser.add_argument("--precision", choices=["fp32", "tf32", "fp16", "bf16"], default="fp32")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--warmup-steps", type=int, default=10)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", metavar="FILE", help="throughput: one more trial under torch.profiler, "
                        "its Chrome trace to FILE")
    parser.add_argument("--model", default="maskrcnn", help="accepted for parity.py; always maskrcnn")
    parser.add_argument("--no-channels-last", action="store_true", help="accepted for parity.py")
    args = parser.parse_args()
    if args.command == "fixture":
        torch.set_num_threads(1)
        if not args.path:
            parser.error("fixture needs the file to write")
        write_fixture(args.path, args.height or 96, args.width or 128, args.objects or 3)
    else:
        tf32 = args.precision == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        args.height, args.width, args.objects = args.height or 800, args.width or 1333, args.objects or 7
        throughput(args)


if __name__ == "__main__":
    main()
