// The core's includes against its layer order (core/LAYERS.md, first column of its table, lowest
// first): a file of core/<layer>/ may include "<other>/..." only where <other> is its own layer or
// one below; core/attention.hpp (the table of contents) and core/cli/ may include any. Fails on an
// upward edge, naming the file, its line and both layers.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const core = fileURLToPath(new URL('../../core/', import.meta.url));

export function layerOrder(markdown) {
  const rows = markdown.split('\n').filter((l) => /^\|\s*`[a-z]+`\s*\|/.test(l));
  return rows.map((l) => /`([a-z]+)`/.exec(l)[1]);
}

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.(cpp|hpp)$/.test(e.name) ? [path] : [];
  });
}

// [{file, line, from, to}] for every include that climbs. order: layer names, lowest first.
export function upwardIncludes(files, order) {
  const rank = new Map(order.map((name, i) => [name, i]));
  const found = [];
  for (const { path, text } of files) {
    const from = path.split('/')[0];
    if (!rank.has(from) || from === 'cli') continue;   // attention.hpp, cli/: above every layer
    text.split('\n').forEach((line, i) => {
      const m = /^\s*#\s*include\s+"([a-z_]+)\/[^"]+"/.exec(line);
      if (!m) return;
      const to = m[1];
      if (!rank.has(to)) found.push({ path, line: i + 1, from, to, why: `"${to}" is not a layer of core/LAYERS.md` });
      else if (rank.get(to) > rank.get(from)) found.push({ path, line: i + 1, from, to, why: `${from} includes ${to}, a layer above it` });
    });
  }
  return found;
}

test('core/LAYERS.md names every folder of core/ once, lowest first', () => {
  const order = layerOrder(readFileSync(join(core, 'LAYERS.md'), 'utf8'));
  const folders = readdirSync(core, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  assert.deepEqual([...order].sort(), folders);
  assert.equal(order[0], 'base');
});

test('no file of core/ includes a header of a layer above its own', () => {
  const order = layerOrder(readFileSync(join(core, 'LAYERS.md'), 'utf8'));
  const files = sources(core).map((p) => ({ path: relative(core, p), text: readFileSync(p, 'utf8') }));
  assert.ok(files.length > 50, `${files.length} files`);
  const up = upwardIncludes(files, order);
  assert.deepEqual(up.map((u) => `core/${u.path}:${u.line}: ${u.why}`), []);
});

test('the check itself: an upward include is found, a downward one is not', () => {
  const order = ['base', 'tape', 'run'];
  const files = [
    { path: 'tape/a.cpp', text: '#include "base/error.hpp"\n#include "tape/tape.hpp"\n' },
    { path: 'base/b.cpp', text: '#include <vector>\n#include "run/train.hpp"\n' },
    { path: 'run/c.cpp', text: '#include "gone/x.hpp"\n' },
  ];
  const up = upwardIncludes(files, order);
  assert.deepEqual(up.map((u) => [u.path, u.line, u.to]), [['base/b.cpp', 2, 'run'], ['run/c.cpp', 1, 'gone']]);
});
