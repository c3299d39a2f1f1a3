// Reading tests/fixtures/ from Node (twin of tests/native/fixtures.hpp): names, expected values
// ("data" or base64 "data_b64"), and the tolerance check atol 1e-5, rtol 1e-4.
import { readdirSync, readFileSync } from 'node:fs';

export const fixturesDir = new URL('../fixtures/', import.meta.url);

export function fixtureNames() {
  return readdirSync(fixturesDir).filter((f) => f.endsWith('.scenario.json')).map((f) => f.slice(0, -'.scenario.json'.length)).sort();
}

export function readFixture(name) {
  const read = (suffix) => JSON.parse(readFileSync(new URL(`${name}${suffix}`, fixturesDir), 'utf8'));
  return { scenario: read('.scenario.json'), expected: read('.expected.json') };
}

export function values(t) {
  if (t.data_b64 !== undefined) {
    const b = Buffer.from(t.data_b64, 'base64');
    return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  }
  return Float32Array.from(t.data, Number);  // numbers, or "-Infinity", "Infinity", "NaN"
}

// {ok, maxAbs, worst}: a === b or |a - b| <= atol + rtol * |b| everywhere (b is PyTorch's value).
export function compare(a, b, atol = 1e-5, rtol = 1e-4) {
  let ok = a.length === b.length, maxAbs = 0, worst = -1;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] === b[i]) continue;  // also a masked -inf against -inf
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= atol + rtol * Math.abs(b[i]))) ok = false;
    if (!(d <= maxAbs)) { maxAbs = d; worst = i; }
  }
  return { ok, maxAbs, worst };
}
