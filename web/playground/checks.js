// The on-screen checks, computed from the result itself: every softmax row sums to 1 (with the
// actual max deviation), masked cells are exactly 0, and the shapes agree with the input and the
// config. Pure (texts in the page's language, i18n.js); views/checks.js prints them.

import { attentionSources, isWeightsStep } from './attention-data.js';
import { t } from '../i18n.js';
import { formatFill, namedShape, prod } from '../tensor.js';

const SUM_TOL = 1e-5;

// Iterates the (seq_q, seq_k) rows of an attention tensor: fn(rowData offset, b, q).
function forRows(tensor, fn) {
  const { shape, dims } = tensor;
  const S = shape.at(-1);
  const T = shape.at(-2);
  const bDim = dims.indexOf('batch');
  const perBatch = bDim >= 0 ? prod(shape.slice(bDim + 1)) : Infinity;
  const rows = tensor.data.length / S;
  for (let r = 0; r < rows; r++) {
    const offset = r * S;
    const b = bDim >= 0 ? Math.floor(offset / perBatch) : 0;
    fn(offset, b, r % T);
  }
}

function softmaxCheck(step, mask) {
  const S = step.shape.at(-1);
  let worst = 0, count = 0, empty = 0;
  forRows(step, (o, b, q) => {
    let sum = 0;
    for (let k = 0; k < S; k++) sum += step.data[o + k];
    // A row whose every key is masked with -inf is all zeros (PyTorch >= 2.5 convention).
    if (sum === 0 && mask && Array.from({ length: S }, (_, k) => mask.at(b, q, k)).every(Boolean)) { empty++; return; }
    worst = Math.max(worst, Math.abs(sum - 1));
    count++;
  });
  const text = t('check.softmaxRows', { name: step.name, count, worst: worst.toExponential(1) });
  return { ok: worst <= SUM_TOL, text: empty ? t('check.fullyMasked', { text, n: empty }) : text };
}

function maskCheck(source) {
  const { tensor, mask } = source;
  const S = tensor.shape.at(-1);
  let cells = 0, worst = 0;
  forRows(tensor, (o, b, q) => {
    for (let k = 0; k < S; k++) {
      if (!mask.at(b, q, k)) continue;
      cells++;
      worst = Math.max(worst, Math.abs(tensor.data[o + k]));
    }
  });
  return {
    ok: worst === 0,
    text: worst === 0 ? t('check.maskZero', { name: tensor.name, cells }) : t('check.maskNonZero', { name: tensor.name, cells, worst: worst.toExponential(2) }),
  };
}

function shapeChecks(result, plan) {
  const items = [];
  const bad = (result.steps ?? []).filter((s) => s.data.length !== prod(s.shape) || s.dims.length !== s.shape.length);
  items.push({
    ok: bad.length === 0,
    text: bad.length === 0 ? t('check.stepsOk', { n: (result.steps ?? []).length }) : t('check.stepsBad', { names: bad.map((s) => s.name).join(', ') }),
  });
  const out = result.outputs[0];
  const expectT = plan.T;
  const outT = out.shape.length >= 2 ? out.shape.at(-2) : out.shape[0];
  const outB = out.shape.length >= 3 ? out.shape[0] : 1;
  if (plan.module !== 'softmax') {
    items.push({
      ok: outT === expectT && outB === plan.B,
      text: t('check.output', { shape: JSON.stringify(out.shape), outB, B: plan.B, outT, T: expectT }),
    });
  }
  for (const src of attentionSources(result, plan)) {
    const { shape, dims } = src.tensor;
    const heads = plan.config.num_heads;
    const hDim = dims.indexOf('heads');
    const T = shape.at(-2), S = shape.at(-1);
    const wantS = src.labels.k[0]?.length;
    const headsOk = hDim < 0 || heads === undefined || shape[hDim] === heads;
    items.push({
      ok: headsOk && S === wantS && T === src.labels.q[0]?.length,
      text: t(hDim >= 0 && heads !== undefined ? 'check.attnShapeHeads' : 'check.attnShape', { name: src.tensor.name, shape: namedShape(dims, shape), heads, T, S }),
    });
    if (plan.mod.kind === 'ids') break;   // one line for the Transformer's maps is enough
  }
  return items;
}

// A masked_fill step must hold its fill value (attrs.fill: -inf or -1e9) exactly where the mask is.
function fillCheck(step, mask) {
  const fill = Number(step.attrs.fill);
  const S = step.shape.at(-1);
  let wrong = 0, cells = 0;
  forRows(step, (o, b, q) => {
    for (let k = 0; k < S; k++) {
      const m = mask.at(b, q, k);
      cells += m ? 1 : 0;
      if (m !== (step.data[o + k] === fill)) wrong++;
    }
  });
  const text = t('check.fill', { name: step.name, fill: formatFill(fill), cells });
  return { ok: wrong === 0, text: wrong ? t('check.fillWrong', { text, n: wrong }) : text };
}

// [{title, items: [{ok, text}]}]
export function computeChecks(result, plan) {
  const groups = [];
  const steps = result.steps ?? [];
  const softmaxSteps = steps.filter(isWeightsStep);
  if (softmaxSteps.length > 0) {
    groups.push({ title: t('check.group.softmax'), items: softmaxSteps.map((s) => softmaxCheck(s, plan.mask)) });
  }
  if (plan.mask) {
    const items = attentionSources(result, plan).map(maskCheck);
    for (const s of steps.filter((x) => x.op === 'masked_fill')) items.push(fillCheck(s, plan.mask));
    groups.push({ title: t('check.group.mask'), items });
  }
  groups.push({ title: t('check.group.shapes'), items: shapeChecks(result, plan) });
  if (plan.notes.length > 0) groups.push({ title: t('check.group.notes'), items: plan.notes.map((n) => ({ ok: null, text: t(n.key, n.params) })) });
  return groups;
}
