#!/usr/bin/env bash
# The shared libraries that `BINARY --version` binds the most symbols to, most first, without
# LibTorch's own and the C and C++ runtimes (which an executable lists first anyway): the list
# cmake/torch-load-order.txt keeps (cmake/TorchLoadOrder.cmake reads it). Usage:
#   bash scripts/torch-load-order.sh build/gpubench-train [COUNT] > cmake/torch-load-order.txt
set -euo pipefail
binary=$1 count=${2:-30}
LD_DEBUG=bindings "$binary" --version 2>&1 >/dev/null |
  sed -n 's/.* to \([^ ]*\) \[.*/\1/p' | sort | uniq -c | sort -rn | awk '{print $2}' |
  xargs -n1 basename |
  grep -v -E '^(libtorch|libc10|libc\.so|libstdc\+\+|libm\.so|libgcc_s|ld-linux|libpthread)' |
  grep -v -F "$(basename "$binary")" | head -n "$count"
