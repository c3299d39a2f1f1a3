#!/usr/bin/env bash
# Builds the core, incrementally: natively (build/native: library, attention-cli, Catch2 tests) and
# to WebAssembly with Emscripten (build/wasm: attention.js + attention.wasm, the small build the page
# downloads first, and attention-fast.js + attention-fast.wasm, the fast one its workers use; each
# also as *-relaxed.wasm, with relaxed-SIMD multiply-adds: scripts/relax-wasm.mjs).
#   scripts/build.sh              native + wasm (npm start, npm run build)
#   scripts/build.sh test         native + wasm + the native tests under ASan + UBSan (build/native-asan)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
what="${1:-all}"
# One build at a time per checkout: concurrent cmake runs on one build tree corrupt it.
mkdir -p build
exec 9>"build/.lock"
flock 9

native() {
  local dir=$1; shift
  [[ -f $dir/CMakeCache.txt ]] || cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" -j "$jobs" -- --no-print-directory | grep -vE '^\[ *[0-9]+%\]|^(Consolidate|Scanning|Built target)' || true
  test -x "$dir/attention-cli"
}

wasm() {
  # Emscripten 3.1.6 from Debian needs Debian's node modules (acorn) on NODE_PATH.
  export NODE_PATH=/usr/share/nodejs
  [[ -f build/wasm/CMakeCache.txt ]] || emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/wasm -j "$jobs" -- --no-print-directory | grep -vE '^\[ *[0-9]+%\]|^(Consolidate|Scanning|Built target)' || true
  for f in attention attention-relaxed attention-fast attention-fast-relaxed; do test -f build/wasm/$f.wasm; done
}

# The sanitizer tree at -O0 with line tables only (-g1: stack traces keep file:line): its build took
# 6 min of CI's 2 cores at RelWithDebInfo's -O2 -g, 2 min 41 s at -O1 (on an Intel Xeon); on an AMD
# EPYC (Zen 5, a slower guest) 5 min 53 s at -O1 and 3 min 10 s at -O0, whose cases then run in
# 66 s instead of 31 s (two processes: scripts/run-tests.mjs): 2 min less in all.
asan=(-DATTN_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -g1 -DNDEBUG")

# Each tree's wall time on its last line (where CI's minutes go, beside run-tests.mjs's per suite).
timed() {
  local t0=$SECONDS
  "$@"
  echo "build: ${*:1:2} $((SECONDS - t0)) s"
}

case "$what" in
  all) timed native build/native; timed wasm ;;
  test) timed native build/native; timed wasm; timed native build/native-asan "${asan[@]}" ;;
  native) native build/native ;;
  wasm) wasm ;;
  native-asan) native build/native-asan "${asan[@]}" ;;
  *) echo "usage: scripts/build.sh [all|test|native|wasm|native-asan]" >&2; exit 2 ;;
esac
