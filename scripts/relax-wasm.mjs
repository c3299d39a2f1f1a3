// Turns the relaxed-SIMD build's multiply-adds into the final relaxed-SIMD instruction, in place.
//   node --experimental-wasm-relaxed-simd scripts/relax-wasm.mjs attention-relaxed.wasm attention-relaxed.js attention.js
// Debian's clang 14 (Emscripten 3.1.6) compiles __builtin_wasm_fma_f32x4 to the relaxed-SIMD
// proposal's prototype opcode 0xfd 0xaf 0x01 (binaryen 108 prints it as f32x4.relaxed_fma), which
// no shipping engine accepts. The final f32x4.relaxed_madd is 0xfd 0x85 0x02: as long, and the same
// stack (a, b, c -> a * b + c), so each instruction is rewritten byte for byte and nothing else in
// the module moves. The bytes are rewritten only in the code section and only if their count there
// equals the number of those instructions binaryen's disassembler finds (every instruction is one
// of the matches, so equal counts leave no match that is an immediate or other data); afterwards
// the module must validate in this V8 with relaxed SIMD on. Last, the build's JS glue must be the
// plain build's but for the file name, so bindings/attention.mjs gives either binary to one glue.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const [wasmPath, gluePath, plainGluePath] = process.argv.slice(2);
if (!plainGluePath) {
  console.error('usage: node --experimental-wasm-relaxed-simd scripts/relax-wasm.mjs OUT.wasm OUT.js PLAIN.js');
  process.exit(2);
}
const fail = (message) => {
  console.error(`relax-wasm: ${wasmPath}: ${message}`);
  process.exit(1);
};
const PROTOTYPE = [0xfd, 0xaf, 0x01];
const FINAL = [0xfd, 0x85, 0x02];

const bytes = fs.readFileSync(wasmPath);
const uleb = (at) => {
  let value = 0, shift = 0, b;
  do {
    b = bytes[at++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
  } while (b & 0x80);
  return { value, at };
};
let code = null;
for (let at = 8; at < bytes.length;) {
  const id = bytes[at];
  const size = uleb(at + 1);
  if (id === 10) code = { start: size.at, end: size.at + size.value };
  at = size.at + size.value;
}
if (!code) fail('no code section');

const matches = [];
for (let i = code.start; i + 3 <= code.end; i++)
  if (bytes[i] === PROTOTYPE[0] && bytes[i + 1] === PROTOTYPE[1] && bytes[i + 2] === PROTOTYPE[2]) matches.push(i);
const text = execFileSync('wasm-dis', [wasmPath], { maxBuffer: 1 << 30, encoding: 'utf8' });
const instructions = (text.match(/\(f32x4\.relaxed_fma\b/g) ?? []).length;
if (instructions === 0) fail('no f32x4.relaxed_fma instruction: was kernels_wasm.cpp built with ATTN_WASM_RELAXED?');
if (matches.length !== instructions)
  fail(`${matches.length} byte matches of 0xfd 0xaf 0x01 in the code section but ${instructions} relaxed_fma instructions`);
for (const i of matches) bytes.set(FINAL, i);
if (!WebAssembly.validate(bytes)) fail('does not validate after the rewrite (is node run with --experimental-wasm-relaxed-simd?)');
fs.writeFileSync(wasmPath, bytes);

const glue = fs.readFileSync(gluePath, 'utf8').replaceAll(path.basename(wasmPath), path.basename(plainGluePath, '.js') + '.wasm');
if (glue !== fs.readFileSync(plainGluePath, 'utf8')) fail(`${gluePath} differs from ${plainGluePath} beyond the file name`);
console.log(`relax-wasm: ${path.basename(wasmPath)}: ${matches.length} multiply-adds now f32x4.relaxed_madd`);
