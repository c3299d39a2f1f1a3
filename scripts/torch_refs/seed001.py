"""Seed 001 ("Multi-Head Attention 结构/计算"): MultiHeadSelfAttention(dim_in, dim_k, dim_v,
num_heads=8) (core: MultiHeadSelfAttention), and its cases."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .common import rand, softmax_masked_rows_zero, trace

# seed 001: MultiHeadSelfAttention(dim_in, dim_k, dim_v, num_heads=8)

class MultiHeadSelfAttention(nn.Module):
    def __init__(self, dim_in, dim_k, dim_v, num_heads=8):
        super().__init__()
        assert dim_k % num_heads == 0 and dim_v % num_heads == 0
        self.dim_in = dim_in
        self.dim_k = dim_k
        self.dim_v = dim_v
        self.num_heads = num_heads
        self.linear_q = nn.Linear(dim_in, dim_k, bias=False)
        self.linear_k = nn.Linear(dim_in, dim_k, bias=False)
        self.linear_v = nn.Linear(dim_in, dim_v, bias=False)
        self._norm_fact = 1 / math.sqrt(dim_k // num_heads)

    def forward(self, x):
        batch, n, dim_in = x.shape
        assert dim_in == self.dim_in
        nh = self.num_heads
        dk = self.dim_k // nh
        dv = self.dim_v // nh
        q = self.linear_q(x).reshape(batch, n, nh, dk).transpose(1, 2)
        q = trace.rec('q', q)
        k = self.linear_k(x).reshape(batch, n, nh, dk).transpose(1, 2)
        k = trace.rec('k', k)
        v = self.linear_v(x).reshape(batch, n, nh, dv).transpose(1, 2)
        v = trace.rec('v', v)
        dist = torch.matmul(q, k.transpose(2, 3)) * self._norm_fact
        dist = trace.rec('dist', dist)
        dist = torch.softmax(dist, dim=-1)
        dist = trace.rec('dist_softmax', dist)
        att = torch.matmul(dist, v)
        att = trace.rec('att_heads', att)
        att = att.transpose(1, 2).reshape(batch, n, self.dim_v)
        att = trace.rec('att', att)
        return att, dist

def cases():
    """seed 001's cases"""
    f = {}
    # seed 001: MultiHeadSelfAttention(dim_in, dim_k, dim_v, num_heads)
    f['seed001_mhsa'] = {'module': 'MultiHeadSelfAttention', 'config': {'dim_in': 32, 'dim_k': 32, 'dim_v': 64, 'num_heads': 8},
                         'seed': 0, 'inputs': [rand('x', [2, 6, 32])], 'trace': True}
    f['seed001_mhsa_odd'] = {'module': 'MultiHeadSelfAttention', 'config': {'dim_in': 5, 'dim_k': 6, 'dim_v': 9, 'num_heads': 3},
                             'seed': 14, 'inputs': [rand('x', [3, 7, 5])], 'trace': True}
    f['seed001_mhsa_T1'] = {'module': 'MultiHeadSelfAttention', 'config': {'dim_in': 4, 'dim_k': 8, 'dim_v': 8},
                            'seed': 15, 'inputs': [rand('x', [1, 1, 4])], 'trace': True}
    return f
