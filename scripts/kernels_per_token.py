#!/usr/bin/env python3
"""Device kernels a decoded token launches, from two profiled generations of the same model that
differ only in how many tokens they generate (docs/inference.md#measured): the kernels of the
longer trace less those of the shorter, over the tokens between them, so that the prompt's
prefill and the first token cancel. The traces are `gpubench infer --profile FILE` with --steps 1
(one generation each). It checks on a GPU what `DecodeStep.LaunchesAtMostItsBudgetPerLayer`
counts on the CPU.

    scripts/kernels_per_token.py SHORT.json LONG.json --tokens N

Prints one line. A trace without device kernels (the CPU's profiler records host operators only)
says so; a trace that cannot be read is one line and exit 2."""
import argparse
import sys

from profile_diff import TraceError, load_events


def kernels(path):
    return sum(1 for e in load_events(path) if e["cat"] == "kernel")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("short")
    parser.add_argument("long")
    parser.add_argument("--tokens", type=int, required=True, help="how many more tokens LONG generates")
    args = parser.parse_args()
    if args.tokens < 1:
        print(f"kernels_per_token.py: --tokens must be 1 or more, got {args.tokens}", file=sys.stderr)
        return 2
    try:
        short, long = kernels(args.short), kernels(args.long)
    except TraceError as error:
        print(f"kernels_per_token.py: {error}", file=sys.stderr)
        return 2
    if short == 0 or long == 0:
        print("kernels per decoded token: none in the traces (a CPU trace: host operators only)")
    else:
        print(f"kernels per decoded token: {(long - short) / args.tokens:.1f} "
              f"({short} and {long} kernels in generations {args.tokens} tokens apart)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
