// The export menu a step card or the attention view shows: any tensor as JSON, CSV or NumPy .npy,
// any heatmap as PNG or SVG. The formats (export-formats.js) load on the first export; files are
// made in the page and handed to the browser as downloads (download.js: blob: URLs, allowed
// under the strict CSP); nothing leaves the machine.

import { i18nLabel, i18nText } from '../i18n.js';
import { download } from './download.js';

const safeName = (s) => String(s).replace(/[^\w.-]+/g, '_').replace(/^_+|_+$/g, '') || 'tensor';

// The export buttons of one tensor and its heatmap: tensor() -> {name, shape, dims, data};
// heatmap: heatmap.js's object (png(), view()), or null for a tensor without one.
export function createExportMenu({ tensor, heatmap }) {
  const menu = document.createElement('details');
  menu.className = 'export';
  const summary = document.createElement('summary');
  i18nText(summary, 'export.menu');
  const list = document.createElement('div');
  list.className = 'export-buttons';
  menu.append(summary, list);
  const formats = [
    ['JSON', 'export.tensorAs', (t, f) => download(`${safeName(t.name)}.json`, f.tensorJSON(t), 'application/json')],
    ['CSV', 'export.tensorAs', (t, f) => download(`${safeName(t.name)}.csv`, f.tensorCSV(t), 'text/csv')],
    ['.npy', 'export.tensorAs', (t, f) => download(`${safeName(t.name)}.npy`, f.tensorNpy(t), 'application/octet-stream')],
  ];
  if (heatmap) {
    formats.push(['PNG', 'export.heatmapAs', async (t) => download(`${safeName(t.name)}.png`, await heatmap.png(), 'image/png')]);
    formats.push(['SVG', 'export.heatmapAs', (t, f) => download(`${safeName(t.name)}.svg`, f.heatmapSVG(heatmap.view(), heatmap.view().label ?? t.name), 'image/svg+xml')]);
  }
  for (const [text, key, save] of formats) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'small';
    button.textContent = text;
    i18nLabel(button, key, { format: text });
    button.dataset.format = text.replace('.', '');
    button.addEventListener('click', async () => save(tensor(), await import('./export-formats.js')));
    list.append(button);
  }
  return menu;
}
