// npm test, after setup and build: runs the three suites and sums them into one closing line
//   N passed, N failed
// 1. native: CTest over the Catch2 tests (build/native), and again built with ASan + UBSan
//    (build/native-asan) when that tree exists (scripts/build.sh test makes it)
// 2. node:   node:test over tests/node (the WASM core under Node), and core.test.mjs again on the
//    relaxed-SIMD build
// 3. browser: node:test over tests/browser, once per engine (tests/browser/harness.mjs): headless
//    /usr/bin/chromium, then /usr/bin/firefox-esr, every suite in both; BROWSER=chromium|firefox
//    runs one (both: the default)
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

const only = process.argv[2];  // optional: native | node | browser
const suites = [];

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28, ...opts });
  process.stdout.write(r.stdout ?? '');
  process.stderr.write(r.stderr ?? '');
  return r;
}

function ctest(dir, label) {
  const r = run('ctest', ['--test-dir', dir, '--output-on-failure', '-j', '2']);
  const m = /(\d+)% tests passed, (\d+) tests failed out of (\d+)/.exec(r.stdout ?? '');
  if (!m) return { label, passed: 0, failed: 1, note: 'ctest printed no summary' };
  const total = Number(m[3]), failed = Number(m[2]);
  return { label, passed: total - failed, failed: failed + (r.status !== 0 && failed === 0 ? 1 : 0) };
}

function nodeTests(dir, label, env = process.env, { only: names = null, nodeArgs = [] } = {}) {
  const files = readdirSync(dir).filter((f) => f.endsWith('.test.mjs') && (!names || names.includes(f))).map((f) => `${dir}/${f}`);
  if (files.length === 0) return { label, passed: 0, failed: 1, note: `no tests in ${dir}` };
  const r = run(process.execPath, [...nodeArgs, '--test', '--test-reporter=tap', '--test-concurrency=1', ...files], { env });
  const pass = /^# pass (\d+)/m.exec(r.stdout ?? ''), fail = /^# fail (\d+)/m.exec(r.stdout ?? '');
  if (!pass || !fail) return { label, passed: 0, failed: 1, note: 'node --test printed no summary' };
  return { label, passed: Number(pass[1]), failed: Number(fail[1]) + (r.status !== 0 && Number(fail[1]) === 0 ? 1 : 0) };
}

if (!only || only === 'native') {
  suites.push(ctest('build/native', 'native (CTest)'));
  if (existsSync('build/native-asan/CTestTestfile.cmake')) suites.push(ctest('build/native-asan', 'native ASan+UBSan (CTest)'));
}
if (!only || only === 'node') {
  suites.push(nodeTests('tests/node', 'wasm under Node'));
  // the relaxed-SIMD build (attention-relaxed.wasm) on the core's cases: Node 20 validates relaxed
  // SIMD behind this flag only (Chromium has it on: the browser pass runs that build too)
  suites.push(nodeTests('tests/node', 'wasm (relaxed SIMD) under Node', { ...process.env, ATTN_WASM_SIMD: 'relaxed' },
    { only: ['core.test.mjs', 'builds.test.mjs'], nodeArgs: ['--experimental-wasm-relaxed-simd'] }));
}
const ENGINE_NAMES = { chromium: 'Chromium', firefox: 'Firefox' };
const engines = !process.env.BROWSER || process.env.BROWSER === 'both' ? Object.keys(ENGINE_NAMES) : [process.env.BROWSER];
// CI's 30 minutes on 2 cores hold Chromium's whole browser pass and Firefox's pass of every suite,
// where a case that repeats in Firefox what another Firefox case covers is trimmed (harness.mjs
// heavy(): the soak's counts, the Chinese training run); BROWSER_FULL=1 runs those too.
if (!only || only === 'browser') {
  for (const engine of engines) {
    if (!ENGINE_NAMES[engine]) throw new Error(`BROWSER (${engine}) must be one of ${Object.keys(ENGINE_NAMES).join(', ')}, or both (the default)`);
    const t0 = Date.now();
    const s = nodeTests('tests/browser', `browser (headless ${ENGINE_NAMES[engine]})`, { ...process.env, BROWSER: engine });
    suites.push({ ...s, note: [s.note, `${((Date.now() - t0) / 1000).toFixed(0)} s`].filter(Boolean).join('; ') });
  }
}

let passed = 0, failed = 0;
console.log('\nsuite summary');
for (const s of suites) {
  passed += s.passed;
  failed += s.failed;
  console.log(`  ${s.label}: ${s.passed} passed, ${s.failed} failed${s.note ? ` (${s.note})` : ''}`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
