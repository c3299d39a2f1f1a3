// The history scrubber of training mode: a range over the recorded snapshots (every recordEvery
// steps, train/engine.js) that moves the heads, the sample and the chart's marker back to that
// step; at its right end it follows the live run. A native range input: keyboard and screen
// readers work as for any slider (aria-valuetext names the step). train-page.js owns the position.

import { i18nText, t } from '../i18n.js';

// onScrub(index | null): null = follow the live run (the newest snapshot).
export function createTrainScrubber(container, { onScrub }) {
  const wrap = document.createElement('div');
  wrap.className = 'train-scrubber';
  const label = i18nText(Object.assign(document.createElement('label'), { htmlFor: 'train-scrubber' }), 'training.scrubber');
  const input = Object.assign(document.createElement('input'), { type: 'range', id: 'train-scrubber', min: '0', max: '0', step: '1', value: '0' });
  input.dataset.testid = 'train-scrubber';
  const output = Object.assign(document.createElement('output'), { htmlFor: 'train-scrubber' });
  const live = Object.assign(document.createElement('button'), { type: 'button', className: 'small' });
  i18nText(live, 'training.followLive');
  live.dataset.testid = 'train-follow';
  wrap.append(label, input, output, live);
  container.append(wrap);
  let count = 0;
  input.addEventListener('input', () => {
    const i = Number(input.value);
    onScrub(i >= count - 1 ? null : i);
  });
  live.addEventListener('click', () => onScrub(null));
  return {
    // d: {count (snapshots recorded), at (index or null = live), step (the shown one's step)}
    update(d) {
      count = d.count;
      const max = String(Math.max(0, d.count - 1));
      if (input.max !== max) input.max = max;
      const value = String(d.at === null ? Math.max(0, d.count - 1) : d.at);
      if (input.value !== value) input.value = value;
      input.disabled = d.count < 2;
      const text = d.at === null ? t('training.scrubLive', { step: d.step }) : t('training.scrubAt', { step: d.step });
      if (output.textContent !== text) output.textContent = text;
      input.setAttribute('aria-valuetext', text);
      live.disabled = d.at === null;
    },
  };
}
