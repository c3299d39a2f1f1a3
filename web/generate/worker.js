// Generate mode's Web Worker: owns its WASM core (the fast build: app/worker-host.js) and one
// session at a time, two generators side by side (KV cache on and off: the same seed, so the same
// ids; their logits compared and their time per token measured), and sends every token as it comes.
// The session runs one token ahead: after `n` generated tokens the generators have made n + 1
// forwards, so the newest token's own attention row is known and the bars show what the next
// token is drawn from. createGenerateController (exported) is the protocol without the worker.
//
// Page -> worker
//   {type: 'start', id, spec: {config, seed}, weights: Uint8Array | null, prompt: [ids], settings, maxNew}
//       a new session (the previous one ends): the prompt's forward on both generators
//   {type: 'step', id}      one more token (nothing once maxNew are done)
//   {type: 'run', id}       tokens until maxNew are done or a stop, one per turn of the loop
//   {type: 'stop', id}      stop a run after the token under way
// Worker -> page
//   {type: 'token', id, cached, uncached}   each {id, topIds, topProbs, mode, position, cache, rows, logits, ms}:
//       rows [layer][head] the last query's attention over the window (Float32Array), logits the
//       last position's, ms the forward's time (transferred)
//   {type: 'stopped', id}                   a run ended (maxNew done, or stopped)
//   {type: 'error', id, message, field}     the core refused the scenario (field: "config.n_head", ...)
import { errorMessage, inOrder, loadWorkerCore, serve } from '../app/worker-host.js';
import { generatorScenario } from './model.js';

// The last query row of every layer's attention ([layer][head] -> Float32Array over the window)
// and the last position's logits, from one traced token.
function tokenData(token) {
  const rows = [];
  let logits = null;
  for (const s of token.steps) {
    if (s.name === 'logits') logits = s.data.slice(s.data.length - s.shape.at(-1));
    if (!s.name.endsWith('.attn.att_softmax')) continue;
    const [, H, Tq, Tk] = s.shape;
    rows.push(Array.from({ length: H }, (_, h) => s.data.slice((h * Tq + Tq - 1) * Tk, (h * Tq + Tq) * Tk)));
  }
  return { rows, logits };
}

// One forward of a generator, timed.
function advance(gen, now) {
  const t0 = now();
  const token = gen.next();
  const ms = now() - t0;
  const { rows, logits } = tokenData(token);
  return { id: token.ids[0], topIds: token.top_ids[0], topProbs: token.top_probs[0], mode: token.mode,
    position: token.position, cache: token.cache, rows, logits, ms };
}

const transfers = (tok) => [tok.logits.buffer, ...tok.rows.flat().map((r) => r.buffer)];

// A fresh core's first forwards run code the engine has not optimised yet (both engines compile
// WebAssembly in tiers, the optimised tier as it runs), and whichever generator went first paid
// for it: Chromium showed the first session's cached prefill at 26.5 ms against 10.7 uncached, and
// its decode steps at 6.25 ms against 2.05 in the next session. The first session runs both
// generators a few untimed tokens first, so the times the page shows compare the cache, not the JIT.
const WARM_TOKENS = 4;
function warm(make, maxNew) {
  const gens = make();
  try {
    for (let i = 0; i <= Math.min(WARM_TOKENS, maxNew); i++) for (const g of gens) g.next();
  } finally {
    gens.forEach((g) => g.delete());
  }
}

export function createGenerateController({ post, loadCore = loadWorkerCore, now = () => performance.now(), schedule }) {
  let core = null, session = null, loop = 0;

  function end() {
    loop++;
    if (session) for (const g of session.gens) g.delete();
    session = null;
  }

  function forward() {
    const [cached, uncached] = session.gens.map((g) => advance(g, now));
    session.made++;
    post({ type: 'token', id: session.id, cached, uncached }, [...transfers(cached), ...transfers(uncached)]);
  }

  async function begin(msg) {
    end();
    const fresh = !core;
    core ??= await loadCore();
    const options = msg.weights ? { weights: msg.weights } : {};
    const make = () => [true, false].map((cache) => core.generator(generatorScenario(msg.spec, msg.prompt, msg.settings, msg.maxNew + 1, cache), options));
    let gens = [];
    try {
      if (fresh) warm(make, msg.maxNew);
      gens = make();
    } catch (e) {
      gens.forEach((g) => g.delete());
      post({ ...errorMessage(e), id: msg.id });
      return;
    }
    session = { id: msg.id, gens, made: 0, maxNew: msg.maxNew };
    forward();   // the prompt's window, and the first token's distribution
  }

  const done = () => session.made - 1 >= session.maxNew;

  function run(id) {
    const me = ++loop;
    const turn = () => {
      if (me !== loop || !session || session.id !== id) return;
      if (done()) { post({ type: 'stopped', id }); return; }
      forward();
      schedule(turn);
    };
    turn();
  }

  function dispatch(msg) {
    const current = session && msg.id === session.id;
    switch (msg?.type) {
      case 'start': return begin(msg);
      case 'step': if (current && !done()) forward(); return undefined;
      case 'run': if (current) run(msg.id); return undefined;
      case 'stop': if (current) { loop++; post({ type: 'stopped', id: msg.id }); } return undefined;
      case 'end': return end();
      default: throw new Error(`unknown message type "${msg?.type}"`);
    }
  }

  return { handle: inOrder(dispatch, post) };
}

serve(createGenerateController);
