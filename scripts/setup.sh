#!/usr/bin/env bash
# Installs what the project needs on Debian 12 and is missing, then the npm packages.
# Idempotent and quiet: on a ready machine it checks and returns in a second or two.
#   scripts/setup.sh              build + test dependencies
#   scripts/setup.sh --fixtures   also python3-torch, to regenerate tests/fixtures with PyTorch, and
#                                 libopenblas0-pthread: Debian's torch multiplies matrices with
#                                 whatever libblas.so.3 the alternatives point at (the reference
#                                 BLAS, ~2 GFLOP/s, when only libblas3 is there): npm run bench
#                                 compares against PyTorch on OpenBLAS (tests/bench/torch_bench.py)
#   scripts/setup.sh --lm         also fortunes, the English text npm run train-lm trains the shipped
#                                 character-level language model on (scripts/train-lm.mjs)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ emscripten libxsimd-dev catch2 nlohmann-json3-dev chromium firefox-esr mesa-vulkan-drivers valgrind)
# The sanitizer tree (scripts/build.sh test) is built by clang 14, which emscripten brings: its
# ASan + UBSan runtimes are in libclang-rt-14-dev, a package clang only recommends.
packages+=(clang-14 libclang-rt-14-dev)
# The notebook test (tests/browser/notebook.test.mjs): Debian's Jupyter executes and exports
# tests/notebook/ (nbconvert, a kernel), and its HTML loads require.js and MathJax from these
# libjs packages; PyTorch is the notebook's reference (below, where Debian ships it).
packages+=(jupyter-nbconvert python3-nbclient python3-ipykernel libjs-requirejs libjs-mathjax)
[[ "${1:-}" == "--fixtures" ]] && packages+=(python3-torch python3-numpy libopenblas0-pthread)
[[ "${1:-}" == "--lm" ]] && packages+=(fortunes)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]} (Debian packages)"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# python3-torch for the notebook test, where this architecture has it (the test says it is skipped
# where not); --fixtures needs it anyway and installed it above.
if ! dpkg-query -W -f='${Status}' python3-torch 2>/dev/null | grep -q "install ok installed"; then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  if apt-cache show python3-torch >/dev/null 2>&1; then
    echo "setup: installing python3-torch (Debian package, for the notebook test)"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-torch >/dev/null \
      || echo "setup: python3-torch could not be installed: the notebook test will be skipped"
  else
    echo "setup: python3-torch is not available for $(dpkg --print-architecture): the notebook test will be skipped"
  fi
fi

# npm ci when node_modules is missing or older than the lock file.
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "setup: npm ci"
  # onnxruntime-node (the bench's native peer, tests/bench/ort_node_bench.mjs) ships its CPU
  # binaries in the npm package; its postinstall would download CUDA ones from another registry,
  # which this project neither needs nor reaches (npm ci fails on it): the variable skips that.
  # (An `onnxruntime-node-install=skip` line in .npmrc did the same, but npm 11 warns on every
  # command that it is an unknown project config and will stop reading it.)
  ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error
fi
