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
  if [[ -f $dir/CMakeCache.txt && " $* " == *" -DCMAKE_CXX_COMPILER="* ]]; then
    local cxx=" $* "; cxx=${cxx#* -DCMAKE_CXX_COMPILER=}; cxx=${cxx%% *}
    grep -q "^CMAKE_CXX_COMPILER:[A-Z]*=.*/$cxx\$" "$dir/CMakeCache.txt" || rm -rf "$dir"
  fi
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

# The sanitizer tree: clang 14 (the compiler Emscripten already brings; GCC builds build/native, so
# the tests pass under both), at -O0 with line tables only (-g1: stack traces keep file:line), its
# kernels at -O1 (CMakeLists.txt), the standard library, nlohmann-json and Catch2 precompiled. On an
# AMD EPYC guest (Zen 5, 2 cores): GCC at -O0 built it in 243 s and ran its cases in 93 s (two
# processes: scripts/run-tests.mjs); clang at -O0 in 129 s and 135 s; with the precompiled headers
# and -O1 kernels in 81 s and 58 s. A tree configured with another compiler is configured afresh.
asan=(-DCMAKE_CXX_COMPILER=clang++-14 -DATTN_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -g1 -DNDEBUG")

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
