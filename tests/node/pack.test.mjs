// The npm package: `npm pack` of a built tree holds the custom element (dist/, with the page it
// frames and the example lesson) and the JS API with its WASM; installed into an empty project,
// the API runs the core under Node and the element resolves by its export name.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { buildSite } from '../../scripts/measure-size.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'attn-pack-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('npm pack gives an installable package: the element and the JS API', { timeout: 240000 }, async () => {
  await buildSite(join(root, 'dist'));
  // no file twice in the site (issue 33: dist/ held each WASM build twice)
  const byHash = new Map();
  for (const f of readdirSync(join(root, 'dist'), { recursive: true })) {
    const path = join(root, 'dist', f);
    if (!statSync(path).isFile()) continue;
    const hash = createHash('sha256').update(readFileSync(path)).digest('hex');
    assert.ok(!byHash.has(hash), `dist/${f} is dist/${byHash.get(hash)} again`);
    byHash.set(hash, f);
  }
  const [info] = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], { cwd: root, encoding: 'utf8' }));
  const files = new Set(info.files.map((f) => f.path));
  for (const f of ['package.json', 'README.md', 'dist/attention-playground.js', 'dist/index.html', 'dist/examples/lesson.html',
    'bindings/attention.mjs', 'bindings/cli.mjs', 'build/wasm/attention.js', 'build/wasm/attention.wasm', 'build/wasm/attention-relaxed.wasm',
    'build/wasm/attention-fast.js', 'build/wasm/attention-fast.wasm', 'build/wasm/attention-fast-relaxed.wasm']) {
    assert.ok(files.has(f), `${f} is in the package`);
  }
  for (const f of files) assert.doesNotMatch(f, /^(tests|core|scripts|node_modules|build\/native)\//, `${f} is not shipped`);
  console.log(`# package: ${info.filename}, ${info.files.length} files, ${(info.size / 1000).toFixed(1)} KB packed, ${(info.unpackedSize / 1000).toFixed(1)} KB unpacked`);

  // Installed into an empty project (no registry needed: the package has no dependencies).
  const project = join(tmp, 'course');
  const dir = join(project, 'node_modules', info.name);
  mkdirSync(dir, { recursive: true });
  execFileSync('tar', ['-xzf', join(tmp, info.filename), '-C', dir, '--strip-components=1']);
  writeFileSync(join(project, 'package.json'), '{"type": "module", "private": true}\n');
  writeFileSync(join(project, 'check.mjs'), `
    import { loadAttention } from '${info.name}/api';
    import * as main from '${info.name}';
    const core = await loadAttention();
    const r = core.run({ module: 'softmax', inputs: [{ name: 'x', shape: [3], data: [1, 2, 3] }] });
    const element = import.meta.resolve('${info.name}/element');
    console.log(JSON.stringify({ version: core.version(), out: Array.from(r.outputs[0].data), sameApi: main.loadAttention === loadAttention, element }));
  `);
  const out = JSON.parse(execFileSync('node', ['check.mjs'], { cwd: project, encoding: 'utf8' }));
  const e = [Math.exp(-2), Math.exp(-1), 1].map((x) => x / (Math.exp(-2) + Math.exp(-1) + 1));
  out.out.forEach((v, i) => assert.ok(Math.abs(v - e[i]) < 1e-6, `softmax ${v} vs ${e[i]}`));
  assert.equal(out.version, JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
  assert.ok(out.sameApi, 'in Node the package entry is the JS API');
  const elementFile = fileURLToPath(out.element);
  assert.ok(elementFile.endsWith('dist/attention-playground.js') && existsSync(elementFile));
  assert.match(readFileSync(elementFile, 'utf8'), /customElements\.define\(\s*["']attention-playground["']/);
});
