// The page's dictionaries (web/locales/: the playground's, modern attention's, and each mode's, which
// i18n.js adds as the mode opens, Chinese fetched when chosen): English and Chinese have the same
// keys and parameters, no empty or untranslated Chinese text, every key the page uses exists
// (index.html's data-i18n attributes, keys quoted in web/**/*.js) and every key is used; the core's
// module summaries and argument help all have a Chinese text; the language pick and t() behave.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { loadAttention } from '../../bindings/attention.mjs';
import { hashProblems } from '../../web/app/state.js';
import { lang, pickLang, setLang, t, tCore } from '../../web/i18n.js';
import { en as pageEn } from '../../web/locales/en.js';
import { genEn } from '../../web/locales/gen.en.js';
import { genZh } from '../../web/locales/gen.zh.js';
import { labEn } from '../../web/locales/lab.en.js';
import { labZh } from '../../web/locales/lab.zh.js';
import { modelEn } from '../../web/locales/model.en.js';
import { modelZh } from '../../web/locales/model.zh.js';
import { modernEn } from '../../web/locales/modern.en.js';
import { modernZh } from '../../web/locales/modern.zh.js';
import { trainEn } from '../../web/locales/train.en.js';
import { trainZh } from '../../web/locales/train.zh.js';
import { coreZh, zh as pageZh } from '../../web/locales/zh.js';

// Every part of each language, as the page holds them once every mode has opened.
const en = { ...pageEn, ...trainEn, ...genEn, ...labEn, ...modernEn, ...modelEn };
const zh = { ...pageZh, ...trainZh, ...genZh, ...labZh, ...modernZh, ...modelZh };

const web = fileURLToPath(new URL('../../web/', import.meta.url));
const params = (text) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
// Han characters or CJK / full-width punctuation (a separator such as '、' is a translation too).
const CHINESE = /[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]/;

function sources(dir = web) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'locales' || e.name === 'public' ? [] : sources(path);
    return e.name.endsWith('.js') ? [{ path, text: readFileSync(path, 'utf8') }] : [];
  });
}

test('English and Chinese have the same keys, the same parameters, and no empty text', () => {
  for (const part of [pageEn, trainEn, genEn, labEn, modernEn, modelEn]) {
    assert.ok(Object.keys(part).every((key) => Object.keys(en).filter((k) => k === key).length === 1), 'no key in two parts');
  }
  assert.deepEqual(Object.keys(zh).sort(), Object.keys(en).sort());
  for (const key of Object.keys(en)) {
    assert.ok(en[key].trim().length > 0, `en ${key} is empty`);
    assert.ok(zh[key].trim().length > 0, `zh ${key} is empty`);
    assert.deepEqual(params(zh[key]), params(en[key]), `${key}: parameters of zh differ from en`);
    assert.equal((zh[key].match(/`/g) ?? []).length % 2, 0, `${key}: unbalanced backticks`);
  }
});

test('every Chinese text is a translation: Chinese characters in it, never the English copied', () => {
  for (const key of Object.keys(zh)) {
    assert.match(zh[key], CHINESE, `zh ${key} has no Chinese: ${zh[key]}`);
    assert.notEqual(zh[key], en[key], `zh ${key} is the English text`);
  }
  for (const [english, chinese] of Object.entries(coreZh)) {
    assert.match(chinese, CHINESE, `core text "${english}"`);
    assert.deepEqual((chinese.match(/\d+/g) ?? []).sort(), (english.match(/\d+/g) ?? []).sort(), `numbers of "${english}"`);
  }
});

// The static markup's keys: index.html's, and the modes' sections (views/*-section.js).
const markupKeys = () => [readFileSync(join(web, 'index.html'), 'utf8'), ...sources().filter((f) => f.path.endsWith('-section.js')).map((f) => f.text)]
  .flatMap((text) => [...text.matchAll(/data-i18n(?:-aria-label)?="([^"]+)"/g)].map((m) => m[1]));

test('every data-i18n key of the markup exists', () => {
  const keys = markupKeys();
  assert.ok(keys.length >= 100, `${keys.length} keys`);
  for (const key of keys) assert.ok(key in en, `the markup uses ${key}, which the locales lack`);
});

test('every key quoted in the page\'s scripts exists, and every key is used', () => {
  const groups = new Set(Object.keys(en).map((k) => k.split('.')[0]));
  const used = new Set();
  for (const { path, text } of sources()) {
    for (const m of text.matchAll(/'([a-z][A-Za-z0-9]*(?:\.[A-Za-z0-9]+)+)'/g)) {
      if (!groups.has(m[1].split('.')[0]) || /\.(js|json|wgsl|html)$/.test(m[1])) continue;
      assert.ok(m[1] in en, `${path} uses '${m[1]}', which locales/en.js lacks`);
      used.add(m[1]);
    }
  }
  for (const key of markupKeys()) used.add(key);
  // Built from a variable: shapes.js picks the third that chunk() takes.
  for (const which of ['first', 'second', 'last', 'one']) used.add(`change.chunk.${which}`);
  assert.deepEqual(Object.keys(en).filter((k) => !used.has(k)), [], 'keys no script uses');
});

test('the core\'s module summaries and argument help all have a Chinese text', async () => {
  const core = await loadAttention();
  const texts = core.modules().flatMap((m) => [m.summary, ...m.args.map((a) => a.help)]);
  assert.ok(texts.length > 50);
  for (const text of texts) assert.ok(text in coreZh, `no Chinese for the core's "${text}"`);
  await setLang('zh');
  try {
    assert.equal(tCore('number of heads'), '头数');
    assert.equal(tCore('a text the core does not have'), 'a text the core does not have');
  } finally {
    await setLang('en');
  }
  assert.equal(tCore('number of heads'), 'number of heads');
});

test('the language: the link first, else the first English or Chinese browser language, else English', () => {
  assert.equal(pickLang('zh', ['en-US']), 'zh');
  assert.equal(pickLang('en', ['zh-CN']), 'en');
  assert.equal(pickLang('', ['zh-CN', 'en']), 'zh');
  assert.equal(pickLang('', ['zh-TW']), 'zh');
  assert.equal(pickLang('', ['zh']), 'zh');
  assert.equal(pickLang('', ['fr-FR', 'zh-CN']), 'zh');
  assert.equal(pickLang('', ['en-GB', 'zh-CN']), 'en');
  assert.equal(pickLang('', ['de-DE']), 'en');
  assert.equal(pickLang('', []), 'en');
  assert.equal(pickLang('fr', ['fr']), 'en');
});

test('t() fills parameters once, leaves JSON braces alone, and refuses unknown keys', async () => {
  assert.equal(lang(), 'en');
  assert.equal(t('attn.headOf', { h: 2, H: 8 }), 'head 2 of 8');
  assert.equal(t('link.tooLong', { key: '{max}', n: 5000, max: 2000 }), '{max} is 5000 characters long: a link holds at most 2000');
  assert.match(t('link.problem', { key: 'config', value: '"x"', rule: t('link.config') }), /must be JSON like \{"MultiHeadAttention": \{"d_model": 64, "num_heads": 4\}\}$/);
  assert.throws(() => t('no.such.key'), /no message 'no\.such\.key'/);
  await setLang('zh');
  try {
    assert.equal(t('attn.headOf', { h: 2, H: 8 }), '第 2 个头（共 8 个）');
    assert.deepEqual(hashProblems('#lang=fr&nope=1'), ['lang "fr" 必须是 en, zh 之一', '"nope" 不是演练场链接的字段：已忽略']);
  } finally {
    await setLang('en');
  }
  assert.deepEqual(hashProblems('#lang=fr'), ['lang "fr" must be one of en, zh']);
  assert.deepEqual(hashProblems('#lang=zh'), []);
});
