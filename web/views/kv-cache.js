// What a KV cache holds per token for this configuration, beside multi-head (every query head
// has its own key/value head) and multi-query attention (one for all): 2 (K and V) × kv heads ×
// head_dim × 4 bytes (float32), per layer. Shown for modules with a `num_kv_heads` argument
// (ModernAttention, and a GPT that has one); the row of the configuration itself is marked.

import { i18nText, t } from '../i18n.js';
import { setHidden } from './dom-write.js';

const FLOAT_BYTES = 4;
const KIND_NAMES = { mha: 'kvcache.mha', gqa: 'kvcache.gqa', mqa: 'kvcache.mqa' };

// [{kind: 'mha' | 'gqa' | 'mqa', kvHeads, perToken, total}] for T tokens, or null when the module
// has no num_kv_heads argument or its numbers do not make a model (the core says why).
export function kvCacheRows(config, T) {
  const H = config.num_heads ?? config.n_head, C = config.d_model ?? config.n_embd;
  const Hkv = config.num_kv_heads || H;   // 0: one per query head
  if (![H, C, Hkv].every((v) => Number.isInteger(v) && v > 0) || C % H || H % Hkv) return null;
  const D = C / H;
  const row = (kind, kvHeads) => ({ kind, kvHeads, D, perToken: 2 * kvHeads * D * FLOAT_BYTES, total: 2 * kvHeads * D * FLOAT_BYTES * T });
  const kind = Hkv === H ? 'mha' : Hkv === 1 ? 'mqa' : 'gqa';
  const rows = [row('mha', H)];
  if (kind === 'gqa') rows.push(row('gqa', Hkv));
  if (H > 1) rows.push(row('mqa', 1));
  return rows.map((r) => ({ ...r, current: r.kind === kind }));
}

const bytes = (n) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(2)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`);

export function createKvCacheView(container) {
  const heading = i18nText(document.createElement('h3'), 'kvcache.heading');
  const formula = document.createElement('p');
  formula.className = 'hint';
  const table = document.createElement('table');
  table.className = 'kv-cache';
  container.append(heading, formula, table);
  let key = '';
  return {
    // config: the module's arguments as run; T: the tokens of this run.
    update(config, T) {
      const rows = kvCacheRows(config, T);
      setHidden(container, !rows);
      if (!rows) return;
      const next = JSON.stringify([rows, T, t('kvcache.heading')]);
      if (next === key) return;
      key = next;
      formula.textContent = t('kvcache.formula', { D: rows[0].D });
      const head = document.createElement('tr');
      for (const k of ['kvcache.kind', 'kvcache.kvHeads', 'kvcache.perToken', 'kvcache.total']) {
        const th = document.createElement('th');
        th.scope = 'col';
        th.textContent = t(k, { T });
        head.append(th);
      }
      const body = rows.map((r) => {
        const tr = document.createElement('tr');
        tr.dataset.kv = r.kind;
        tr.dataset.bytes = String(r.perToken);
        if (r.current) { tr.className = 'current'; tr.setAttribute('aria-current', 'true'); }
        const th = document.createElement('th');
        th.scope = 'row';
        th.textContent = t(KIND_NAMES[r.kind]) + (r.current ? t('kvcache.this') : '');
        const cells = [String(r.kvHeads), bytes(r.perToken), bytes(r.total)].map((text) => Object.assign(document.createElement('td'), { textContent: text }));
        tr.append(th, ...cells);
        return tr;
      });
      table.replaceChildren(head, ...body);
    },
  };
}
