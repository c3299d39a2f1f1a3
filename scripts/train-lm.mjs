// npm run train-lm [-- --steps N]: the small language model the page ships (docs/training.md,
// "Shipped models"): a character-level nanoGPT GPT trained by the core's own trainer in Node (no
// PyTorch) on the English quotations Debian ships as the `fortunes` package (BSD-licensed;
// scripts/setup.sh --lm installs it), written to web/public/models/fortunes/ as
//   model.safetensors  nanoGPT's whole state_dict in float16 (the core widens it on load), with the
//                      tied lm_head.weight and the attn.bias buffers;
//   card.json          the corpus, its licence and split, the vocabulary, config, optimizer, steps,
//                      the held-out loss (nats per character, of the float16 weights as shipped),
//                      the loss curve, three samples and this command.
// The corpus: every fortune file of /usr/share/games/fortunes in name order, split at its "%"
// lines; fortunes with characters outside printable ASCII (tabs become spaces) are left out; one
// in ten (by a hash of its text) is held out, never trained on. The training text is the other
// fortunes joined by blank lines; a batch is BATCH windows of BLOCK + 1 characters at seeded
// random offsets. Takes about 30 minutes on one core of the machines here (never run by CI).
import { readdirSync, readFileSync, lstatSync, mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAttention } from '../bindings/attention.mjs';
import { createRng, mix32, STREAM } from '../web/train/rng.js';
import { encodeSafetensors } from '../web/train/safetensors.js';
import { nanoGPTState, MODELS_DIR } from './train-models.mjs';

export const CORPUS_DIR = '/usr/share/games/fortunes';
export const SEED = 1;
export const BLOCK = 64, BATCH = 32;
export const CONFIG_OF = (V) => ({ vocab_size: V, block_size: BLOCK, n_layer: 4, n_head: 4, n_embd: 128, dropout: 0, bias: true });
export const OPTIMIZER = { optimizer: 'AdamW', lr: 0.001, betas: [0.9, 0.99], weight_decay: 0.1, clip_grad_norm: 1 };
const STEPS = 5000, EVAL_EVERY = 250, EVAL_WINDOWS = 64, FINAL_WINDOWS = 512;
export const LM_DIR = `${MODELS_DIR}fortunes/`;

// {train: string, heldout: string, vocab: [chars], files, fortunes: {kept, dropped, heldout}}
export function corpus(dir = CORPUS_DIR) {
  const files = readdirSync(dir).filter((f) => !f.includes('.') && lstatSync(`${dir}/${f}`).isFile()).sort();
  const train = [], heldout = [];
  let dropped = 0;
  for (const f of files) {
    for (let text of readFileSync(`${dir}/${f}`, 'latin1').split(/^%$/m)) {
      text = text.replace(/\t/g, ' ').replace(/^\n+|\s+$/g, '');
      if (!text) continue;
      if (!/^[\x20-\x7e\n]*$/.test(text)) { dropped++; continue; }
      let h = 0x811c9dc5;
      for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
      (mix32(h, text.length) % 10 === 0 ? heldout : train).push(text);
    }
  }
  const join = (list) => list.join('\n\n') + '\n\n';
  const vocab = [...new Set(join(train) + join(heldout))].sort();
  return { train: join(train), heldout: join(heldout), vocab, files, fortunes: { kept: train.length + heldout.length, dropped, heldout: heldout.length } };
}

// BATCH (or n) windows of text as ids: {idx, target} Float32Arrays (n * BLOCK) from `rng`.
export function windows(ids, rng, n, out) {
  const res = out ?? { idx: new Float32Array(n * BLOCK), target: new Float32Array(n * BLOCK), shape: [n, BLOCK] };
  for (let b = 0; b < n; b++) {
    const at = rng.u32() % (ids.length - BLOCK - 1);
    for (let i = 0; i < BLOCK; i++) { res.idx[b * BLOCK + i] = ids[at + i]; res.target[b * BLOCK + i] = ids[at + i + 1]; }
  }
  return res;
}

// Mean cross-entropy (nats) of logits (N, V) against target ids, in float64.
export function crossEntropy(logits, target, V) {
  let sum = 0;
  for (let r = 0; r < target.length; r++) {
    let mx = -Infinity;
    for (let v = 0; v < V; v++) mx = Math.max(mx, logits[r * V + v]);
    let z = 0;
    for (let v = 0; v < V; v++) z += Math.exp(logits[r * V + v] - mx);
    sum += Math.log(z) + mx - logits[r * V + target[r]];
  }
  return sum / target.length;
}

// The held-out loss of weights `bytes` through core.run: FINAL_WINDOWS windows of the held-out text.
export function heldoutLoss(core, config, bytes, heldIds) {
  const w = windows(heldIds, createRng(SEED, STREAM.heldout), FINAL_WINDOWS);
  let sum = 0;
  for (let k = 0; k < FINAL_WINDOWS; k += 64) {  // 64 windows a call: the logits stay small
    const idx = w.idx.subarray(k * BLOCK, (k + 64) * BLOCK), target = w.target.subarray(k * BLOCK, (k + 64) * BLOCK);
    const r = core.run({ module: 'GPT', config, inputs: [{ name: 'idx', shape: [64, BLOCK], data: Array.from(idx) }] }, { weights: bytes });
    sum += crossEntropy(r.outputs[0].data, target, config.vocab_size) * 64;
  }
  return sum / FINAL_WINDOWS;
}

export const PROMPTS = ['The ', 'A man ', 'Love is '];
export const SAMPLE = { max_new_tokens: 160, temperature: 0.8, top_k: 20 };

export function samples(core, config, bytes, vocab) {
  const stoi = new Map(vocab.map((c, i) => [c, i]));
  return PROMPTS.map((prompt, k) => {
    const ids = [...prompt].map((c) => stoi.get(c));
    const r = core.run({ module: 'GPT', config, seed: SEED + k, inputs: [{ name: 'idx', shape: [1, ids.length], data: ids }], generate: SAMPLE }, { weights: bytes });
    return { prompt, seed: SEED + k, ...SAMPLE, text: r.ids[0].map((i) => vocab[i]).join('') };
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = process.argv.indexOf('--steps');
  const steps = arg > 0 ? Number(process.argv[arg + 1]) : STEPS;
  const c = corpus();
  const V = c.vocab.length, stoi = new Map(c.vocab.map((ch, i) => [ch, i]));
  const trainIds = Uint8Array.from(c.train, (ch) => stoi.get(ch)), heldIds = Uint8Array.from(c.heldout, (ch) => stoi.get(ch));
  console.log(`corpus: ${c.files.length} files, ${c.fortunes.kept} fortunes (${c.fortunes.dropped} left out, ${c.fortunes.heldout} held out), ${trainIds.length} + ${heldIds.length} characters, ${V} symbols`);
  const core = await loadAttention({ fast: true });
  const config = CONFIG_OF(V);
  const rng = createRng(SEED, STREAM.train);
  let batch = windows(trainIds, rng, BATCH);
  const trainer = core.trainer({ module: 'GPT', config, seed: SEED, train: true, inputs: [{ name: 'idx', shape: batch.shape, data: Array.from(batch.idx) }],
    loss: { fn: 'cross_entropy', target: { shape: batch.shape, data: Array.from(batch.target) } }, optimize: { ...OPTIMIZER, steps: 1 } });
  const evalSet = windows(heldIds, createRng(SEED, STREAM.sample), EVAL_WINDOWS);
  const losses = [], evals = [];
  const started = Date.now();
  for (let s = 1; s <= steps; s++) {
    if (s > 1) batch = windows(trainIds, rng, BATCH, batch);
    trainer.setInput('idx', batch.idx, batch.shape);
    trainer.setTarget(batch.target, batch.shape);
    losses.push(trainer.step());
    if (s % EVAL_EVERY === 0 || s === steps) {
      trainer.setInput('idx', evalSet.idx, evalSet.shape);
      const loss = crossEntropy(trainer.forward({ trace: false, grads: false }).outputs[0].data, evalSet.target, V);
      evals.push({ step: s, heldout: Number(loss.toFixed(4)) });
      console.log(`step ${s}: train ${losses.at(-1).toFixed(4)}, held-out ${loss.toFixed(4)} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    }
  }
  const seconds = (Date.now() - started) / 1000;
  const params = trainer.params();
  const metadata = { format: 'pt', module: 'GPT', config: JSON.stringify(config), corpus: 'fortunes', seed: String(SEED), step: String(steps) };
  const bytes = encodeSafetensors(nanoGPTState(params, config), metadata, { dtype: 'F16' });
  trainer.delete();
  const heldout = heldoutLoss(core, config, bytes, heldIds);
  const card = {
    kind: 'attention-playground/model-card', version: 1, task: 'language', module: 'GPT', layout: "nanoGPT's GPT (model.py), its state_dict names, float16",
    corpus: { name: 'fortunes', source: `Debian package fortunes (${CORPUS_DIR}, ${c.files.length} files)`, licence: 'BSD (fortune-mod; the package\'s /usr/share/doc/fortunes/copyright)',
      fortunes: c.fortunes.kept, left_out: c.fortunes.dropped, heldout_fortunes: c.fortunes.heldout, train_characters: trainIds.length, heldout_characters: heldIds.length,
      split: 'one fortune in ten held out by a hash of its text' },
    vocab: c.vocab.join(''), config, seed: SEED, optimizer: OPTIMIZER, batch: BATCH, steps,
    heldout: { loss_nats_per_char: Number(heldout.toFixed(4)), windows: FINAL_WINDOWS, of: `${BLOCK} characters, float16 weights as shipped` },
    parameters: params.reduce((n, p) => n + p.data.length, 0),
    losses: losses.filter((_, i) => i % 10 === 9).map((l) => Number(l.toPrecision(4))), losses_every: 10, evals,
    samples: samples(core, config, bytes, c.vocab),
    trained_by: `the core's trainer, WASM (${core.kernels()}), core ${core.version()}`, command: 'npm run train-lm', seconds: Number(seconds.toFixed(0)),
  };
  mkdirSync(LM_DIR, { recursive: true });
  writeFileSync(`${LM_DIR}model.safetensors`, bytes);
  writeFileSync(`${LM_DIR}card.json`, `${JSON.stringify(card, null, 1)}\n`);
  console.log(`held-out loss ${heldout.toFixed(4)} nats/char after ${steps} steps (${seconds.toFixed(0)} s), ${bytes.length} bytes -> web/public/models/fortunes/`);
  for (const s of card.samples) console.log(`--- ${JSON.stringify(s.prompt)}\n${s.text}`);
}
