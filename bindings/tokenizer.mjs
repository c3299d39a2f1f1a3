// Text in, tokens out: a model folder's own tokenizer, from maintained npm libraries (no BPE written
// here). tokenizer.json (BPE with byte fallback as Llama-family models ship it, GPT-2's byte-level
// BPE, WordPiece, Unigram) runs on Hugging Face's @huggingface/tokenizers; GPT-2's vocab.json +
// merges.txt become the byte-level tokenizer.json they describe; a gpt2 folder without tokenizer
// files uses gpt-tokenizer's r50k_base (GPT-2's ranks, shipped in the package: works offline).
//
//   const tok = await loadTokenizer((name) => bytes | null, 'gpt2');
//   tok.encode('Hello world')  // [15496, 995]
//   tok.pieces([15496, 995])   // ['Hello', ' world']: each token as its text (GPT-2's Ġ a space)
//   tok.pieces([ids], before)  // as they print after the tokens `before` (a next token's text)
//   tok.decode(ids)            // the text again
//   tok.token(id)              // its string in the vocabulary ('▁the', '<0xF0>'; tokenizer.json only)
//   await withTokens(scenario, files)  // the scenario with every {"name", "text"} input as its ids
import { Tokenizer } from '@huggingface/tokenizers';

const utf8 = new TextDecoder('utf-8', { fatal: false });
const text = (bytes) => (bytes == null ? null : utf8.decode(bytes));
const parse = (bytes, name) => {
  try {
    return JSON.parse(text(bytes));
  } catch (e) {
    throw new Error(`the model folder's ${name} is not valid JSON: ${e.message}`);
  }
};

// GPT-2's vocab.json + merges.txt as the tokenizer.json Hugging Face's GPT2TokenizerFast builds from them.
function gpt2TokenizerJson(vocab, merges) {
  const lines = merges.split('\n').filter((l) => l && !l.startsWith('#version'));
  const eos = vocab['<|endoftext|>'];
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: '1.0',
    added_tokens: eos === undefined ? [] : [{ id: eos, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: byteLevel,
    decoder: byteLevel,
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab, merges: lines },
  };
}

// Each token as the text it adds: what decoding through it adds to decoding up to it (so a
// decoder's Strip of the first space comes out as the whole text does, and a character made of
// several byte tokens shows on the one that completes it, '' on the others), else the token alone.
// After `context` (the tokens before them: a next token's piece after the sentence, " the" for
// Llama's ▁the where decoding it alone strips the space); its last 8 tokens are enough for that.
function piecesOf(ids, decode, context = []) {
  const ctx = context.slice(-8);
  const upTo = ids.map((_, i) => decode([...ctx, ...ids.slice(0, i + 1)]));  // the text through each token
  let before = ctx.length ? decode(ctx) : '';
  return ids.map((id, i) => {
    const now = upTo[i];
    if (now.endsWith('\uFFFD') && i + 1 < ids.length && !upTo[i + 1].endsWith('\uFFFD\uFFFD')) return '';
    const piece = now.startsWith(before) ? now.slice(before.length) : decode([id]);
    before = now;
    return piece;
  });
}

// The model types @huggingface/tokenizers computes (a tokenizer.json without model.type: it infers one).
const MODEL_TYPES = ['BPE', 'WordPiece', 'Unigram'];

// A tokenizer of @huggingface/tokenizers as {kind, encode, decode, pieces}. The folder's files are
// untrusted: what the library throws on a damaged one ("Cannot read properties of null", "x.split is
// not a function") comes out naming the file, and a model type it does not know (which it would
// read as BPE without a word) is refused.
function fromHf(kind, json, config) {
  const named = (f) => (...args) => {
    try {
      return f(...args);
    } catch (e) {
      throw new Error(`the model folder's ${kind} is not a tokenizer @huggingface/tokenizers can run: ${e?.message ?? e}`);
    }
  };
  const type = json?.model?.type;
  if (type !== undefined && !MODEL_TYPES.includes(type))
    throw new Error(`the model folder's ${kind} has model.type ${JSON.stringify(type)}: the tokenizers read here are ${MODEL_TYPES.join(', ')}`);
  const tok = named(() => new Tokenizer(json, config ?? {}))();
  const decode = named((ids) => tok.decode(ids, { skip_special_tokens: false }));
  return { kind, encode: named((s) => tok.encode(s, { add_special_tokens: false }).ids), decode, pieces: (ids, context) => piecesOf(ids, decode, context),
    token: (id) => tok.id_to_token(id) };
}

// read(name) -> Uint8Array | null: the folder's files; modelType: config.json's model_type.
export async function loadTokenizer(read, modelType) {
  const json = read('tokenizer.json');
  if (json) {
    const config = read('tokenizer_config.json');
    return fromHf('tokenizer.json', parse(json, 'tokenizer.json'), config && parse(config, 'tokenizer_config.json'));
  }
  const vocab = read('vocab.json'), merges = read('merges.txt');
  if (vocab && merges) {
    const v = parse(vocab, 'vocab.json');  // null threw a TypeError here, where its end-of-text id is looked up
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`the model folder's vocab.json must be an object of token: id, got ${JSON.stringify(v)}`);
    return fromHf('vocab.json + merges.txt', gpt2TokenizerJson(v, text(merges)));
  }
  if (modelType === 'gpt2') {
    const r50k = await import('gpt-tokenizer/encoding/r50k_base');
    // Its decode() keeps one streaming TextDecoder across calls (a character cut at the end of one
    // call comes out in the next): the tokens' bytes are decoded here, a fresh decoder per text.
    const core = r50k.default.bytePairEncodingCoreProcessor;
    const bytes = (id) => {
      const b = core.tryDecodeToken(id);
      if (b === undefined) throw new Error(`token id ${id} is not one of GPT-2's 50257`);
      return typeof b === 'string' ? new TextEncoder().encode(b) : b;
    };
    const decode = (ids) => {
      const d = new TextDecoder('utf-8');
      return ids.map((id) => d.decode(bytes(id), { stream: true })).join('') + d.decode();
    };
    return { kind: "GPT-2's ranks (gpt-tokenizer r50k_base)", encode: (s) => r50k.encode(s), decode, pieces: (ids, context) => piecesOf(ids, decode, context) };
  }
  throw new Error(`the model folder has no tokenizer (tokenizer.json, or vocab.json + merges.txt): give the input as token ids`);
}

// The scenario with each input {"name", "text"} turned into {"name", "shape": [1, n], "data": ids}
// by the "pretrained" folder's tokenizer; the pieces of each, by input name, beside it.
export async function withTokens(scenario, read) {
  const inputs = Array.isArray(scenario?.inputs) ? scenario.inputs : [];
  const given = (i) => i && typeof i === 'object' && i.text !== undefined;
  if (!inputs.some(given)) return { scenario, tokens: {} };
  for (const [at, input] of inputs.entries()) {
    if (!given(input)) continue;
    const what = `input '${input.name ?? `inputs[${at}]`}'`;
    if (typeof input.text !== 'string')
      throw Object.assign(new Error(`${what}: text must be a string, got ${JSON.stringify(input.text)}`), { field: `inputs.${input.name}` });
    if (input.data !== undefined || input.shape !== undefined)
      throw Object.assign(new Error(`${what}: give its text or its ids ("data" and "shape"), not both`), { field: `inputs.${input.name}` });
  }
  if (typeof scenario.pretrained !== 'string' || typeof read !== 'function')
    throw Object.assign(new Error('an input given as text needs "pretrained": a model folder whose tokenizer turns it into ids'), { field: 'inputs' });
  let modelType;
  try {
    modelType = parse(read('config.json') ?? new Uint8Array(), 'config.json').model_type;
  } catch {}  // the core names what is wrong with config.json
  const tok = await loadTokenizer(read, modelType);
  const tokens = {};
  const out = inputs.map((input) => {
    if (!given(input)) return input;
    const { text: s, ...rest } = input;
    const ids = tok.encode(s);
    if (ids.length === 0) throw Object.assign(new Error(`input '${input.name}': the text "${s}" gives no tokens`), { field: `inputs.${input.name}` });
    tokens[input.name] = tok.pieces(ids);
    return { ...rest, shape: [1, ids.length], data: ids };
  });
  return { scenario: { ...scenario, inputs: out }, tokens, tokenizer: tok.kind };
}
