// One-click scenarios, one per seed tutorial (docs/tutorials.md lists them). Each is a
// patch over defaultState() (state.js); `tables` are the embedding tables a preset brings along.
// Labels and help texts are in the current language (locales/, keys preset.<id>.label/help).

import { t } from '../i18n.js';
import { DEFAULT_SENTENCE } from './fields.js';

// Seed 004's six 3-d input embeddings, one per word of "Your journey starts with one step".
export const tables = {
  journey: {
    get title() { return t('table.journey.title'); },
    tokens: ['Your', 'journey', 'starts', 'with', 'one', 'step'],
    dim: 3,
    weight: [
      0.43, 0.15, 0.89,
      0.55, 0.87, 0.66,
      0.57, 0.85, 0.64,
      0.22, 0.58, 0.33,
      0.77, 0.25, 0.10,
      0.05, 0.80, 0.55,
    ],
  },
};

// The language model the page ships (npm run train-lm: web/public/models/fortunes/card.json's config).
export const LANGUAGE_MODEL_CONFIG = Object.freeze({ vocab_size: 96, block_size: 64, n_layer: 4, n_head: 4, n_embd: 128, dropout: 0, bias: true });

export const presets = [
  {
    id: 'default',
    get label() { return t('preset.default.label'); },
    get help() { return t('preset.default.help'); },
    state: {
      module: 'CausalMultiHeadAttention', text: DEFAULT_SENTENCE, seed: 123, source: 'embedding', pairing: 'one',
      trainmode: false, config: { CausalMultiHeadAttention: { d_in: 64, d_out: 64, context_length: 32, dropout: 0.1, num_heads: 4, qkv_bias: false } },
    },
  },
  {
    id: 'journey',
    get label() { return t('preset.journey.label'); },
    get help() { return t('preset.journey.help'); },
    state: {
      module: 'SelfAttention_v1', text: 'Your journey starts with one step', tokenizer: 'word', seed: 123,
      source: 'table', table: 'journey', pairing: 'one', trainmode: false,
      config: { SelfAttention_v1: { d_in: 3, d_out: 2 } },
    },
  },
  {
    id: 'mha000',
    get label() { return t('preset.mha000.label'); },
    get help() { return t('preset.mha000.help'); },
    state: {
      module: 'MultiHeadAttention', seed: 0, source: 'randn', kv: 'separate', batch: 64, seqT: 10, seqS: 10,
      causal: false, pairing: 'one', trainmode: false, config: { MultiHeadAttention: { d_model: 512, num_heads: 8 } },
    },
  },
  {
    id: 'mhsa001',
    get label() { return t('preset.mhsa001.label'); },
    get help() { return t('preset.mhsa001.help'); },
    state: {
      module: 'MultiHeadSelfAttention', text: 'attention lets every token look at every other token', seed: 0,
      source: 'embedding', pairing: 'one', trainmode: false,
      config: { MultiHeadSelfAttention: { dim_in: 32, dim_k: 32, dim_v: 64, num_heads: 8 } },
    },
  },
  {
    id: 'transformer002',
    get label() { return t('preset.transformer002.label'); },
    get help() { return t('preset.transformer002.help'); },
    state: {
      module: 'Transformer', text: 'I love you', text2: '<bos> 我 爱 你', tokenizer: 'word', seed: 0, trainmode: false,
      config: { Transformer: { vocab_size: 7, emb_dim: 16, num_heads: 2, ffn_dim: 32, num_layers: 2 } },
    },
  },
  {
    id: 'cross003',
    get label() { return t('preset.cross003.label'); },
    get help() { return t('preset.cross003.help'); },
    state: {
      module: 'SplitHeadsMultiHeadAttention', seed: 0, source: 'randn', kv: 'same', batch: 2, seqT: 5, seqS: 6,
      causal: false, pairing: 'cross', trainmode: true,
      config: { SplitHeadsMultiHeadAttention: { d_model: 64, num_heads: 8, dropout: 0.1 } },
    },
  },
  {
    // the default sentence through a model that has read English: its heads' attention is learned
    id: 'fortunes',
    get label() { return t('preset.fortunes.label'); },
    get help() { return t('preset.fortunes.help'); },
    state: {
      module: 'GPT', text: DEFAULT_SENTENCE, tokenizer: 'char', seed: 1, trainmode: false, source: 'embedding', pairing: 'one',
      weights: 'models/fortunes/model.safetensors', config: { GPT: { ...LANGUAGE_MODEL_CONFIG } },
    },
  },
];
