// Which backend computes the attention: the WASM core (always, it also records every step) and,
// when the browser gives a WebGPU adapter, the GPU kernels of gpu/ side by side. With WebGPU
// active, each recompute also runs the module's attention on the GPU from the very inputs and
// parameters the core used, and the panel shows the largest |WebGPU − WASM| difference over the
// output and the displayed head's weights, with both timings. Any WebGPU failure (no adapter,
// device lost, a kernel error) falls back to WASM with a visible notice; the page keeps working.
import { GpuAttention, gpuSupport, planFromResult } from './gpu/attention-gpu.js';
import { t } from './i18n.js';

const WASM = 'WASM SIMD';

function maxAbsDiff(a, b, offset = 0, n = a.length) {
  let m = 0;
  for (let i = 0; i < n; i++) m = Math.max(m, Math.abs(a[i] - b[offset + i]));
  return m;
}

// els: {radios: [wasm, webgpu], name, adapter, notice, compare, diff, wasmTime, gpuTime}
export function createBackend(core, els, onChoice) {
  let gpu = null;
  let unavailable = null;   // why WebGPU cannot be used (no adapter, lost, failed): () => text, re-read per render for the language
  let wanted = 'auto';
  let job = null;           // the latest comparison asked for
  let running = false;
  let last = null;          // {diff, wasmMs, gpuMs, module}

  const active = () => (wanted !== 'wasm' && gpu && !unavailable ? 'webgpu' : 'wasm');

  function render(extra = '') {
    const isGpu = active() === 'webgpu';
    els.name.textContent = isGpu ? t('backend.webgpuName', { adapter: gpu.adapterName }) : WASM;
    els.name.dataset.backend = active();
    els.radios[0].checked = !isGpu;
    els.radios[1].checked = isGpu;
    els.radios[1].disabled = !gpu || !!unavailable;
    els.adapter.textContent = gpu ? t('backend.adapter', { adapter: gpu.adapterName }) : '';
    els.notice.textContent = unavailable ? t('backend.unavailable', { reason: unavailable(), wasm: WASM }) : extra;
    els.compare.hidden = !isGpu || !last;
  }

  function fail(message) {   // message: () => text
    unavailable = message;
    const g = gpu;
    gpu = null;
    try { g?.destroy(); } catch { /* already gone */ }
    last = null;
    render();
    onChoice?.(active());
  }

  const ready = GpuAttention.create({ onLost: (e) => { if (gpu) fail(() => t('backend.lost', { reason: e.message || e.reason || t('backend.unknownReason') })); } })
    .then((g) => { gpu = g; }, (e) => { unavailable = () => (e.key ? t(e.key) : e.message); })
    .finally(() => { render(); document.body.dataset.backendReady = 'true'; });

  function selection(plan) {
    const pick = (id, max) => {
      const v = Number(document.getElementById(id)?.value ?? 0);
      return Number.isInteger(v) && v >= 0 && v < max ? v : 0;
    };
    return { b: pick('attention-batch', plan.B), h: pick('attention-head', plan.H) };
  }

  async function drain() {
    if (running) return;
    running = true;
    while (job && active() === 'webgpu') {
      const { scenario, result, wasmMs } = job;
      job = null;
      try {
        const plan = planFromResult(scenario, result);
        const sel = selection(plan);
        const r = await gpu.run(plan, { weights: sel });
        if (!r) continue;
        let diff = maxAbsDiff(r.output.data, result.outputs[0].data);
        const w = result.outputs.find((o) => o.name === 'attention_weights');
        if (w && r.attentionWeights) {
          const n = plan.T * plan.S;
          diff = Math.max(diff, maxAbsDiff(r.attentionWeights.data, w.data, (sel.b * plan.H + sel.h) * n, n));
        }
        last = { diff, wasmMs, gpuMs: r.ms, module: scenario.module, head: sel };
        els.diff.textContent = diff.toExponential(2);
        els.diff.dataset.value = String(diff);
        els.wasmTime.textContent = t('backend.ms', { ms: wasmMs.toFixed(2) });
        els.gpuTime.textContent = t('backend.gpuMs', { ms: r.ms.toFixed(2) });
        render(t('backend.compared', { b: sel.b, h: sel.h }));
      } catch (e) {
        fail(() => t('backend.failed', { message: e.message }));
      }
    }
    running = false;
  }

  for (const radio of els.radios) {
    radio.addEventListener('change', () => {
      if (!radio.checked) return;
      wanted = radio.value;
      render();
      onChoice?.(active());
    });
  }

  return {
    ready,
    active,
    setWanted(v) { wanted = v; render(); },
    wanted: () => wanted,
    // The WASM result of a recompute: compare it on the GPU when WebGPU is active.
    compare(scenario, result, wasmMs) {
      if (active() !== 'webgpu') { render(); return; }
      const support = gpuSupport(scenario);
      if (!support.ok) {
        last = null;
        render(t('backend.wasmOnly', { module: scenario.module, wasm: WASM, reason: support.reason }));
        return;
      }
      job = { scenario, result, wasmMs };
      drain();
    },
    needsParams: () => active() === 'webgpu',
    gpu: () => gpu,
    last: () => last,
    idle: () => !running && !job,
  };
}
