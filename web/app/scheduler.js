// The one redraw scheduler of the page. Every mode's drawing goes through it:
//   now(draw)               at once, inside a paint batch (views/paint-batch.js: canvases painted
//                           after every DOM write of the draw): a reader's own edit (a keystroke's
//                           recompute) is on screen in the frame that follows it
//   soon(key, draw, opts)   in the next animation frame, once per key however often asked:
//                           opts.every (ms) at most one draw per that long, opts.quiet (ms) not
//                           before the reader's input (keys, wheel, touch) has been quiet that long,
//                           opts.urgent ignores both (a click on the mode's own panel)
// and onInput(fn) tells a mode that the reader is typing or scrolling (training's worker rests then).
import { paintsLast } from '../views/paint-batch.js';

export function createScheduler({ raf = (fn) => requestAnimationFrame(fn), now = () => performance.now(), target = document } = {}) {
  const jobs = new Map();   // key -> {draw, opts, frame, timer, drawnAt}
  const inputListeners = [];
  let inputAt = -Infinity;
  const onInput = () => {
    inputAt = now();
    for (const fn of inputListeners) fn();
  };
  for (const type of ['keydown', 'wheel', 'touchmove']) target.addEventListener?.(type, onInput, { capture: true, passive: true });

  function run(job) {
    job.drawnAt = now();
    paintsLast(job.draw);
  }

  function soon(key, draw, opts = {}) {
    const job = jobs.get(key) ?? { frame: 0, timer: 0, drawnAt: -Infinity, urgent: false };
    jobs.set(key, job);
    job.draw = draw;
    job.urgent ||= !!opts.urgent;
    if (job.frame) return;
    const wait = job.urgent ? 0 : Math.max(job.drawnAt + (opts.every ?? 0), inputAt + (opts.quiet ?? 0)) - now();
    if (wait > 0) {
      job.timer ||= setTimeout(() => { job.timer = 0; if (jobs.get(key) === job) soon(key, job.draw, opts); }, wait);
      return;
    }
    job.frame = raf(() => {
      job.frame = 0;
      job.urgent = false;
      if (jobs.get(key) === job) run(job);
    });
  }

  return {
    now: (draw) => paintsLast(draw),
    soon,
    // The key's pending draw forgotten (its mode closed).
    cancel(key) {
      const job = jobs.get(key);
      if (job) clearTimeout(job.timer);
      jobs.delete(key);
    },
    onInput: (fn) => inputListeners.push(fn),
    get inputAt() { return inputAt; },
  };
}
