#!/usr/bin/env bash
# The installed package as a user meets it (docs/api.md): installs BUILD_DIR into a scratch
# prefix, builds examples/custom_model against it with find_package(gpubench), and runs the
# example's own model through train (one process, then two CPU ranks: the executable re-runs
# itself), models and report, and from code (run_in_this_process, write_result); and checks
# that the installed headers are the public ones alone and that docs/api.md shows the example as
# it is. A CTest test runs it.
#   usage: check-installed-example.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
build="$(cd "$1" && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
prefix="$scratch/prefix"

cmake --install "$build" --prefix "$prefix" >"$scratch/install.log"
# The example compiles against the public headers alone: the installed include folder holds
# include/gpubench/ as it is and nothing more, and gpubench::gpubench's include path is that
# folder (cmake/gpubenchConfig.cmake.in).
diff <(cd "$prefix/include" && find . -type f | sort) <(cd include && find . -type f | sort) ||
  { echo "check-installed-example: the installed headers are not include/gpubench/'s" >&2; exit 1; }
launcher=()
# The example is built from a copy in the scratch folder, with the compiler cache's keys relative
# to that folder: whatever the scratch folder's and the clone's names, the example's three objects
# come from the cache from the second run on (22 s of compiling to 1.5).
cp -r examples/custom_model "$scratch/source"
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$scratch"
fi
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S "$scratch/source" -B "$scratch/example" "${generator[@]}" "${launcher[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >"$scratch/configure.log" ||
  { cat "$scratch/configure.log"; exit 1; }
cmake --build "$scratch/example" >"$scratch/build.log" 2>&1 || { cat "$scratch/build.log"; exit 1; }
bench="$scratch/example/custom_bench"

fail() { echo "check-installed-example: $*" >&2; exit 1; }
# docs/api.md shows the example as it is: its CMakeLists.txt from `cmake_minimum_required` on, and
# its source from the first #include on.
python3 - <<'PY' || fail "docs/api.md does not show examples/custom_model as it is"
import pathlib, sys
page = pathlib.Path("docs/api.md").read_text()
for path, start in (("examples/custom_model/CMakeLists.txt", "cmake_minimum_required"),
                    ("examples/custom_model/example_net.cpp", "#include"),
                    ("examples/custom_model/custom_bench.cpp", "#include"),
                    ("examples/custom_model/run_from_code.cpp", "#include")):
    text = pathlib.Path(path).read_text()
    if text[text.index(start):] not in page:
        sys.exit(f"{path} differs from its copy in docs/api.md")
PY
# The example's model by name: listing every model counts each zoo model (Transformer-XL's by a
# forward pass, about 9 s of the 11).
"$bench" models example-net | grep -q "example-net" || fail "custom_bench models does not list example-net"
run="--model example-net --device cpu --batch-size 2 --warmup-steps 1 --steps 2 --repeat 1"
"$bench" --log-level warn train $run --output "$scratch/one.json" >"$scratch/one.log" 2>&1 ||
  { cat "$scratch/one.log"; fail "train --model example-net failed"; }
"$bench" --log-level warn train $run --gpus 2 --output "$scratch/two.json" >"$scratch/two.log" 2>&1 ||
  { cat "$scratch/two.log"; fail "train --model example-net --gpus 2 failed"; }
python3 - "$scratch/one.json" "$scratch/two.json" <<'PY'
import json, sys
for path, ranks in zip(sys.argv[1:], (1, 2)):
    result = json.load(open(path))
    assert result["status"] == "ok", (path, result.get("error"))
    assert result["benchmark"]["model"] == "example-net", result["benchmark"]
    assert result["benchmark"]["gpus"] == ranks, result["benchmark"]
    assert result["metrics"]["throughput"] > 0, result["metrics"]
    assert result["metrics"]["forward_flops_per_sample"] > 0, result["metrics"]
PY
"$bench" report "$scratch/one.json" "$scratch/two.json" | grep -q "example-net" ||
  fail "report does not show example-net"
# The API from code: run_in_this_process, write_result, read back.
"$scratch/example/run_from_code" "$scratch/code.json" >"$scratch/code.log" 2>&1 ||
  { cat "$scratch/code.log"; fail "run_from_code failed"; }
grep -q "^example-net ok: " "$scratch/code.log" || { cat "$scratch/code.log"; fail "run_from_code said no result"; }
python3 - "$scratch/code.json" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
assert result["status"] == "ok", result.get("error")
assert result["benchmark"]["model"] == "example-net" and result["benchmark"]["gpus"] == 1
assert result["metrics"]["throughput"] > 0, result["metrics"]
assert result["distributed"]["launcher"] == "none", result["distributed"]
PY
echo "check-installed-example: example-net trained (1 and 2 ranks, and from code) from $prefix"
