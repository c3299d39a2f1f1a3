// Generate mode's times (index.html #gen-times): per generator (with the KV cache and without) the
// prefill's time and the median decode step's, and the check that both gave the same logits.
import { t } from '../i18n.js';

const ms = (v) => (v === null ? '—' : v.toFixed(2));

// table: the <tbody>; check: the line under it. update({cached, uncached: {first, median}, maxDiff,
// ok, atol, n}) | update(null).
export function createGenTimes(table, check) {
  const row = (key, x) => {
    const tr = document.createElement('tr');
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = t(key);
    const cells = [t('gen.prefillMs', { ms: ms(x.first) }), t('gen.decodeMs', { ms: ms(x.median) })].map((text) => Object.assign(document.createElement('td'), { textContent: text }));
    tr.append(th, ...cells);
    tr.dataset.median = String(x.median ?? '');
    return tr;
  };
  return {
    update(v) {
      if (!v) { table.replaceChildren(); check.textContent = ''; return; }
      table.replaceChildren(row('gen.withCache', v.cached), row('gen.withoutCache', v.uncached));
      check.textContent = t(v.ok ? 'gen.checkOk' : 'gen.checkBad', { diff: v.maxDiff.toExponential(1), atol: v.atol, n: v.n });
      check.className = v.ok ? 'good' : 'error';
      check.dataset.maxDiff = String(v.maxDiff);
    },
  };
}
