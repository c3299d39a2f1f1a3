// Turns typed text into tokens and tokens into ids. Used by view-data.js (the chips) and scenario.js
// (the ids fed to nn.Embedding). Word level keeps "<bos>"-style markers and contractions whole and
// splits Han/kana characters one per token, since those scripts write words without spaces.

const WORD = /<[^<>\s]+>|[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]|[\p{L}\p{N}\p{M}_]+(?:['’][\p{L}\p{N}]+)*|\S/gu;

export const PAD = '<pad>';

// mode: 'word' | 'char'. Character level keeps spaces, as a character-level model sees them.
export function tokenize(text, mode = 'word') {
  if (mode === 'char') return Array.from(text.replace(/\s+/g, ' ').trim());
  return text.match(WORD) ?? [];
}

// How a token is printed on a chip or an axis: a space must stay visible.
export function tokenLabel(token) {
  return token === ' ' ? '␣' : token;
}

// Ids in order of first appearance over all sentences, so the first word of the sentence is id 0
// (or 1 when a <pad> row is needed: padding takes id 0, as nn.Embedding(padding_idx=0) would).
export function buildVocab(sentences, { pad = false } = {}) {
  const vocab = pad ? [PAD] : [];
  const index = new Map(vocab.map((t, i) => [t, i]));
  for (const tokens of sentences) {
    for (const t of tokens) {
      if (!index.has(t)) { index.set(t, vocab.length); vocab.push(t); }
    }
  }
  return { tokens: vocab, index, ids: (tokens) => tokens.map((t) => index.get(t)) };
}

// The {tokens, index, ids} shape of tokenize.js's buildVocab, for a given token list.
export function vocabFromTokens(tokens) {
  const index = new Map(tokens.map((t, i) => [t, i]));
  return { tokens, index, ids: (ts) => ts.map((t) => index.get(t)) };
}
