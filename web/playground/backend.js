// Which backend computes the attention: the WASM core (always, it also records every step) and,
// when the browser gives a WebGPU adapter, the GPU kernels of gpu/ side by side: each recompute
// also runs the module's attention on the GPU from the very inputs and parameters the core used,
// after the page has redrawn, and the panel shows the largest |WebGPU − WASM| difference over the
// output and the displayed head's weights. Any WebGPU failure falls back to WASM with a notice.
import { adapterName, gpuAdapter } from '../gpu/adapter.js';
import { t } from '../i18n.js';
import { setAttr, setHidden, setText } from '../views/dom-write.js';

const WASM = 'WASM SIMD';

function maxAbsDiff(a, b, offset = 0, n = a.length) {
  let m = 0;
  for (let i = 0; i < n; i++) m = Math.max(m, Math.abs(a[i] - b[offset + i]));
  return m;
}

// Scores (B·H·T·S floats) up to this many are checked with the three-pass kernels, which keep
// them in a buffer; past it with the fused kernel, which never stores them. A page of a few
// tokens so never compiles the fused kernel (on SwiftShader 1.8 s of CPU beside the typing).
const NAIVE_MAX_SCORES = 1 << 20;

// The GPU path (gpu/attention-gpu.js: its kernels, shaders and plans), loaded when WebGPU is
// wanted and there is an adapter: a page on WASM never downloads it.
let gpuPath = null;
const loadGpuPath = () => (gpuPath ??= import('../gpu/attention-gpu.js'));

// The GPU's output and the selected head's weights against the core's result: the largest
// |WebGPU − WASM|. selection {b, h} outside this result falls back to 0.
async function compareOnGpu(gpu, { result, selection }) {
  const plan = (await loadGpuPath()).planFromResult(result);
  const pick = (v, max) => (Number.isInteger(v) && v >= 0 && v < max ? v : 0);
  const head = { b: pick(selection?.b, plan.B), h: pick(selection?.h, plan.H) };
  const r = await gpu.run(plan, { weights: head, naive: plan.B * plan.H * plan.T * plan.S <= NAIVE_MAX_SCORES });
  let diff = maxAbsDiff(r.output.data, result.outputs.find((o) => o.name === plan.output).data);
  const w = result.outputs.find((o) => o.name === plan.weightsOutput);
  if (w && r.attentionWeights) {
    const n = plan.T * plan.S;
    diff = Math.max(diff, maxAbsDiff(r.attentionWeights.data, w.data, (head.b * plan.H + head.h) * n, n));
  }
  return { diff, head, gpuMs: r.ms };
}

// fn after the next paint: requestAnimationFrame runs just before a frame, the task it queues
// runs after it. A hidden page paints no frames: the timer starts fn anyway.
function afterPaint(fn) {
  let started = false;
  const go = () => { if (!started) { started = true; setTimeout(fn, 0); } };
  requestAnimationFrame(go);
  setTimeout(go, 100);
}

// While a reader types, a check per keystroke would run between keystrokes (its encoding and
// read-back on the main thread, its result one more frame to lay out and paint) and delay the
// next one's redraw: a check starts once no newer job has come for QUIET_MS, after a paint.
const QUIET_MS = 150;

// A queue of one: push() replaces a job that has not started; work(job) runs for the newest one,
// each start after the pushes have paused and the next paint, so a keystroke's redraw is on screen
// before the GPU work (uploads, encoding) begins. drop() or canRun() false forgets what is pending.
function newestAfterPaint(work, canRun) {
  let job = null, running = false, pushed = 0;
  const settled = () => new Promise((resolve) => {
    const wait = () => {
      const left = pushed + QUIET_MS - performance.now();
      if (left > 0) setTimeout(wait, left);
      else afterPaint(resolve);
    };
    wait();
  });
  async function drain() {
    await settled();
    while (job && canRun()) {
      const next = job;
      job = null;
      await work(next);
      if (job) await settled();   // a newer job came in meanwhile: its redraw first
    }
    job = null;
    running = false;
  }
  return {
    push(next) {
      job = next;
      pushed = performance.now();
      if (running) return;   // the running loop takes the newest job when it is done
      running = true;
      drain();
    },
    drop() { job = null; },
    idle: () => !running && !job,
  };
}

// els: {radios: [wasm, webgpu], name, adapter, notice, compare, diff, wasmTime, gpuTime}
// The adapter is asked for at once (the radio and the adapter's name need it); the device and its
// pipelines only when WebGPU is wanted: a reader who chose WASM never pays for the shader compiles
// (on SwiftShader seconds of the CPU the page runs on), and one who switches later waits for them once.
export function createBackend(core, els, onChoice) {
  let adapter = null;
  let gpu = null;
  let starting = null;      // GpuAttention.create() in flight or done
  let path = null;          // gpu/attention-gpu.js, once loaded
  let unavailable = null;   // why WebGPU cannot be used (no adapter, lost, failed): () => text, re-read per render for the language
  let wanted = 'auto';
  let last = null;          // {diff, wasmMs, gpuMs, module}
  let calls = 0;            // compare() calls so far: a check shows its result only if none came after it

  const active = () => (wanted !== 'wasm' && gpu && !unavailable ? 'webgpu' : 'wasm');
  // WebGPU wanted and its start-up still compiling: the radio shows the choice, the notice why WASM computes meanwhile.
  const pending = () => wanted !== 'wasm' && !gpu && !unavailable && !!starting;

  function render(extra = '') {
    const isGpu = active() === 'webgpu';
    const name = adapter && adapterName(adapter);
    setText(els.name, isGpu ? t('backend.webgpuName', { adapter: name }) : WASM);
    setAttr(els.name, 'data-backend', active());
    els.radios[0].checked = !isGpu && !pending();
    els.radios[1].checked = isGpu || pending();
    const off = !adapter || !!unavailable;
    if (els.radios[1].disabled !== off) els.radios[1].disabled = off;
    setText(els.adapter, adapter ? t('backend.adapter', { adapter: name }) : '');
    setText(els.notice, unavailable ? t('backend.unavailable', { reason: unavailable(), wasm: WASM })
      : pending() ? t('backend.starting', { adapter: name, wasm: WASM }) : extra);
    setHidden(els.compare, !isGpu || !last);
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

  const onLost = (e) => { if (gpu) fail(() => t('backend.lost', { reason: e.message || e.reason || t('backend.unknownReason') })); };
  const whyNot = (e) => { unavailable = () => (e.key ? t(e.key) : e.message); };
  // The device and pipelines, once; when they are there, the page recomputes so the check runs.
  function start() {
    starting ??= loadGpuPath().then((m) => { path = m; return m.GpuAttention.create({ adapter, onLost }); })
      .then((g) => { gpu = g; }, whyNot).finally(render);
    return starting;
  }
  const probe = gpuAdapter().then((a) => { adapter = a; }, whyNot);
  // Settled once the backend is decided: no WebGPU, WASM chosen (setWanted runs before the probe
  // answers), or WebGPU started.
  const ready = probe.then(() => (adapter && wanted !== 'wasm' ? start() : null))
    .finally(() => { render(); document.body.dataset.backendReady = 'true'; });
  // A later choice of WebGPU: start it, then recompute as for any change of backend.
  const want = (v) => {
    wanted = v;
    render();
    if (v !== 'wasm' && adapter && !starting) start().then(() => onChoice?.(active()));
  };

  // One comparison on the GPU, shown in the panel; any failure turns WebGPU off.
  async function check(job) {
    try {
      const { diff, head, gpuMs } = await compareOnGpu(gpu, job);
      // The page moved on while the GPU worked (e.g. to a module without a GPU path, whose notice
      // this would overwrite): the newer call's notice or check stands.
      if (job.call !== calls) return;
      last = { diff, wasmMs: job.wasmMs, gpuMs, module: job.scenario.module, head };
      els.diff.textContent = diff.toExponential(2);
      els.diff.dataset.value = String(diff);
      els.wasmTime.textContent = t('backend.ms', { ms: job.wasmMs.toFixed(2) });
      els.gpuTime.textContent = t('backend.gpuMs', { ms: gpuMs.toFixed(2) });
      render(t('backend.compared', head));
    } catch (e) {
      fail(() => t('backend.failed', { message: e.message }));
    }
  }
  const queue = newestAfterPaint(check, () => active() === 'webgpu');

  for (const radio of els.radios) {
    radio.addEventListener('change', () => {
      if (!radio.checked) return;
      want(radio.value);
      onChoice?.(active());
    });
  }

  return {
    ready,
    active,
    setWanted: want,
    wanted: () => wanted,
    // The WASM result of a recompute (run with return_inputs and return_params): compare it on
    // the GPU when WebGPU is active. selection {b, h}: the batch item and head the page displays,
    // whose weights are compared; call again when it changes.
    compare(scenario, result, wasmMs, selection = { b: 0, h: 0 }) {
      calls += 1;
      if (active() !== 'webgpu') { render(); return; }
      const support = path.gpuSupport(scenario, result);
      if (!support.ok) {
        queue.drop();   // a pending check of the previous module would overwrite this notice
        last = null;
        render(t('backend.wasmOnly', { module: scenario.module, wasm: WASM, reason: support.reason }));
        return;
      }
      queue.push({ scenario, result, wasmMs, selection, call: calls });
    },
    needsParams: () => active() === 'webgpu',
    gpu: () => gpu,
    last: () => last,
    idle: () => queue.idle(),
  };
}
