// Fused flash-style attention vs the naive three-pass kernels (scores, softmax, weighted sum) on
// this machine's WebGPU adapter (SwiftShader here: a CPU emulation, so compare kernels with each
// other, never with a real GPU), for seed 000's MultiHeadAttention at T=1024, C=768, H=12, B=1.
// Times the attention kernels alone (projections done before), median of repeats after a warm-up.
//   node scripts/measure-gpu.mjs [--T 1024] [--repeats 5]
import { launch, openPage, startServer } from '../tests/browser/harness.mjs';

const arg = (name, def) => (process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : def);
const T = arg('--T', 1024), C = 768, H = 12, repeats = arg('--repeats', 5);

const server = await startServer();
const browser = await launch();
try {
  const { page } = await openPage(browser.context, server.url);
  const r = await page.evaluate(async ({ T, C, H, repeats }) => {
    const { GpuAttention, planFromResult } = await import('/gpu/attention-gpu.js');
    const gpu = await GpuAttention.create();
    const scenario = { module: 'MultiHeadAttention', seed: 0, config: { d_model: C, num_heads: H },
      inputs: ['Q', 'K', 'V'].map((name) => ({ name, shape: [1, T, C], init: 'randn' })) };
    const result = window.playground.core.run({ ...scenario, return_inputs: true, return_params: true });
    const plan = planFromResult(result);
    const fused = await gpu.timeAttention(plan, { repeats });
    const naive = await gpu.timeAttention(plan, { naive: true, repeats });
    return { adapter: gpu.adapterName, fused, naive };
  }, { T, C, H, repeats });
  const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  const f = median(r.fused), n = median(r.naive);
  const flops = 4 * H * T * T * (C / H);  // q·k and weights·v, 2 flop per multiply-add
  console.log(`adapter: ${r.adapter} (SwiftShader is a CPU emulation of a GPU)`);
  console.log(`MultiHeadAttention T=${T} C=${C} H=${H}: attention kernels only, median of ${repeats} after warm-up`);
  console.log(`  fused (flash-style, online softmax): ${f.toFixed(1)} ms  [${r.fused.map((x) => x.toFixed(0)).join(', ')}]  ${(flops / f / 1e6).toFixed(2)} GFLOP/s`);
  console.log(`  naive three-pass:                    ${n.toFixed(1)} ms  [${r.naive.map((x) => x.toFixed(0)).join(', ')}]  ${(flops / n / 1e6).toFixed(2)} GFLOP/s`);
  console.log(`  fused / naive = ${(f / n).toFixed(2)}`);
} finally {
  await browser.close();
  await server.close();
}
