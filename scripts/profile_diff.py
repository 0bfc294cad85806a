#!/usr/bin/env python3
"""Two op-profiler traces side by side, per operator (docs/profiling.md): calls per step, self
time per step and total time per step on each side, their difference, sorted by how much of the
step time each operator explains; and the operators one side runs and the other does not (extra
copies, `contiguous`, zero fills, `to`, synchronisations, allocations).

The traces are Chrome trace JSON ({"traceEvents": [...]}) as `gpubench train --profile FILE`
and `scripts/torch_reference.py --profile FILE` (or `hf_reference.py --profile FILE`) write
them: each step is a range named ProfilerStep#N, and only what lies inside those ranges counts.

Self time is an event's duration less that of the events directly inside it on the same thread
(aten::conv2d -> aten::convolution -> ... -> aten::mkldnn_convolution: the time lands where it
is spent). Device kernels, memory copies and memsets (CUDA traces) have no children: their self
time is their duration, on the device's own timeline, in a table of their own.

    scripts/profile_diff.py GPUBENCH.json PYTORCH.json [--names gpubench,pytorch] [--top 30]
                            [--format markdown|csv|json] [--output FILE]
"""
import argparse
import csv
import io
import json
import re
import sys
from collections import defaultdict

STEP = re.compile(r"^ProfilerStep#\d+$")
HOST_CATEGORIES = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver"}
DEVICE_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset"}
# What a side may run that the other does not and that costs time without computing anything.
OVERHEAD = re.compile(r"copy_|contiguous|clone|zero_|zeros|fill_|empty|::to$|_to_copy|"
                      r"Synchronize|cudaMalloc|cudaFree|cudaMemcpy|cudaMemset|item|_local_scalar")


class TraceError(Exception):
    pass


def load_events(path):
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except (OSError, ValueError) as error:
        raise TraceError(f"{path}: not a readable JSON trace ({error})") from None
    events = document.get("traceEvents") if isinstance(document, dict) else document
    if not isinstance(events, list):
        raise TraceError(f"{path}: no traceEvents list")
    complete = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        try:
            ts, dur = float(e["ts"]), float(e.get("dur", 0))
        except (KeyError, TypeError, ValueError):
            continue
        # torch 1.13's legacy profiler (no Kineto) exports a bare list of events without "cat":
        # host ops.
        complete.append({"name": str(e.get("name", "")), "cat": str(e.get("cat") or "cpu_op"),
                         "pid": e.get("pid"), "tid": e.get("tid"), "ts": ts, "dur": max(dur, 0.0)})
    return complete


def self_times(events):
    """Each host event's self time: its duration less its direct children's on its thread."""
    by_thread = defaultdict(list)
    for e in events:
        by_thread[(e["pid"], e["tid"])].append(e)
    for thread in by_thread.values():
        thread.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in thread:
            e["self"] = e["dur"]
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"]:
                stack.pop()
            if stack:
                stack[-1]["self"] -= e["dur"]
            stack.append(e)
    for e in events:
        e["self"] = max(e["self"], 0.0)


def summarize(path):
    """{'steps', 'step_ms', 'host': {name: row}, 'device': {name: row}} for one trace."""
    events = load_events(path)
    steps = [e for e in events if STEP.match(e["name"])]
    if not steps:
        raise TraceError(f"{path}: no ProfilerStep#N ranges: not a trace of gpubench's or the "
                         "reference scripts' --profile")
    start = min(e["ts"] for e in steps)
    end = max(e["ts"] + e["dur"] for e in steps)
    host = [e for e in events if e["cat"] in HOST_CATEGORIES and not STEP.match(e["name"])
            and start <= e["ts"] <= end]
    # Kernels run after their launch: whatever the steps launched, up to the last one's end on
    # the device, which may come after the host's range closed.
    device = [e for e in events if e["cat"] in DEVICE_CATEGORIES and e["ts"] >= start]
    self_times(host)
    tables = {}
    for kind, items in (("host", host), ("device", device)):
        rows = defaultdict(lambda: {"calls": 0, "self_us": 0.0, "total_us": 0.0})
        for e in items:
            row = rows[e["name"]]
            row["calls"] += 1
            row["self_us"] += e["self"] if kind == "host" else e["dur"]
            row["total_us"] += e["dur"]
        tables[kind] = dict(rows)
    n = len(steps)
    return {"path": path, "steps": n, "step_ms": sum(e["dur"] for e in steps) / n / 1e3, **tables}


def compare(a, b, kind):
    """Rows for every name on either side, per step, sorted by |self A - self B|."""
    rows = []
    for name in sorted(set(a[kind]) | set(b[kind])):
        ra, rb = a[kind].get(name), b[kind].get(name)

        def per_step(row, side, key):
            return row[key] / side["steps"] if row else 0.0

        row = {"op": name,
               "calls_a": per_step(ra, a, "calls"), "calls_b": per_step(rb, b, "calls"),
               "self_ms_a": per_step(ra, a, "self_us") / 1e3,
               "self_ms_b": per_step(rb, b, "self_us") / 1e3,
               "total_ms_a": per_step(ra, a, "total_us") / 1e3,
               "total_ms_b": per_step(rb, b, "total_us") / 1e3}
        row["self_ms_diff"] = row["self_ms_a"] - row["self_ms_b"]
        row["only"] = "a" if rb is None else "b" if ra is None else ""
        row["overhead"] = bool(OVERHEAD.search(name))
        rows.append(row)
    rows.sort(key=lambda r: (-abs(r["self_ms_diff"]), r["op"]))
    return rows


def number(value, digits=3):
    return f"{value:.{digits}f}".rstrip("0").rstrip(".") if value else "0"


def note(row, names):
    parts = []
    if row["only"]:
        parts.append(f"only in {names[0] if row['only'] == 'a' else names[1]}")
    elif abs(row["calls_a"] - row["calls_b"]) > 1e-9:
        parts.append("calls differ")
    if row["overhead"] and (row["only"] or abs(row["calls_a"] - row["calls_b"]) > 1e-9):
        parts.append("copy/fill/sync/allocation")
    return "; ".join(parts)


COLUMNS = ["op", "calls/step {a}", "calls/step {b}", "self ms/step {a}", "self ms/step {b}",
           "self diff ms ({a} - {b})", "total ms/step {a}", "total ms/step {b}", "note"]


def table_cells(rows, names):
    for r in rows:
        yield [r["op"], number(r["calls_a"], 2), number(r["calls_b"], 2), number(r["self_ms_a"]),
               number(r["self_ms_b"]), f"{r['self_ms_diff']:+.3f}", number(r["total_ms_a"]),
               number(r["total_ms_b"]), note(r, names)]


def markdown(a, b, names, tables, top):
    out = io.StringIO()
    header = [c.format(a=names[0], b=names[1]) for c in COLUMNS]
    out.write(f"| | {names[0]} | {names[1]} |\n|---|---|---|\n")
    out.write(f"| trace | {a['path']} | {b['path']} |\n")
    out.write(f"| steps profiled | {a['steps']} | {b['steps']} |\n")
    out.write(f"| step time (ms, profiled) | {a['step_ms']:.2f} | {b['step_ms']:.2f} |\n")
    for kind, label in (("host", "host ops"), ("device", "device kernels")):
        if not a[kind] and not b[kind]:
            continue
        totals = [sum(r["self_us"] for r in side[kind].values()) / side["steps"] / 1e3
                  for side in (a, b)]
        out.write(f"| {label}: self time per step (ms) | {totals[0]:.2f} | {totals[1]:.2f} |\n")
    for kind, rows in tables.items():
        if not rows:
            continue
        shown = rows if top <= 0 else rows[:top]
        out.write(f"\n{'Host operators' if kind == 'host' else 'Device kernels'} "
                  f"({len(shown)} of {len(rows)}, by |self diff|)\n\n")
        out.write("| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n")
        for cells in table_cells(shown, names):
            out.write("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |\n")
        only = [r for r in rows if r["only"]]
        if only:
            out.write(f"\nRun by one side only ({len(only)}): " + ", ".join(
                f"{r['op']} ({names[0] if r['only'] == 'a' else names[1]}, "
                f"{number(max(r['self_ms_a'], r['self_ms_b']))} ms/step)" for r in only) + "\n")
    return out.getvalue()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", help="first trace (gpubench's)")
    parser.add_argument("b", help="second trace (PyTorch's)")
    parser.add_argument("--names", default="gpubench,pytorch",
                        help="the two sides' names, comma-separated")
    parser.add_argument("--top", type=int, default=30, help="rows per table; 0: all")
    parser.add_argument("--format", choices=["markdown", "csv", "json"], default="markdown")
    parser.add_argument("--output", help="write here instead of standard output")
    args = parser.parse_args(argv)
    names = args.names.split(",")
    if len(names) != 2 or not all(names):
        print(f"profile_diff: --names '{args.names}' must be two names, comma-separated",
              file=sys.stderr)
        return 2
    try:
        a, b = summarize(args.a), summarize(args.b)
    except TraceError as error:
        print(f"profile_diff: {error}", file=sys.stderr)
        return 2
    tables = {kind: compare(a, b, kind) for kind in ("host", "device")}
    if args.format == "json":
        text = json.dumps({"names": names, "steps": [a["steps"], b["steps"]],
                           "step_ms": [a["step_ms"], b["step_ms"]], **tables}, indent=2) + "\n"
    elif args.format == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(["table"] + [c.format(a=names[0], b=names[1]) for c in COLUMNS])
        for kind, rows in tables.items():
            for cells in table_cells(rows, names):
                writer.writerow([kind] + cells)
        text = buffer.getvalue()
    else:
        text = markdown(a, b, names, tables, args.top)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
