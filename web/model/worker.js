// "Open a model"'s Web Worker (model/mode.js): owns the full-speed WASM core (the page's small build
// has no model folders) and one checkpoint at a time, read by loader.js (checked by the core from
// config.json, the index and the headers, then streamed into the module's parameters: a model takes
// about its float32 size in the heap) and built once as a session (the core's Trainer: its forward
// runs the same module again on each new sentence). createModelController (exported) is the protocol
// without the worker, for Node tests.
//
// Page -> worker (each with an id; the answer carries it)
//   {type: 'open', source: {url, base} | {files: [{file, path}]} | {label, bytes: {name: Uint8Array}}}
//       the folder read, checked and built; progress on the way; the previous model stays until this
//       one is built (and stays if it fails). Answers 'opened' {info: {label, model_type, module, config,
//       layers, heads, kvHeads, parameters, f32_bytes, block, vocab, tokenizer, ms, heapBytes}}
//   {type: 'cancel'}   the open under way stops (it answers an error named AbortError)
//   {type: 'run', text, ablate?: [[layer, head]] (heads switched off: their outputs zeroed)}
//       answers 'ran' {ids, pieces, T, layers, heads, maps (Float32Array [layer][head][T][T]),
//       next: [{id, piece, prob}] (the five likeliest tokens after the last), ms}
//   {type: 'lens', text, ablate?}
//       the logit lens at the sentence's last token: 'lensed' {ids, readouts: [{step, layer (null: the
//       embeddings), after ('embed' | 'attn' | 'mlp'), top: [{id, piece, prob}]}] (each point where
//       the residual stream leaves a block, read out by the final norm and the unembedding), ms}
//   {type: 'patch', text, corrupt, ablate?}
//       the sentence (clean) and the corrupted sentence (the same number of tokens) as two rows of one
//       forward; answer = the clean sentence's likeliest next token, wrong = the corrupted one's (its
//       clean runner-up when both agree); metric logit[answer] - logit[wrong] at the last token. Every
//       head's output patched from the clean run into the corrupted one (the core recomputes what lies
//       after it), the same estimated by attribution patching, and the clean run's direct logit
//       attribution per head: 'patched' {ids, corruptIds, pieces, corruptPieces, token: {id, piece,
//       prob}, wrong: {id, piece}, clean_metric, corrupted_metric, effect, estimate, dla (Float32Array
//       [layer][head]: metric - corrupted_metric, the estimate, each head's share of the metric),
//       dla_total, others: [{name, value}] (the embeddings, MLPs and biases' shares), ms}
//   {type: 'generate', text, n, ablate?}
//       n greedy tokens after the text (the prompt's forward, then one decode step per token on the
//       KV cache): 'generated' {ids, pieces (the new tokens'), text (the whole), room (the positions
//       the sentence and its continuation may fill), ms}
// Worker -> page: {type: 'progress', id, phase, file, loaded, total, bytesPerSecond, secondsLeft}
// while opening; the answers; or {type: 'error', id, message, field, name}.
import { pretrainedPlan, readModel, reserveHeap, sessionGenerator, setInterventions, setMemoryBudget, streamedWeights } from '../../bindings/pretrained.mjs';
import { loadTokenizer } from '../../bindings/tokenizer.mjs';
import { errorMessage, inOrder, loadWorkerCore, serve } from '../app/worker-host.js';
import { bytesSource, fileSource, openFolder, urlSource } from './loader.js';

export const MAX_TOKENS = 128;   // the sentence's tokens the page draws (every layer x head as T x T)
const TOP = 5;
// Room beside the weights for a sentence's forward (GPT-2 small at 128 tokens: 26 MB of logits, 9 MB
// of attention maps, the layers' activations), reserved with them so the heap grows once.
const HEADROOM = 64 << 20;
// The core's own budget of tensors alive at once (core/base/tensor.hpp), and the weights a folder
// may have when the page does not say (mode.js PAGE_MAX_BYTES).
const BUDGET = 768 << 20, DEFAULT_MAX_BYTES = 640 << 20;

const archOf = (module, c) => module === 'GPT'
  ? { layers: c.n_layer, heads: c.n_head, kvHeads: c.n_head, block: c.block_size, vocab: c.vocab_size }
  : { layers: c.num_hidden_layers, heads: c.num_attention_heads, kvHeads: c.num_key_value_heads, block: c.max_position_embeddings, vocab: c.vocab_size };

// A folder without tokenizer files (and not GPT-2, whose ranks ship with the page): the sentence is
// typed as token ids, "15496 995".
const idsTokenizer = {
  kind: null,
  encode(text) {
    const parts = text.trim().split(/[\s,]+/).filter(Boolean);
    const ids = parts.map(Number);
    const bad = parts.find((p, i) => !Number.isInteger(ids[i]) || ids[i] < 0);
    if (bad !== undefined) throw Object.assign(new Error(`"${bad}" is not a token id: this folder has no tokenizer (tokenizer.json, or vocab.json + merges.txt), so type the sentence as ids, as "1 9 33"`), { field: 'text' });
    return ids;
  },
  pieces: (ids) => ids.map((id) => `#${id}`),   // (a context changes nothing)
};

// Each token's text for the chips and the maps' axes; one that adds no text (a character's first
// bytes, a leading ▁ the decoder strips) as its vocabulary string ('<0xF0>', '▁') or its id.
function labels(model, ids, context) {
  return model.tokenizer.pieces(ids, context).map((p, i) => p || model.tokenizer.token?.(ids[i]) || `#${ids[i]}`);
}

// The sentence as ids, checked against the open model: some tokens, at most what the page draws, in
// the vocabulary. `field` names the input a refusal points at (the sentence, or the corrupted one).
function tokens(model, text, field = 'text') {
  if (!model) throw Object.assign(new Error('no model is open: open a folder or a URL first'), { field: 'pretrained' });
  const which = field === 'text' ? 'the sentence' : 'the corrupted sentence';
  let ids;
  try {
    ids = model.tokenizer.encode(text);
  } catch (e) {
    throw Object.assign(e, { field });
  }
  if (ids.length === 0) throw Object.assign(new Error(`${which} "${text}" gives no tokens`), { field });
  const max = Math.min(MAX_TOKENS, model.info.block);
  if (ids.length > max) throw Object.assign(new Error(`${which} has ${ids.length} tokens: the page draws at most ${max} (${model.info.block} fit the model, ${MAX_TOKENS} the page's maps)`), { field });
  const big = ids.find((id) => id >= model.info.vocab);
  if (big !== undefined) throw Object.assign(new Error(`token id ${big} is past the model's vocabulary (${model.info.vocab} tokens, ids 0 to ${model.info.vocab - 1})`), { field });
  return ids;
}

function softmaxTop(logits, k) {
  let max = -Infinity;
  for (const v of logits) if (v > max) max = v;
  let sum = 0;
  for (const v of logits) sum += Math.exp(v - max);
  const order = Array.from(logits.keys()).sort((a, b) => logits[b] - logits[a]).slice(0, k);
  return order.map((id) => ({ id, prob: Math.exp(logits[id] - max) / sum }));
}

// A folder into a new session {info, session, tokenizer, input} (a refused or cancelled one frees its module).
async function openModel(core, msg, { signal, post, now }) {
  const t0 = now(), src = msg.source;
  const source = src.url ? urlSource(src.url, src.base, signal) : src.files ? fileSource(src.files) : bytesSource(src.label, src.bytes);
  let session = null, input = null, tokenizer = null;
  const plan = (args) => pretrainedPlan(core, args);
  // the tokenizer first (a broken tokenizer.json is said before the weights come), then the module
  const build = async ({ label, files: given, sizes, plan: listed }) => {
    const files = (name) => given[name] ?? null;
    // GPT-2's own ranks (shipped with the page) for a gpt2 folder of GPT-2's vocabulary without tokenizer files
    const ranks = listed.model_type === 'gpt2' && listed.config.vocab_size === 50257;
    tokenizer = ranks || files('tokenizer.json') || (files('vocab.json') && files('merges.txt'))
      ? await loadTokenizer(files, ranks ? 'gpt2' : listed.model_type) : idsTokenizer;
    input = core.modules().find((m) => m.id === listed.module).inputs[0].name;
    // the heap grown once for the weights and a sentence's activations (see HEADROOM); the core's
    // budget (768 MiB of tensors) widened for the open model, this one and the activations
    reserveHeap(core, core.heapUsed() + listed.f32_bytes + HEADROOM);
    setMemoryBudget(core, BUDGET + 2 * (msg.maxBytes ?? DEFAULT_MAX_BYTES));
    // greedy generation with the KV cache on the same module (the page's Continue)
    session = core.trainer({ pretrained: label, inputs: [{ name: input, shape: [1, 1], data: [0] }], generate: { max_new_tokens: MAX_TOKENS, temperature: 0 } },
      { files: given, sizes });
    return streamedWeights(session);
  };
  try {
    const folder = await openFolder(source, { plan, build, signal, maxBytes: msg.maxBytes, onProgress: (p) => post({ type: 'progress', id: msg.id, ...p }) });
    const info = { label: folder.label, model_type: folder.plan.model_type, module: folder.plan.module, config: folder.plan.config,
      ...archOf(folder.plan.module, folder.plan.config), parameters: folder.plan.parameters, f32_bytes: folder.plan.f32_bytes,
      tokenizer: tokenizer.kind, ms: now() - t0, heapBytes: core.heapBytes(), threads: core.threads?.() ?? 1 };
    const opened = { info, session, tokenizer, input };
    session = null;
    return opened;
  } finally {
    session?.delete();
  }
}

// The heads switched off ([[layer, head]]: their outputs zeroed) in the model's next forwards.
// The step holding layer l's heads' outputs (the `heads` dim a switch-off or a patch selects); l = '*'
// gives the pattern of every layer's.
const headStep = (model, l) => (model.info.module === 'GPT' ? `transformer.h.${l}.attn.y` : `model.layers.${l}.self_attn.attn_output_heads`);

function switchOff(model, ablate = []) {
  const key = JSON.stringify(ablate);
  if (key === model.ablated) return;
  setInterventions(model.session, ablate.map(([l, h]) => ({ step: headStep(model, l), head: h, set: 'zero' })));
  model.ablated = key;
}

// The sentence through the model: 'ran' {ids, pieces, T, layers, heads, maps, next}.
function runSentence(model, text, ablate) {
  const ids = tokens(model, text);
  switchOff(model, ablate);
  model.session.setInput(model.input, Float32Array.from(ids), [1, ids.length]);
  const r = model.session.forward({ trace: false });   // outputs: logits, then attention_weights [layer, 1, head, T, T]
  const T = ids.length, { layers, heads, vocab } = model.info;
  const maps = r.outputs.find((o) => o.name === 'attention_weights').data;
  const next = softmaxTop(r.outputs[0].data.subarray((T - 1) * vocab, T * vocab), TOP).map((x) => ({ ...x, piece: labels(model, [x.id], ids)[0] }));
  return { ids, pieces: labels(model, ids), T, layers, heads, maps, next };
}

// Where a readout of the logit lens sits: GPT's transformer.h.{l}.x_attn / x_mlp, Llama's
// model.layers.{l}.residual_attn / residual_mlp, else the embeddings.
function readout(step) {
  const m = /\.(\d+)\.(?:x|residual)_(attn|mlp)$/.exec(step);
  return m ? { layer: Number(m[1]), after: m[2] } : { layer: null, after: 'embed' };
}

// The logit lens at the sentence's last token (one forward read by the core: Session::read).
function lensSentence(model, text, ablate) {
  const ids = tokens(model, text);
  switchOff(model, ablate);
  model.session.setInput(model.input, Float32Array.from(ids), [1, ids.length]);
  const { logit_lens: lens } = readModel(model.session, { logit_lens: true }, { position: -1, top: TOP });
  const readouts = lens.map((e) => ({ step: e.step, ...readout(e.step), top: e.top.map((x) => ({ ...x, piece: labels(model, [x.id], ids)[0] })) }));
  return { ids, readouts };
}

// Clean and corrupted sentences, every head patched: 'patched' (see the protocol above).
function patchSentences(model, text, corrupt, ablate) {
  const clean = tokens(model, text), bad = tokens(model, corrupt, 'ptcorrupt');
  if (bad.length !== clean.length) {
    throw Object.assign(new Error(`the corrupted sentence has ${bad.length} tokens and the sentence ${clean.length}: patching moves each head's output position by position, so both need the same number of tokens`), { field: 'ptcorrupt' });
  }
  switchOff(model, ablate);
  const T = clean.length, { layers, heads, vocab: V } = model.info;
  model.session.setInput(model.input, Float32Array.from([...clean, ...bad]), [2, T]);
  const logits = model.session.forward({ trace: false }).outputs[0].data;
  const last = (row) => softmaxTop(logits.subarray((row * T + T - 1) * V, (row * T + T) * V), 2);
  const [a, b] = [last(0), last(1)];
  const token = a[0].id, wrong = b[0].id !== token ? b[0].id : a[1].id;
  const patch = { clean: 0, corrupted: 1, steps: [headStep(model, '*')], by: 'head', metric: { kind: 'logit_diff', position: -1, token, wrong } };
  const r = readModel(model.session, { patching: patch, attribution_patching: patch, logit_attribution: { position: -1, token, wrong, batch: 0 } });
  const layerOf = (name) => Number(/\.(\d+)\./.exec(name)[1]);
  const effect = new Float32Array(layers * heads), estimate = new Float32Array(layers * heads), dla = new Float32Array(layers * heads);
  for (const c of r.patching.cells) effect[layerOf(c.step) * heads + c.head] = c.metric - r.patching.corrupted_metric;
  for (const c of r.attribution_patching.cells) estimate[layerOf(c.step) * heads + c.head] = c.estimate;
  const others = [];
  for (const c of r.logit_attribution.components) {
    const m = /\.(\d+)\.(?:self_)?attn\.head\.(\d+)$/.exec(c.name);
    if (m) dla[Number(m[1]) * heads + Number(m[2])] = c.value;
    else others.push(c);
  }
  const piece = (id) => labels(model, [id], clean)[0];   // as it would print after the sentence
  return { ids: clean, corruptIds: bad, pieces: labels(model, clean), corruptPieces: labels(model, bad), layers, heads,
    token: { id: token, piece: piece(token), prob: a[0].prob }, wrong: { id: wrong, piece: piece(wrong) },
    clean_metric: r.patching.clean_metric, corrupted_metric: r.patching.corrupted_metric, effect, estimate, dla, dla_total: r.logit_attribution.total, others };
}

// n greedy tokens after the sentence: the prompt's forward, then one decode step per token on the KV cache.
function continueSentence(model, text, n, ablate) {
  const prompt = tokens(model, text);
  switchOff(model, ablate);
  const room = Math.min(MAX_TOKENS, model.info.block);
  const count = Math.max(0, Math.min(n, room - prompt.length));
  model.session.setInput(model.input, Float32Array.from(prompt), [1, prompt.length]);
  const gen = sessionGenerator(model.session, Math.max(1, count));
  let ids;
  try {
    for (let i = 0; i < count; i++) gen.next();
    ids = gen.ids[0];
  } finally {
    gen.delete();
  }
  const added = ids.slice(prompt.length);
  return { ids: added, room, pieces: labels(model, added, prompt), text: model.tokenizer.decode ? model.tokenizer.decode(ids) : model.tokenizer.pieces(ids).join(' ') };
}

// The threaded build on every core where the page is cross-origin isolated (a checkpoint's forwards
// and patching sweeps are large: docs/threads.md), else the single-thread full build.
export function createModelController({ post, loadCore = () => loadWorkerCore({ threads: true }), now = () => performance.now() }) {
  let core = null, model = null, opening = null;   // model: {info, session, tokenizer, input}

  async function answer(msg) {
    const { id } = msg, t0 = now();
    if (msg.type === 'open') {
      const abort = new AbortController();
      opening = abort;
      try {
        const opened = await openModel(core, msg, { signal: abort.signal, post, now });
        model?.session.delete();   // the open model goes only once the new one is built
        model = opened;
        post({ type: 'opened', id, info: model.info });
      } finally {
        if (opening === abort) opening = null;
      }
    } else if (msg.type === 'run') {
      const r = runSentence(model, msg.text, msg.ablate);
      post({ type: 'ran', id, ...r, ms: now() - t0 }, [r.maps.buffer]);
    } else if (msg.type === 'lens') {
      post({ type: 'lensed', id, ...lensSentence(model, msg.text, msg.ablate), ms: now() - t0 });
    } else if (msg.type === 'patch') {
      const r = patchSentences(model, msg.text, msg.corrupt, msg.ablate);
      post({ type: 'patched', id, ...r, ms: now() - t0 }, [r.effect.buffer, r.estimate.buffer, r.dla.buffer]);
    } else if (msg.type === 'generate') {
      post({ type: 'generated', id, ...continueSentence(model, msg.text, msg.n, msg.ablate), ms: now() - t0 });
    }
  }
  const queued = inOrder(async (msg) => {
    try {
      core ??= await loadCore();
      await answer(msg);
    } catch (e) {
      post({ ...errorMessage(e), id: msg.id, name: e?.name ?? null });
    }
  }, post);
  // a cancel acts at once (the open it stops is the message under way) and is answered, so the
  // page knows this worker reads its messages; the rest in order
  const cancel = () => { opening?.abort(); post({ type: 'cancelled' }); };
  return { handle: (msg) => (msg.type === 'cancel' ? cancel() : queued(msg)) };
}

serve(createModelController);
