// Executes three-seeds.ipynb as a teacher's notebook would run: the notebook page built into
// `dir`/bundle (web/vite.notebook.config.mjs, as `npm run build` does into dist/notebook/), then
// Debian's `jupyter nbconvert --to html --execute` with the Python package of this checkout
// (bindings/python, found through that bundle). Used by tests/browser/notebook.test.mjs and
// scripts/screenshot-notebook.mjs.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'vite';
import { madeOnce } from '../../scripts/made-once.mjs';

const here = new URL('.', import.meta.url).pathname;

// {html: the exported file's path, expected: [{module, shape, data}] (PyTorch's output of each view,
// written by the notebook), executeMs (null: executed earlier in this npm test run, whose result
// was copied: scripts/made-once.mjs)}. Throws with nbconvert's output when a cell fails.
export async function runNotebook(dir) {
  const expectedFile = join(dir, 'expected.json');
  let executeMs = null;
  await madeOnce('notebook', dir, async () => {
    const bundle = join(dir, 'bundle');
    await build({ configFile: new URL('../../web/vite.notebook.config.mjs', import.meta.url).pathname, logLevel: 'error', build: { outDir: bundle, emptyOutDir: true } });
    const t0 = performance.now();
    await promisify(execFile)('jupyter', ['nbconvert', '--to', 'html', '--execute', 'three-seeds.ipynb', '--output-dir', dir,
      '--ExecutePreprocessor.timeout=180'], {
      cwd: here, maxBuffer: 1 << 26,
      env: { ...process.env, ATTENTION_PLAYGROUND_BUNDLE: bundle, ATTENTION_PLAYGROUND_EXPECTED: expectedFile, PYDEVD_DISABLE_FILE_VALIDATION: '1' },
    });
    executeMs = performance.now() - t0;
  });
  return { html: join(dir, 'three-seeds.html'), expected: JSON.parse(readFileSync(expectedFile, 'utf8')), executeMs };
}
