"""Seed 003 ("实用指南:Attention计算代码详解"): softmax, scaled_dot_product_attention and the
MultiHeadAttention with _split_heads (core: softmax, scaled_dot_product_attention,
SplitHeadsMultiHeadAttention), and their cases."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .common import data, rand, softmax_masked_rows_zero, trace

# seed 003: softmax (numpy in the tutorial, the same three lines in torch) and
# scaled_dot_product_attention (its PyTorch version)

class Softmax(nn.Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x_max = torch.amax(x, dim=self.dim, keepdim=True)
        x_max = trace.rec('x_max', x_max)
        e_x = torch.exp(x - x_max)
        e_x = trace.rec('e_x', e_x)
        out = e_x / torch.sum(e_x, dim=self.dim, keepdim=True)
        out = trace.rec('softmax', out)
        return (out,)


def scaled_dot_product_attention_torch(Q, K, V, mask=None, dropout=None, output_name='output'):
    d_k = Q.size(-1)
    scores = torch.matmul(Q, K.transpose(-2, -1)) / torch.sqrt(torch.tensor(d_k, dtype=Q.dtype, device=Q.device))
    scores = trace.rec('scores', scores)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-1e9"))
        scores = trace.rec('scores_masked', scores)
    attn = F.softmax(scores, dim=-1)
    attn = trace.rec('attn', attn)
    if dropout is not None:
        attn = dropout(attn)
        if dropout.training:  # nn.Dropout is the identity in eval mode: no step
            attn = trace.rec('attn_dropout', attn)
    output = torch.matmul(attn, V)
    output = trace.rec(output_name, output)
    return output, attn


class ScaledDotProductAttention(nn.Module):
    def forward(self, Q, K, V, mask=None):
        return scaled_dot_product_attention_torch(Q, K, V, mask)


class SplitHeadsMultiHeadAttention(nn.Module):
    """seed 003's MultiHeadAttention(d_model, num_heads, dropout=0.0)."""

    def __init__(self, d_model, num_heads, dropout=0.0):
        super().__init__()
        assert d_model % num_heads == 0
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout) if dropout > 0 else None

    def _split_heads(self, x):
        B, T, _ = x.size()
        x = x.view(B, T, self.num_heads, self.d_k)
        return x.transpose(1, 2)

    def _combine_heads(self, x):
        x = x.transpose(1, 2).contiguous()
        B, T, _, _ = x.size()
        return x.view(B, T, self.d_model)

    def forward(self, query, key, value, mask=None):
        Q = self.w_q(query)
        Q = trace.rec('Q', Q)
        K = self.w_k(key)
        K = trace.rec('K', K)
        V = self.w_v(value)
        V = trace.rec('V', V)
        Q = self._split_heads(Q)
        Q = trace.rec('Q_heads', Q)
        K = self._split_heads(K)
        K = trace.rec('K_heads', K)
        V = self._split_heads(V)
        V = trace.rec('V_heads', V)
        if mask is not None:
            mask = mask.unsqueeze(1)
        out, attn = scaled_dot_product_attention_torch(Q, K, V, mask=mask, dropout=self.dropout, output_name='out_heads')
        out = self._combine_heads(out)
        out = trace.rec('out_combined', out)
        out = self.w_o(out)
        out = trace.rec('out', out)
        return out, attn

def cases():
    """seed 003's cases: softmax, scaled dot-product attention, split-heads multi-head attention"""
    f = {}
    # seed 003: softmax
    f['softmax_rows'] = {'module': 'softmax', 'config': {'dim': -1}, 'seed': 0, 'inputs': [rand('x', [3, 5])], 'trace': True}
    f['softmax_dim1_odd'] = {'module': 'softmax', 'config': {'dim': 1}, 'seed': 1, 'inputs': [rand('x', [2, 7, 3])], 'trace': True}
    f['softmax_large_values'] = {'module': 'softmax', 'config': {'dim': -1}, 'inputs': [
        data('x', [3, 4], [1000, 1001, 1002, 1003, -1000, -1000, -1000, -999, 3.0e38, 0, -3.0e38, 1])], 'trace': True}
    f['softmax_T1'] = {'module': 'softmax', 'inputs': [data('x', [1], [42.0])], 'trace': True}
    f['softmax_wide_row'] = {'module': 'softmax', 'seed': 5, 'inputs': [rand('x', [2, 1037])], 'trace': False}

    # seed 003: scaled dot-product attention
    f['sdpa_seed003_quick_test'] = {'module': 'scaled_dot_product_attention', 'seed': 0, 'inputs': [
        rand('Q', [2, 2, 3, 16]), rand('K', [2, 2, 4, 16]), rand('V', [2, 2, 4, 16])], 'trace': True}
    mask = [0] * 60
    for s in range(6):
        mask[2 * 6 + s] = 1           # batch 0, query 2 fully masked (-1e9 everywhere: uniform)
    for t in range(5):
        mask[30 + t * 6 + 5] = 1      # batch 1, last key masked for every query
        mask[30 + t * 6 + 4] = t % 2  # and every other query masks key 4 too
    f['sdpa_cross_mask_dv_ne_dk'] = {'module': 'scaled_dot_product_attention', 'seed': 3, 'inputs': [
        rand('Q', [2, 5, 8]), rand('K', [2, 6, 8]), rand('V', [2, 6, 5]), data('mask', [2, 5, 6], mask)], 'trace': True}
    f['sdpa_T1_broadcast_mask'] = {'module': 'scaled_dot_product_attention', 'seed': 4, 'inputs': [
        rand('Q', [1, 1, 3]), rand('K', [1, 2, 3]), rand('V', [1, 2, 7]), data('mask', [1, 2], [0, 1])], 'trace': True}

    # seed 003: MultiHeadAttention with _split_heads, True = masked -> -1e9
    f['seed003_cross_attention'] = {'module': 'SplitHeadsMultiHeadAttention',
                                    'config': {'d_model': 64, 'num_heads': 8, 'dropout': 0.1}, 'seed': 0,
                                    'inputs': [rand('query', [2, 5, 64]), rand('key', [2, 6, 64]), None,
                                               data('mask', [2, 5, 6], [0] * 60)], 'trace': True}
    m3 = [0] * 60
    for s in range(6):
        m3[1 * 6 + s] = 1  # batch 0, query 1 fully masked (-1e9: uniform, as PyTorch)
    for t in range(5):
        m3[30 + t * 6 + 0] = 1
    f['seed003_mask_dropout_train'] = {'module': 'SplitHeadsMultiHeadAttention',
                                       'config': {'d_model': 10, 'num_heads': 2, 'dropout': 0.5}, 'seed': 13, 'train': True,
                                       'inputs': [rand('query', [2, 5, 10]), rand('key', [2, 6, 10]), rand('value', [2, 6, 10]),
                                                  data('mask', [2, 5, 6], m3)], 'trace': True}
    return f
