// Turns the relaxed-SIMD build's multiply-adds into the final relaxed-SIMD instruction, in place.
//   node --experimental-wasm-relaxed-simd scripts/relax-wasm.mjs attention-relaxed.wasm attention-relaxed.js attention.js
// Debian's clang 14 (Emscripten 3.1.6) compiles __builtin_wasm_fma_f32x4 to the relaxed-SIMD
// proposal's prototype opcode 0xfd 0xaf 0x01 (binaryen 108 prints it as f32x4.relaxed_fma), which
// no shipping engine accepts. The final f32x4.relaxed_madd is 0xfd 0x85 0x02: as long, and the same
// stack (a, b, c -> a * b + c), so each instruction is rewritten byte for byte and nothing else in
// the module moves. The code section is walked instruction by instruction (decodeBodies: every
// opcode's immediates skipped as the binary format defines them), so only opcodes are rewritten,
// never the same bytes inside an immediate (a v128.const or an offset, as link-time optimization
// makes them); the count must equal the relaxed_fma instructions binaryen's disassembler finds,
// and afterwards the module must validate in this V8 with relaxed SIMD on. Last, the build's JS glue
// must be the plain build's but for the file name, so bindings/attention.mjs gives either binary to one glue.
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
// The build's JS glue must be the plain build's but for the wasm file's name: one glue loads any
// build. A threaded build keeps its own glue (its workers import it by URL: bindings/attention.mjs),
// which differs beyond the name: the module's imports (JavaScript exceptions' invoke_* among them)
// are named in the order the link met them, and it holds addresses in the module's memory.
function checkGlue() {
  const plainGlue = fs.readFileSync(plainGluePath, 'utf8');
  if (plainGlue.includes('ENVIRONMENT_IS_PTHREAD')) return;
  const glue = fs.readFileSync(gluePath, 'utf8').replaceAll(path.basename(wasmPath), path.basename(plainGluePath, '.js') + '.wasm');
  if (glue !== plainGlue) fail(`${gluePath} differs from ${plainGluePath} beyond the file name`);
}

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

// The offsets of every 0xfd-prefixed opcode whose sub-opcode is the prototype's (0xaf 0x01 = 175),
// found by decoding each function body from its locals to its end.
function decodeBodies(start, end) {
  const found = [];
  let at = start;
  const u32 = () => { const r = uleb(at); at = r.at; return r.value; };
  const sleb = () => { let b; do b = bytes[at++]; while (b & 0x80); };
  const memarg = () => { u32(); u32(); };
  const blocktype = () => { if (bytes[at] === 0x40 || (bytes[at] >= 0x6f && bytes[at] <= 0x7f)) at++; else sleb(); };
  const count = u32();
  for (let f = 0; f < count; f++) {
    const size = u32(), bodyEnd = at + size;
    for (let groups = u32(); groups > 0; groups--) { u32(); at++; }   // locals: count, valtype
    while (at < bodyEnd) {
      const op = bytes[at++];
      if ([0x02, 0x03, 0x04, 0x06].includes(op)) blocktype();                        // block loop if try
      else if ([0x07, 0x08, 0x09, 0x0c, 0x0d, 0x10, 0x18, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0xd2].includes(op)) u32();
      else if (op === 0x0e) { for (let n = u32(); n >= 0; n--) u32(); }              // br_table: targets + default
      else if (op === 0x11) { u32(); u32(); }                                          // call_indirect
      else if (op === 0x1c) { for (let n = u32(); n > 0; n--) at++; }                  // select t*
      else if (op >= 0x28 && op <= 0x3e) memarg();
      else if (op === 0x3f || op === 0x40 || op === 0xd0) at++;                        // memory.size/grow, ref.null
      else if (op === 0x41 || op === 0x42) sleb();                                     // i32/i64.const
      else if (op === 0x43) at += 4;
      else if (op === 0x44) at += 8;
      else if (op === 0xfc) {
        const sub = u32();
        if (sub === 8) { u32(); at++; } else if (sub === 10) at += 2; else if (sub === 11) at++;
        else if (sub === 12 || sub === 14) { u32(); u32(); } else if (sub === 9 || sub === 13 || (sub >= 15 && sub <= 17)) u32();
      } else if (op === 0xfd) {
        const here = at - 1, sub = u32();
        if (sub === 175) found.push(here);
        if (sub <= 11 || sub === 0x5c || sub === 0x5d) memarg();                      // loads, stores, load*_zero
        else if (sub === 12 || sub === 13) at += 16;                                   // v128.const, i8x16.shuffle
        else if (sub >= 21 && sub <= 34) at++;                                          // extract / replace lane
        else if (sub >= 0x54 && sub <= 0x5b) { memarg(); at++; }                       // load / store lane
      }
    }
    if (at !== bodyEnd) fail(`function ${f}: decoding ended at byte ${at}, its body ends at ${bodyEnd}`);
  }
  return found;
}

const matches = decodeBodies(code.start, code.end);
const text = execFileSync('wasm-dis', [wasmPath], { maxBuffer: 1 << 30, encoding: 'utf8' });
const instructions = (text.match(/\(f32x4\.relaxed_fma\b/g) ?? []).length;
if (instructions === 0) fail('no f32x4.relaxed_fma instruction: was kernels_wasm.cpp built with ATTN_WASM_RELAXED?');
if (matches.length !== instructions)
  fail(`${matches.length} 0xfd 0xaf 0x01 opcodes decoded in the code section but ${instructions} relaxed_fma instructions`);
for (const i of matches) bytes.set(FINAL, i);
if (!WebAssembly.validate(bytes)) fail('does not validate after the rewrite (is node run with --experimental-wasm-relaxed-simd?)');
fs.writeFileSync(wasmPath, bytes);

checkGlue();
console.log(`relax-wasm: ${path.basename(wasmPath)}: ${matches.length} multiply-adds now f32x4.relaxed_madd`);
