// A small seeded generator for the training tasks (tasks.js draws every sequence from it), the
// same numbers in every JS engine: 32-bit integer arithmetic only (Math.imul, >>>), no Math.random
// and no floating-point rounding on the way to a token. Worker, page, Node and the parity script
// (scripts/task-batches.mjs prints what it draws) all share it.

// mulberry32's mixer on a 32-bit state: a full-period 2^32 stream that passes the usual
// statistical batteries for this size, and is two lines in any language.
function next32(state) {
  let z = state.s = (state.s + 0x6d2b79f5) | 0;
  z = Math.imul(z ^ (z >>> 15), z | 1);
  z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
  return (z ^ (z >>> 14)) >>> 0;
}

// splitmix32-style finaliser: folds (seed, stream) into one well-mixed start state, so the
// training stream and the held-out stream of one seed share nothing but the seed.
export function mix32(a, b = 0) {
  let z = (Math.imul(a | 0, 0x9e3779b1) ^ Math.imul(b | 0, 0x85ebca77)) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
  z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
  return (z ^ (z >>> 15)) >>> 0;
}

// Named streams of one seed: training batches, held-out sequences and the fixed heatmap sample
// must never draw from one another.
export const STREAM = Object.freeze({ train: 1, heldout: 2, sample: 3 });

// rng.u32() -> [0, 2^32); rng.int(n) -> [0, n) for n < 2^21 (the product stays below 2^53, so
// the floor is exact in every engine); rng.shuffle / rng.choose for token sets.
export function createRng(seed, stream = 0) {
  const state = { s: mix32(seed, stream) | 0 };
  const u32 = () => next32(state);
  const int = (n) => Math.floor((u32() * n) / 4294967296);
  return {
    u32,
    int,
    // Fisher-Yates in place
    shuffle(arr) {
      for (let i = arr.length - 1; i > 0; i--) {
        const j = int(i + 1);
        const t = arr[i]; arr[i] = arr[j]; arr[j] = t;
      }
      return arr;
    },
    // k distinct values of [lo, lo + n), in random order (a partial Fisher-Yates)
    distinct(k, n, lo = 0) {
      const pool = Array.from({ length: n }, (_, i) => lo + i);
      for (let i = 0; i < k; i++) {
        const j = i + int(n - i);
        const t = pool[i]; pool[i] = pool[j]; pool[j] = t;
      }
      return pool.slice(0, k);
    },
    get state() { return state.s >>> 0; },
  };
}
