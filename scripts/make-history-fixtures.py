#!/usr/bin/env python3
"""Writes tests/fixtures/history/: sixteen nights of two benchmarks on one A40, for trend's and
report's history tests and the headless-browser check. ResNet-50 fp16 steps down 10 % on night 10
(2026-11-11) and failed (oom) on night 13; VGG16 fp16 stays level. Trials are fixed offsets
(-1 %, 0, +1 %) around a night's level, which wobbles by up to 0.8 % from night to night.
Usage: scripts/make-history-fixtures.py"""
import json
import os

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "history")
WOBBLE = [0.0, 0.6, -0.4, 0.8, -0.7, 0.2, -0.1, 0.5, -0.6, 0.3, -0.2, 0.7, -0.5, 0.1, -0.3, 0.4]


def result(model, night, level, status="ok"):
    day = f"2026-11-{night + 1:02d}"
    doc = {
        "schema": "gpubench.result/1",
        "status": status,
        "benchmark": {"model": model, "model_family": "convnet", "precision": "fp16",
                      "device": "cuda", "gpus": 1, "batch_size_per_device": 64,
                      "global_batch_size": 64, "warmup_steps": 20, "steps": 50, "repeat": 3},
        "metrics": {"throughput_unit": "images/sec"},
        "system": {"gpu_name": "NVIDIA A40", "gpu_count": 1, "hostname": "node"},
        "started_at": f"{day}T02:00:00Z",
        "duration_s": 60,
    }
    if status == "ok":
        mid = level * (1 + WOBBLE[night] / 100)
        trials = [round(mid * f, 1) for f in (0.99, 1.0, 1.01)]
        doc["metrics"].update(throughput=trials[1], per_device_throughput=trials[1], trials=trials)
    else:
        doc["error"] = "CUDA out of memory. Tried to allocate 2.00 GiB"
    os.makedirs(os.path.join(OUT, day), exist_ok=True)
    with open(os.path.join(OUT, day, f"{model}_fp16_x1.json"), "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


for night in range(16):
    if night == 13:
        result("resnet50", night, 0, status="oom")
    else:
        result("resnet50", night, 1262.0 if night < 10 else 1135.8)
    result("vgg16", night, 450.0)
