// The pretrained bench page (pretrained.html; tests/bench/pretrained.mjs drives it through
// window.bench, one backend per fresh page, so each page's peak memory is that backend's), on 1
// thread, or on N in a cross-origin-isolated page (pretrained.html?threads=N, tests/bench/server.mjs):
//   core(dir, protocol)  the core's full build (the one "Open a model" runs; on N threads the
//       threaded build, as the page runs where it is cross-origin isolated): the folder
//       opened from its URL as the page's model worker opens it (web/model/loader.js: config.json,
//       the headers checked by the core, the weights streamed into the module), the prefill (a
//       generator on the opened module, its first next(): 128 ids into a fresh KV cache) and one
//       decode step at position 128 (a fork of the generator after the prefill, next() on it);
//       logits and greedy ids checked against PyTorch's
//   ort(dir, protocol)   onnxruntime-web's wasm backend (numThreads: 1 or N), on the same weights exported by
//       torch.onnx.export (pretrained-ort.mjs, shared with onnxruntime-node)
import { loadAttention } from '/bindings/attention.mjs';
import { forkGeneration, heapPeak, lastLogits, pretrainedPlan, reserveHeap, sessionGenerator, streamedWeights } from '/bindings/pretrained.mjs';
import * as ort from '/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs';
import { openFolder, urlSource } from '/web/model/loader.js';
import { check, f32, ortPretrained } from './pretrained-ort.mjs';
import { timed } from './timed.mjs';

const THREADS = Number(new URLSearchParams(location.search).get('threads') ?? 1);

const read = async (dir, name) => {
  const r = await fetch(`${dir}${name}`);
  if (!r.ok) throw new Error(`${dir}${name}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
};

window.bench = {
  async core(dir, protocol) {
    try {
      const t0 = performance.now();
      const core = await loadAttention({ fast: true, threads: THREADS });
      let trainer = null;
      const build = async ({ label, files, sizes, plan }) => {
        reserveHeap(core, core.heapUsed() + plan.f32_bytes + (64 << 20));  // as the model worker
        trainer = core.trainer({ pretrained: label, inputs: [{ name: 'idx', shape: [1, 1], data: [0] }], generate: { max_new_tokens: 2, temperature: 0 } },
          { files, sizes });
        return streamedWeights(trainer);
      };
      await openFolder(urlSource(new URL(dir, location.href).href, location.href), { plan: (args) => pretrainedPlan(core, args), build, maxBytes: 640 * 2 ** 20 });
      const loadMs = performance.now() - t0;
      const ref = JSON.parse(new TextDecoder().decode(await read(dir, 'ids.json')));
      trainer.setInput('idx', Float32Array.from(ref.ids), [1, ref.ids.length]);
      const prefill = () => {
        const g = sessionGenerator(trainer, 2);
        g.next();
        return g;
      };
      const g = prefill();
      const results = [{ case: 'prefill', ...check(lastLogits(g), f32(await read(dir, 'prefill_logits.f32')), ref.next_id),
        ...(await timed(() => prefill().delete(), protocol)).stats }];
      const step = forkGeneration(g);
      const token = step.next();
      results.push({ case: 'decode', mode: token.mode, position: token.position, ...check(lastLogits(step), f32(await read(dir, 'decode_logits.f32')), ref.step_id),
        ...(await timed(() => { const f = forkGeneration(g); f.next(); f.delete(); }, protocol)).stats });
      step.delete();
      g.delete();
      return { load_ms: loadMs, kernels: core.kernels(), threads: core.threads?.() ?? 1, crossOriginIsolated: globalThis.crossOriginIsolated ?? false, heap_bytes: core.heapBytes(), heap_peak_bytes: heapPeak(core),
        userAgent: navigator.userAgent, results };
    } catch (e) {
      return { error: String(e?.stack ?? e).slice(0, 800) };
    }
  },
  async ort(dir, protocol) {
    try {
      ort.env.wasm.wasmPaths = '/node_modules/onnxruntime-web/dist/';
      ort.env.wasm.numThreads = THREADS;
      ort.env.wasm.proxy = false;
      const results = await ortPretrained(ort, { read: (name) => read(dir, name), locate: (name) => new URL(`${dir}${name}`, location.href).href, ep: 'wasm', threads: THREADS, protocol });
      return { version: ort.env.versions?.web ?? null, threads: THREADS, crossOriginIsolated: globalThis.crossOriginIsolated ?? false, userAgent: navigator.userAgent, results };
    } catch (e) {
      return { error: String(e?.stack ?? e).slice(0, 800) };
    }
  },
};
document.body.dataset.ready = 'true';
