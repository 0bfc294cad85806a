#!/usr/bin/env python3
"""Checks the train call's path that docs/development.md writes between <!-- call-path --> and
<!-- /call-path -->: every file exists; every step after the first is reached from an earlier
one, whose file or header includes this step's header ("k"), or through a registry ("k,
registry": this step's file registers itself, step k's file reads the registry); the steps span
at most MAX_FOLDERS folders.

  check-call-path.py ROOT    exit 1, naming each problem, when the table is not the code's
"""
import pathlib
import re
import sys

MAX_FOLDERS = 8
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def includes(root, path):
    """The headers a .cpp and its own header include, as paths from the root."""
    found = set()
    for source in (path, path.with_suffix(".h")):
        if not source.exists():
            continue
        for name in INCLUDE.findall(source.read_text(encoding="utf-8")):
            local = source.parent / name
            found.add(str(local.relative_to(root)) if local.exists() else "src/" + name)
    return found


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    text = (root / "docs" / "development.md").read_text(encoding="utf-8")
    table = text.split("<!-- call-path -->")[1].split("<!-- /call-path -->")[0]
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in table.strip().splitlines()[2:]]
    files, problems = {}, []
    for step, file, reached, _ in rows:
        path = root / file
        files[int(step)] = path
        if not path.exists():
            problems.append(f"step {step}: {file} does not exist")
            continue
        if not reached:
            continue
        source = int(reached.split(",")[0])
        if source >= int(step) or source not in files:
            problems.append(f"step {step}: reached from step {source}, which is not earlier")
            continue
        if "registry" in reached:
            if "Registration" not in path.read_text(encoding="utf-8") or \
                    "Registry::instance()" not in files[source].read_text(encoding="utf-8"):
                problems.append(f"step {step}: {file} does not register with a registry that "
                                f"{files[source].relative_to(root)} reads")
        elif str(path.with_suffix(".h").relative_to(root)) not in includes(root, files[source]):
            problems.append(f"step {step}: {files[source].relative_to(root)} does not include "
                            f"{path.with_suffix('.h').relative_to(root)}")
    folders = {files[s].parent.name for s in files}
    if len(folders) > MAX_FOLDERS:
        problems.append(f"the path spans {len(folders)} folders ({', '.join(sorted(folders))}); "
                        f"at most {MAX_FOLDERS}")
    for problem in problems:
        print("check-call-path: " + problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
