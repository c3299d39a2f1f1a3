#!/usr/bin/env node
// The WASM core from the command line, twin of build/native/attention-cli:
//   node bindings/cli.mjs run FILE.json [--weights W.safetensors]   print the result JSON ("-" reads stdin);
//                                   "pretrained": "DIR" reads a Hugging Face model folder beside FILE.json
//   node bindings/cli.mjs weights W.safetensors                     list the file's tensors
//   node bindings/cli.mjs modules                                   print the module table
//   node bindings/cli.mjs --version                                 print the core's version
// Bad input: exit 1 with one line "error: ..." on stderr. ATTENTION_THREADS as the native CLI's.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { MAX_THREADS, hasRelaxedSimd, loadAttention } from './attention.mjs';
import { diskFolder } from './disk-folder.mjs';
import { resultJsonPieces } from './result-json.mjs';
import { setMemoryBudget } from './pretrained.mjs';
import { withTokens } from './tokenizer.mjs';

// The browsers run attention-relaxed.wasm (bindings/attention.mjs); Node 20 validates relaxed SIMD
// behind a flag, turned on here before any module is compiled, so a scenario exported from the page
// re-runs here to the page's numbers bit for bit (where that build is missing, the SIMD128 one runs).
if (!hasRelaxedSimd()) setFlagsFromString('--experimental-wasm-relaxed-simd');

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
  if (cmd === '--version' && argv.length === 1) {  // the core's, as attention-cli --version prints it
    process.stdout.write(`${(await load()).version()}\n`);
    return 0;
  }
  const usage = 'usage: node bindings/cli.mjs run FILE.json [--weights W.safetensors] | node bindings/cli.mjs weights W.safetensors | node bindings/cli.mjs modules | node bindings/cli.mjs --version\n';
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
    // inputs given as text: the folder's tokenizer makes them ids (bindings/tokenizer.mjs; without
    // a folder, or with text that is not a string or beside ids, an Error naming the input)
    const tokenized = parsed && (await withTokens(parsed, options.files)).scenario;
    const scenario = options.files ? tokenized : text;
    for (const piece of resultJsonPieces(core.run(scenario, options))) {
      if (process.stdout.errored) break;  // the reader has gone (EPIPE, below): nothing more to make
      process.stdout.write(piece);
    }
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
