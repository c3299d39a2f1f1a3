// The page's languages: English and Simplified Chinese. t(key, params) gives the current
// language's text for a key of locales/en.js (zh from locales/zh.js); tCore(text) translates the
// core's own listing texts (module summaries, argument help), never its error messages. Training
// mode's texts (locales/train.en.js, train.zh.js) and Generate mode's (gen.en.js, gen.zh.js) and the
// modern-attention views' (modern.en.js, modern.zh.js) are merged in: one dictionary per language.
// main.js picks the language (the link's `lang`, else the browser); events.js re-renders on a switch.
import { en as pageEn } from './locales/en.js';
import { genEn } from './locales/gen.en.js';
import { genZh } from './locales/gen.zh.js';
import { modernEn } from './locales/modern.en.js';
import { modernZh } from './locales/modern.zh.js';
import { trainEn } from './locales/train.en.js';
import { trainZh } from './locales/train.zh.js';
import { coreZh, zh as pageZh } from './locales/zh.js';

const LANGS = ['en', 'zh'];
const en = { ...pageEn, ...trainEn, ...genEn, ...modernEn };
export const messages = { en, zh: { ...pageZh, ...trainZh, ...genZh, ...modernZh } };

let current = 'en';

export const lang = () => current;

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

export function setLang(l) {
  current = LANGS.includes(l) ? l : 'en';
  return current;
}

// {name} in a message is replaced by params.name; other braces (JSON examples) are left alone.
export function t(key, params) {
  const text = messages[current][key] ?? en[key];
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
  const parts = text.split('`');
  if (parts.length === 1) {
    if (el.textContent !== text) el.textContent = text;
    return;
  }
  el.replaceChildren(...parts.map((part, i) => {
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
// <html lang> and the title follow.
export function translatePage(root = document) {
  for (const el of root.querySelectorAll('[data-i18n]')) setRichText(el, t(el.dataset.i18n, paramsOf(el)));
  for (const el of root.querySelectorAll('[data-i18n-aria-label]')) el.setAttribute('aria-label', t(el.dataset.i18nAriaLabel, paramsOf(el)));
  if (root === document) {
    document.documentElement.lang = htmlLang(current);
    document.title = t('page.title');
  }
}
