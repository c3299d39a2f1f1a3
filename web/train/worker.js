// The training Web Worker: owns its WASM core and one engine (engine.js): step 0 on the page's own
// build (no download of its own on a page's first view), the training on the fast build, loaded at
// the first run or step (app/worker-host.js; the same numbers to the bit),
// runs steps in ~16 ms chunks so a pause lands within one chunk, and sends the page progress and
// snapshots (typed arrays transferred). Start it with
//   new Worker(new URL('./worker.js', import.meta.url), {type: 'module'})
// createTrainController (exported) is the whole protocol without the worker, for Node tests.
//
// Page -> worker
//   {type: 'init', config}     load the page's core (first time only), build an engine from config
//                              (engine.js resolveConfig: {task, seed, model, optimizer, batch, steps,
//                              evalEvery, recordEvery, heldout}; left out = the task's defaults)
//   {type: 'reset', config?}   the same with a new config (default: the current one): step 0 again;
//                              a config the engine refuses gives an error and keeps the engine there was
//   {type: 'run', steps?}      train until `steps` (default config.steps) steps are done, or a pause
//                              (the first run or step loads the fast core and rebuilds step 0 on it)
//   {type: 'pause'}            stop after the current chunk (16 ms of steps, or one step if longer)
//   {type: 'step', n}          train n more steps (default 1) and stop ("Step once")
//   {type: 'yield', ms}        the reader is typing or scrolling: for the next `ms` milliseconds, rest
//                              REST_CHUNKS chunks' time after each chunk (training slows, the page's
//                              main thread gets the CPU: two cores are shared with the browser's own)
//   {type: 'snapshot'}         a snapshot of the model as it is now, unless the last one sent is of
//                              this step (the page asks after a stop, so a pause shows its own step)
//   {type: 'export'}           the weights and the run
// Worker -> page
//   {type: 'ready', config, task, snapshot}    after init/reset; config resolved, task: {id, vocab,
//                                              length, sample: {idx, target}, nameKey, explainKey,
//                                              patternKey, pattern}, snapshot: step 0
//   {type: 'progress', step, loss, stepsPerSecond, threads, running, losses: Float32Array (the losses of the
//    steps since the last progress), accuracies: [{step, heldoutAccuracy, trainAccuracy}] (new)}
//                                              at most every 50 ms while running, and at each stop
//   {type: 'snapshot', step, loss, attention: [Float32Array (1,H,T,T) per layer], logits, predictions,
//    scores: [[{previous, self, offset, bestOffset, antiDiagonal, induction, source} per head] per layer],
//    heads, length}                            every recordEvery steps (the page keeps the history),
//                                              and when asked
//   {type: 'stopped', step, reason: 'paused' | 'done' | 'error'}   'done': the steps asked for are done
//   {type: 'error', message, field}            field: the config field at fault (task, seed, batch,
//                                              model.emb_dim, optimizer.lr, ...), 'loss' when the
//                                              model diverged, or null
//   {type: 'exported', safetensors: Uint8Array, run}     (.safetensors bytes, engine.exportRun())
import { errorMessage, inOrder, loadPageCore, loadWorkerCore, serve } from '../app/worker-host.js';
import { createEngine, gainsFromThreads } from './engine.js';

const CHUNK_MS = 16;       // work per turn of the message loop: a pause waits at most this long
const REST_CHUNKS = 2;     // while the page yields: rest this many chunks' time after each one
const PROGRESS_MS = 50;    // progress at most 20 times a second

// What the page needs to draw a task, as plain data.
function taskInfo(task) {
  const { id, vocab, length, nameKey, explainKey, patternKey, pattern } = task;
  return { id, vocab, length, nameKey, explainKey, patternKey, pattern,
    sample: { idx: Array.from(task.sample.idx), target: Array.from(task.sample.target) } };
}

const snapshotMessage = (s) => ({ type: 'snapshot', ...s });
const transfers = (s) => [...s.attention.map((a) => a.buffer), s.logits.buffer, s.predictions.buffer];

// Progress for the page, at most every PROGRESS_MS unless forced: the losses and accuracies the
// engine recorded since the last one, and the speed over that stretch.
function progressReporter(post, now) {
  let sentLosses = 0, sentAccuracies = 0, last = { time: 0, step: 0 };
  return {
    restart(engine, fromScratch) {
      if (fromScratch) sentLosses = sentAccuracies = 0;
      last = { time: now(), step: engine.steps };
    },
    send(engine, running, force) {
      const t = now();
      if (!force && t - last.time < PROGRESS_MS) return;
      const { losses, accuracies } = engine.history;
      const dt = (t - last.time) / 1000;
      const stepsPerSecond = dt > 0 ? (engine.steps - last.step) / dt : 0;
      const fresh = Float32Array.from(losses.slice(sentLosses));
      post({ type: 'progress', step: engine.steps, loss: engine.loss, stepsPerSecond, threads: engine.threads, running, losses: fresh,
        accuracies: accuracies.slice(sentAccuracies) }, [fresh.buffer]);
      sentLosses = losses.length;
      sentAccuracies = accuracies.length;
      last = { time: t, step: engine.steps };
    },
  };
}

// The weights (.safetensors bytes) and the run, for the page's export.
function exportAll(engine, post) {
  if (!engine) throw new Error('send init before export');
  const safetensors = engine.exportSafetensors();
  post({ type: 'exported', safetensors, run: engine.exportRun() }, [safetensors.buffer]);
}

// The cores an engine is built on: current() is the page's until upgrade(engine) has loaded the
// fast one (threaded where the model's steps gain from threads: engine.js gainsFromThreads) and
// rebuilt `engine` on it, at step 0 (what init built on the page's core: a seeded build, so the
// same model to the bit). upgrade answers with the new engine when the core changed, else null.
function coreLoader(loadCore, loadFastCore) {
  let core = null, fastThreads = null;  // null: still on the page's core
  return {
    async current() { return (core ??= await loadCore()); },
    async upgrade(engine) {
      const threads = gainsFromThreads(engine.config);
      if (fastThreads === threads) return null;
      const next = await loadFastCore({ threads });
      fastThreads = threads;
      if (next === core) return null;
      core = next;
      const rebuilt = createEngine(core, engine.settings);
      engine.delete();
      rebuilt.history.snapshots.length = 0;   // step 0 was sent by init
      return rebuilt;
    },
  };
}

// post(message, transfer) sends to the page; schedule(fn) runs fn on a later turn of the loop;
// delay(fn, ms) runs it after ms (a rest while the page yields). loadCore: the core step 0 is
// built on; loadFastCore: the one training runs on (the same one when the caller gives only loadCore).
export function createTrainController({ post, loadCore = loadPageCore, loadFastCore = loadCore === loadPageCore ? loadWorkerCore : loadCore,
  now = () => performance.now(), schedule, delay = (fn, ms) => setTimeout(fn, ms) }) {
  const cores = coreLoader(loadCore, loadFastCore);
  let engine = null, running = false, target = 0, loop = 0, lastSent = -1, restUntil = 0;
  const progress = progressReporter(post, now);

  function sendSnapshot(s) {
    lastSent = s.step;
    post(snapshotMessage(s), transfers(s));
  }

  const sendSnapshots = () => engine.history.snapshots.splice(0).forEach(sendSnapshot);

  function snapshotNow() {
    if (!engine) throw new Error('send init before snapshot');
    if (lastSent !== engine.steps) sendSnapshot(engine.snapshot());
  }

  function stop(reason) {
    running = false;
    loop++;  // a chunk already scheduled finds itself stale and does nothing
    progress.send(engine, false, true);
    post({ type: 'stopped', step: engine.steps, reason });
  }

  // One turn: steps for CHUNK_MS (at least one), then what the page should hear, then yield.
  function chunk(id) {
    if (id !== loop || !running) return undefined;
    const t0 = now();
    try {
      do engine.step(1); while (engine.steps < target && now() - t0 < CHUNK_MS);
    } catch (e) {
      sendSnapshots();
      post(errorMessage(e));
      return stop('error');
    }
    sendSnapshots();
    if (engine.steps >= target) return stop('done');
    progress.send(engine, true, false);
    if (now() < restUntil) return delay(() => chunk(id), REST_CHUNKS * CHUNK_MS);
    return schedule(() => chunk(id));
  }

  async function start(until) {
    if (!engine) throw new Error('send init before run or step');
    engine = (await cores.upgrade(engine)) ?? engine;   // the first run or step: on the fast core
    target = until;
    if (engine.steps >= target) return stop('done');
    if (!running) {
      running = true;
      progress.restart(engine, false);
      const id = ++loop;
      schedule(() => chunk(id));
    }
    return undefined;
  }

  async function init(config) {
    running = false;
    loop++;
    const next = createEngine(await cores.current(), config ?? {});  // a bad config throws here and keeps the old engine
    engine?.delete();
    engine = next;
    progress.restart(engine, true);
    const [first] = engine.history.snapshots.splice(0);
    lastSent = first.step;
    post({ type: 'ready', config: engine.config, task: taskInfo(engine.task), snapshot: first }, transfers(first));
  }

  async function dispatch(msg) {
    switch (msg?.type) {
      case 'init': return init(msg.config);
      case 'reset': return init(msg.config ?? engine?.settings);
      case 'run': return start(msg.steps ?? engine?.config.steps);
      case 'pause': return running ? stop('paused') : undefined;
      case 'step': return start((engine?.steps ?? 0) + (msg.n ?? 1));
      case 'snapshot': return snapshotNow();
      case 'yield': restUntil = now() + (msg.ms ?? 0); return undefined;
      case 'export': return exportAll(engine, post);
      default: throw new Error(`unknown message type "${msg?.type}"`);
    }
  }

  // Messages are handled in order: a run sent right after init waits for the core to load.
  return { handle: inOrder(dispatch, post), get engine() { return engine; }, get running() { return running; } };
}

serve(createTrainController);
