#!/usr/bin/env bash
# npm run fuzz -- --seconds N: libFuzzer over the scenario parser and runner, the safetensors
# weights loader and the model folders of "pretrained" (tests/fuzz/), N seconds each, clang 14 with
# -fsanitize=fuzzer,address,undefined, seed corpora from tests/fixtures/ (training fixtures included;
# each folder of tests/fixtures/pretrained/ as fuzz_pretrained.cpp lays a folder out); then
# scripts/fuzz-bindings.mjs, N seconds per WebAssembly build.
# Prints the executions per target; exits non-zero on any crash, leak or UB report.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
while (($#)); do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    *) echo "usage: npm run fuzz -- [--seconds N]" >&2; exit 2 ;;
  esac
done
missing=()
for p in clang-14 libclang-rt-14-dev libxsimd-dev nlohmann-json3-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
out=build/fuzz
mkdir -p "$out/deps" "$out/corpus/scenario" "$out/corpus/safetensors" "$out/corpus/pretrained"
ln -sfn /usr/include/xsimd "$out/deps/xsimd"
ln -sfn /usr/include/nlohmann "$out/deps/nlohmann"
flags=(-std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Icore -I"$out/deps" -DATTN_VERSION='"fuzz"')
sources=$(find core -name '*.cpp' | grep -vE 'kernels_(avx2|avx512|wasm)\.cpp|core/cli/')
cp tests/fixtures/*.scenario.json "$out/corpus/scenario/" 2>/dev/null || true
for f in tests/fixtures/train/*.scenario.json; do cp "$f" "$out/corpus/scenario/train_$(basename "$f")"; done
cp tests/fixtures/weights/*.safetensors "$out/corpus/safetensors/" 2>/dev/null || true
# a folder as one input: config.json, the index (or nothing), the first weight file, each behind its
# length (4 bytes, little-endian)
python3 - "$out/corpus/pretrained" tests/fixtures/pretrained/*/ <<'PY'
import pathlib, struct, sys
for d in map(pathlib.Path, sys.argv[2:]):
    index = d / 'model.safetensors.index.json'
    weights = sorted(d.glob('*.safetensors'))[0]
    parts = [(d / 'config.json').read_bytes(), index.read_bytes() if index.exists() else b'', weights.read_bytes()]
    pathlib.Path(sys.argv[1], d.name).write_bytes(b''.join(struct.pack('<I', len(p)) + p for p in parts))
PY
status=0
for target in scenario safetensors pretrained; do
  bin="$out/fuzz_$target"
  if [[ ! -x $bin || -n $(find core tests/fuzz -newer "$bin" -name '*.[ch]pp' | head -1) ]]; then
    echo "fuzz: building $bin"
    # kernels_avx2.cpp and kernels_avx512.cpp need their own flags; kernels.cpp picks what the CPU runs.
    clang++-14 "${flags[@]}" -mavx2 -mfma -c core/kernels/kernels_avx2.cpp -o "$out/kernels_avx2.o"
    clang++-14 "${flags[@]}" -mavx512f -mavx512dq -mfma -c core/kernels/kernels_avx512.cpp -o "$out/kernels_avx512.o"
    clang++-14 "${flags[@]}" $sources "$out/kernels_avx2.o" "$out/kernels_avx512.o" "tests/fuzz/fuzz_$target.cpp" -o "$bin"
  fi
  echo "fuzz: $target target for ${seconds}s"
  max_len=8192
  [[ $target == pretrained ]] && max_len=131072  # the seed folders' weight files: up to 82 KB
  "$bin" -max_total_time="$seconds" -artifact_prefix="$out/$target-" -max_len=$max_len -timeout=60 -rss_limit_mb=2048 \
    -print_final_stats=1 "$out/corpus/$target" 2>&1 | tee "$out/$target.log" |
    grep -E '^(#[0-9]+.*(pulse|DONE)|==[0-9]+==ERROR|SUMMARY)' || true
  if grep -q 'ERROR\|SUMMARY: ' "$out/$target.log"; then
    echo "fuzz: $target failed, see $out/$target.log"
    status=1
  fi
  echo "fuzz: $target: $(grep -o 'number_of_executed_units: [0-9]*' "$out/$target.log") executions"
done
# the same kind of input through the WebAssembly core and its JavaScript bindings
bash scripts/build.sh wasm > "$out/wasm-build.log" 2>&1 || { echo "fuzz: the WebAssembly build failed, see $out/wasm-build.log"; exit 1; }
node scripts/fuzz-bindings.mjs --seconds "$seconds" || status=1
exit $status
