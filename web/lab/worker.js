// Experiments mode's Web Worker: owns the full-speed WASM core (app/worker-host.js: the page's
// small build has no interventions) and one model at a time, and answers each question with the
// core's own numbers (lab.js builds every scenario). createLabController (exported) is the
// protocol without the worker, for Node tests.
//
// Page -> worker (each with an id; the answer carries it)
//   {type: 'load', model: {module, config, seed}, weights: Uint8Array, heldout: {idx, target, shape}}
//       the model and the task's held-out set; answers 'loaded' {layers, heads, scores: [layer][head]
//       pattern scores (train/patterns.js) averaged over the first 64 held-out sequences}
//   {type: 'evaluate', ablated: [[l, h]], mean, input: {idx, target}, pos}
//       answers 'metrics' {accuracy, loss (held-out, the core's cross_entropy), prob (the right next
//       token's at pos, the core's softmax), predicted (argmax id at pos), maps ([layer][head] the
//       input's attention, T x T, unablated), ms (the press's runs)}
//   {type: 'rank', mean}   each head alone switched off: 'ranking' {rows: [{layer, head, accuracy, loss}] ranked, ms}
//   {type: 'analyse', clean, corrupted (ids read), pos, token, wrong}
//       'analysis' {heads: {patching, attribution_patching}, residual: {...}, lens: [{step, top, prob}]
//       (the clean row's top token and its probability at each position), dla: {total, components} | null, ms}
// Worker -> page: those answers, or {type: 'error', id, message, field}.
import { inOrder, loadWorkerCore, serve } from '../app/worker-host.js';
import { accuracy } from '../train/engine.js';
import { scoreLayer } from '../train/patterns.js';
import { analysisScenarios, archOf, evaluationBatch, evaluationScenario, mapsScenario } from './lab.js';

const SCORE_ROWS = 64;

// The mean of scoreLayer over the first `rows` sequences of a traced batch, per layer and head.
function heldOutScores(core, model, weights, held) {
  const arch = archOf(model), T = held.shape[1], rows = Math.min(SCORE_ROWS, held.shape[0]);
  const r = core.run(mapsScenario(model, held.idx.subarray(0, rows * T), [rows, T]), { weights });
  const H = arch.heads;
  return Array.from({ length: arch.layers }, (_, l) => {
    const data = r.steps.find((s) => s.name === arch.weights(l)).data;
    const sum = Array.from({ length: H }, () => ({}));
    for (let b = 0; b < rows; b++) {
      const tokens = Array.from(held.idx.subarray(b * T, (b + 1) * T));
      const targets = Array.from(held.target.subarray(b * T, (b + 1) * T));
      scoreLayer(data.subarray(b * H * T * T, (b + 1) * H * T * T), H, T, { tokens, targets }).forEach((s, h) => {
        for (const [k, v] of Object.entries(s)) if (k !== 'bestOffset') sum[h][k] = (sum[h][k] ?? 0) + v / rows;
      });
    }
    return sum;
  });
}

// Each layer's attention on the input: [layer][head] Float32Array (T x T).
function inputMaps(core, model, weights, idx) {
  const arch = archOf(model), T = idx.length;
  const r = core.run(mapsScenario(model, idx), { weights });
  return Array.from({ length: arch.layers }, (_, l) => {
    const data = r.steps.find((s) => s.name === arch.weights(l)).data;
    return Array.from({ length: arch.heads }, (_, h) => data.slice(h * T * T, (h + 1) * T * T));
  });
}

export function createLabController({ post, loadCore = loadWorkerCore, now = () => performance.now() }) {
  let core = null, lab = null;

  const vocabOf = () => lab.model.config.vocab_size;

  // Held-out accuracy and loss, and the input's row, with these heads switched off.
  function evaluate(ablated, mean, input) {
    const batch = evaluationBatch(lab.held, input);
    const r = core.run(evaluationScenario(lab.model, batch, ablated, mean), { weights: lab.weights });
    const V = vocabOf(), logits = r.outputs[0].data, n = lab.held.shape[0] * lab.held.shape[1];
    return { accuracy: accuracy(logits.subarray(0, n * V), lab.held.target, V), loss: r.loss, logits, inputRow: batch.inputRow };
  }

  async function load(msg) {
    core ??= await loadCore();
    lab = { model: msg.model, weights: msg.weights, held: msg.heldout };
    const arch = archOf(lab.model);
    const t0 = now();
    const scores = heldOutScores(core, lab.model, lab.weights, lab.held);
    post({ type: 'loaded', id: msg.id, layers: arch.layers, heads: arch.heads, scores, ms: now() - t0 });
  }

  function metrics(msg) {
    const t0 = now();
    const e = evaluate(msg.ablated, msg.mean, msg.input);
    const V = vocabOf(), T = msg.input.idx.length;
    let prob = null, predicted = null;
    if (e.inputRow >= 0) {
      const row = e.logits.subarray((e.inputRow * T + msg.pos) * V, (e.inputRow * T + msg.pos + 1) * V);
      const p = core.nextTokenDistribution(row, { temperature: 1 });
      const right = msg.input.target[msg.pos];
      prob = right >= 0 ? p[right] : null;
      predicted = p.indexOf(Math.max(...p));
    }
    const ms = now() - t0;
    const key = msg.input.idx.join();
    if (lab.mapsKey !== key) lab.maps = msg.input.idx.length ? inputMaps(core, lab.model, lab.weights, msg.input.idx) : null;
    lab.mapsKey = key;
    const maps = lab.maps;
    post({ type: 'metrics', id: msg.id, accuracy: e.accuracy, loss: e.loss, prob, predicted, maps, ms });
  }

  function rank(msg) {
    const t0 = now();
    const arch = archOf(lab.model);
    const rows = [];
    const none = { idx: new Float32Array(0) };
    for (let l = 0; l < arch.layers; l++) for (let h = 0; h < arch.heads; h++) {
      const e = evaluate([[l, h]], msg.mean, none);
      rows.push({ layer: l, head: h, accuracy: e.accuracy, loss: e.loss });
    }
    post({ type: 'ranking', id: msg.id, rows, ms: now() - t0 });
  }

  function analyse(msg) {
    const t0 = now();
    const { heads, residual } = analysisScenarios(lab.model, msg.clean, msg.corrupted, msg.pos, msg.token, msg.wrong);
    const a = core.run(heads, { weights: lab.weights });
    const b = core.run(residual, { weights: lab.weights });
    const T = msg.clean.length, V = vocabOf();
    const lens = a.logit_lens.map((e) => {
      const top = [], prob = [];
      for (let i = 0; i < T; i++) {
        const p = core.nextTokenDistribution(e.data.subarray(i * V, (i + 1) * V), { temperature: 1 });
        const best = p.indexOf(Math.max(...p));
        top.push(best);
        prob.push(p[best]);
      }
      return { step: e.step, top, prob };
    });
    post({ type: 'analysis', id: msg.id, heads: { patching: a.patching, attribution_patching: a.attribution_patching },
      residual: { patching: b.patching, attribution_patching: b.attribution_patching }, lens, dla: a.logit_attribution ?? null, ms: now() - t0 });
  }

  function dispatch(msg) {
    switch (msg?.type) {
      case 'load': return load(msg);
      case 'evaluate': return metrics(msg);
      case 'rank': return rank(msg);
      case 'analyse': return analyse(msg);
      default: throw new Error(`unknown message type "${msg?.type}"`);
    }
  }

  // a refusal carries the id of the question it answers (inOrder)
  return { handle: inOrder(dispatch, post) };
}

serve(createLabController);
