// Training mode's heads: every head of every layer on the task's sample at the step the scrubber
// shows, each as a heatmap (heatmap.js, with its value table), the labels of the patterns it shows
// (train/patterns.js, >= 0.5) and its scores over training (train-scores.js), under one legend.
// train-data.js headsData / scoreSeries make the data; train-page.js calls update().

import { scaleFor } from '../colors.js';
import { i18nText, t } from '../i18n.js';
import { formatValue } from '../tensor.js';
import { OFFSET_BY_KEY, PATTERN_HELP_KEYS, PATTERN_TEXT_KEYS } from '../train/patterns.js';
import { createHeatmap } from './heatmap.js';
import { createTrainScores } from './train-scores.js';
import { createValueTable } from './value-table.js';

const MAP_WIDTH = 200;

// A pattern's label: its name, or for the fixed offset the distance it looks back.
const patternText = (p, scores, offset) => (p === 'offset' ? t(OFFSET_BY_KEY, { d: offset ?? scores.bestOffset }) : t(PATTERN_TEXT_KEYS[p]));

function buildHead() {
  const figure = document.createElement('figure');
  figure.className = 'train-head';
  figure.dataset.testid = 'train-head';
  const caption = document.createElement('figcaption');
  const heatmap = createHeatmap({ className: 'train-map' });
  const labels = document.createElement('ul');
  labels.className = 'head-labels';
  const scores = createTrainScores();
  const table = createValueTable();
  heatmap.details(table.element);
  figure.append(caption, heatmap.element, labels, scores.element, table.element);
  return { figure, caption, heatmap, labels, scores, table };
}

// ended: the step shown is the run's last (no "yet" for a head that never found a pattern)
function drawLabels(el, head, offset, ended) {
  const items = head.labels.length ? head.labels : [null];
  el.replaceChildren(...items.map((p) => {
    const li = document.createElement('li');
    if (p === null) {
      li.className = 'none';
      li.textContent = t(ended ? 'training.noPatternEnd' : 'training.noPattern');
      return li;
    }
    li.className = `pattern-${p}`;
    li.dataset.pattern = p;
    li.title = t(PATTERN_HELP_KEYS[p]);
    li.textContent = `${patternText(p, head.scores, offset)} ${head.scores[p].toFixed(2)}`;
    return li;
  }));
}

function drawHead(view, head, d, series) {
  const { tokens } = d;
  const name = t('training.headName', { layer: head.layer, head: head.head });
  view.caption.textContent = name;
  view.figure.dataset.labels = head.labels.join(' ');
  view.figure.dataset.layer = String(head.layer);
  view.figure.dataset.head = String(head.head);
  const masked = (r, c) => c > r;
  view.heatmap.update({
    slice: head.slice, scale: scaleFor(head.slice.data, { probabilities: true }), width: MAP_WIDTH, rowLabels: tokens, colLabels: tokens, masked, weights: true,
    label: t('training.mapLabel', { name, step: d.step, n: tokens.length }),
    describeCell: (r, c, v) => t('training.cell', { q: tokens[r], r, k: tokens[c], c, v: formatValue(v) }),
  });
  view.table.update({ slice: head.slice, rowLabels: tokens, colLabels: tokens, masked, caption: `${name}, ${t('training.atStep', { step: d.step })}`, corner: t('attn.corner') });
  drawLabels(view.labels, head, d.offset, d.step >= d.maxStep);
  const label = d.patterns.map((p) => `${patternText(p, head.scores, d.offset)} ${head.scores[p].toFixed(2)}`).join(', ');
  view.scores.update({ series, maxStep: d.maxStep, at: d.step, label });
}

function buildLegend(patterns) {
  const legend = document.createElement('ul');
  legend.className = 'chart-legend';
  legend.append(...patterns.map((p) => {
    const li = document.createElement('li');
    const swatch = document.createElement('span');
    swatch.className = `swatch pattern-${p}`;
    li.append(swatch, i18nText(document.createElement('span'), PATTERN_TEXT_KEYS[p]));
    li.title = t(PATTERN_HELP_KEYS[p]);
    return li;
  }));
  return legend;
}

export function createTrainHeads(container) {
  const note = i18nText(Object.assign(document.createElement('p'), { className: 'hint' }), 'training.scoresNote');
  const legendHolder = document.createElement('div');
  const grid = document.createElement('div');
  grid.className = 'train-heads';
  container.append(note, legendHolder, grid);
  const views = [];
  let legendKey = '';
  return {
    // d: {heads (headsData), series (scoreSeries), patterns (plotted), tokens (the sample's), step
    // (the snapshot's), maxStep, offset (the task's look-back distance, or undefined)}
    update(d) {
      const key = `${d.patterns.join()}|${document.documentElement.lang}`;
      if (key !== legendKey) { legendKey = key; legendHolder.replaceChildren(buildLegend(d.patterns)); }
      while (views.length < d.heads.length) { const v = buildHead(); views.push(v); grid.append(v.figure); }
      while (views.length > d.heads.length) views.pop().figure.remove();
      grid.dataset.step = String(d.step);
      d.heads.forEach((head, k) => drawHead(views[k], head, d, d.series[k] ?? {}));
    },
  };
}
