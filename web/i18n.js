// The page's languages: English and Simplified Chinese. t(key, params) gives the current
// language's text for a key (English when the Chinese part of a key is not loaded); tCore(text)
// translates the core's own listing texts (module summaries, argument help), never its error
// messages. The dictionaries come in parts: the playground's English (locales/en.js,
// modern.en.js) is in the page; each mode adds its own part when it opens (addLocale: train.*.js,
// gen.*.js), and the Chinese of every part is fetched when Chinese is chosen (setLang), so the
// first view carries one language. main.js picks the language (the link's `lang`, else the browser).
import { en as pageEn } from './locales/en.js';
import { modernEn } from './locales/modern.en.js';

const LANGS = ['en', 'zh'];
export const messages = { en: { ...pageEn, ...modernEn }, zh: {} };
let coreZh = {};
// Per part, its Chinese: a loader, and whether it is in `messages.zh` yet.
const parts = [{
  zh: () => Promise.all([import('./locales/zh.js'), import('./locales/modern.zh.js')])
    .then(([page, modern]) => { coreZh = page.coreZh; return { ...page.zh, ...modern.modernZh }; }),
  loaded: false,
}];

let current = 'en';

export const lang = () => current;

async function loadChinese() {
  await Promise.all(parts.filter((p) => !p.loaded).map(async (p) => {
    Object.assign(messages.zh, await p.zh());
    p.loaded = true;
  }));
}

// A mode's texts: its English now, its Chinese (zh: a loader of the dictionary) when Chinese is
// or gets chosen. Resolves when the current language's texts are there.
export function addLocale({ en, zh }) {
  Object.assign(messages.en, en);
  parts.push({ zh, loaded: false });
  return current === 'zh' ? loadChinese() : Promise.resolve();
}

// BCP 47 tag for <html lang>.
const htmlLang = (l) => (l === 'zh' ? 'zh-CN' : 'en');

// The link's choice when it names one, else the first English or Chinese entry of the browser's
// preferred languages (any zh-* is Simplified Chinese here), else English.
export function pickLang(fromLink, languages = []) {
  if (LANGS.includes(fromLink)) return fromLink;
  for (const l of languages) {
    if (/^zh\b/i.test(l)) return 'zh';
    if (/^en\b/i.test(l)) return 'en';
  }
  return 'en';
}

// The language, once its texts are loaded (Chinese: fetched the first time).
export async function setLang(l) {
  const next = LANGS.includes(l) ? l : 'en';
  if (next === 'zh') await loadChinese();
  current = next;
  return current;
}

// {name} in a message is replaced by params.name; other braces (JSON examples) are left alone.
export function t(key, params) {
  const text = messages[current][key] ?? messages.en[key];
  if (text === undefined) throw new Error(`i18n: no message '${key}'`);
  if (!params) return text;
  return text.replace(/\{(\w+)\}/g, (m, name) => (name in params ? String(params[name]) : m));
}

export function tCore(text) {
  return current === 'zh' ? coreZh[text] ?? text : text;
}

// Sets a message as the element's content; `code` spans in backticks become <code> elements,
// built as DOM nodes (never parsed as markup).
function setRichText(el, text) {
  const pieces = text.split('`');
  if (pieces.length === 1) {
    if (el.textContent !== text) el.textContent = text;
    return;
  }
  el.replaceChildren(...pieces.map((part, i) => {
    if (i % 2 === 0) return document.createTextNode(part);
    const code = document.createElement('code');
    code.textContent = part;
    return code;
  }));
}

// Marks an element built by a view so that translatePage() re-translates it on a language switch:
// its text (or, with attr = 'aria-label', that attribute) is the message `key` with `params`.
export function i18nText(el, key, params) {
  el.dataset.i18n = key;
  if (params) el.dataset.i18nParams = JSON.stringify(params);
  setRichText(el, t(key, params));
  return el;
}

export function i18nLabel(el, key, params) {
  el.dataset.i18nAriaLabel = key;
  if (params) el.dataset.i18nParams = JSON.stringify(params);
  el.setAttribute('aria-label', t(key, params));
  return el;
}

const paramsOf = (el) => (el.dataset.i18nParams ? JSON.parse(el.dataset.i18nParams) : undefined);

// The static page and the views' fixed texts: elements marked data-i18n="key" get the text,
// data-i18n-aria-label="key" the accessible label (data-i18n-params: JSON of the parameters);
// <html lang> and the title follow. A mode's own texts wait for its part (addLocale): its section
// is translated when it opens.
export function translatePage(root = document) {
  const known = (key) => key in messages.en;
  for (const el of root.querySelectorAll('[data-i18n]')) if (known(el.dataset.i18n)) setRichText(el, t(el.dataset.i18n, paramsOf(el)));
  for (const el of root.querySelectorAll('[data-i18n-aria-label]')) if (known(el.dataset.i18nAriaLabel)) el.setAttribute('aria-label', t(el.dataset.i18nAriaLabel, paramsOf(el)));
  if (root === document) {
    document.documentElement.lang = htmlLang(current);
    document.title = t('page.title');
  }
}
