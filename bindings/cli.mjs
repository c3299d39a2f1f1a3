#!/usr/bin/env node
// The WASM core from the command line, twin of build/native/attention-cli:
//   node bindings/cli.mjs run FILE.json [--weights W.safetensors]   print the result JSON ("-" reads stdin);
//                                   "pretrained": "DIR" reads a Hugging Face model folder beside FILE.json
//   node bindings/cli.mjs weights W.safetensors                     list the file's tensors
//   node bindings/cli.mjs modules                                   print the module table
// Bad input: exit 1 with one line "error: ..." on stderr. ATTENTION_THREADS as the native CLI's.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { MAX_THREADS, hasRelaxedSimd, loadAttention } from './attention.mjs';
import { diskFolder } from './disk-folder.mjs';
import { setMemoryBudget } from './pretrained.mjs';
import { withTokens } from './tokenizer.mjs';

// The browsers run attention-relaxed.wasm (bindings/attention.mjs); Node 20 validates relaxed SIMD
// behind a flag, turned on here before any module is compiled, so a scenario exported from the page
// re-runs here to the page's numbers bit for bit (where that build is missing, the SIMD128 one runs).
if (!hasRelaxedSimd()) setFlagsFromString('--experimental-wasm-relaxed-simd');

// Same layout as the native CLI's result_to_json: floats with 9 significant digits (round-trip float32).
export function resultToJson(r) {
  const num = (v) => (Number.isFinite(v) ? String(Number(v.toPrecision(9))) : `"${v}"`);  // "NaN", "Infinity", "-Infinity" as core/scenario.cpp
  const arr = (data) => `[${Array.from(data, num).join(',')}]`;
  const out = r.outputs.map((o) => `{"name":${JSON.stringify(o.name)},"shape":${JSON.stringify(o.shape)}`
    + `${o.step ? `,"step":${JSON.stringify(o.step)}` : ''},"data":${arr(o.data)}}`);
  let s = `{"module":${JSON.stringify(r.module)},"outputs":[\n${out.join(',\n')}]`;
  if (r.steps.length) {
    const steps = r.steps.map(({ data, grad, ...meta }) => `${JSON.stringify(meta).slice(0, -1)},"data":${arr(data)}`
      + `${grad ? `,"grad":${arr(grad)}` : ''}}`);
    s += `,"steps":[\n${steps.join(',\n')}]`;
  }
  s += `,"attention":${JSON.stringify(r.attention)}`;
  if (r.loss !== undefined) s += `,"loss":${num(r.loss)}`;
  if (r.losses?.length) s += `,"losses":${arr(r.losses)}`;
  for (const key of ['grads', 'inputs', 'params']) {
    if (r[key]?.length) s += `,"${key}":[\n${r[key].map((o) => `{"name":${JSON.stringify(o.name)},"shape":${JSON.stringify(o.shape)},"data":${arr(o.data)}}`).join(',\n')}]`;
  }
  s += interpJson(r, num, arr);
  if (r.ids) {  // generation: as core/result_json.cpp writes it
    const steps = (list) => list.map(({ data, ...meta }) => `${JSON.stringify(meta).slice(0, -1)},"data":${arr(data)}}`).join(',\n');
    const tokens = r.generated.map(({ steps: st, top_probs: probs, ...g }) => {
      const head = JSON.stringify({ position: g.position, mode: g.mode, ids: g.ids, top_ids: g.top_ids }).slice(0, -1);
      return `${head},"top_probs":[${probs.map((row) => arr(row)).join(',')}],"cache":${JSON.stringify(g.cache)}`
        + `${st ? `,"steps":[\n${steps(st)}]` : ''}}`;
    });
    s += `,"ids":${JSON.stringify(r.ids)},"generated":[\n${tokens.join(',\n')}]`;
  }
  return `${s}}\n`;
}

// SCENARIO.md, "Interpretability", as core/scenario/result_json.cpp writes it (put_interp).
function interpJson(r, num, arr) {
  const cells = (list, key) => list.map((c) => `{"step":${JSON.stringify(c.step)}${c.head !== undefined ? `,"head":${c.head}` : ''}`
    + `${c.position !== undefined ? `,"position":${c.position}` : ''},"${key}":${num(c[key])}}`).join(',\n');
  let s = '';
  if (r.patching) {
    const p = r.patching;
    s += `,\n"patching":{"clean_metric":${num(p.clean_metric)},"corrupted_metric":${num(p.corrupted_metric)},"cells":[\n${cells(p.cells, 'metric')}]}`;
  }
  if (r.attribution_patching) s += `,\n"attribution_patching":{"cells":[\n${cells(r.attribution_patching.cells, 'estimate')}]}`;
  if (r.logit_lens?.length) {
    s += `,\n"logit_lens":[\n${r.logit_lens.map((e) => `{"step":${JSON.stringify(e.step)},"shape":${JSON.stringify(e.shape)},"data":${arr(e.data)}}`).join(',\n')}]`;
  }
  if (r.logit_attribution) {
    const a = r.logit_attribution;
    s += `,\n"logit_attribution":{"total":${num(a.total)},"components":[\n${a.components.map((c) => `{"name":${JSON.stringify(c.name)},"value":${num(c.value)}}`).join(',\n')}]}`;
  }
  return s;
}

// ATTENTION_THREADS, as the native CLI takes it: the threads the core computes with (here 1 to
// MAX_THREADS, a worker thread each beside this one); unset, the cores (at most 8). An Error
// naming the value otherwise.
function threadsFromEnvironment() {
  const s = process.env.ATTENTION_THREADS;
  if (s === undefined || s === '') return 'auto';
  if (!/^[0-9]+$/.test(s) || Number(s) < 1 || Number(s) > MAX_THREADS)
    throw new Error(`ATTENTION_THREADS (${s}) must be a whole number from 1 to ${MAX_THREADS}: the threads the core computes with`);
  return Number(s);
}
// base/limits.hpp: the core's tensor budget, and the most a model folder may hold as float32
const DEFAULT_BUDGET = 768 << 20, MAX_MODEL_BYTES = 2 ** 31;

let threads = 'auto';
// The full-speed build on one thread, or the threaded build (the same numbers): every field.
const load = () => loadAttention({ fast: true, threads });

async function main(argv) {
  const [cmd, file] = argv;
  try {
    threads = threadsFromEnvironment();
  } catch (e) {
    process.stderr.write(`error: ${e.message}\n`);
    return 1;
  }
  if (cmd === 'modules' && argv.length === 1) {
    process.stdout.write(`${JSON.stringify((await load()).modules())}\n`);
    return 0;
  }
  const usage = 'usage: node bindings/cli.mjs run FILE.json [--weights W.safetensors] | node bindings/cli.mjs weights W.safetensors | node bindings/cli.mjs modules\n';
  const readBytes = (path, what) => {
    try {
      return readFileSync(path);
    } catch {
      throw new Error(`cannot read ${what} file '${path}': check the path`);
    }
  };
  if (cmd === 'weights' && argv.length === 2) {
    try {
      process.stdout.write(`${JSON.stringify((await load()).weightsListing(readBytes(file, 'weights')))}\n`);
      return 0;
    } catch (e) {
      process.stderr.write(`error: ${e.message}\n`);
      return 1;
    }
  }
  const withWeights = argv.length === 4 && argv[2] === '--weights';
  if (cmd !== 'run' || (argv.length !== 2 && !withWeights)) {
    process.stderr.write(usage);
    return 2;
  }
  let text;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch {
    process.stderr.write(`error: cannot read scenario file '${file}': check the path\n`);
    return 1;
  }
  const core = await load();  // the full-speed or threaded build: every field, the interpretability ones too
  try {
    const options = withWeights ? { weights: readBytes(argv[3], 'weights'), weightsName: argv[3].split('/').pop() } : {};
    // "pretrained": a model folder, relative to the scenario file's folder (the working directory for stdin)
    const base = file === '-' ? process.cwd() : dirname(resolve(file));
    let parsed = null;
    try {
      parsed = JSON.parse(text);
    } catch {}  // the core names the JSON error
    const folder = parsed?.pretrained;
    if (typeof folder === 'string') {
      Object.assign(options, diskFolder(resolve(base, folder)));
      // the core's tensors may hold the weights beside its working memory, as the native CLI's
      setMemoryBudget(core, DEFAULT_BUDGET + MAX_MODEL_BYTES);
    }
    // inputs given as text: the folder's tokenizer makes them ids (bindings/tokenizer.mjs)
    const scenario = options.files ? (await withTokens(parsed, options.files)).scenario : text;
    process.stdout.write(resultToJson(core.run(scenario, options)));
    return 0;
  } catch (e) {
    process.stderr.write(`error: ${String(e.message).replace(/\n/g, ' ')}\n`);
    return 1;
  }
}

// A reader that stops early (`| head`) closes the pipe: the rest of the output goes nowhere, quietly,
// as the native CLI's (no stack trace for an output nobody reads).
process.stdout.on('error', (e) => {
  if (e.code !== 'EPIPE') throw e;
  process.exit(0);
});
process.exitCode = await main(process.argv.slice(2));
