#!/usr/bin/env python3
"""Validates gpubench result files against schemas/result.schema.json (JSON Schema draft 2020-12)
with the jsonschema package (Debian's python3-jsonschema).

Usage: validate-results.py [--require-kinds] PATH...
       validate-results.py --expect-invalid PATH...   (each result file must fail validation)
Each PATH is a result file or a folder searched recursively for *.json; a JSON file that is not a
gpubench result (no "schema": "gpubench.result/...") is left alone. Prints one line per kind of
result seen. --require-kinds (or GPUBENCH_SCHEMA_REQUIRE_KINDS=1, which scripts/test.sh sets when
it runs the whole suite) fails unless the first PATH holds every kind: a run that trained, one
that inferred, generated text, searched its batch, failed, ran out of memory, ran several ranks,
and a suite's entry (kept under a test name with "Suite" in it); with GPUBENCH_SCHEMA_REQUIRE_FP8=1 an
fp8 run too. Exit 0 when every file is valid."""
import glob
import json
import os
import sys

from jsonschema import Draft202012Validator

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schemas",
                      "result.schema.json")

KINDS = {
    "train ok": lambda r, name: r["status"] == "ok" and r["benchmark"].get("task", "train") == "train",
    "infer": lambda r, name: r["benchmark"].get("task") == "infer",
    "text generation": lambda r, name: "kv_cache_bytes" in r["metrics"].get("inference", {}),
    "batch search": lambda r, name: "batch_search" in r,
    "failed": lambda r, name: r["status"] == "failed",
    "oom": lambda r, name: r["status"] == "oom",
    "multi-rank": lambda r, name: r.get("distributed", {}).get("world_size", 1) > 1,
    "suite entry": lambda r, name: "Suite" in name,
    "published": lambda r, name: r["status"] == "published",
    "skipped": lambda r, name: r["status"] == "skipped",
    "fp8": lambda r, name: r["benchmark"].get("precision") == "fp8",
}
# FP8 runs where LibTorch has it (2.5+): GPUBENCH_SCHEMA_REQUIRE_FP8=1 (scripts/check-torch2.sh)
# requires it too.
REQUIRED_KINDS = [kind for kind in KINDS if kind not in ("published", "fp8")] + (
    ["fp8"] if os.environ.get("GPUBENCH_SCHEMA_REQUIRE_FP8") == "1" else [])


def result_files(path):
    if os.path.isfile(path):
        return [path]
    return sorted(glob.glob(os.path.join(path, "**", "*.json"), recursive=True))


def main(argv):
    require = "--require-kinds" in argv or os.environ.get("GPUBENCH_SCHEMA_REQUIRE_KINDS") == "1"
    expect_invalid = "--expect-invalid" in argv
    paths = [a for a in argv if a not in ("--require-kinds", "--expect-invalid")]
    if not paths:
        sys.exit(__doc__)
    with open(SCHEMA) as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    failures, checked = [], 0
    seen = {kind: 0 for kind in KINDS}
    for index, path in enumerate(paths):
        for file in result_files(path):
            try:
                with open(file) as f:
                    document = json.load(f)
            except (OSError, ValueError) as error:
                failures.append(f"{file}: not JSON: {error}")
                continue
            if not (isinstance(document, dict) and
                    str(document.get("schema", "")).startswith("gpubench.result/")):
                continue
            checked += 1
            errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
            if expect_invalid:
                if not errors:
                    failures.append(f"{file}: valid, but it should not be")
                else:
                    print(f"validate-results: {file}: refused as it should be: {errors[0].message[:200]}")
                continue
            for error in errors[:5]:
                where = "/".join(str(p) for p in error.absolute_path) or "(top)"
                failures.append(f"{file}: {where}: {error.message[:300]}")
            if not errors and index == 0:
                for kind, test in KINDS.items():
                    seen[kind] += 1 if test(document, os.path.basename(file)) else 0
    for kind, count in seen.items():
        print(f"validate-results: {count:4d} {kind}")
    print(f"validate-results: {checked} result files checked against {os.path.relpath(SCHEMA)}")
    if require and not expect_invalid:
        failures += [f"no '{kind}' result among {paths[0]}: the suite made none to check"
                     for kind in REQUIRED_KINDS if seen[kind] == 0]
    if checked == 0:
        failures.append("no result file found")
    for line in failures[:40]:
        print("validate-results: " + line)
    if len(failures) > 40:
        print(f"validate-results: ... and {len(failures) - 40} more")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
