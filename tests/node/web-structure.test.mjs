// The page's structure, checked statically: no file under web/ (locales aside) applies a regular
// expression to a step's `code` / `cpp`, an argument's `help`, an input's `shape` text or an error
// message (views draw from typed data: core/SCENARIO.md "Typed steps"); no function of the page's
// scripts is longer than 90 lines; the modes' shape (app/modes.js): only web/views/ creates DOM
// elements, one field validator (app/state.js fieldProblem), one map from an error's field to its
// control (app/errors.js), one writer of the weights (app/weights.js setWeights); and no script
// computes an attention rule (a mask cell, an ALiBi slope, a RoPE angle): they come from the core.
// A small scanner blanks strings, comments and regex literals, then matches brackets.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const web = fileURLToPath(new URL('../../web/', import.meta.url));
const MAX_LINES = 90;
// The folders of the page's scripts other than its views: the shell and each mode's.
const SCRIPT_DIRS = ['', 'app', 'playground', 'train', 'generate', 'lab', 'model'];
const scripts = () => SCRIPT_DIRS.flatMap((d) => jsFiles(join(web, d), { recurse: false }));
// The WebGPU path and the backend card are another engineer's (docs/webgpu.md); they keep the
// regex rule, and their own length budget.
const LENGTH_EXEMPT = new Set(['playground/backend.js']);

function jsFiles(dir, { recurse }) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return recurse && e.name !== 'locales' ? jsFiles(path, { recurse }) : [];
    return e.name.endsWith('.js') ? [path] : [];
  });
}

// Where a `/` starts a regex literal rather than a division: after an operator, a bracket or a keyword.
const REGEX_BEFORE = new Set([...'(,=:[!&|?{};+-*%<>~^', '']);
const REGEX_KEYWORDS = new Set(['return', 'typeof', 'case', 'in', 'of', 'new', 'delete', 'void', 'throw', 'else', 'do']);

// The source with every string, template text, comment and regex literal replaced by spaces
// (newlines kept), so brackets and names can be matched on what is left: code.
export function blank(src) {
  const out = src.split('');
  const wipe = (from, to) => { for (let k = from; k < to; k++) if (out[k] !== '\n') out[k] = ' '; };
  const stack = [];   // '{' of code, or '`' when inside a template's ${...}
  let i = 0;
  let last = '';      // the last significant code character, or word
  while (i < src.length) {
    const c = src[i];
    if (c === '/' && src[i + 1] === '/') { const j = src.indexOf('\n', i); const end = j < 0 ? src.length : j; wipe(i, end); i = end; continue; }
    if (c === '/' && src[i + 1] === '*') { const end = src.indexOf('*/', i + 2) + 2; wipe(i, end); i = end; continue; }
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < src.length && src[j] !== c) j += src[j] === '\\' ? 2 : 1;
      wipe(i + 1, j); i = j + 1; last = 'str'; continue;
    }
    if (c === '`' || (c === '}' && stack.at(-1) === '`')) {
      if (c === '}') stack.pop();
      let j = i + 1;
      while (j < src.length && src[j] !== '`' && !(src[j] === '$' && src[j + 1] === '{')) j += src[j] === '\\' ? 2 : 1;
      wipe(i + 1, j);
      if (src[j] === '$') { stack.push('`'); i = j + 2; last = '{'; } else { i = j + 1; last = 'str'; }
      continue;
    }
    if (c === '/' && (REGEX_BEFORE.has(last) || REGEX_KEYWORDS.has(last))) {
      let j = i + 1, inClass = false;
      while (j < src.length && (inClass || src[j] !== '/')) {
        if (src[j] === '[') inClass = true;
        else if (src[j] === ']') inClass = false;
        j += src[j] === '\\' ? 2 : 1;
      }
      out[i] = 'R';   // a regex literal: kept as one letter, so `/x/.test(` still reads as a call on it
      wipe(i + 1, j + 1); i = j + 1; last = 'str'; continue;
    }
    if (c === '{') stack.push('{');
    else if (c === '}') stack.pop();
    if (/\s/.test(c)) { i++; continue; }
    if (/[\w$]/.test(c)) { let j = i; while (j < src.length && /[\w$]/.test(src[j])) j++; last = src.slice(i, j); i = j; continue; }
    last = c;
    i++;
  }
  return out.join('');
}

// The index of the bracket closing the one at `open` in blanked code.
function closing(code, open) {
  const pairs = { '(': ')', '{': '}', '[': ']' };
  let depth = 0;
  for (let k = open; k < code.length; k++) {
    if (code[k] in pairs) depth++;
    else if (')}]'.includes(code[k]) && --depth === 0) return k;
  }
  return -1;
}

const lineOf = (code, index) => code.slice(0, index).split('\n').length;

// The fields meaning must never be parsed out of: step code and cpp, argument help, input shape
// text, error messages.
const FIELD = /\.(code|cpp|help|shape)\b(?!\s*\()|\bmessage\b/;

// Regex applications whose subject is one of those fields: /re/.test(x.code), x.code.match(/re/),
// new RegExp(...).exec(e.message), x.help.replace(/re/, ...).
export function regexOverFields(src) {
  const code = blank(src);
  const found = [];
  for (const m of code.matchAll(/\.(test|exec|match|matchAll|search|replace|replaceAll|split)\s*\(/g)) {
    const open = m.index + m[0].length - 1;
    const close = closing(code, open);
    // test / exec: the argument is the subject; the others: the receiver, when the pattern is a
    // regex (a literal, new RegExp, or a name that may hold one; match and search always are).
    const subject = m[1] === 'test' || m[1] === 'exec'
      ? blank(src.slice(open, close + 1))
      : code.slice(Math.max(0, m.index - 80), m.index).split(/[\s;,(=!&|?:]/).at(-1);
    const pattern = code.slice(open + 1, close).trim();
    const regexPattern = ['match', 'matchAll', 'search'].includes(m[1]) || /^(R|new\s+RegExp|[A-Za-z_$][\w$.]*\s*(,|$))/.test(pattern);
    if ((m[1] === 'test' || m[1] === 'exec' || regexPattern) && FIELD.test(subject)) {
      found.push(`line ${lineOf(code, m.index)}: ${src.slice(Math.max(0, m.index - 40), close + 1).trim()}`);
    }
  }
  for (const m of code.matchAll(/new\s+RegExp\s*\(/g)) {
    const open = m.index + m[0].length - 1;
    const args = src.slice(open, closing(code, open) + 1);
    if (FIELD.test(blank(args))) found.push(`line ${lineOf(code, m.index)}: ${args}`);
  }
  return found;
}

// Every function (declaration, expression, arrow with a body, method) and its length in lines,
// from the line of its name to the line of its closing brace.
export function functionLengths(src) {
  const code = blank(src);
  const found = [];
  const add = (name, bodyOpen, headerAt) => {
    const end = closing(code, bodyOpen);
    if (end > 0) found.push({ name, line: lineOf(code, headerAt), lines: lineOf(code, end) - lineOf(code, headerAt) + 1 });
  };
  for (const m of code.matchAll(/\bfunction\b\s*\*?\s*([\w$]*)\s*\(/g)) {
    const params = closing(code, m.index + m[0].length - 1);
    const brace = code.indexOf('{', params);
    add(m[1] || '(anonymous)', brace, m.index);
  }
  for (const m of code.matchAll(/=>\s*\{/g)) {
    const head = code.lastIndexOf('\n', m.index) + 1;
    add(`arrow at "${code.slice(head, m.index).trim().slice(0, 40)}"`, m.index + m[0].length - 1, m.index);
  }
  const NOT_METHODS = new Set(['if', 'for', 'while', 'switch', 'catch', 'with', 'function', 'return']);
  for (const m of code.matchAll(/(?:^|[\s,{;])(?:async\s+|get\s+|set\s+|static\s+)*([\w$]+)\s*\(/g)) {
    if (NOT_METHODS.has(m[1])) continue;
    const open = m.index + m[0].length - 1;
    const params = closing(code, open);
    const after = code.slice(params + 1).match(/^\s*\{/);
    if (!after || /\bfunction\s*$/.test(code.slice(0, m.index + 1))) continue;
    add(m[1], params + 1 + after[0].length - 1, m.index + m[0].indexOf(m[1]));
  }
  return found;
}

test('the scanner finds regexes over the forbidden fields, and function lengths', () => {
  assert.equal(regexOverFields("if (/softmax/.test(step.code)) x();").length, 1);
  assert.equal(regexOverFields('const m = /-1e9/.test(`${s.code} ${s.cpp}`);').length, 1);
  assert.equal(regexOverFields('const r = new RegExp(`\\\\b${arg.name}\\\\b`).exec(message);').length, 1);
  assert.equal(regexOverFields("const n = info.shape.match(/0 = masked/);").length, 1);
  assert.equal(regexOverFields("return arg.help.replace(/x/g, '');").length, 1);
  assert.equal(regexOverFields("if (/^zh/i.test(lang)) return 'zh'; const s = text.replace(/a/g, 'b'); // .test(step.code)").length, 0);
  assert.equal(regexOverFields("const ok = step.op === 'softmax' && step.shape.length > 2;").length, 0);
  const src = ['function a() {', ...Array(95).fill('  x();'), '}', 'const b = () => {', '  y("}");', '};',
    'const o = { m(x = {}) {', '  return /}/.test(x);', '} };'].join('\n');
  const lengths = Object.fromEntries(functionLengths(src).map((f) => [f.name.split(' ')[0], f.lines]));
  assert.equal(lengths.a, 97);
  assert.equal(lengths.arrow, 3);
  assert.equal(lengths.m, 3);
});

test('no file under web/ applies a regular expression to step code, cpp, help, shape text or an error message', () => {
  const files = jsFiles(web, { recurse: true });
  assert.ok(files.length > 20, `${files.length} files`);
  const found = files.flatMap((path) => regexOverFields(readFileSync(path, 'utf8')).map((f) => `${relative(web, path)} ${f}`));
  assert.deepEqual(found, [], 'meaning must come from typed fields (op, ops, attrs, inputs, tokens, error.field, inputs[].role/dims/width)');
});

test(`no function of the page's scripts or views is longer than ${MAX_LINES} lines`, () => {
  const files = [...scripts(), ...jsFiles(join(web, 'views'), { recurse: false })]
    .filter((path) => !LENGTH_EXEMPT.has(relative(web, path)));
  assert.ok(files.length > 30, `${files.length} files`);
  const long = files.flatMap((path) => functionLengths(readFileSync(path, 'utf8'))
    .filter((f) => f.lines > MAX_LINES).map((f) => `${relative(web, path)}:${f.line} ${f.name}: ${f.lines} lines`));
  assert.deepEqual(long, []);
});

// Code (strings, comments and regexes blanked) that makes DOM nodes.
const MAKES_DOM = /\b(createElement|createElementNS|createTextNode|insertAdjacentHTML|insertRow|insertCell)\s*\(|\.(innerHTML|outerHTML)\s*=|\bnew\s+Option\s*\(/;
// The embedding element (<attention-playground>) builds its own shadow root: it is not a mode.
const DOM_EXEMPT = new Set(['attention-playground.js', 'i18n.js']);

export function domMakers(src) {
  const code = blank(src);
  return code.split('\n').flatMap((line, i) => (MAKES_DOM.test(line) ? [`line ${i + 1}: ${src.split('\n')[i].trim()}`] : []));
}

test('only web/views/ creates DOM elements: the shell and the modes hand views their data', () => {
  const found = scripts().filter((path) => !DOM_EXEMPT.has(relative(web, path)))
    .flatMap((path) => domMakers(readFileSync(path, 'utf8')).map((f) => `${relative(web, path)} ${f}`));
  assert.deepEqual(found, []);
  assert.equal(domMakers("const a = document.createElement('a'); b.innerHTML = x; // createElement(").length, 1);
});

// A range check of a state field's value against its declared bounds (field.min, schema[k].max,
// typedMin, typedAbove).
const RANGE_CHECK = /(>=?|<=?)\s*(\w*[fF]ield|schema\[[^\]]*\])\.(min|max)\b|\b(\w*[fF]ield|schema\[[^\]]*\])\.(min|max)\s*(>=?|<=?)|\.(typedMin|typedAbove)\b/;

test('one field validator: only app/state.js checks a value against a field\'s bounds', () => {
  const found = scripts().filter((path) => relative(web, path) !== join('app', 'state.js'))
    .flatMap((path) => blank(readFileSync(path, 'utf8')).split('\n').flatMap((line, i) => (RANGE_CHECK.test(line) ? [`${relative(web, path)}:${i + 1}: ${line.trim()}`] : [])));
  assert.deepEqual(found, []);
  assert.ok(RANGE_CHECK.test('v >= field.min && v <= field.max'));
  assert.ok(!RANGE_CHECK.test('if (v > max) max = v;'));
});

// An object key or case naming a field of the core's or the engine's errors ('config.n_head': ...).
const ERROR_FIELD_KEY = /['"](config|model|optimizer|generate|inputs|loss)\.[\w*]+['"]\s*:/;

test('one map from an error\'s field to its control: app/errors.js', () => {
  const files = [...scripts(), ...jsFiles(join(web, 'views'), { recurse: false })].filter((path) => relative(web, path) !== join('app', 'errors.js'));
  const found = files.flatMap((path) => readFileSync(path, 'utf8').split('\n').flatMap((line, i) => (ERROR_FIELD_KEY.test(line) ? [`${relative(web, path)}:${i + 1}: ${line.trim()}`] : [])));
  assert.deepEqual(found, []);
  assert.ok(ERROR_FIELD_KEY.test("{ 'config.n_head': 'genheads' }"));
});

test('one writer of the weights every mode reads: app/weights.js setWeights', () => {
  const found = scripts().filter((path) => relative(web, path) !== join('app', 'weights.js'))
    .flatMap((path) => blank(readFileSync(path, 'utf8')).split('\n').flatMap((line, i) => (/\.weights(Error)?\s*=[^=]/.test(line) ? [`${relative(web, path)}:${i + 1}: ${line.trim()}`] : [])));
  assert.deepEqual(found, []);
});

// What computing an attention rule looks like: a key index against a query index (the causal
// triangle, a window), ALiBi's slopes (powers of two, logarithms), RoPE's frequencies and angles.
const RULES = [
  ['a mask cell', /\b(k|j|key|pj)\s*>\s*(q|i|query|pi)\b|\b(q|i|pi)\s*-\s*(window|w)\b/],
  ['an ALiBi slope', /Math\.log2\s*\(|\b2\s*\*\*\s*-/],
  ['a RoPE angle', /\binv_?freq\b|\*\*\s*\(?\s*(2\s*\*|-?\s*2\s*\*)|Math\.(cos|sin)\s*\(\s*(angle|pos|position|theta)\b/i],
];

test('no script computes a mask cell, an ALiBi slope or a RoPE angle: the core gives them', () => {
  const files = [...scripts(), ...jsFiles(join(web, 'views'), { recurse: false }), ...jsFiles(join(web, 'gpu'), { recurse: false })];
  const found = files.flatMap((path) => {
    const lines = blank(readFileSync(path, 'utf8')).split('\n');
    return lines.flatMap((line, i) => RULES.filter(([, re]) => re.test(line)).map(([what]) => `${relative(web, path)}:${i + 1} computes ${what}: ${line.trim()}`));
  });
  assert.deepEqual(found, []);
  for (const [what, re] of RULES) assert.ok(['k > q', 'Math.log2(n)', 'invFreq'].some((x) => re.test(x)), what);
});
