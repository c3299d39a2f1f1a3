// Model folders in JS beyond run(scenario, {files}) (core/SCENARIO.md, "Pretrained"): the checks a
// page makes before it downloads a checkpoint, and a checkpoint streamed into a trainer's module.
// The full build only (loadAttention({fast: true}), the workers' and the CLIs'): the page's small
// build has no model folders. Kept apart from attention.mjs, which is in the page's first view.
//
//   const plan = pretrainedPlan(core, {label, files, sizes, maxBytes, headers})
//   const trainer = core.trainer({pretrained: label, inputs}, {files: headers, sizes})
//   const sink = streamedWeights(trainer); sink.write(i, first, bytes) ...; sink.finish()
import { Generation, throwIfFailed } from './attention.mjs';

// A value as a message names it: a string quoted, anything else as JavaScript prints it (NaN, -1).
const shown = (v) => (typeof v === 'string' ? JSON.stringify(v) : String(v));

const full = (core) => {
  if (!core._m.pretrainedPlan) throw Object.assign(new Error('this build of the core has no model folders: load the full build (loadAttention({fast: true}))'), { field: 'pretrained' });
  return core._m;
};

// A model folder checked before its weights are fetched: files(name) -> Uint8Array | null gives
// config.json, the shard index and the first bytes of each weight file (at least 8 + its header's
// length); sizes {name: bytes} each weight file's whole size; maxBytes the float32 weights the caller
// can hold. Returns {model_type, module, config, files: [{name, size, header_bytes, tensors}],
// f32_bytes, parameters}; throws the core's message (field "pretrained") for a folder the core would
// refuse. headers: false checks config.json and the index only and lists the weight files ({name}).
export function pretrainedPlan(core, { label = 'model', files, sizes = {}, maxBytes = 2 ** 31, headers = true }) {
  const out = JSON.parse(full(core).pretrainedPlan(label, files, sizes, maxBytes, headers));
  if (out.error) throw Object.assign(new Error(out.error), { field: out.field || 'pretrained' });
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
  return {
    tensors: JSON.parse(t.streamed()),
    write(i, first, bytes) { if (!t.writeWeights(i, first, bytes)) throwIfFailed(t); },
    finish() { if (!t.finishWeights()) throwIfFailed(t); },
  };
}

// The interventions of a trainer's next forwards and generations (core/SCENARIO.md,
// "Interpretability"): [{step, head?, position?, batch?, set}], checked as the scenario's field; [] none.
export function setInterventions(trainer, list) {
  if (!trainer._t.setInterventions(JSON.stringify(list))) throwIfFailed(trainer._t);
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
export function readModel(trainer, readings, { position = -1, top = 5 } = {}) {
  const text = trainer._t.read(JSON.stringify(readings), position, top);
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
    throw Object.assign(new Error(`sessionGenerator: maxNew (${shown(maxNew)}) must be a whole number of tokens, 1 or more`), { field: 'generate.max_new_tokens' });
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

