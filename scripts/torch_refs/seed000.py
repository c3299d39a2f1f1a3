"""Seed 000 ("基于pytorch代码了解transformer的自注意力机制"): MultiHeadAttention(d_model, num_heads),
mask == 0 -> -inf (core: MultiHeadAttention), and its cases."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .common import data, padding_mask_000, rand, softmax_masked_rows_zero, trace

# seed 000: MultiHeadAttention(d_model, num_heads), mask == 0 -> -inf

class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        assert d_model % num_heads == 0
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, Q, K, V, mask=None):
        batch_size = Q.size(0)
        Q = self.W_Q(Q)
        Q = trace.rec('Q', Q)
        K = self.W_K(K)
        K = trace.rec('K', K)
        V = self.W_V(V)
        V = trace.rec('V', V)
        Q = Q.view(batch_size, -1, self.num_heads, self.d_head).transpose(1, 2)
        Q = trace.rec('Q_heads', Q)
        K = K.view(batch_size, -1, self.num_heads, self.d_head).transpose(1, 2)
        K = trace.rec('K_heads', K)
        V = V.view(batch_size, -1, self.num_heads, self.d_head).transpose(1, 2)
        V = trace.rec('V_heads', V)
        scores = torch.matmul(Q, K.transpose(-2, -1)) / (self.d_head ** 0.5)
        scores = trace.rec('scores', scores)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float('-inf'))
            scores = trace.rec('scores_masked', scores)
        attention_weights = softmax_masked_rows_zero(scores, dim=-1)
        attention_weights = trace.rec('attention_weights', attention_weights)
        attention_output = torch.matmul(attention_weights, V)
        attention_output = trace.rec('attention_output_heads', attention_output)
        attention_output = attention_output.transpose(1, 2).contiguous().view(batch_size, -1, self.d_model)
        attention_output = trace.rec('attention_output', attention_output)
        output = self.W_O(attention_output)
        output = trace.rec('output', output)
        return output, attention_weights

def cases():
    """seed 000's cases (its 64x10x512 demo among them)"""
    f = {}
    # seed 000: MultiHeadAttention, mask == 0 -> -inf
    f['seed000_demo'] = {'module': 'MultiHeadAttention', 'config': {'d_model': 512, 'num_heads': 8}, 'seed': 0,
                         'inputs': [rand('Q', [64, 10, 512]), rand('K', [64, 10, 512]), rand('V', [64, 10, 512])]}
    f['seed000_padding_mask'] = {'module': 'MultiHeadAttention', 'config': {'d_model': 12, 'num_heads': 3}, 'seed': 7,
                                 'inputs': [rand('Q', [2, 5, 12]), rand('K', [2, 5, 12]), rand('V', [2, 5, 12]),
                                            data('mask', [2, 1, 1, 5], padding_mask_000(2, 5, [5, 3]))], 'trace': True}
    full = [1] * (2 * 4 * 6)
    for s in range(6):
        full[1 * 24 + 2 * 6 + s] = 0  # batch 1, query 2: every key masked -> weights 0, not NaN
    for t in range(4):
        full[t * 6 + 5] = 0
    f['seed000_cross_fully_masked_row'] = {'module': 'MultiHeadAttention', 'config': {'d_model': 10, 'num_heads': 2}, 'seed': 9,
                                           'inputs': [rand('Q', [2, 4, 10]), rand('K', [2, 6, 10]), rand('V', [2, 6, 10]),
                                                      data('mask', [2, 1, 4, 6], full)], 'trace': True}
    f['seed000_T1_one_head'] = {'module': 'MultiHeadAttention', 'config': {'d_model': 7, 'num_heads': 1}, 'seed': 10,
                                'inputs': [rand('Q', [1, 1, 7]), rand('K', [1, 1, 7]), rand('V', [1, 1, 7])], 'trace': True}
    causal_keep = [1 if s <= t else 0 for t in range(6) for s in range(6)]
    f['seed000_causal_mask'] = {'module': 'MultiHeadAttention', 'config': {'d_model': 16, 'num_heads': 4}, 'seed': 11,
                                'inputs': [rand('Q', [2, 6, 16]), rand('K', [2, 6, 16]), rand('V', [2, 6, 16]),
                                           data('mask', [6, 6], causal_keep)], 'trace': True}
    return f
