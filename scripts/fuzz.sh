#!/usr/bin/env bash
# npm run fuzz -- --seconds N: libFuzzer over the scenario parser and runner (tests/fuzz/),
# clang 14 with -fsanitize=fuzzer,address,undefined, seed corpus from tests/fixtures/*.json.
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
mkdir -p "$out/deps" "$out/corpus/scenario"
ln -sfn /usr/include/xsimd "$out/deps/xsimd"
ln -sfn /usr/include/nlohmann "$out/deps/nlohmann"
flags=(-std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Icore -I"$out/deps" -DATTN_VERSION='"fuzz"')
sources=$(ls core/*.cpp core/modules/*.cpp | grep -vE 'kernels_(avx2|wasm)\.cpp')
if [[ ! -x $out/fuzz_scenario || -n $(find core tests/fuzz -newer "$out/fuzz_scenario" -name '*.[ch]pp' | head -1) ]]; then
  echo "fuzz: building $out/fuzz_scenario"
  # kernels_avx2.cpp needs its own flags; kernels.cpp falls back to SSE2 when AVX2 is absent, so build it too.
  clang++-14 "${flags[@]}" -mavx2 -mfma -c core/kernels_avx2.cpp -o "$out/kernels_avx2.o"
  clang++-14 "${flags[@]}" $sources "$out/kernels_avx2.o" tests/fuzz/fuzz_scenario.cpp -o "$out/fuzz_scenario"
fi
cp tests/fixtures/*.scenario.json "$out/corpus/scenario/" 2>/dev/null || true
echo "fuzz: scenario target for ${seconds}s"
"$out/fuzz_scenario" -max_total_time="$seconds" -artifact_prefix="$out/" -max_len=8192 -timeout=60 -rss_limit_mb=2048 -print_final_stats=1 \
  "$out/corpus/scenario" 2>&1 | tee "$out/scenario.log" | grep -E '^(#[0-9]+.*(pulse|DONE)|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)' || true
grep -q 'ERROR\|SUMMARY: ' "$out/scenario.log" && { echo "fuzz: failure, see $out/scenario.log"; exit 1; }
grep 'stat::number_of_executed_units' "$out/scenario.log"
