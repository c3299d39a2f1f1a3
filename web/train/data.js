// What training mode's views are given, computed from the run (training.js) and the task: the
// chart's lines, the snapshot the scrubber shows, each head's map, scores and labels, the scores
// over training, the sample's predictions, the numbers of the status line. Pure: no DOM.
// train-page.js calls these on every animation frame that has news and hands the data to views/train-*.js.

import { headLabels } from './patterns.js';

const CHART_POINTS = 400;   // a line of the chart holds at most this many points

// [[step, value]] of a per-step series (losses: step i + 1 is losses[i]), averaged over buckets
// so a long run draws CHART_POINTS points.
function bucketed(values, count) {
  const per = Math.max(1, Math.ceil(count / CHART_POINTS));
  const out = [];
  for (let i = 0; i < count; i += per) {
    const end = Math.min(count, i + per);
    let sum = 0;
    for (let k = i; k < end; k++) sum += values[k];
    out.push([end, sum / (end - i)]);
  }
  return out;
}

// The chart: {loss, heldout, train ([[step, value]]), maxStep (the run's length or further),
// maxLoss, at (the scrubbed step, or null when following the live run)}.
export function chartData(run, at) {
  const loss = bucketed(run.losses, run.count);
  const maxLoss = loss.reduce((m, [, v]) => Math.max(m, v), 0);
  return {
    loss,
    heldout: run.accuracies.map((a) => [a.step, a.heldoutAccuracy]),
    train: run.accuracies.map((a) => [a.step, a.trainAccuracy]),
    maxStep: Math.max(run.config?.steps ?? 1, run.step, 1),
    maxLoss: maxLoss > 0 ? maxLoss : 1,
    at,
  };
}

// The snapshot the scrubber points at: index `at` of the history, or the latest (at = null).
export function shownSnapshot(run, at) {
  const { snapshots } = run;
  if (!snapshots.length) return null;
  return at === null || at >= snapshots.length ? snapshots.at(-1) : snapshots[Math.max(0, at)];
}

// The patterns a head's scores are plotted for: the four every task can show, and the task's own.
export function plottedPatterns(task) {
  const base = ['previous', 'self', 'antiDiagonal', 'induction'];
  const own = task?.pattern.score;
  return own && !base.includes(own) ? [...base, own] : base;
}

// The sample's tokens as text labels (one character each; tasks.js vocabularies).
export const sampleTokens = (task) => Array.from(task.sample.idx, (id) => task.vocab[id]);

// One entry per head of the shown snapshot: {layer, head, slice: {rows, cols, data} (its T×T map),
// scores, labels (patterns.js headLabels: the patterns it shows at >= 0.5, strongest first)}.
export function headsData(snapshot) {
  if (!snapshot) return [];
  const T = snapshot.length, H = snapshot.heads, size = T * T;
  return snapshot.attention.flatMap((weights, layer) => Array.from({ length: H }, (_, head) => {
    const scores = snapshot.scores[layer][head];
    return { layer, head, slice: { rows: T, cols: T, data: weights.subarray(head * size, (head + 1) * size) }, scores, labels: headLabels(scores) };
  }));
}

// Each head's scores over the recorded steps: [{pattern: [[step, score]]}], heads in headsData order.
export function scoreSeries(run, patterns) {
  const first = run.snapshots[0];
  if (!first) return [];
  const heads = first.scores.flatMap((layer) => layer.map(() => Object.fromEntries(patterns.map((p) => [p, []]))));
  for (const s of run.snapshots) {
    s.scores.flat().forEach((scores, k) => {
      for (const p of patterns) heads[k]?.[p].push([s.step, scores[p]]);
    });
  }
  return heads;
}

// The sample at the shown step, position by position: {tokens, rows: [{input, target (null where
// nothing can be predicted), predicted, correct}], right, scored}.
export function sampleData(snapshot, task) {
  if (!snapshot || !task) return null;
  const { idx, target } = task.sample;
  const rows = Array.from(idx, (id, i) => {
    const want = target[i] >= 0 ? task.vocab[target[i]] : null;
    const predicted = task.vocab[snapshot.predictions[i]];
    return { input: task.vocab[id], target: want, predicted, correct: want !== null && predicted === want };
  });
  const scored = rows.filter((r) => r.target !== null).length;
  return { step: snapshot.step, rows, right: rows.filter((r) => r.correct).length, scored };
}

// The numbers of the status line: {step, steps, loss, heldout, trainAccuracy, stepsPerSecond}.
export function statsData(run) {
  const last = run.accuracies.at(-1);
  return {
    step: run.step, steps: run.config?.steps ?? 0, loss: run.count ? run.losses[run.count - 1] : NaN,
    heldout: last?.heldoutAccuracy ?? null, trainAccuracy: last?.trainAccuracy ?? null, stepsPerSecond: run.stepsPerSecond,
  };
}

// window.playground.training(): {task, step, losses, accuracy, stepsPerSecond, threads (the
// worker's core's, once running), running}.
export function trainingSummary(run, taskId) {
  return {
    task: run.task?.id ?? taskId ?? null, step: run.step, losses: Array.from(run.losses.subarray(0, run.count)),
    accuracy: run.accuracies.at(-1)?.heldoutAccuracy ?? null, stepsPerSecond: run.stepsPerSecond,
    threads: run.threads, running: run.running,
  };
}

// The latest snapshot's heads for scripts and tests: [{layer, head, scores, labels}].
export function headsSummary(run) {
  return headsData(run.snapshots.at(-1) ?? null).map(({ layer, head, scores, labels }) => ({ layer, head, scores: { ...scores }, labels }));
}
