// npm run fuzz (scripts/fuzz.sh) runs this after libFuzzer: the same kind of hostile input through
// the WebAssembly core and its JavaScript bindings, where libFuzzer's C++ targets cannot look (the
// bindings' own steps before the core, what a C++ throw becomes in JS, 32-bit sizes). For N seconds
// per build (the page's small one and the workers' full-speed one), it mutates the fixtures
// (tests/fixtures/*.scenario.json into core.run / generator / trainer; the model folders of
// tests/fixtures/pretrained/ into pretrainedPlan and run with {files}: config.json, the index and a
// weight file's header, each edited as JSON or as bytes), calls the page's helpers
// (attentionMask, nextTokenDistribution, weightsListing) with odd arguments, and a built trainer's
// own calls (setInput, setTarget, forward, step; on the full build a model folder's readModel,
// setInterventions, sessionGenerator and streamed weights' write) with odd arguments; then a model
// folder's tokenizer files, edited, into loadTokenizer (N / 4 seconds). Every refusal must be
// an Error that is not a TypeError or a WebAssembly one, and a good scenario must give the same
// number after each. Deterministic from its seed; prints the counts, exits 1 on a fault.
//   node scripts/fuzz-bindings.mjs [--seconds 60] [--seed 1] [--tokenizers-only]
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAttention } from '../bindings/attention.mjs';
import { pretrainedPlan, readModel, sessionGenerator, setInterventions, streamedWeights } from '../bindings/pretrained.mjs';
import { loadTokenizer } from '../bindings/tokenizer.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const seconds = opt('--seconds', 60), seed = opt('--seed', 1);
const tokenizersOnly = args.includes('--tokenizers-only');  // a tokenizer's fault again, from its seed
const fixtures = fileURLToPath(new URL('../tests/fixtures/', import.meta.url));

let state = seed >>> 0 || 1;
const rand = () => { state ^= state << 13; state ^= state >>> 17; state ^= state << 5; return (state >>> 0) / 2 ** 32; };
const pick = (list) => list[Math.floor(rand() * list.length)];
const ODD_VALUES = [0, -1, 1, 2, 3, 7, 0.5, -0.0, 1e-9, 2 ** 31, 2 ** 32 + 1, 2 ** 53, -(2 ** 31), 1e300, NaN, Infinity, null, 'x', '', [], {}, true, [1, 2], [[1]], 4097, 65536];
const odd = () => structuredClone(pick(ODD_VALUES));  // a fresh one: edits never reach the list

// One edit somewhere in a JSON value: a key dropped, doubled or renamed, a value replaced or nudged.
function mutate(value, depth = 0) {
  if (Array.isArray(value)) {
    if (!value.length) return value.push(odd()), value;
    const i = Math.floor(rand() * value.length), r = rand();
    if (r < 0.15) value.splice(i, 1);
    else if (r < 0.25) value.push(structuredClone(value[i]));
    else if (r < 0.6 && value[i] && typeof value[i] === 'object' && depth < 5) mutate(value[i], depth + 1);
    else value[i] = odd();
  } else if (value && typeof value === 'object') {
    const keys = Object.keys(value);
    if (!keys.length) return value;
    const k = pick(keys), r = rand();
    if (r < 0.15) delete value[k];
    else if (r < 0.2) value[`${k}_`] = structuredClone(value[k]);
    else if (r < 0.6 && value[k] && typeof value[k] === 'object' && depth < 5) mutate(value[k], depth + 1);
    else if (typeof value[k] === 'number' && rand() < 0.5) value[k] = pick([value[k] + 1, value[k] * 2, -value[k], 0, value[k] * 1000]);
    else value[k] = odd();
  }
  return value;
}
const edits = (value) => { for (let n = 1 + Math.floor(rand() * 3); n > 0; --n) mutate(value); return value; };

// A safetensors file's header edited as JSON, or its bytes flipped or cut.
function mutateSafetensors(bytes) {
  const view = Buffer.from(bytes);
  const n = Number(view.readBigUInt64LE(0));
  const r = rand();
  if (r < 0.6) {
    const head = Buffer.from(JSON.stringify(edits(JSON.parse(view.subarray(8, 8 + n).toString()))));
    const size = Buffer.alloc(8);
    size.writeBigUInt64LE(BigInt(head.length));
    return new Uint8Array(Buffer.concat([size, head, view.subarray(8 + n)]));
  }
  const out = new Uint8Array(view);
  if (r < 0.7) new DataView(out.buffer).setBigUint64(0, BigInt(pick([0, 1, n - 1, n + 1, view.length, 2 ** 40, 2 ** 63])), true);
  else if (r < 0.85) for (let k = 1 + Math.floor(rand() * 5); k > 0; --k) out[8 + Math.floor(rand() * n)] = Math.floor(rand() * 256);
  else return out.subarray(0, Math.floor(rand() * out.length));
  return out;
}

const scenarios = readdirSync(fixtures).filter((f) => f.endsWith('.scenario.json')).map((f) => JSON.parse(readFileSync(fixtures + f, 'utf8')));
const folders = readdirSync(`${fixtures}pretrained`).filter((f) => !f.includes('.')).map((name) => {
  const dir = `${fixtures}pretrained/${name}/`;
  return { name, scenario: JSON.parse(readFileSync(`${fixtures}pretrained/${name}.scenario.json`, 'utf8')),
    files: Object.fromEntries(readdirSync(dir).map((f) => [f, new Uint8Array(readFileSync(dir + f))])) };
});

// A refusal that is a fault: not an Error, a TypeError or RangeError (JavaScript's own, from inside
// the bindings), or a WebAssembly trap.
const isFault = (e) => !(e instanceof Error) || e instanceof TypeError || e instanceof RangeError
  || /WebAssembly|RuntimeError|unreachable|memory access out of bounds/.test(`${e.constructor?.name} ${e.message}`);

const trainScenarios = readdirSync(`${fixtures}train`).filter((f) => f.endsWith('.scenario.json')).map((f) => JSON.parse(readFileSync(`${fixtures}train/${f}`, 'utf8')));
const headerOf = (b) => b.subarray(0, 8 + Number(new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true)));

// Values for a trainer's setInput / setTarget: odd ones, the right count of odd numbers, or good ones.
function oddValues(n) {
  const r = rand();
  if (r < 0.3) return odd();
  if (r < 0.6) return Array.from({ length: n }, () => pick([0.5, NaN, Infinity, -Infinity, 'x', null, {}, 1e39, -1]));
  return new Float32Array(n + pick([0, 0, -1, 1]));
}
const oddShape = (shape) => (rand() < 0.5 ? odd() : edits(structuredClone(shape)));

// A built trainer's calls with odd arguments, 1 to 4 of them; on the full build, half the time on a
// model folder's trainer (readModel, setInterventions, sessionGenerator, or its weights streamed).
function sessionCalls(core) {
  const folder = core._m.pretrainedPlan && rand() < 0.5 ? pick(folders) : null;
  const streamed = folder && rand() < 0.3;
  const scenario = folder ? { ...folder.scenario, pretrained: folder.name } : structuredClone(pick(trainScenarios));
  const options = !folder ? {} : streamed
    ? { files: (f) => (f.endsWith('.safetensors') ? headerOf(folder.files[f]) : folder.files[f] ?? null), sizes: (f) => folder.files[f]?.length ?? 0 }
    : { files: folder.files };
  const tr = core.trainer(scenario, options);
  try {
    const input = scenario.inputs[0], n = input.shape.reduce((a, b) => a * b, 1);
    for (let k = 1 + Math.floor(rand() * 4); k > 0; --k) {
      const call = pick(folder ? ['input', 'forward', 'read', 'interventions', 'generate', 'write'] : ['input', 'target', 'forward', 'step']);
      try {
        if (call === 'input') tr.setInput(rand() < 0.8 ? input.name : odd(), oddValues(n), rand() < 0.5 ? input.shape : oddShape(input.shape));
        else if (call === 'target') tr.setTarget(oddValues(n), rand() < 0.5 ? scenario.loss?.target?.shape ?? [n] : oddShape([n]));
        else if (call === 'forward') tr.forward(pick([undefined, null, { trace: odd(), grads: odd() }]));
        else if (call === 'step') tr.step();
        else if (call === 'read') readModel(tr, rand() < 0.3 ? odd() : edits({ logit_lens: true, logit_attribution: { position: -1, token: 1 } }), { position: rand() < 0.5 ? -1 : odd(), top: rand() < 0.5 ? 3 : odd() });
        else if (call === 'interventions') setInterventions(tr, rand() < 0.3 ? odd() : edits([{ step: 'x', head: 0, set: 'zero' }]));
        else if (call === 'generate') sessionGenerator(tr, rand() < 0.5 ? 1 : odd()).next();
        else if (streamed) {
          const sink = streamedWeights(tr), t = pick(sink.tensors);
          sink.write(rand() < 0.5 ? sink.tensors.indexOf(t) : odd(), rand() < 0.5 ? 0 : odd(), rand() < 0.5 ? folder.files[t.file].subarray(t.begin, t.end) : odd());
        }
      } catch (e) {
        if (k === 1 || isFault(e)) throw e;  // the last call's refusal, or a fault, is the answer
      }
    }
  } finally {
    tr.delete();
  }
}

// One hostile call on `core`: what it threw, or null.
function attempt(core) {
  const r = rand();
  try {
    if (r < 0.2) {
      sessionCalls(core);
    } else if (r < 0.55) {
      const scenario = edits(structuredClone(pick(scenarios)));
      const call = pick(['run', 'run', 'generator', 'trainer']);
      const made = core[call](scenario, rand() < 0.1 ? pick([null, { weights: odd() }]) : undefined);
      if (call !== 'run') made.delete();
    } else if (r < 0.9) {
      const folder = pick(folders);
      const files = { ...folder.files };
      const name = pick(Object.keys(files));
      files[name] = name.endsWith('.safetensors') ? mutateSafetensors(files[name]) : new TextEncoder().encode(JSON.stringify(edits(JSON.parse(new TextDecoder().decode(files[name])))));
      if (core._m.pretrainedPlan && rand() < 0.5) {
        const sizes = Object.fromEntries(Object.entries(files).map(([f, b]) => [f, b.length]));
        pretrainedPlan(core, { label: folder.name, files: (f) => files[f] ?? null, sizes });
      } else {
        core.run({ ...folder.scenario, pretrained: folder.name }, { files });
      }
    } else {
      const helper = pick(['mask', 'next', 'listing']);
      if (helper === 'mask') core.attentionMask(odd(), odd(), { causal: odd(), window: odd(), sinkTokens: odd() });
      else if (helper === 'next') core.nextTokenDistribution(pick([[1, 2, 3], new Float32Array(5), [], [NaN, 1]]), { temperature: odd(), top_k: odd(), top_p: odd() });
      else core.weightsListing(mutateSafetensors(pick(folders.filter((f) => f.files['model.safetensors'])).files['model.safetensors']));
    }
    return null;
  } catch (e) {
    return e;
  }
}

const good = { module: 'softmax', inputs: [{ name: 'x', shape: [3], data: [1, 2, 3] }] };
let total = 0;
for (const fast of tokenizersOnly ? [] : [false, true]) {
  let faults = 0;
  const core = await loadAttention({ fast });
  const want = core.run(good).outputs[0].data[2];
  const counts = { calls: 0, refused: 0 };
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    const before = state >>> 0;
    const e = attempt(core);
    counts.calls++;
    if (e) counts.refused++;
    const wrong = e && isFault(e);
    const broken = core.run(good).outputs[0].data[2] !== want;
    if (wrong || broken) {
      faults++;
      console.log(`fault (again: --seed ${before}${fast ? ', the full-speed build' : ''}): ${broken ? 'the module computes differently after it; ' : ''}${e?.constructor?.name}: ${String(e?.message ?? e).slice(0, 300)}`);
      if (broken || faults > 20) break;
    }
  }
  console.log(`fuzz-bindings: ${fast ? 'full-speed' : 'small'} build, ${seconds} s: ${counts.calls} calls, ${counts.refused} refused with an Error, ${faults} faults`);
  total += faults;
}

// A model folder's tokenizer files, untrusted as its weights: the fixtures' tokenizer.json, and
// GPT-2's vocab.json + merges.txt written from one's vocabulary and merges, edited as JSON (merges.txt
// as lines) into loadTokenizer, then encode, decode (ids out of range too) and pieces. A refusal must
// be an Error naming the folder's file. N / 4 seconds (no WebAssembly: the tokenizers are npm's).
const tokenizerJsons = folders.filter((f) => f.files['tokenizer.json']).map((f) => JSON.parse(new TextDecoder().decode(f.files['tokenizer.json'])));
async function tokenizerAttempt() {
  const json = structuredClone(pick(tokenizerJsons));
  const asBytes = (v) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
  let files;
  if (rand() < 0.5) {
    files = { 'tokenizer.json': asBytes(rand() < 0.1 ? odd() : edits(json)) };
  } else {
    const merges = (json.model.merges ?? []).map((m) => (Array.isArray(m) ? m.join(' ') : m));
    files = { 'vocab.json': asBytes(rand() < 0.2 ? odd() : edits(json.model.vocab)), 'merges.txt': asBytes(edits(merges).map(String).join('\n')) };
  }
  try {
    const tok = await loadTokenizer((name) => files[name] ?? null, pick(['gpt2', 'llama']));
    const ids = tok.encode(pick(['the cat sat', '', 'Ünïcode ✓ 猫', 'a'.repeat(300)]));
    tok.pieces(ids, [1, 2]);
    tok.decode([...ids, pick([0, -1, 2 ** 31, 1e9])]);
    return null;
  } catch (e) {
    return e;
  }
}
{
  // @huggingface/tokenizers logs what it cannot read ("Unknown pattern type") before it throws
  const log = console.log, warn = console.warn;
  console.log = console.warn = () => {};
  const counts = { calls: 0, refused: 0 }, found = [];
  const until = Date.now() + seconds * 250;
  while (Date.now() < until && found.length <= 20) {
    const before = state >>> 0;
    const e = await tokenizerAttempt();
    counts.calls++;
    if (e) counts.refused++;
    if (e && (isFault(e) || !/the model folder/.test(e.message))) found.push(`fault (again: --seed ${before} --tokenizers-only): ${e?.constructor?.name}: ${String(e?.message ?? e).slice(0, 300)}`);
  }
  console.log = log;
  console.warn = warn;
  for (const f of found) console.log(f);
  console.log(`fuzz-bindings: tokenizers, ${seconds / 4} s: ${counts.calls} calls, ${counts.refused} refused with an Error, ${found.length} faults`);
  total += found.length;
}
process.exit(total ? 1 : 0);
