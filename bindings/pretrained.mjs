// Model folders in JS beyond run(scenario, {files}) (core/SCENARIO.md, "Pretrained"): the checks a
// page makes before it downloads a checkpoint, and a checkpoint streamed into a trainer's module.
// The full build only (loadAttention({fast: true}), the workers' and the CLIs'): the page's small
// build has no model folders. Kept apart from attention.mjs, which is in the page's first view.
//
//   const plan = pretrainedPlan(core, {label, files, sizes, maxBytes, headers})
//   const trainer = core.trainer({pretrained: label, inputs}, {files: headers, sizes})
//   const sink = streamedWeights(trainer); sink.write(i, first, bytes) ...; sink.finish()
import { fieldError, Generation, shown, throwIfFailed } from './attention.mjs';

const full = (core) => {
  if (!core._m.pretrainedPlan) throw fieldError('pretrained', 'this build of the core has no model folders: load the full build (loadAttention({fast: true}))');
  return core._m;
};

// A model folder checked before its weights are fetched: files(name) -> Uint8Array | null gives
// config.json, the shard index and the first bytes of each weight file (at least 8 + its header's
// length); sizes {name: bytes} each weight file's whole size; maxBytes the float32 weights the caller
// can hold. Returns {model_type, module, config, files: [{name, size, header_bytes, tensors}],
// f32_bytes, parameters}; throws the core's message (field "pretrained") for a folder the core would
// refuse. headers: false checks config.json and the index only and lists the weight files ({name}).
export function pretrainedPlan(core, options) {
  if (!options || typeof options !== 'object') throw fieldError('pretrained', `pretrainedPlan: options must be {label?, files, sizes?, maxBytes?, headers?}, got ${shown(options)}`);
  const { label = 'model', files, sizes = {}, maxBytes = 2 ** 31, headers = true } = options;
  // files and sizes reached the core's lookups as they were (null: a TypeError from inside them)
  for (const [name, v] of [['files', files], ['sizes', sizes]])
    if (typeof v !== 'function' && !(v && typeof v === 'object'))
      throw fieldError('pretrained', `pretrainedPlan: ${name} must be {name: ${name === 'files' ? 'Uint8Array' : 'bytes'}} or a function of the file's name, got ${shown(v)}`);
  const out = JSON.parse(full(core).pretrainedPlan(label, files, sizes, maxBytes, headers));
  if (out.error) throw fieldError(out.field || 'pretrained', out.error);
  return out;
}

// Grows the WASM heap by `bytes` at once, before a big model is built into it: grown a tensor at a
// time, the memory overshoots by up to a fifth (Emscripten's geometric growth). False when it cannot.
export const reserveHeap = (core, bytes) => full(core).reserveHeap(bytes);
// The most the heap's allocator has held at once (its max footprint), in bytes.
export const heapPeak = (core) => full(core).heapPeak();
// The bytes the core's tensors may hold at once (768 MiB unless set; a tensor past it is refused
// with a message): a worker keeping one checkpoint while it builds the next needs room for both.
// An Error naming `bytes` unless it is a number >= 0; past 4 GiB, the heap's own limit is the one left.
export const setMemoryBudget = (core, bytes) => {
  if (typeof bytes !== 'number' || !(bytes >= 0)) throw new Error(`setMemoryBudget: bytes (${shown(bytes)}) must be a number of bytes, 0 or more`);
  full(core).setMemoryBudget(bytes);
};

// A trainer built from a folder's headers and sizes: {tensors: [{file, name, dtype, begin, end,
// count}] (byte ranges in each file), write(i, first, bytes) (tensor i's values from value `first`
// on: whole values, each tensor's in order), finish() (throws naming a tensor whose values did not all come)}.
export function streamedWeights(trainer) {
  const t = trainer._t;
  const tensors = JSON.parse(t.streamed());
  return {
    tensors,
    write(i, first, bytes) {
      // the core's int and int64: 1.5 or "x" was cut to a tensor and a value (tensor 0 for "x"), -1 wrapped
      if (!Number.isInteger(i) || i < 0 || i >= tensors.length)
        throw fieldError('weights', `writeWeights: the tensor (${shown(i)}) must be a whole number from 0 to ${tensors.length - 1}, an index into tensors`);
      if (!Number.isSafeInteger(first) || first < 0)
        throw fieldError('weights', `writeWeights: first (${shown(first)}) must be a whole number of values from 0 to 2^53 - 1: the tensor's values before these bytes`);
      if (!t.writeWeights(i, first, bytes)) throwIfFailed(t);
    },
    finish() { if (!t.finishWeights()) throwIfFailed(t); },
  };
}

// The interventions of a trainer's next forwards and generations (core/SCENARIO.md,
// "Interpretability"): [{step, head?, position?, batch?, set}], checked as the scenario's field; [] none.
export function setInterventions(trainer, list) {
  // undefined has no JSON text (Embind refused it as "non-string"): the core names it as null
  if (!trainer._t.setInterventions(JSON.stringify(list ?? null))) throwIfFailed(trainer._t);
}

// One forward of a trainer's current inputs read for the logit lens, the direct logit attribution
// and activation / attribution patching (core/SCENARIO.md, "Interpretability"), whatever the trainer
// was built with (a model that also generates): readings {logit_lens?: true, logit_attribution?:
// {position, token, wrong?, batch?}, patching?: {clean, corrupted, steps, by, metric},
// attribution_patching?: {...}} (patching: the inputs hold the clean and corrupted rows). The lens
// compact for any vocabulary, each readout's `top` likeliest tokens at `position` (batch row 0;
// negative: from the end): {logit_lens?: [{step, top: [{id, prob}]}], logit_attribution?: {total,
// components: [{name, value}]}, patching?: {clean_metric, corrupted_metric, cells: [{step, head?,
// position?, metric}]}, attribution_patching?: {cells: [{step, head?, position?, estimate}]}}.
// The trainer's own readings stay for its next forwards.
export function readModel(trainer, readings, options = {}) {
  const { position = -1, top = 5 } = options ?? {};
  // the core's ints: 1.5 was read as 1, NaN and "x" as position 0, 1e12 wrapped; a top under 1 as 1
  if (!Number.isInteger(position)) throw fieldError('position', `readModel: position (${shown(position)}) must be a whole number, a token's index (negative: from the end)`);
  if (Math.abs(position) > 2 ** 31 - 1) throw fieldError('position', `readModel: position ${position} is outside the tokens`);
  if (!Number.isInteger(top) || top < 1) throw fieldError('top', `readModel: top (${shown(top)}) must be a whole number of tokens, 1 or more`);
  const text = trainer._t.read(JSON.stringify(readings ?? null), position, Math.min(top, 2 ** 31 - 1));
  if (!text) throwIfFailed(trainer._t);
  const r = JSON.parse(text);
  for (const e of r.logit_lens ?? []) e.top = e.top.map(([id, prob]) => ({ id, prob }));
  const cells = (list, key) => list.map(([step, head, position, value]) => ({ step, ...(head === null ? {} : { head }), ...(position === null ? {} : { position }), [key]: value }));
  if (r.patching) r.patching.cells = cells(r.patching.cells, 'metric');
  if (r.attribution_patching) r.attribution_patching.cells = cells(r.attribution_patching.cells, 'estimate');
  return r;
}

// Token by token on a trainer's own module, from its current ids input (trainer.setInput): a
// trainer built with "generate" in its scenario (its temperature, top_k, top_p, cache), at most
// maxNew tokens. The generation borrows the module: delete() it before the trainer.
export function sessionGenerator(trainer, maxNew) {
  if (!Number.isInteger(maxNew) || maxNew < 1)  // 1.5 or NaN would reach the core cut to a whole number
    throw fieldError('generate.max_new_tokens', `sessionGenerator: maxNew (${shown(maxNew)}) must be a whole number of tokens, 1 or more`);
  const native = trainer._t.generator(Math.min(maxNew, 2 ** 31 - 1));  // the core's int; the scenario's max_new_tokens bounds it anyway
  if (!native) throwIfFailed(trainer._t);
  return new Generation(native);
}

// A generation's copy at its current token (its ids and KV cache; the cache's buffers are shared):
// each next() on a fresh fork is the same step. Delete forks before the generation they came from.
export function forkGeneration(gen) {
  const native = gen._g.fork();
  if (!native) throwIfFailed(gen._g);
  return new Generation(native);
}

// The logits of a generation's last token (batch x vocabulary), copied out.
export const lastLogits = (gen) => gen._g.logits().slice();

