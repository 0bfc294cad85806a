#!/usr/bin/env python3
"""The source folders and which include which, derived from the #include lines: the folders of
src/, the model zoo (models/) and the public API (include/gpubench/).

  folder-graph.py ROOT            check: exit 1 on an include cycle between folders, on an
                                  include from a folder into a layer above its own, or on a
                                  public header (include/gpubench/) including anything but
                                  gpubench/, LibTorch and the standard library, or on a
                                  feature's settings rows (*_settings.def) including anything
  folder-graph.py ROOT --markdown the layers, as docs/reference/folders.md shows them

The layers are the folders' places in LAYERS below, top first; an include must go to a folder of
a lower layer (or its own folder). Folders not listed are an error: a new folder takes a place.
A folder inside another's is a layer of its own only where NESTED names it (parallelism's
LibTorch-free predictions, features/parallelism/scaling/).
"""
import collections
import pathlib
import re
import sys

# Top first. A folder may include folders of the layers below it, never of its own layer or above.
LAYERS = [
    [("cli", "the subcommands: thin, one file each; the reporters (file, terminal)"),
     ("api", "the public API's implementation (include/gpubench/): one benchmark in this "
             "process, result files")],
    [("launcher", "the one launcher (launch.h): a benchmark in this process, as local ranks "
                  "(the rank launcher, the data-parallel run), as an external launcher's rank, "
                  "as a child (its command line; children die with their parent); the batch "
                  "search and suites wrap it; private temporary folders")],
    [("train", "the training workload (a step, graph capture) and fit's probes"),
     ("infer", "the inference workloads: forward passes, text generation; fit --task infer's "
               "probes")],
    [("run", "one run's lifecycle (device, policy, seed, limits, model, telemetry, failures), "
             "the workload registry, resolving a request (a loop over the rules), the trials' "
             "timing; fit's probe models, which train's and infer's probes share")],
    [("features", "what is applied to a model from outside, a folder each (precision, weight "
                  "formats, tuning, parallelism, graph mode): what it does to a built model "
                  "(FP8's products, a format's held weights, LoRA's adapters, checkpointing, "
                  "the split layers), its resolve rules and refusals, its memory terms, the "
                  "memory plan they make up")],
    [("models", "the model zoo (models/), one file per family, each registering itself"),
     ("memory", "tensor and allocator accounting, a run's peak, fit's model of a peak by "
                "batch and length (neither the plan nor the model: fit passes their numbers)"),
     ("distributed", "collectives (NCCL, Gloo), gradient buckets, launch environments")],
    [("modeling", "the model interface and registry, layers by role, FLOP counting, the seams "
                  "features apply through (layer groups, adapters, checkpointable blocks, "
                  "product rules, weight formats, model transforms)"),
     ("optim", "SGD, AdamW (multi-tensor, fused), the grad scaler"),
     ("telemetry", "power, clocks and energy (NVML, RAPL)")],
    [("system", "the machine: GPUs, topology, versions"),
     ("kernels", "gpubench's own operators: their ATen compositions (the CPU forms) and CUDA "
                 "kernels")],
    [("torch_support", "LibTorch compatibility, device timers, CUDA-graph capture"),
     ("testing", "test hooks (fault injection)")],
    [("reporting", "report, compare, regress, trend, specs (no LibTorch)")],
    [("scaling", "parallelism's predictions for `scale` (src/features/parallelism/scaling/): "
                 "data, tensor, expert and sharded parallelism over fabrics, collective costs, "
                 "the overlap model (no LibTorch)")],
    [("charts", "inline-SVG charts: axes at round numbers, linear or log; a colour per series; "
                "bars with error bars, lines, small multiples (no LibTorch)")],
    [("datasheets", "GPU datasheets, run efficiency (no LibTorch)")],
    [("results", "result files (no LibTorch)")],
    [("settings", "the benchmark's settings, suites (no LibTorch)")],
    [("common", "errors, files, text tables, JSON helpers (no LibTorch)")],
    [("gpubench", "the public headers (include/gpubench/): a model's interface, layers and "
                  "registration, running gpubench from code, result files; they include "
                  "LibTorch and the standard library only")],
]

# cli/ parses, calls the launcher and hands results to the reporters: each subcommand reaches its own
# concern and the launcher, never the run's internals. These folders are closed to it but for the
# headers named (a path) or the files named (a cli/ file that may include the whole folder).
CLI_CLOSED = {
    "train": [], "optim": [], "testing": [], "infer": [], "torch_support": [],
    "features": [], "kernels": [],
    # the launcher's entry points; its ranks, children and probes are its own
    "launcher": ["launcher/launch.h", "launcher/suite_runner.h", "launcher/prediction_subject.h"],
    "modeling": ["modeling/model_registry.h"],  # models, help-reference: the model registry
    "distributed": ["src/cli/allreduce_command.cpp"],  # allreduce: its collectives
    "run": ["src/cli/allreduce_command.cpp"],  # allreduce: the device its ranks resolve to
}

# The plan (the resolved benchmark) and the model spec (a model's registration) are read by these
# folders alone: a folder that needs one setting or one count takes it as a value (memory/'s fit
# takes the lengths, modeling/'s options the sections they need). Issue 72: at most eight each.
READERS = {
    "settings/benchmark.h": ["settings", "results", "features", "run", "train", "infer",
                             "launcher", "cli"],
    "modeling/model_registry.h": ["modeling", "models", "features", "run", "train", "infer",
                                  "launcher", "cli"],
}

# Folders inside another's that are layers of their own: a feature's LibTorch-free part, which the
# LibTorch-free library builds (CMakeLists.txt's GPUBENCH_BASE_SOURCES) below the reports that use
# it, while the rest of the feature's folder is LibTorch code above them. Name -> path under src/.
NESTED = {"scaling": "features/parallelism/scaling"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_]+/[^"]+)"', re.M)

# The source files whose includes count: code, and the X-macro tables they expand.
SOURCE_SUFFIXES = (".h", ".cpp", ".def", ".inc")

# A feature owns its settings' rows (features/<feature>/*_settings.def), and the one settings
# table (settings/benchmark_settings.def) gathers them, so that the LibTorch-free library
# (suites, result files, reports) still knows every setting. The rows are data in the table's
# form and include nothing, so gathering them takes no code from the folder above.
GATHERED_ROWS = re.compile(r"features/[a-z_]+/[a-z_]+_settings\.def")
ANY_INCLUDE = re.compile(r'^\s*#\s*include\b', re.M)


def gathered_rows_including(root):
    """The features' settings rows that include anything, which the gathering may not take."""
    found = []
    for path in sorted((root / "src" / "features").rglob("*_settings.def")):
        if ANY_INCLUDE.search(path.read_text(encoding="utf-8")):
            found.append(str(path.relative_to(root)))
    return found


def folders_of(root):
    """folder name -> its directory: src/*, models/, include/gpubench/ and the NESTED folders."""
    folders = {p.name: p for p in sorted((root / "src").iterdir()) if p.is_dir()}
    folders["models"] = root / "models"
    folders["gpubench"] = root / "include" / "gpubench"
    for name, path in NESTED.items():
        folders[name] = root / "src" / path
    return folders


def folder_of(name):
    """The folder an include path ("features/parallelism/scaling/fabric.h") names."""
    for nested, path in NESTED.items():
        if name.startswith(path + "/"):
            return nested
    return name.split("/")[0]


def sources_of(root, folder, directory):
    """A folder's source files, those of the NESTED folders within it left to them."""
    inner = [root / "src" / path for name, path in NESTED.items() if name != folder]
    for path in sorted(directory.rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
            continue
        if any(within in path.parents for within in inner):
            continue
        yield path


def edges_of(root, folders):
    edges = collections.defaultdict(list)  # (from, to) -> [file]
    for folder, directory in folders.items():
        for path in sources_of(root, folder, directory):
            for name in INCLUDE.findall(path.read_text(encoding="utf-8")):
                if folder == "settings" and GATHERED_ROWS.fullmatch(name):
                    continue
                target = folder_of(name)
                # gpubench/build_info.h is generated into the build, not the public API.
                if target == "gpubench" and not (root / "include" / name).exists():
                    continue
                if target != folder and target in folders:
                    edges[(folder, target)].append(str(path.relative_to(root)))
    return edges


def readers_of(root, folders):
    """header in READERS -> {folder: [file]} of the folders that include it."""
    readers = {header: collections.defaultdict(list) for header in READERS}
    for folder, directory in folders.items():
        for path in sources_of(root, folder, directory):
            for name in INCLUDE.findall(path.read_text(encoding="utf-8")):
                if name in readers:
                    readers[name][folder].append(str(path.relative_to(root)))
    return readers


def cli_reaches_closed(root, directory):
    """cli/'s includes into CLI_CLOSED, as 'file: header' lines."""
    found = []
    for path in sorted(directory.rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES:
            continue
        relative = str(path.relative_to(root))
        for name in INCLUDE.findall(path.read_text(encoding="utf-8")):
            allowed = CLI_CLOSED.get(folder_of(name))
            if allowed is not None and name not in allowed and relative not in allowed:
                found.append(f"{relative}: {name}")
    return found


PUBLIC_INCLUDE = re.compile(r'^\s*#\s*include\s+([<"][^>"]+[>"])', re.M)


def public_headers_beyond_torch(root):
    """include/gpubench/'s includes of anything but gpubench/, LibTorch and the standard library,
    as 'file: header' lines: the installed package gives a project nothing else."""
    found = []
    for path in sorted((root / "include" / "gpubench").glob("*.h")):
        for name in PUBLIC_INCLUDE.findall(path.read_text(encoding="utf-8")):
            inside = name[1:-1]
            public = name.startswith('"') and inside.startswith("gpubench/")
            torch = name.startswith("<") and inside.startswith("torch/")
            standard = name.startswith("<") and re.fullmatch(r"[a-z_]+", inside)
            if not (public or torch or standard):
                found.append(f"{path.relative_to(root)}: {name}")
    return found


def cycles(folders, edges):
    graph = collections.defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(folders):
        if v not in index:
            visit(v)
    return found


def main():
    root = pathlib.Path(sys.argv[1])
    markdown = "--markdown" in sys.argv[2:]
    layer_of = {}
    for depth, layer in enumerate(LAYERS):
        for name, _ in layer:
            layer_of[name] = depth
    directories = folders_of(root)
    folders = sorted(directories)
    edges = edges_of(root, directories)
    problems = []
    for folder in folders:
        if folder not in layer_of:
            problems.append(f"{folder}/ has no layer: give it one in scripts/folder-graph.py")
    for component in cycles(folders, edges):
        members = set(component)
        via = [f"{a} -> {b} ({', '.join(sorted(set(files)))})" for (a, b), files in sorted(edges.items())
               if a in members and b in members]
        problems.append("include cycle between " + ", ".join(component) + ": " + "; ".join(via))
    for (a, b), files in sorted(edges.items()):
        if a in layer_of and b in layer_of and layer_of[b] <= layer_of[a]:
            where = "its own layer" if layer_of[b] == layer_of[a] else "a layer above"
            problems.append(f"{a} includes {b}, {where} ({', '.join(sorted(set(files)))})")
    for rows in gathered_rows_including(root):
        problems.append(f"{rows} includes a file: a feature's settings rows are data the "
                        "LibTorch-free settings table gathers")
    for reach in public_headers_beyond_torch(root):
        problems.append("a public header includes what the package does not install: " + reach)
    readers = readers_of(root, directories)
    for header, by_folder in readers.items():
        for folder, files in sorted(by_folder.items()):
            if folder not in READERS[header]:
                problems.append(f"{folder}/ includes {header}, which only "
                                f"{', '.join(READERS[header])} read ({', '.join(files)}): take "
                                "what it needs as values")
    for reach in cli_reaches_closed(root, directories["cli"]):
        problems.append("cli/ reaches the run's internals instead of the launcher: " + reach)
    if problems:
        for problem in problems:
            print("folder-graph: " + problem, file=sys.stderr)
        return 1
    if markdown:
        print("# Folders and layers\n")
        print("Generated by `scripts/folder-graph.py . --markdown` from the `#include` lines of "
              "`src/`, `models/` and `include/gpubench/` (a CTest test fails on an include cycle between folders, on an include "
              "into the same or a higher layer, on a public header that includes anything but "
              "`gpubench/`, LibTorch and the standard library, and on this page out of date). "
              "Each folder includes only folders of the layers below its own; the one exception "
              "is `settings/benchmark_settings.def` gathering the features' settings rows "
              "(`src/features/<feature>/*_settings.def`), data that includes nothing.\n")
        print("| layer | folders | what | includes |")
        print("| --- | --- | --- | --- |")
        for depth, layer in enumerate(LAYERS):
            for name, what in layer:
                targets = sorted({b for (a, b) in edges if a == name},
                                 key=lambda f: (layer_of[f], f))
                print(f"| {depth + 1} | `{name}/` | {what} | {', '.join(targets) or '-'} |")
        print("\nThe plan's and the model spec's headers, and the folders that include them (no "
              "other folder may):\n")
        print("| header | folders |")
        print("| --- | --- |")
        for header, by_folder in readers.items():
            print(f"| `{header}` | {len(by_folder)}: {', '.join(sorted(by_folder))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
