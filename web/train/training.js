// The page's side of training mode (docs/training.md): the Web Worker that trains
// (train/worker.js; its header documents the protocol) and the run as it arrives — losses,
// accuracies, snapshots of the sample's attention (typed arrays, transferred) — kept as plain data
// for the views. No DOM: train-page.js wires it to the state and draws it.

// Snapshots kept for the scrubber; beyond this every other one is dropped (the first and the
// latest stay), so a long run keeps its whole span at a coarser grain and memory stays bounded.
const HISTORY_CAP = 1000;

// run: {task (the worker's task info: id, vocab, length, sample, nameKey, ...), config (resolved),
// step, loss, losses (Float32Array, grown), count (losses held), accuracies [{step, heldoutAccuracy,
// trainAccuracy}], snapshots [{step, loss, attention, logits, predictions, scores, heads, length}],
// stepsPerSecond, running, status: 'loading' | 'ready' | 'running' | 'paused' | 'done' | 'error' |
// 'failed' (no worker), error {message, field} | null, invalid {message, field} | null (a config the
// worker refused: the run shown is the previous one)}.
function emptyRun() {
  return { task: null, config: null, step: 0, loss: NaN, losses: new Float32Array(1024), count: 0, accuracies: [],
    snapshots: [], stepsPerSecond: 0, threads: null, running: false, status: 'loading', error: null, invalid: null };
}

function appendLosses(run, fresh) {
  if (run.count + fresh.length > run.losses.length) {
    const grown = new Float32Array(Math.max(run.losses.length * 2, run.count + fresh.length));
    grown.set(run.losses.subarray(0, run.count));
    run.losses = grown;
  }
  run.losses.set(fresh, run.count);
  run.count += fresh.length;
}

function keepSnapshot(run, snapshot) {
  run.snapshots.push(snapshot);
  if (run.snapshots.length > HISTORY_CAP) run.snapshots = run.snapshots.filter((_, i, all) => i % 2 === 0 || i === all.length - 1);
}

// The worker's messages into the run; returns what changed ('ready', 'progress', 'snapshot',
// 'stopped', 'error') for the page to react to.
function apply(run, msg, configuring) {
  switch (msg.type) {
    case 'ready':
      Object.assign(run, emptyRun(), { task: msg.task, config: msg.config, status: 'ready' });
      keepSnapshot(run, msg.snapshot);
      return 'ready';
    case 'progress':
      appendLosses(run, msg.losses);
      run.accuracies.push(...msg.accuracies);
      Object.assign(run, { step: msg.step, loss: msg.loss, running: msg.running });
      // The speed while running; a stop's last stretch (often a few ms) would understate it.
      if (msg.running) Object.assign(run, { status: 'running', stepsPerSecond: msg.stepsPerSecond, threads: msg.threads });
      return 'progress';
    case 'snapshot':
      keepSnapshot(run, msg);
      return 'snapshot';
    case 'stopped':
      // 'done' is the worker's "the steps asked for are done": after Step once, a pause.
      Object.assign(run, { running: false, step: msg.step, status: msg.reason === 'done' && msg.step < run.config.steps ? 'paused' : msg.reason });
      return 'stopped';
    case 'error': {
      const error = { message: msg.message, field: msg.field };
      if (configuring && msg.field && msg.field !== 'loss') run.invalid = error;
      else run.error = error;
      return 'error';
    }
    default:
      return null;
  }
}

// onUpdate(kind, run): after each message (kind as apply returns it). createWorker: for tests.
export function createTraining({ onUpdate, createWorker = () => new Worker(new URL('./worker.js', import.meta.url), { type: 'module' }) }) {
  const run = emptyRun();
  let worker = null;
  let configuring = false;   // a config sent and not yet answered (its errors are the config's)
  const exports = [];        // resolvers of export() calls, answered in order
  let lastYield = 0;

  function start() {
    worker = createWorker();
    worker.onmessage = ({ data }) => {
      if (data.type === 'exported') { exports.shift()?.resolve(data); return; }
      const wasConfiguring = configuring;
      const kind = apply(run, data, configuring);
      if (kind === 'ready' || kind === 'error') configuring = false;
      if (kind === 'error' && !wasConfiguring && !data.field) exports.shift()?.reject(new Error(data.message));
      if (kind) onUpdate(kind, run);
    };
    worker.onerror = (e) => {
      Object.assign(run, { status: 'failed', running: false, error: { message: e.message || 'the training worker could not start', field: null } });
      onUpdate('error', run);
    };
  }

  const post = (msg) => { if (!worker) start(); worker.postMessage(msg); };
  return {
    run,
    // A new run from these settings (state.js trainSettings): the first one loads the worker.
    configure(settings) {
      configuring = true;
      run.invalid = null;
      run.error = null;
      post({ type: worker ? 'reset' : 'init', config: settings });
    },
    // Train until the run's steps are done; the buttons follow at once (the worker's first
    // progress comes 50 ms later).
    train() {
      post({ type: 'run' });
      Object.assign(run, { running: true, status: 'running' });
    },
    pause: () => post({ type: 'pause' }),
    stepOnce: () => post({ type: 'step', n: 1 }),
    // The reader is typing or scrolling: the worker trains slower for `ms` (at most one message
    // every 100 ms; none when not running).
    yieldFor(ms) {
      const t = Date.now();
      if (!worker || !run.running || t - lastYield < 100) return;
      lastYield = t;
      worker.postMessage({ type: 'yield', ms });
    },
    // A snapshot of the model as it is now (the worker skips it when it has sent this step's).
    snapshot: () => post({ type: 'snapshot' }),
    // The weights (.safetensors bytes) and the run (JSON data) as they are now.
    export: () => new Promise((resolve, reject) => { exports.push({ resolve, reject }); post({ type: 'export' }); }),
    // Training mode closed: the worker and its WASM instance go.
    stop() {
      worker?.terminate();
      worker = null;
      exports.splice(0).forEach((e) => e.reject(new Error('training closed')));
      Object.assign(run, emptyRun());
    },
    get active() { return !!worker; },
  };
}
