#!/usr/bin/env node
// Training mode's speed and quality in headless Chromium (playwright-core, the page served by Vite
// as in tests/browser/harness.mjs): the figures of docs/training.md.
//  1. Per task, from its default settings (#train=<task>): steps and seconds from pressing Train to
//     held-out accuracy >= 0.95 (the engine evaluates every 25 steps), then on to the run's end:
//     final accuracy, and the heads' pattern scores (the best head's score of the task's own
//     pattern, and the best induction score).
//  2. While induction trains (a 100000-step run): keystroke-to-redraw in the playground view, as
//     scripts/measure-redraw.mjs times it (keydown -> the page's input handler has recomputed and
//     redrawn; keydown -> the next frame), for the trained model (typing the task's letters) and
//     for the default preset's sentence.
//  3. While it trains and nobody types, and for comparison while it is paused: long tasks on the
//     page's main thread (PerformanceObserver 'longtask': > 50 ms) and the longest gap between two
//     animation frames.
//   node scripts/measure-training.mjs [--tasks copy,induction] [--keys 200] [--seconds 10] [--json out.json]
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { launch, openPage, startServer } from '../tests/browser/harness.mjs';
import { TASK_IDS, TASKS } from '../web/train/tasks.js';

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const tasks = opt('--tasks', TASK_IDS.join(',')).split(',').filter(Boolean);   // --tasks '' measures typing and frames only
const keysWanted = Number(opt('--keys', 200));
const seconds = Number(opt('--seconds', 10));
const jsonOut = opt('--json', null);

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  return { n: s.length, median: q(0.5), p95: q(0.95), max: s.at(-1) };
};

async function openTraining(context, url, hash) {
  const { page, errors } = await openPage(context, `${url}#${hash}`);
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.waitForFunction(() => document.querySelector('[data-testid="train-start"]:not([disabled])'), null, { timeout: 30000 });
  // The moment Train is pressed, and the first animation frame that sees held-out accuracy >= 0.95.
  await page.evaluate(() => {
    const m = { t0: 0, hit: null };
    window.__train = m;
    document.querySelector('[data-testid="train-start"]').addEventListener('click', () => { m.t0 = performance.now(); }, true);
    const watch = () => {
      const t = window.playground.training();
      if (m.t0 && !m.hit && (t.accuracy ?? 0) >= 0.95) m.hit = { seconds: (performance.now() - m.t0) / 1000 };
      requestAnimationFrame(watch);
    };
    requestAnimationFrame(watch);
  });
  return { page, errors };
}

async function measureTask(context, url, id) {
  const { page, errors } = await openTraining(context, url, `train=${id}`);
  await page.getByTestId('train-start').click();
  await page.waitForFunction(() => window.__train.hit || window.playground.training().step >= 100000, null, { timeout: 120000, polling: 100 });
  await page.waitForFunction(() => !window.playground.training().running, null, { timeout: 300000, polling: 200 });
  const r = await page.evaluate(() => ({ hit: window.__train.hit, training: window.playground.training(), accuracies: window.playground.trainingAccuracies(), heads: window.playground.trainingHeads() }));
  await page.close();
  const own = TASKS[id].pattern.score;
  const first = r.accuracies.find((a) => a.heldoutAccuracy >= 0.95);
  const best = (p) => Math.max(...r.heads.map((h) => h.scores[p]));
  const named = r.heads.filter((h) => h.labels.length).map((h) => `L${h.layer}H${h.head}: ${h.labels.join('+')}`).join('; ');
  return { task: id, stepsTo95: first?.step ?? null, secondsTo95: r.hit?.seconds ?? null, steps: r.training.step, stepsPerSecond: r.training.stepsPerSecond,
    finalAccuracy: r.accuracies.at(-1)?.heldoutAccuracy, pattern: own, patternScore: best(own), inductionScore: best('induction'), named, errors };
}

// Keystrokes into the sentence box, each timed from keydown to the end of the page's own input
// handler (recompute + redraw) and to the next frame.
async function typeAndTime(page, keys) {
  await page.evaluate(() => {
    const el = document.querySelector('[data-testid="tokens-input"]');
    const m = { start: 0, redraw: [], frame: [], pending: null };
    window.__keys = m;
    el.addEventListener('keydown', (e) => { m.start = e.timeStamp; }, true);
    el.addEventListener('input', () => {
      const start = m.start;
      m.redraw.push(performance.now() - start);
      m.pending = new Promise((resolve) => { requestAnimationFrame(() => setTimeout(() => { m.frame.push(performance.now() - start); resolve(); }, 0)); });
    });
  });
  await page.getByTestId('tokens-input').focus();
  for (const key of keys) {
    await page.keyboard.press(key);
    await page.evaluate(() => window.__keys.pending);
  }
  const { redraw, frame } = await page.evaluate(() => ({ redraw: window.__keys.redraw, frame: window.__keys.frame }));
  return { redraw: stats(redraw), frame: stats(frame) };
}

// The main thread for `ms` milliseconds: long tasks and the longest gap between animation frames.
async function watchFrames(page, ms) {
  return page.evaluate((duration) => new Promise((resolve) => {
    const long = [];
    const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) long.push(e.duration); });
    observer.observe({ type: 'longtask' });
    let last = performance.now(), gap = 0, frames = 0;
    const end = last + duration;
    const tick = (now) => {
      gap = Math.max(gap, now - last);
      last = now;
      frames++;
      if (now < end) requestAnimationFrame(tick);
      else { observer.disconnect(); resolve({ longTasks: long.length, longestTask: long.length ? Math.max(...long) : 0, longestFrameGap: gap, frames }); }
    };
    requestAnimationFrame(tick);
  }), ms);
}

function repeatKeys(text, erase, n) {
  const keys = [];
  while (keys.length < n) {
    for (let i = 0; i < erase; i++) keys.push('Backspace');
    keys.push(...Array.from(text));
  }
  return keys.slice(0, Math.max(n, 2 * text.length));
}

async function measureWhileTraining(context, url) {
  const { page, errors } = await openTraining(context, url, 'train=induction&trainsteps=100000');
  await page.waitForFunction(() => window.playground.result()?.module === 'CausalTransformer');
  const idle = await watchFrames(page, 3000);
  await page.getByTestId('train-start').click();
  await page.waitForFunction(() => window.playground.training().step > 200, null, { timeout: 60000 });
  const training = await watchFrames(page, seconds * 1000);
  const sample = await page.evaluate(() => window.playground.state().text);
  const trained = await typeAndTime(page, repeatKeys(sample, sample.length, keysWanted));
  await page.locator('.preset').first().click();
  await page.waitForFunction(() => window.playground.result()?.module === 'CausalMultiHeadAttention');
  const sentence = "the animal didn't cross the street because it was too tired";
  await page.getByTestId('tokens-input').fill('');
  const sentenceTimes = await typeAndTime(page, repeatKeys(sentence, sentence.length, keysWanted));
  const during = await page.evaluate(() => window.playground.training());
  // The same typing with the run paused: what the page costs without training beside it.
  await page.getByTestId('train-pause').click();
  await page.waitForFunction(() => !window.playground.training().running);
  await page.getByTestId('tokens-input').fill('');
  const sentencePaused = await typeAndTime(page, repeatKeys(sentence, sentence.length, keysWanted));
  await page.getByTestId('train-playground').click();
  await page.waitForFunction(() => window.playground.result()?.module === 'CausalTransformer');
  const trainedPaused = await typeAndTime(page, repeatKeys(sample, sample.length, keysWanted));
  await page.close();
  return { idle, training, trained, sentence: sentenceTimes, trainedPaused, sentencePaused, stillRunning: during.running, stepsPerSecond: during.stepsPerSecond, errors };
}

const server = await startServer();
const browser = await launch();
try {
  const version = browser.context.browser()?.version() ?? '';
  console.log(`CPU: ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}; Chromium ${version}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const rows = [];
  for (const id of tasks) {
    const r = await measureTask(browser.context, server.url, id);
    rows.push(r);
    console.log(`${id}: 0.95 at step ${r.stepsTo95} after ${r.secondsTo95?.toFixed(1)} s; ${r.steps} steps at ${r.stepsPerSecond.toFixed(0)}/s, final accuracy ${r.finalAccuracy?.toFixed(3)}, ${r.pattern} ${r.patternScore.toFixed(2)}, induction ${r.inductionScore.toFixed(2)} (${r.named || 'no head named'})${r.errors.length ? `; errors: ${r.errors.join(' | ')}` : ''}`);
  }
  console.log('\n| task | steps to 0.95 | seconds to 0.95 | steps/s | run | final held-out accuracy | task pattern, best head | best induction score | heads named |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |');
  for (const r of rows) {
    console.log(`| ${r.task} | ${r.stepsTo95 ?? '—'} | ${r.secondsTo95?.toFixed(1) ?? '—'} | ${r.stepsPerSecond.toFixed(0)} | ${r.steps} | ${r.finalAccuracy?.toFixed(3)} | ${r.pattern} ${r.patternScore.toFixed(2)} | ${r.inductionScore.toFixed(2)} | ${r.named} |`);
  }
  const w = await measureWhileTraining(browser.context, server.url);
  const line = (name, s) => `${name}: redraw median ${s.redraw.median.toFixed(2)} ms, p95 ${s.redraw.p95.toFixed(2)} ms, max ${s.redraw.max.toFixed(2)} ms; frame median ${s.frame.median.toFixed(2)} ms, p95 ${s.frame.p95.toFixed(2)} ms (n=${s.redraw.n})`;
  console.log(`\nwhile induction trains (${w.stepsPerSecond.toFixed(0)} steps/s, still running: ${w.stillRunning}):`);
  console.log(line('  typing the trained model\'s letters', w.trained));
  console.log(line('  typing the default sentence      ', w.sentence));
  console.log('the same typing with the run paused:');
  console.log(line('  typing the trained model\'s letters', w.trainedPaused));
  console.log(line('  typing the default sentence      ', w.sentencePaused));
  const frames = (name, f) => `  ${name}: ${f.frames} frames, longest gap ${f.longestFrameGap.toFixed(1)} ms, ${f.longTasks} long tasks (longest ${f.longestTask.toFixed(0)} ms)`;
  console.log(frames(`training, nobody typing, ${seconds} s`, w.training));
  console.log(frames('paused (before Train), 3 s    ', w.idle));
  if (w.errors.length) console.log(`page errors: ${w.errors.join(' | ')}`);
  if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify({ cpu: cpus()[0]?.model, chromium: version, tasks: rows, whileTraining: w }, null, 1)}\n`);
} finally {
  await browser.close();
  await server.close();
}
