// What npm test makes once and several suites use: the built site (course, experiments and pack
// tests, in both engines' passes) and the executed notebook (both engines). scripts/run-tests.mjs
// names a folder for the run (ATTN_TEST_CACHE) where the first result of each kind is kept; later
// ones in the same run copy it (the sources and builds do not change during a run). Outside npm
// test (one suite run by hand, npm run build) everything is made each time.
import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

// Fills `dir` (emptied first) with what make(dir) writes there, or with a copy of what it wrote
// earlier in this run. A result is renamed into the folder whole, so a copy never sees half of one.
export async function madeOnce(name, dir, make) {
  const root = process.env.ATTN_TEST_CACHE;
  const kept = root ? join(root, name) : null;
  rmSync(dir, { recursive: true, force: true });
  if (kept && existsSync(kept)) {
    cpSync(kept, dir, { recursive: true });
    return;
  }
  mkdirSync(dir, { recursive: true });
  await make(dir);
  if (kept) {
    const part = `${kept}.${process.pid}`;
    cpSync(dir, part, { recursive: true });
    try { renameSync(part, kept); } catch { rmSync(part, { recursive: true, force: true }); }  // kept meanwhile by another suite
  }
}
