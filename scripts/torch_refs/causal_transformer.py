"""Seeds 002 + 004: the decoder-only CausalTransformer the page trains
(core/modules/causal_transformer.cpp), and its case."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .common import data, trace
from .seed002 import PositionalEncoding, ffn
from .seed004 import CausalMultiHeadAttention

# seeds 002 + 004: the decoder-only model the page trains (core/modules/causal_transformer.cpp)

class CausalBlock(nn.Module):
    """seed 004's causal MultiHeadAttention inside seed 002's post-norm block (EncoderLayer's)."""

    def __init__(self, emb_dim, num_heads, ffn_dim, context_length, dropout=0.0):
        super().__init__()
        self.attn = CausalMultiHeadAttention(emb_dim, emb_dim, context_length, dropout, num_heads)
        self.norm1 = nn.LayerNorm(emb_dim)
        self.ffn = ffn(emb_dim, ffn_dim)
        self.norm2 = nn.LayerNorm(emb_dim)

    def forward(self, x):
        with trace.scope('attn.'):
            a, _ = self.attn(x)
        r1 = x + a
        r1 = trace.rec('residual1', r1)
        x = self.norm1(r1)
        x = trace.rec('norm1', x)
        r2 = x + self.ffn(x)
        r2 = trace.rec('residual2', r2)
        x = self.norm2(r2)
        x = trace.rec('norm2', x)
        return x


class CausalTransformer(nn.Module):
    def __init__(self, vocab_size, emb_dim, num_heads, ffn_dim, num_layers, context_length, dropout=0.0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.pos_encoder = PositionalEncoding(emb_dim, context_length)
        self.layers = nn.ModuleList([CausalBlock(emb_dim, num_heads, ffn_dim, context_length, dropout)
                                     for _ in range(num_layers)])
        self.fc_out = nn.Linear(emb_dim, vocab_size)

    def forward(self, idx):
        e = self.embedding(idx)
        e = trace.rec('tok_embedding', e)
        x = self.pos_encoder(e)
        x = trace.rec('x', x)
        for i, layer in enumerate(self.layers):
            with trace.scope(f'layers.{i}.'):
                x = layer(x)
        logits = self.fc_out(x)
        logits = trace.rec('logits', logits)
        return (logits,)

def cases():
    """the CausalTransformer's case"""
    f = {}
    f['causal_transformer'] = {'module': 'CausalTransformer',
                               'config': {'vocab_size': 9, 'emb_dim': 12, 'num_heads': 3, 'ffn_dim': 20, 'num_layers': 2,
                                          'context_length': 8},
                               'seed': 21, 'inputs': [data('idx', [2, 7], [1, 2, 3, 4, 5, 6, 7, 8, 0, 8, 1, 7, 2, 6])],
                               'trace': True}
    return f
