#!/usr/bin/env python3
"""SSD300 v1.1 as NVIDIA DeepLearningExamples' PyTorch/Detection/SSD builds and trains it
(ssd/model.py, ssd/utils.py), built the same way from torchvision's resnet50: the reference that
gpubench's ssd300 (models/ssd300.cpp) is checked against and timed beside.

    ssd300_reference.py fixture OUT.pt [--batch-size 2] [--objects 7]
        torch.save of one dict: the model's state dict ("state": parameters and buffers by name),
        the objects drawn for each image ("objects" [N, K, 4] l,t,r,b and "classes" [N, K]), their
        match to the default boxes ("boxes" [N, 4, 8732], "labels" [N, 8732]), the images, and
        the training-mode forward's "locations", "scores" and "loss", all from seed 0.

torch_reference.py --model ssd300 times its training step (scripts/parity.py pairs it with
gpubench's). Needs torch and torchvision; the test runs it with the interpreter whose LibTorch
gpubench was built against (GPUBENCH_REFERENCE_PYTHON in CMake)."""
import argparse
import itertools
import math

import torch
import torch.nn as nn
import torchvision

CLASSES = 81
IMAGE = 300


class Backbone(nn.Module):
    """DLE's ResNet: torchvision resnet50's children up to layer3, layer3's first block at stride 1."""

    def __init__(self):
        super().__init__()
        resnet = torchvision.models.resnet50()
        self.feature_extractor = nn.Sequential(*list(resnet.children())[:7])
        first = self.feature_extractor[-1][0]
        first.conv1.stride = (1, 1)
        first.conv2.stride = (1, 1)
        first.downsample[0].stride = (1, 1)

    def forward(self, x):
        return self.feature_extractor(x)


class SSD300(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature_extractor = Backbone()
        channels = [1024, 512, 512, 256, 256, 256]
        blocks = []
        for i, (cin, cout, middle) in enumerate(zip(channels[:-1], channels[1:], [256, 256, 128, 128, 128])):
            strided = i < 3
            blocks.append(nn.Sequential(
                nn.Conv2d(cin, middle, kernel_size=1, bias=False), nn.BatchNorm2d(middle), nn.ReLU(inplace=True),
                nn.Conv2d(middle, cout, kernel_size=3, padding=1 if strided else 0, stride=2 if strided else 1,
                          bias=False),
                nn.BatchNorm2d(cout), nn.ReLU(inplace=True)))
        self.additional_blocks = nn.ModuleList(blocks)
        per_cell = [4, 6, 6, 6, 4, 4]
        self.loc = nn.ModuleList(nn.Conv2d(c, n * 4, 3, padding=1) for n, c in zip(per_cell, channels))
        self.conf = nn.ModuleList(nn.Conv2d(c, n * CLASSES, 3, padding=1) for n, c in zip(per_cell, channels))
        for layer in [*self.additional_blocks, *self.loc, *self.conf]:
            for p in layer.parameters():
                if p.dim() > 1:
                    nn.init.xavier_uniform_(p)

    def forward(self, x):
        x = self.feature_extractor(x)
        feeds = [x]
        for block in self.additional_blocks:
            x = block(x)
            feeds.append(x)
        locs = [l(f).reshape(f.size(0), 4, -1) for f, l in zip(feeds, self.loc)]
        confs = [c(f).reshape(f.size(0), CLASSES, -1) for f, c in zip(feeds, self.conf)]
        return torch.cat(locs, 2).contiguous(), torch.cat(confs, 2).contiguous()


def default_boxes():
    """dboxes300_coco(): (cx, cy, w, h) [8732, 4], clamped to [0, 1]."""
    sizes, steps = [38, 19, 10, 5, 3, 1], [8, 16, 32, 64, 100, 300]
    scales, ratios = [21, 45, 99, 153, 207, 261, 315], [[2], [2, 3], [2, 3], [2, 3], [2], [2]]
    boxes = []
    for level, cells in enumerate(sizes):
        fk = IMAGE / steps[level]
        small, large = scales[level] / IMAGE, scales[level + 1] / IMAGE
        shapes = [(small, small), (math.sqrt(small * large),) * 2]
        for alpha in ratios[level]:
            w, h = small * math.sqrt(alpha), small / math.sqrt(alpha)
            shapes += [(w, h), (h, w)]
        for w, h in shapes:
            for i, j in itertools.product(range(cells), repeat=2):
                boxes.append(((j + 0.5) / fk, (i + 0.5) / fk, w, h))
    return torch.tensor(boxes, dtype=torch.float).clamp_(0, 1)


def to_ltrb(xywh):
    return torch.cat([xywh[:, :2] - 0.5 * xywh[:, 2:], xywh[:, :2] + 0.5 * xywh[:, 2:]], 1)


def iou(a, b):
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    area = lambda x: (x[:, 2] - x[:, 0]) * (x[:, 3] - x[:, 1])
    return inter / (area(a)[:, None] + area(b)[None, :] - inter)


def encode(objects, classes, defaults_ltrb, criteria=0.5):
    """DLE's Encoder.encode: the default boxes' targets (cx, cy, w, h) [8732, 4] and labels [8732]."""
    ious = iou(objects, defaults_ltrb)
    best_iou, best_object = ious.max(dim=0)
    best_default = ious.max(dim=1)[1]
    best_iou.index_fill_(0, best_default, 2.0)
    best_object[best_default] = torch.arange(best_default.size(0))
    matched = best_iou > criteria
    labels = torch.zeros(defaults_ltrb.size(0), dtype=torch.long)
    labels[matched] = classes[best_object[matched]]
    boxes = defaults_ltrb.clone()
    boxes[matched, :] = objects[best_object[matched], :]
    return torch.cat([0.5 * (boxes[:, :2] + boxes[:, 2:]), boxes[:, 2:] - boxes[:, :2]], 1), labels


class Loss(nn.Module):
    """DLE's Loss: smooth L1 on the positives' offsets, cross-entropy on positives and 3x hard negatives."""

    def __init__(self):
        super().__init__()
        self.dboxes = nn.Parameter(default_boxes().t().unsqueeze(0), requires_grad=False)

    def forward(self, ploc, plabel, gloc, glabel):
        mask = glabel > 0
        pos_num = mask.sum(dim=1)
        gxy = 10.0 * (gloc[:, :2, :] - self.dboxes[:, :2, :]) / self.dboxes[:, 2:, :]
        gwh = 5.0 * (gloc[:, 2:, :] / self.dboxes[:, 2:, :]).log()
        vec_gd = torch.cat((gxy, gwh), dim=1)
        sl1 = nn.functional.smooth_l1_loss(ploc, vec_gd, reduction="none").sum(dim=1)
        sl1 = (mask.float() * sl1).sum(dim=1)
        con = nn.functional.cross_entropy(plabel, glabel, reduction="none")
        con_neg = con.clone()
        con_neg[mask] = 0
        _, con_idx = con_neg.sort(dim=1, descending=True)
        _, con_rank = con_idx.sort(dim=1)
        neg_num = torch.clamp(3 * pos_num, max=mask.size(1)).unsqueeze(-1)
        neg_mask = con_rank < neg_num
        closs = (con * (mask + neg_mask).float()).sum(dim=1)
        total = sl1 + closs
        num_mask = (pos_num > 0).float()
        pos_num = pos_num.float().clamp(min=1e-6)
        return (total * num_mask / pos_num).mean(dim=0)


def synthetic_targets(batch_size, objects_per_image):
    """Objects drawn as gpubench draws them (centres in [0.1, 0.9], sides in [0.05, 0.5]) and
    matched: objects [N, K, 4], classes [N, K], boxes [N, 4, 8732], labels [N, 8732]."""
    defaults = to_ltrb(default_boxes())
    objects, classes, boxes, labels = [], [], [], []
    for _ in range(batch_size):
        centre = 0.1 + 0.8 * torch.rand(objects_per_image, 2)
        size = 0.05 + 0.45 * torch.rand(objects_per_image, 2)
        o = torch.cat([centre - 0.5 * size, centre + 0.5 * size], 1).clamp_(0, 1)
        c = torch.randint(1, CLASSES, (objects_per_image,))
        b, l = encode(o, c, defaults)
        objects.append(o), classes.append(c), boxes.append(b.t()), labels.append(l)
    return torch.stack(objects), torch.stack(classes), torch.stack(boxes), torch.stack(labels)


def training_loss(batch_size, device, objects_per_image=7):
    """For torch_reference.py: the loss of the model's output on synthetic matched objects, as the
    reference's training step computes it (outputs to float32, then Loss)."""
    _, _, boxes, labels = synthetic_targets(batch_size, objects_per_image)
    boxes, labels = boxes.to(device), labels.to(device)
    loss = Loss().to(device)
    return lambda output: loss(output[0].float(), output[1].float(), boxes, labels)


def write_fixture(path, batch_size, objects_per_image):
    torch.manual_seed(0)
    model = SSD300().train()
    images = torch.randn(batch_size, 3, IMAGE, IMAGE)
    objects, classes, boxes, labels = synthetic_targets(batch_size, objects_per_image)
    state = {name: t.detach().clone() for name, t in model.state_dict().items()}
    locations, scores = model(images)
    loss = Loss()(locations, scores, boxes, labels)
    torch.save({"state": state, "images": images, "objects": objects, "classes": classes, "boxes": boxes,
                "labels": labels, "locations": locations.detach(), "scores": scores.detach(),
                "loss": loss.detach(), "parameters": torch.tensor(sum(p.numel() for p in model.parameters())),
                "torch": str(torch.__version__), "torchvision": str(torchvision.__version__)}, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["fixture"])
    parser.add_argument("output")
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--objects", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    write_fixture(args.output, args.batch_size, args.objects)


if __name__ == "__main__":
    main()
