"""Seed 004 ("Your journey starts with one step", self-attention step by step): SelfAttention_v1,
SelfAttention_v2, CausalAttention, MultiHeadAttentionWrapper and MultiHeadAttention (core:
CausalMultiHeadAttention), and their cases."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .common import JOURNEY, causal4, data, rand, softmax_masked_rows_zero, trace

# seed 004: "Your journey starts with one step"

class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        keys = x @ self.W_key
        keys = trace.rec('keys', keys)
        queries = x @ self.W_query
        queries = trace.rec('queries', queries)
        values = x @ self.W_value
        values = trace.rec('values', values)
        attn_scores = queries @ keys.T
        attn_scores = trace.rec('attn_scores', attn_scores)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = trace.rec('attn_weights', attn_weights)
        context_vec = attn_weights @ values
        context_vec = trace.rec('context_vec', context_vec)
        return context_vec, attn_weights


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        keys = self.W_key(x)
        keys = trace.rec('keys', keys)
        queries = self.W_query(x)
        queries = trace.rec('queries', queries)
        values = self.W_value(x)
        values = trace.rec('values', values)
        attn_scores = queries @ keys.T
        attn_scores = trace.rec('attn_scores', attn_scores)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = trace.rec('attn_weights', attn_weights)
        context_vec = attn_weights @ values
        context_vec = trace.rec('context_vec', context_vec)
        return context_vec, attn_weights


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        keys = trace.rec('keys', keys)
        queries = self.W_query(x)
        queries = trace.rec('queries', queries)
        values = self.W_value(x)
        values = trace.rec('values', values)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = trace.rec('attn_scores', attn_scores)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)  # seed: masked_fill_
        attn_scores = trace.rec('attn_scores_masked', attn_scores)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = trace.rec('attn_weights', attn_weights)
        attn_weights = self.dropout(attn_weights)
        if self.training and self.dropout.p > 0:
            attn_weights = trace.rec('attn_weights_dropout', attn_weights)
        context_vec = attn_weights @ values
        context_vec = trace.rec('context_vec', context_vec)
        self.last_attn_weights = attn_weights
        return context_vec


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)])

    def forward(self, x):
        outs = []
        for i, head in enumerate(self.heads):
            with trace.scope(f'heads.{i}.'):
                outs.append(head(x))
        context_vec = torch.cat(outs, dim=-1)
        context_vec = trace.rec('context_vec', context_vec)
        return context_vec, torch.stack([h.last_attn_weights for h in self.heads], dim=1)


class CausalMultiHeadAttention(nn.Module):
    """seed 004's MultiHeadAttention(d_in, d_out, context_length, dropout, num_heads, qkv_bias)."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        keys = trace.rec('keys', keys)
        queries = trace.rec('queries', queries)
        values = trace.rec('values', values)
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)
        keys = trace.rec('keys_heads', keys)
        queries = trace.rec('queries_heads', queries)
        values = trace.rec('values_heads', values)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = trace.rec('attn_scores', attn_scores)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores = attn_scores.masked_fill(mask_bool, -torch.inf)  # seed: masked_fill_ (in place)
        attn_scores = trace.rec('attn_scores_masked', attn_scores)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = trace.rec('attn_weights', attn_weights)
        attn_weights = self.dropout(attn_weights)
        if self.training and self.dropout.p > 0:
            attn_weights = trace.rec('attn_weights_dropout', attn_weights)
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = trace.rec('context_vec_heads', context_vec)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        context_vec = trace.rec('context_vec_concat', context_vec)
        context_vec = self.out_proj(context_vec)
        context_vec = trace.rec('context_vec', context_vec)
        return context_vec, attn_weights

def cases():
    """seed 004's cases: the journey's six embeddings, dropout, odd widths, embeddings"""
    f = {}
    # seed 004: the journey
    f['journey_selfattention_v1'] = {'module': 'SelfAttention_v1', 'config': {'d_in': 3, 'd_out': 2}, 'seed': 123,
                                     'inputs': [data('x', [6, 3], JOURNEY)], 'trace': True}
    f['journey_selfattention_v2'] = {'module': 'SelfAttention_v2', 'config': {'d_in': 3, 'd_out': 2}, 'seed': 789,
                                     'inputs': [data('x', [6, 3], JOURNEY)], 'trace': True}
    f['selfattention_v1_odd'] = {'module': 'SelfAttention_v1', 'config': {'d_in': 5, 'd_out': 7}, 'seed': 11,
                                 'inputs': [rand('x', [9, 5], 'rand')], 'trace': True}
    f['selfattention_v2_bias_T1'] = {'module': 'SelfAttention_v2', 'config': {'d_in': 4, 'd_out': 3, 'qkv_bias': True},
                                     'seed': 12, 'inputs': [rand('x', [1, 4])], 'trace': True}
    f['selfattention_v2_params'] = {'module': 'SelfAttention_v2', 'config': {'d_in': 3, 'd_out': 2}, 'seed': 123,
                                    'inputs': [data('x', [6, 3], JOURNEY)], 'trace': True, 'params': {
                                        'W_query.weight': {'shape': [2, 3], 'data': [0.2961, 0.5166, 0.2517, 0.6886, 0.0740, 0.8665]},
                                        'W_key.weight': {'shape': [2, 3], 'data': [0.1366, 0.1025, 0.1841, 0.7264, 0.3153, 0.6871]}}}
    journey_batch = JOURNEY + JOURNEY
    f['journey_causal_attention'] = {'module': 'CausalAttention', 'config': causal4(3, 2, 6, 0.0), 'seed': 123,
                                     'inputs': [data('x', [2, 6, 3], journey_batch)], 'trace': True}
    f['causal_attention_dropout_train'] = {'module': 'CausalAttention', 'config': causal4(3, 2, 6, 0.5), 'seed': 123,
                                           'train': True, 'inputs': [data('x', [2, 6, 3], journey_batch)], 'trace': True}
    f['causal_attention_odd_bias'] = {'module': 'CausalAttention', 'config': causal4(7, 5, 16, 0.2, qkv_bias=True), 'seed': 8,
                                      'inputs': [rand('x', [3, 11, 7])], 'trace': True}
    f['journey_mha_wrapper'] = {'module': 'MultiHeadAttentionWrapper', 'config': causal4(3, 2, 6, 0.0, 2), 'seed': 123,
                                'inputs': [data('x', [2, 6, 3], journey_batch)], 'trace': True}
    f['mha_wrapper_dropout_train'] = {'module': 'MultiHeadAttentionWrapper', 'config': causal4(5, 3, 8, 0.5, 3), 'seed': 21,
                                      'train': True, 'inputs': [rand('x', [2, 8, 5])], 'trace': True}
    f['journey_causal_mha'] = {'module': 'CausalMultiHeadAttention', 'config': causal4(3, 2, 6, 0.0, 2), 'seed': 123,
                               'inputs': [data('x', [2, 6, 3], journey_batch)], 'trace': True}
    f['causal_mha_odd_bias_train'] = {'module': 'CausalMultiHeadAttention', 'config': causal4(5, 12, 9, 0.5, 3, True),
                                      'seed': 31, 'train': True, 'inputs': [rand('x', [2, 7, 5])], 'trace': True}
    f['causal_mha_T1'] = {'module': 'CausalMultiHeadAttention', 'config': causal4(6, 4, 4, 0.1, 2), 'seed': 2,
                          'inputs': [rand('x', [1, 1, 6])], 'trace': True}
    f['causal_mha_tiles'] = {'module': 'CausalMultiHeadAttention', 'config': causal4(37, 40, 64, 0.0, 5, True), 'seed': 3,
                             'inputs': [rand('x', [3, 33, 37])], 'trace': False}
    f['causal_mha_embedding_seeded'] = {'module': 'CausalMultiHeadAttention', 'config': causal4(8, 8, 16, 0.1, 4), 'seed': 123,
                                        'inputs': [{'name': 'x', 'shape': [1, 5, 8],
                                                    'embedding': {'num_embeddings': 4, 'ids': [0, 1, 2, 1, 3]}}], 'trace': True}
    f['causal_mha_embedding_table'] = {'module': 'CausalMultiHeadAttention', 'config': causal4(3, 2, 6, 0.0, 1), 'seed': 123,
                                       'inputs': [{'name': 'x', 'shape': [2, 3, 3],
                                                   'embedding': {'weight': JOURNEY, 'ids': [0, 1, 2, 3, 4, 5]}}], 'trace': True}
    return f
