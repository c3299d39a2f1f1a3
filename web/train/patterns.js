// Per-head pattern scores: what an attention head of the trained model has become, as numbers in
// [0, 1] the page shows as labels and plots over training. engine.js scores each snapshot of the
// sample sequence (tasks.js: task.sample); tests/node/train-tasks.test.mjs checks ideal maps.
//
// A map is one head's attention weights for one sequence: T×T, row i the query, column j the key,
// row-major (a (1,H,T,T) step's head h is weights.subarray(h*T*T, (h+1)*T*T)); causal, so
// row i spreads its mass over j <= i. Every score is the mean, over a set of rows, of the mass a
// row puts on the cells the pattern names, so 1 means the head does exactly that and 0 never.
// Row 0 is left out everywhere: it can only look at itself, which says nothing about the head.
//   previous      j = i - 1, every row (a previous-token head)
//   self          j = i, every row (the diagonal)
//   offset        j = i - d for the task's d (copy: the sequence length), the scored rows
//   bestOffset    j = i - d over every row, for the d in 2..T/2 that scores highest: {score,
//                 offset}; the offset score of a task without its own d (d = 1 is `previous`;
//                 longer d would rest on too few rows to mean anything)
//   antiDiagonal  j = 2p - 1 - i, p the separator's position (mid-sequence without one): the
//                 output mirrored about the separator, as reversing needs
//   induction     j = q + 1, q the previous occurrence of token[i] (rows whose token occurred
//                 before): the token that followed it last time
//   source        every j holding the token row i must predict (target[i]): "read the answer
//                 where it sits" (sort, max)
// "The scored rows" are the rows with a target (the part of the output that can be predicted)
// when the context has targets, else every row.

// Mean over rows of mass(i) (rows with mass(i) === null are skipped); 0 when no row counts.
function meanOverRows(rows, mass) {
  let sum = 0, n = 0;
  for (const i of rows) {
    const m = mass(i);
    if (m === null) continue;
    sum += m;
    n++;
  }
  return n ? sum / n : 0;
}

const allRows = (T) => Array.from({ length: T - 1 }, (_, k) => k + 1);

// The rows with a target (never row 0), or all rows.
export function scoredRows(T, targets) {
  if (!targets) return allRows(T);
  const rows = [];
  for (let i = 1; i < T; i++) if (targets[i] >= 0) rows.push(i);
  return rows;
}

const cell = (map, T, i, j) => (j >= 0 && j <= i ? map[i * T + j] : null);

export const previousScore = (map, T) => meanOverRows(allRows(T), (i) => cell(map, T, i, i - 1));
export const selfScore = (map, T) => meanOverRows(allRows(T), (i) => cell(map, T, i, i));
export const offsetScore = (map, T, d, rows = allRows(T)) => meanOverRows(rows, (i) => cell(map, T, i, i - d));

export function bestOffset(map, T) {
  let best = { score: 0, offset: 2 };
  for (let d = 2; d <= T / 2; d++) {
    const score = offsetScore(map, T, d);
    if (score > best.score) best = { score, offset: d };
  }
  return best;
}

// p: the separator's position in the input, or -1 (then the middle of the sequence).
export function antiDiagonalScore(map, T, p, rows = allRows(T)) {
  const mid = p >= 0 ? p : Math.ceil(T / 2);
  return meanOverRows(rows.filter((i) => i >= mid), (i) => cell(map, T, i, 2 * mid - 1 - i));
}

// previous[i]: the last q < i with tokens[q] === tokens[i], or -1.
export function previousOccurrence(tokens) {
  const last = new Map();
  return Array.from(tokens, (tok, i) => {
    const q = last.has(tok) ? last.get(tok) : -1;
    last.set(tok, i);
    return q;
  });
}

export function inductionScore(map, T, tokens) {
  const prev = previousOccurrence(tokens);
  return meanOverRows(allRows(T), (i) => (prev[i] < 0 ? null : cell(map, T, i, prev[i] + 1)));
}

export function sourceScore(map, T, tokens, targets) {
  return meanOverRows(scoredRows(T, targets), (i) => {
    let m = 0;
    for (let j = 0; j <= i; j++) if (tokens[j] === targets[i]) m += map[i * T + j];
    return m;
  });
}

// All scores of one head. context: {tokens (T ids), targets? (T, negative = no target),
// separator? (position or -1), offset? (the task's d)}.
export function scoreHead(map, T, context) {
  const { tokens, targets = null, separator = -1, offset = 0 } = context;
  const rows = scoredRows(T, targets);
  const best = bestOffset(map, T);
  return {
    previous: previousScore(map, T),
    self: selfScore(map, T),
    offset: offset > 0 ? offsetScore(map, T, offset, rows) : best.score,
    bestOffset: best.offset,
    antiDiagonal: antiDiagonalScore(map, T, separator, rows),
    induction: inductionScore(map, T, tokens),
    source: targets ? sourceScore(map, T, tokens, targets) : 0,
  };
}

// weights: a (1,H,T,T) attention step's data -> one score object per head.
export function scoreLayer(weights, H, T, context) {
  return Array.from({ length: H }, (_, h) => scoreHead(weights.subarray(h * T * T, (h + 1) * T * T), T, context));
}

export const PATTERNS = Object.freeze(['previous', 'self', 'offset', 'antiDiagonal', 'induction', 'source']);

// The patterns a head shows at >= threshold, strongest first: the head's labels.
export function headLabels(scores, threshold = 0.5) {
  return PATTERNS.filter((p) => scores[p] >= threshold).sort((a, b) => scores[b] - scores[a]);
}

// Label texts and their longer help, for the page (locales/train.en.js, train.zh.js);
// OFFSET_BY_KEY names the distance: t(OFFSET_BY_KEY, {d: scores.bestOffset}).
export const PATTERN_TEXT_KEYS = Object.freeze({
  previous: 'trainPattern.previous', self: 'trainPattern.self', offset: 'trainPattern.offset',
  antiDiagonal: 'trainPattern.antiDiagonal', induction: 'trainPattern.induction', source: 'trainPattern.source',
});
export const PATTERN_HELP_KEYS = Object.freeze({
  previous: 'trainPatternHelp.previous', self: 'trainPatternHelp.self', offset: 'trainPatternHelp.offset',
  antiDiagonal: 'trainPatternHelp.antiDiagonal', induction: 'trainPatternHelp.induction', source: 'trainPatternHelp.source',
});
export const OFFSET_BY_KEY = 'trainPattern.offsetBy';
