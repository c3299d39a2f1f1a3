// A child process without blocking the others (scripts/run-tests.mjs runs its Catch2 shards side by
// side, tests/node/cli.test.mjs a fixture per core): {status, stdout, stderr} once it ends; a
// process that cannot start gives status -1 and why in stderr. env: the child's, if not this one's.
import { spawn } from 'node:child_process';

export function started(cmd, args, env = process.env) {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { env });
    let stdout = '', stderr = '';
    p.stdout.setEncoding('utf8').on('data', (d) => { stdout += d; });
    p.stderr.setEncoding('utf8').on('data', (d) => { stderr += d; });
    p.on('error', (e) => resolve({ status: -1, stdout, stderr: `${stderr}${e.message}\n` }));
    p.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
