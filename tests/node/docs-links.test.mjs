// The front door and the docs (issue 33): README.md at most 300 lines and free of paths outside
// the repository (`../shared`: a clone has no such folder); every relative link or image of
// README.md and docs/*.md names a file or folder of the repository.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const docs = ['README.md', ...readdirSync(join(root, 'docs'), { recursive: true }).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];

// [{target, line}] of a Markdown text's links and images: [text](target) and ![alt](target),
// outside code (fenced blocks and `spans`).
export function links(markdown) {
  const out = [];
  let fenced = false;
  markdown.split('\n').forEach((line, i) => {
    if (/^\s*```/.test(line)) { fenced = !fenced; return; }
    if (fenced) return;
    const text = line.replace(/`[^`]*`/g, '');
    for (const m of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: m[1], line: i + 1 });
  });
  return out;
}

const external = (target) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#');

test('README.md is at most 300 lines and points at nothing outside the repository', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const lines = readme.trimEnd().split('\n').length;
  assert.ok(lines <= 300, `README.md has ${lines} lines`);
  assert.doesNotMatch(readme, /\.\.\/shared/);
});

test('every relative link of README.md and docs/ resolves to a file of the repository', () => {
  const broken = [];
  let count = 0;
  for (const doc of docs) {
    const text = readFileSync(join(root, doc), 'utf8');
    for (const { target, line } of links(text)) {
      if (external(target)) continue;
      count++;
      const path = join(root, dirname(doc), decodeURIComponent(target.split('#')[0]));
      if (!path.startsWith(root) || !existsSync(path)) broken.push(`${doc}:${line}: ${target} (${relative(root, path)})`);
    }
  }
  assert.deepEqual(broken, []);
  assert.ok(count >= 20, `${count} relative links checked`);
});

test('the link reader: links and images outside code, external ones told apart', () => {
  const found = links('see [a](docs/a.md) and ![b](b.png "t")\n`[c](not.md)`\n```\n[d](no.md)\n```\n[e](https://x.y) [f](#top)');
  assert.deepEqual(found.map((l) => l.target), ['docs/a.md', 'b.png', 'https://x.y', '#top']);
  assert.deepEqual(found.filter((l) => !external(l.target)).map((l) => l.target), ['docs/a.md', 'b.png']);
});
