// npm test, after setup and build: runs the three suites and sums them into one closing line
//   N passed, N failed
// 1. native: the Catch2 tests (build/native/attention_tests) in two processes side by side, each
//    given half of the test names (one process per test, as CTest runs them, spent CI's minutes
//    starting processes, and CTest split the names holding a ';' and ran none of those five), and
//    CTest's other tests (the CLI under valgrind, label valgrind); again built with ASan + UBSan
//    (build/native-asan) when that tree exists (scripts/build.sh test makes it)
// 2. node:   node:test over tests/node (the WASM core under Node), and core.test.mjs again on the
//    relaxed-SIMD build
// 3. browser: node:test over tests/browser, once per engine (tests/browser/harness.mjs): headless
//    /usr/bin/chromium, then /usr/bin/firefox-esr, every suite in both; BROWSER=chromium|firefox
//    runs one (both: the default)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { started } from './processes.mjs';

const only = process.argv[2];  // optional: native | node | browser
const suites = [];
// The built site and the executed notebook, made once for the run's suites (scripts/made-once.mjs)
process.env.ATTN_TEST_CACHE = mkdtempSync(join(tmpdir(), 'attn-run-'));
process.on('exit', () => rmSync(process.env.ATTN_TEST_CACHE, { recursive: true, force: true }));

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28, ...opts });
  process.stdout.write(r.stdout ?? '');
  process.stderr.write(r.stderr ?? '');
  return r;
}

function ctest(dir, label, args = []) {
  const r = run('ctest', ['--test-dir', dir, '--output-on-failure', '-j', '2', ...args]);
  if (/No tests were found/.test(`${r.stdout}${r.stderr}`)) return { label, passed: 0, failed: 0 };
  const m = /(\d+)% tests passed, (\d+) tests failed out of (\d+)/.exec(r.stdout ?? '');
  if (!m) return { label, passed: 0, failed: 1, note: 'ctest printed no summary' };
  const total = Number(m[3]), failed = Number(m[2]);
  return { label, passed: total - failed, failed: failed + (r.status !== 0 && failed === 0 ? 1 : 0) };
}

// The Catch2 binary's cases in `shards` processes at once: every name once, in a spec file per shard
// (Catch2's test-spec characters escaped), and each shard's count of cases checked against its names.
async function catchShards(dir, label, shards = Math.min(2, availableParallelism())) {
  const bin = join(dir, 'attention_tests');
  // (Catch2 v2 exits with the number of names listed)
  const list = spawnSync(bin, ['--list-test-names-only'], { encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=0' } });
  const names = (list.stdout ?? '').split('\n').map((x) => x.trimEnd()).filter(Boolean);
  if (list.error || names.length === 0) return { label, passed: 0, failed: 1, note: `${bin} listed no tests` };
  const tmp = mkdtempSync(join(tmpdir(), 'attn-catch-'));
  const parts = Array.from({ length: shards }, (_, k) => names.filter((_, i) => i % shards === k));
  const results = await Promise.all(parts.map((part, k) => {
    const spec = join(tmp, `shard${k}.txt`);
    writeFileSync(spec, part.map((name) => name.replace(/([\],[~*"\\])/g, '\\$1')).join('\n') + '\n');
    return started(bin, ['-f', spec]);
  }));
  rmSync(tmp, { recursive: true, force: true });
  let passed = 0, failed = 0;
  const notes = [];
  results.forEach((r, k) => {
    process.stdout.write(r.stdout);
    process.stderr.write(r.stderr);
    const ok = /All tests passed \(\d+ assertions? in (\d+) test cases?\)/.exec(r.stdout);
    const bad = /test cases: *(\d+) \|(?: *(\d+) passed \|)? *(\d+) failed/.exec(r.stdout);  // "N | F failed" when all did
    const [ran, p, f] = ok ? [Number(ok[1]), Number(ok[1]), 0] : bad ? bad.slice(1).map((x) => Number(x ?? 0)) : [0, 0, 0];
    passed += p;
    failed += f;
    if (ran !== parts[k].length) { failed += 1; notes.push(`shard ${k} ran ${ran} of its ${parts[k].length} cases`); }
    else if (r.status !== 0 && f === 0) { failed += 1; notes.push(`shard ${k} exited ${r.status}`); }
  });
  return { label, passed, failed, note: notes.join('; ') || undefined };
}

async function native(dir, label) {
  const cases = await catchShards(dir, label);
  const others = ctest(dir, label, ['-L', 'valgrind']);
  return { label, passed: cases.passed + others.passed, failed: cases.failed + others.failed, note: [cases.note, others.note].filter(Boolean).join('; ') || undefined };
}

// node:test over a folder's files, `concurrency` files at a time.
function nodeTests(dir, label, env = process.env, { only: names = null, nodeArgs = [], concurrency = 1 } = {}) {
  const files = readdirSync(dir).filter((f) => f.endsWith('.test.mjs') && (!names || names.includes(f))).map((f) => `${dir}/${f}`);
  if (files.length === 0) return { label, passed: 0, failed: 1, note: `no tests in ${dir}` };
  const r = run(process.execPath, [...nodeArgs, '--test', '--test-reporter=tap', `--test-concurrency=${concurrency}`, ...files], { env });
  const pass = /^# pass (\d+)/m.exec(r.stdout ?? ''), fail = /^# fail (\d+)/m.exec(r.stdout ?? '');
  if (!pass || !fail) return { label, passed: 0, failed: 1, note: 'node --test printed no summary' };
  return { label, passed: Number(pass[1]), failed: Number(fail[1]) + (r.status !== 0 && Number(fail[1]) === 0 ? 1 : 0) };
}

// A suite's result with its wall time in its note (the summary shows where CI's minutes go).
async function timed(run) {
  const t0 = Date.now();
  const s = await run();
  return { ...s, note: [s.note, `${((Date.now() - t0) / 1000).toFixed(0)} s`].filter(Boolean).join('; ') };
}

if (!only || only === 'native') {
  suites.push(await timed(() => native('build/native', 'native (Catch2 + CTest)')));
  if (existsSync('build/native-asan/CTestTestfile.cmake')) suites.push(await timed(() => native('build/native-asan', 'native ASan+UBSan (Catch2)')));
}
if (!only || only === 'node') {
  // two files at a time where there are two cores: each file is one process computing on one
  // thread (cli.test.mjs's pool and threads.test.mjs's threads aside), and none shares a file
  suites.push(await timed(() => nodeTests('tests/node', 'wasm under Node', process.env, { concurrency: Math.min(2, availableParallelism()) })));
  // the relaxed-SIMD build (attention-relaxed.wasm) on the core's cases: Node 20 validates relaxed
  // SIMD behind this flag only (Chromium has it on: the browser pass runs that build too)
  suites.push(await timed(() => nodeTests('tests/node', 'wasm (relaxed SIMD) under Node', { ...process.env, ATTN_WASM_SIMD: 'relaxed' },
    { only: ['core.test.mjs', 'builds.test.mjs'], nodeArgs: ['--experimental-wasm-relaxed-simd'] })));
}
const ENGINE_NAMES = { chromium: 'Chromium', firefox: 'Firefox' };
const engines = !process.env.BROWSER || process.env.BROWSER === 'both' ? Object.keys(ENGINE_NAMES) : [process.env.BROWSER];
// CI's 40 minutes on 2 cores hold Chromium's whole browser pass and Firefox's pass of every suite,
// where a case that repeats in Firefox what another Firefox case covers is trimmed (harness.mjs
// heavy(): the soak's counts, the Chinese training run, the whole-page axe audit, the second phone
// size, 360 px without touch); BROWSER_FULL=1 runs those too.
if (!only || only === 'browser') {
  for (const engine of engines) {
    if (!ENGINE_NAMES[engine]) throw new Error(`BROWSER (${engine}) must be one of ${Object.keys(ENGINE_NAMES).join(', ')}, or both (the default)`);
    suites.push(await timed(() => nodeTests('tests/browser', `browser (headless ${ENGINE_NAMES[engine]})`, { ...process.env, BROWSER: engine })));
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
