// Training mode's loss and accuracy chart: the training loss (left axis) and the held-out and
// training-batch accuracy (right axis, 0 to 1) against the step, one SVG, with a line at the step
// the scrubber shows. Its text alternative is a summary of the latest numbers beside it, and the
// legend names every line. train-data.js chartData makes the data; train-page.js calls update().

import { i18nText, t } from '../i18n.js';

const NS = 'http://www.w3.org/2000/svg';
// The viewBox is as wide as the chart is drawn (at least MIN_W), so its 11 px labels stay 11 px: a
// fixed 640 x 220 viewBox shrank them to 6 px on a 360 px phone. Its height keeps that shape where
// the chart is wider, and 220 where it is narrower.
const MIN_W = 300, DEFAULT_W = 640;
// The chart's size and plot area in viewBox units for a chart drawn w px wide: room for the loss
// ticks on the left, the accuracy ticks on the right, the step ticks and the axis name below.
function plotBox(w) {
  const h = Math.max(220, Math.round((w * 220) / 640));
  return { w, h, left: 44, right: w - 40, top: 10, bottom: h - 30 };
}

const svgEl = (tag, attrs = {}, parent = null) => {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  parent?.append(el);
  return el;
};

// A round step for ticks: 1, 2 or 5 times a power of ten, about n ticks over [0, max].
function tickStep(max, n) {
  const raw = max / n;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? raw;
}

const fmt = (v) => (Number.isInteger(v) ? String(v) : v.toFixed(v < 0.1 ? 2 : 1));

// The axes and grid for this width, x and loss range (redrawn only when one changes).
function drawAxes(ch, maxStep, maxLoss) {
  const g = ch.axes, BOX = ch.box;
  g.replaceChildren();
  const x = (s) => BOX.left + (s / maxStep) * (BOX.right - BOX.left);
  const yl = (v) => BOX.bottom - (v / maxLoss) * (BOX.bottom - BOX.top);
  const xs = tickStep(maxStep, 5), ls = tickStep(maxLoss, 4);
  for (let s = 0; s <= maxStep + 1e-9; s += xs) {
    svgEl('line', { x1: x(s), x2: x(s), y1: BOX.top, y2: BOX.bottom, class: 'grid' }, g);
    svgEl('text', { x: x(s), y: BOX.bottom + 14, class: 'tick', 'text-anchor': 'middle' }, g).textContent = fmt(s);
  }
  for (let v = 0; v <= maxLoss + 1e-9; v += ls) {
    svgEl('line', { x1: BOX.left, x2: BOX.right, y1: yl(v), y2: yl(v), class: 'grid' }, g);
    svgEl('text', { x: BOX.left - 4, y: yl(v) + 4, class: 'tick loss', 'text-anchor': 'end' }, g).textContent = fmt(v);
  }
  for (const a of [0, 0.5, 1]) {
    svgEl('text', { x: BOX.right + 4, y: BOX.bottom - a * (BOX.bottom - BOX.top) + 4, class: 'tick accuracy' }, g).textContent = fmt(a);
  }
  svgEl('rect', { x: BOX.left, y: BOX.top, width: BOX.right - BOX.left, height: BOX.bottom - BOX.top, class: 'frame' }, g);
  i18nText(svgEl('text', { x: (BOX.left + BOX.right) / 2, y: BOX.h - 4, class: 'tick', 'text-anchor': 'middle' }, g), 'training.axisStep');
}

const points = (series, x, y) => series.map(([s, v]) => `${x(s).toFixed(1)},${y(v).toFixed(1)}`).join(' ');

function legendItem(className, key) {
  const li = document.createElement('li');
  const swatch = document.createElement('span');
  swatch.className = `swatch ${className}`;
  li.append(swatch, i18nText(document.createElement('span'), key));
  return li;
}

export function createTrainChart(container) {
  const figure = document.createElement('figure');
  figure.className = 'train-chart';
  const svg = svgEl('svg', { role: 'img', 'data-testid': 'train-chart', 'aria-labelledby': 'train-chart-title train-chart-summary' });
  const title = svgEl('title', { id: 'train-chart-title' }, svg);
  i18nText(title, 'training.chartTitle');
  const ch = { axes: svgEl('g', {}, svg), key: '', box: plotBox(DEFAULT_W) };
  svg.setAttribute('viewBox', `0 0 ${ch.box.w} ${ch.box.h}`);
  const lines = {
    loss: svgEl('polyline', { class: 'line loss' }, svg),
    heldout: svgEl('polyline', { class: 'line heldout' }, svg),
    train: svgEl('polyline', { class: 'line train' }, svg),
  };
  const marker = svgEl('line', { class: 'marker', y1: ch.box.top, y2: ch.box.bottom }, svg);
  const legend = document.createElement('ul');
  legend.className = 'chart-legend';
  legend.append(legendItem('loss', 'training.legendLoss'), legendItem('heldout', 'training.legendHeldout'), legendItem('train', 'training.legendTrain'));
  const summary = Object.assign(document.createElement('p'), { id: 'train-chart-summary', className: 'hint' });
  figure.append(svg, legend, summary);
  container.append(figure);
  // the width the chart is drawn at, from the observer below (read there, not at every update:
  // a layout read per update during training)
  let width = DEFAULT_W, last = null;
  const chart = {
    // d: chartData (train-data.js); text: the summary sentence (the chart's text alternative).
    update(d, text) {
      last = [d, text];
      const w = width;
      const top = Number(d.maxLoss.toPrecision(2)) * 1.05;   // the loss axis' top: steady while the loss falls
      const key = `${w}|${d.maxStep}|${top}|${document.documentElement.lang}`;
      if (key !== ch.key) {
        ch.key = key;
        ch.box = plotBox(w);
        svg.setAttribute('viewBox', `0 0 ${w} ${ch.box.h}`);
        marker.setAttribute('y2', ch.box.bottom);
        drawAxes(ch, d.maxStep, top);
      }
      const BOX = ch.box;
      const x = (s) => BOX.left + (s / d.maxStep) * (BOX.right - BOX.left);
      const yl = (v) => BOX.bottom - (Math.min(v, top) / top) * (BOX.bottom - BOX.top);
      const ya = (v) => BOX.bottom - v * (BOX.bottom - BOX.top);
      lines.loss.setAttribute('points', points(d.loss, x, yl));
      lines.heldout.setAttribute('points', points(d.heldout, x, ya));
      lines.train.setAttribute('points', points(d.train, x, ya));
      svg.dataset.points = String(d.loss.length);
      marker.setAttribute('visibility', d.at === null ? 'hidden' : 'visible');
      if (d.at !== null) { marker.setAttribute('x1', x(d.at)); marker.setAttribute('x2', x(d.at)); }
      if (summary.textContent !== text) summary.textContent = text;
    },
  };
  // its width when it is laid out, and each new one (a turned phone, a resized window), which
  // redraws the last data at it; a hidden chart (0 wide) keeps the last
  new ResizeObserver(([entry]) => {
    if (!entry.contentRect.width) return;
    width = Math.max(MIN_W, Math.round(entry.contentRect.width));
    if (last && width !== ch.box.w) chart.update(...last);
  }).observe(figure);
  return chart;
}
