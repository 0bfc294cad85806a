#!/usr/bin/env python3
"""Turns ../shared/reference/published-figures.json into result files (schema gpubench.result/1,
status "published") under results/reference/, so report and compare can set measured results
beside published ones. Run it again when the published figures change."""
import json
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
source_file = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "shared", "reference", "published-figures.json")
out_dir = os.path.join(here, "..", "results", "reference")
PRECISION = {"fp16": "fp16", "fp32": "fp32", "tf32": "tf32", "amp": "fp16", "bf16": "bf16"}
# gpubench's image models; other rows (BERT, ratios) have no gpubench benchmark to stand beside.
IMAGE_MODELS = {"resnet50", "resnet101", "resnet152", "inception3", "inception4", "vgg16", "googlenet"}
PUBLISHERS = {"BIZON": "bizon", "Lambda": "lambda", "NVIDIA": "nvidia"}

def published(source, benchmark, row, unit):
    """A published result: the benchmark as the source gives it, its one figure, the GPU."""
    return {
        "schema": "gpubench.result/1",
        "status": "published",
        "source": source,
        "benchmark": benchmark,
        "metrics": {"throughput": row["throughput"], "throughput_unit": unit,
                    "per_device_throughput": row["throughput"] / row["gpus"], "trials": [row["throughput"]]},
        "system": {"gpu_name": row["gpu"], "gpu_count": row["gpus"]},
        "started_at": "",
    }


def write(path, result):
    with open(path, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")


figures = json.load(open(source_file))
os.makedirs(out_dir, exist_ok=True)
for name in os.listdir(out_dir):
    if name.endswith(".json"):
        os.remove(os.path.join(out_dir, name))
written = 0
for block in figures["training_throughput"]:
    if "images/sec" not in block.get("unit", ""):
        continue  # ratios (Lambda's A6000/3090 study) are not results
    publisher = next(tag for prefix, tag in PUBLISHERS.items() if block["source"].startswith(prefix))
    source = block["source"] + (" Note: " + block["note"] if "note" in block else "")
    if publisher == "bizon":
        source += " BIZON's FP32 on the A40 may have run with TF32 (see precision_names in published-figures.json)."
    for row in block["rows"]:
        if row["model"] not in IMAGE_MODELS:
            continue
        precision = PRECISION[row["precision"]]
        batch = row.get("batch_size", 0)
        result = published(source, {"model": row["model"], "model_family": "convnet", "precision": precision,
                                    "device": "cuda", "gpus": row["gpus"], "batch_size_per_device": batch,
                                    "global_batch_size": batch * row["gpus"], "data": "synthetic (as published)"},
                           row, "images/sec")
        slug = re.sub(r"[^a-z0-9]+", "-", row["gpu"].lower()).strip("-")
        table = f"-{row['table']}" if "table" in row else ""
        write(os.path.join(out_dir, f"{publisher}{table}_{slug}_{row['model']}_{precision}_x{row['gpus']}.json"),
              result)
        written += 1
# Lambda's SSD300 figures on one and eight H200s (its convnet average's SSD; detection_reference):
# DeepLearningExamples' SSD300 v1.1 on COCO 2017 through DALI, so real images with their own
# objects, not gpubench's synthetic ones.
detection = figures.get("detection_reference", {})
lambda_h200 = detection.get("lambda_1x_h200_v2")
if lambda_h200:
    harness = detection["lambda_harness"]
    source = ("Lambda deeplearning-benchmark, " + lambda_h200["source"] + ". Harness: " + harness["source"] + "; " + harness["ssd"] +
              ". COCO 2017 images through the reference's data pipeline, not synthetic data.")
    for key, precision, gpus in (("ssd_fp16_images_per_s", "fp16", 1), ("ssd_tf32_images_per_s", "tf32", 1),
                                 ("ssd_8x_fp16", "fp16", 8)):
        if key not in lambda_h200:
            continue
        row = {"throughput": lambda_h200[key], "gpus": gpus, "gpu": "NVIDIA H200"}
        result = published(source, {"model": "ssd300", "model_family": "convnet", "precision": precision,
                                    "device": "cuda", "gpus": gpus, "batch_size_per_device": 0,
                                    "global_batch_size": 0, "data": "COCO 2017 (as published)"},
                           row, "images/sec")
        write(os.path.join(out_dir, f"lambda-v2_nvidia-h200_ssd300_{precision}_x{gpus}.json"), result)
        written += 1
# BIZON's LLM inference row: Llama 3.1 70B decode on one card. The page states no weight format,
# batch or lengths; 70B's bf16 weights (141 GB) fit no 48 GB card, so the row is filed under
# 4-bit weights (int4), as the public one-card figures for these cards are (llama.cpp Q4_K_M),
# and says so in its source.
LLM_MODELS = {"llama3.1-70b": "llama-3.1-70b"}
for block in figures.get("inference_throughput", []):
    publisher = next(tag for prefix, tag in PUBLISHERS.items() if block["source"].startswith(prefix))
    source = (block["source"].rstrip(".") + ". The page states no weight format, batch or lengths; 70B's bf16 "
              "weights (141 GB) fit no 48 GB card, so the row is filed under 4-bit weights (int4), as "
              "the public one-card figures for these cards are (llama.cpp Q4_K_M).")
    for row in block["rows"]:
        model = LLM_MODELS[row["model"]]
        result = published(source, {"model": model, "model_family": "language-model", "precision": "bf16",
                                    "task": "infer", "weights": "int4", "weight_group": 0, "device": "cuda",
                                    "gpus": row["gpus"], "batch_size_per_device": 0, "global_batch_size": 0,
                                    "data": "as published"},
                           row, "tokens/sec")
        slug = re.sub(r"[^a-z0-9]+", "-", row["gpu"].lower()).strip("-")
        write(os.path.join(out_dir, f"{publisher}_{slug}_{model}_infer_int4_x{row['gpus']}.json"), result)
        written += 1
print(f"wrote {written} published results to {os.path.normpath(out_dir)}")
