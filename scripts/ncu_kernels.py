#!/usr/bin/env python3
"""Nsight Compute's per-kernel readings as a table (docs/kernels.md): each kernel name and launch
shape with its launches, median duration, median DRAM bytes read and written, and the read rate
those give. The input is what the GPU check's kernels tier has ncu write on the device, parsed
here on the CPU machine:

    ncu --csv --print-units base --print-kernel-base function --clock-control none \\
        --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum PROGRAM \\
        > kernels.csv
    scripts/ncu_kernels.py kernels.csv [--bandwidth-gbs 4800]

With --bandwidth-gbs (the card's datasheet figure), each row also gives its read rate's share of
it. A file that is not such a CSV is one line and exit 2."""
import argparse
import csv
import statistics
import sys

METRICS = {
    "gpu__time_duration.sum": "seconds",
    "dram__bytes_read.sum": "read",
    "dram__bytes_write.sum": "written",
}
UNITS = {
    "nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0,
    "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
}


class NcuError(Exception):
    pass


def number(text, unit, where):
    if unit not in UNITS:
        raise NcuError(f"{where}: unit '{unit}' is none of {', '.join(UNITS)}")
    try:
        return float(text.replace(",", "")) * UNITS[unit]
    except ValueError:
        raise NcuError(f"{where}: '{text}' is not a number") from None


def launches(path):
    """{launch id: {"kernel", "grid", "block", "seconds", "read", "written"}}."""
    try:
        with open(path, newline="") as handle:
            lines = [line for line in handle if line.startswith('"')]  # ncu's own lines start with ==
    except OSError as error:
        raise NcuError(f"{path}: {error.strerror}") from None
    rows = list(csv.DictReader(lines))
    needed = {"ID", "Kernel Name", "Grid Size", "Block Size", "Metric Name", "Metric Unit", "Metric Value"}
    if not rows or not needed <= set(rows[0]):
        raise NcuError(f"{path}: no ncu --csv rows (columns {', '.join(sorted(needed))})")
    found = {}
    for index, row in enumerate(rows, start=2):
        field = METRICS.get(row["Metric Name"])
        if field is None:
            continue
        launch = found.setdefault(row["ID"], {"kernel": row["Kernel Name"], "grid": row["Grid Size"],
                                              "block": row["Block Size"]})
        launch[field] = number(row["Metric Value"], row["Metric Unit"], f"{path}: row {index}")
    complete = {k: v for k, v in found.items() if all(m in v for m in METRICS.values())}
    if not complete:
        raise NcuError(f"{path}: no launch has all of {', '.join(METRICS)}")
    return complete


def table(by_id, bandwidth_gbs):
    groups = {}
    for launch in by_id.values():
        groups.setdefault((launch["kernel"], launch["grid"], launch["block"]), []).append(launch)
    header = "| kernel | grid | block | launches | µs (median) | MB read | MB written | GB/s read |"
    if bandwidth_gbs:
        header += " of the datasheet |"
    lines = [header, "|" + " --- |" * (header.count("|") - 1)]
    for (kernel, grid, block), group in sorted(groups.items()):
        seconds = statistics.median(g["seconds"] for g in group)
        read = statistics.median(g["read"] for g in group)
        written = statistics.median(g["written"] for g in group)
        rate = read / seconds / 1e9 if seconds > 0 else 0.0
        line = (f"| {kernel} | {grid} | {block} | {len(group)} | {seconds * 1e6:.1f} | "
                f"{read / 1e6:.2f} | {written / 1e6:.2f} | {rate:.0f} |")
        if bandwidth_gbs:
            line += f" {100 * rate / bandwidth_gbs:.0f} % |"
        lines.append(line)
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv")
    parser.add_argument("--bandwidth-gbs", type=float, default=0.0,
                        help="the card's datasheet memory bandwidth, GB/s")
    args = parser.parse_args()
    if args.bandwidth_gbs < 0:
        print(f"ncu_kernels.py: --bandwidth-gbs must be positive, got {args.bandwidth_gbs}", file=sys.stderr)
        return 2
    try:
        print(table(launches(args.csv), args.bandwidth_gbs))
    except NcuError as error:
        print(f"ncu_kernels.py: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
