// "Open a model"'s views (model/mode.js draws them): the layers x heads tiles, each a button with a
// small map of its head's attention on the sentence (the lab's tile styles). Data in, DOM out.
import { t } from '../i18n.js';
import { paintMap } from './lab-views.js';

// update({layers, heads, T, maps (Float32Array [layer][head][T][T]), open: "layer.head" | '', off: Set of
// "layer.head" switched off}); onPress(l, h).
export function createModelGrid(root, { onPress }) {
  let key = '', tiles = [];
  function build(L, H) {
    root.replaceChildren();
    root.style.setProperty('--lab-heads', String(H));
    tiles = [];
    for (let l = 0; l < L; l++) {
      const row = document.createElement('div');
      row.className = 'lab-layer';
      row.setAttribute('role', 'group');
      row.append(Object.assign(document.createElement('span'), { className: 'lab-layer-name' }));
      for (let h = 0; h < H; h++) {
        const button = Object.assign(document.createElement('button'), { type: 'button', className: 'lab-head' });
        Object.assign(button.dataset, { testid: 'model-tile', layer: String(l), head: String(h) });
        const canvas = document.createElement('canvas');
        canvas.setAttribute('aria-hidden', 'true');
        const caption = Object.assign(document.createElement('span'), { className: 'lab-head-name' });
        button.append(canvas, caption);
        button.addEventListener('click', () => onPress(l, h));
        row.append(button);
        tiles.push({ l, h, button, canvas, caption });
      }
      root.append(row);
    }
  }
  return {
    update(d) {
      if (!d) { root.replaceChildren(); key = ''; return; }
      const { layers: L, heads: H, T, maps, open, off } = d;
      if (key !== `${L}x${H}`) { build(L, H); key = `${L}x${H}`; }
      [...root.children].forEach((row, l) => {
        row.firstChild.textContent = t('hub.layerN', { l });
        row.setAttribute('aria-label', t('hub.layerN', { l }));
      });
      for (const tile of tiles) {
        paintMap(tile.canvas, maps.subarray((tile.l * H + tile.h) * T * T, (tile.l * H + tile.h + 1) * T * T), T);
        tile.caption.textContent = t('hub.headShort', { layer: tile.l, head: tile.h });
        const key = `${tile.l}.${tile.h}`;
        tile.button.setAttribute('aria-label', t(off.has(key) ? 'hub.headOffLabel' : 'hub.headLabel', { layer: tile.l, head: tile.h }));
        tile.button.setAttribute('aria-pressed', String(open === key));
        tile.button.classList.toggle('off', off.has(key));
        tile.button.dataset.off = String(off.has(key));
      }
    },
  };
}

// A probability as the mode prints it: three decimals, or two significant digits below 0.001 (a
// random or barely trained 124M model's likeliest next tokens all are: "0.000" said nothing).
export const probText = (p) => (p >= 0.001 ? p.toFixed(3) : p.toPrecision(2));
// A token and its probability, as the next tokens and the logit lens list them.
export const tokenProb = (x) => `"${x.piece}" ${probText(x.prob)}`;

// The logit lens as a table: a row per readout (the embeddings, then each layer after its attention
// and after its MLP), its likeliest next tokens with their probabilities; readouts null: empty.
export function fillLens(table, readouts, caption) {
  table.replaceChildren();
  table.hidden = !readouts;
  if (!readouts) return;
  table.createCaption().textContent = caption;
  const head = table.createTHead().insertRow();
  for (const key of ['hub.lensWhere', 'hub.lensTop']) head.append(Object.assign(document.createElement('th'), { scope: 'col', textContent: t(key) }));
  const body = table.createTBody();
  for (const r of readouts) {
    const row = body.insertRow();
    row.dataset.step = r.step;
    const where = r.layer == null ? t('hub.lensEmbed') : t(r.after === 'attn' ? 'hub.lensAttn' : 'hub.lensMlp', { l: r.layer });
    row.append(Object.assign(document.createElement('th'), { scope: 'row', textContent: where, title: r.step }));
    row.insertCell().textContent = r.top.map(tokenProb).join(', ');
  }
}

