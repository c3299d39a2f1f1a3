// Generation timings through the WASM core in Node (one thread, WASM SIMD128), printed with the CPU:
//  1. nanoGPT's Shakespeare-char model (n_layer 6, n_head 6, n_embd 384, block_size 256, vocab 65,
//     ~10.7M parameters) exported F16 by scripts/export_nanogpt.py: file size, load time (the
//     generator built: seeded construction as sample.py does it, then the file's weights), and 50
//     new tokens from a one-token prompt, with and without the KV cache;
//  2. one decode step at T = 256 (n_layer 4, n_embd 256, n_head 4, vocab 65) with and without the
//     KV cache (the median of 9; native twin: build/native/attention_tests "[.timing]").
//   node scripts/measure-generate.mjs      (makes build/measure-generate/ first if it is missing)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { loadAttention } from '../bindings/attention.mjs';

const dir = new URL('../build/measure-generate/', import.meta.url);
const file = new URL('shakespeare.safetensors', dir);
if (!existsSync(file)) {
  execFileSync('/usr/bin/python3', ['scripts/make_nanogpt_fixtures.py', '--shakespeare-size', 'build/measure-generate'],
    { cwd: new URL('..', import.meta.url), stdio: 'inherit' });
}
const core = await loadAttention();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (f) => { const t0 = performance.now(); f(); return performance.now() - t0; };

function shakespeare() {
  const weights = readFileSync(file);
  const scenario = JSON.parse(readFileSync(new URL('shakespeare.scenario.json', dir), 'utf8'));
  console.log(`Shakespeare-size GPT ${JSON.stringify(scenario.config)}: ${(statSync(file).size / 1e6).toFixed(2)} MB (F16)`);
  for (const cache of [true, false]) {
    const loads = [], runs = [];
    for (let rep = 0; rep < 3; rep++) {
      let g;
      loads.push(ms(() => { g = core.generator({ ...scenario, generate: { ...scenario.generate, max_new_tokens: 50, cache } }, { weights }); }));
      try {
        runs.push(ms(() => { for (let k = 0; k < 50; k++) g.next(); }));
      } finally {
        g.delete();
      }
    }
    console.log(`  ${cache ? 'KV cache' : 'no cache'}: load ${median(loads).toFixed(0)} ms, 50 tokens ${median(runs).toFixed(0)} ms`
      + ` (${(median(runs) / 50).toFixed(2)} ms/token; each of 3 runs: ${runs.map((x) => x.toFixed(0)).join(', ')} ms)`);
  }
}

function decodeStep() {
  const prompt = Array.from({ length: 255 }, (_, i) => i % 65);
  const config = { vocab_size: 65, block_size: 256, n_layer: 4, n_head: 4, n_embd: 256 };
  const result = {};
  for (const cache of [true, false]) {
    const times = [];
    for (let rep = 0; rep < 9; rep++) {
      const g = core.generator({ module: 'GPT', seed: 0, config, inputs: [{ name: 'idx', shape: [1, 255], data: prompt }],
        generate: { max_new_tokens: 2, temperature: 0, cache } });
      try {
        g.next();  // the prompt's window, 255 positions
        times.push(ms(() => g.next()));  // position 255: T = 256
      } finally {
        g.delete();
      }
    }
    result[cache] = median(times);
    console.log(`  ${cache ? 'KV cache' : 'no cache'}: median ${median(times).toFixed(2)} ms [${Math.min(...times).toFixed(2)}, ${Math.max(...times).toFixed(2)}]`);
  }
  console.log(`  cached / uncached = ${(result.true / result.false).toFixed(3)} (${(result.false / result.true).toFixed(1)}x faster)`);
}

console.log(`${cpus()[0].model}, Node ${process.version}, kernels ${core.kernels()}`);
shakespeare();
console.log('One decode step at T=256 (n_layer 4, n_embd 256, n_head 4, vocab 65):');
decodeStep();
