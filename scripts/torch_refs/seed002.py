"""Seed 002 ("PyTorch深度学习实战 | Transformer模型的实现"): PositionalEncoding, the fused
MultiHeadSelfAttention (core: FusedMultiHeadSelfAttention), EncoderLayer, DecoderLayer and the
Transformer (with the two fixes the core makes too), and their cases."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .common import data, rand, softmax_masked_rows_zero, trace

# seed 002: the whole transformer

class PositionalEncoding(nn.Module):
    def __init__(self, emb_dim, max_len=5000):
        super(PositionalEncoding, self).__init__()
        pe = torch.zeros(max_len, emb_dim)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, emb_dim, 2).float() * (-math.log(10000.0) / emb_dim))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0)
        self.register_buffer('pe', pe)

    def forward(self, x):
        trace.rec('pe', self.pe[:, :x.size(1), :])
        out = x + self.pe[:, :x.size(1), :]
        return out


class PositionalEncodingModule(PositionalEncoding):
    def forward(self, x):
        out = super().forward(x)
        out = trace.rec('output', out)
        return (out,)


class FusedMultiHeadSelfAttention(nn.Module):
    """seed 002's MultiHeadSelfAttention(emb_dim, num_heads); forward(x, enc_output) is the fix."""

    def __init__(self, emb_dim, num_heads):
        super(FusedMultiHeadSelfAttention, self).__init__()
        self.num_heads = num_heads
        self.head_dim = emb_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        assert self.head_dim * num_heads == emb_dim, "emb_dim 必须能被 num_heads 整除"
        self.qkv_proj = nn.Linear(emb_dim, emb_dim * 3)
        self.fc_out = nn.Linear(emb_dim, emb_dim)

    def forward(self, x, enc_output=None):
        batch_size, seq_len, emb_dim = x.shape
        qkv = self.qkv_proj(x).reshape(batch_size, seq_len, self.num_heads, 3 * self.head_dim)
        qkv = trace.rec('qkv', qkv)
        q, k, v = qkv.chunk(3, dim=-1)
        if enc_output is not None:  # the fix: keys and values from the encoder output
            src_len = enc_output.shape[1]
            qkv_enc = self.qkv_proj(enc_output).reshape(batch_size, src_len, self.num_heads, 3 * self.head_dim)
            qkv_enc = trace.rec('qkv_enc', qkv_enc)
            _, k, v = qkv_enc.chunk(3, dim=-1)
        q = trace.rec('q', q)
        k = trace.rec('k', k)
        v = trace.rec('v', v)
        attn_scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * self.scaling
        attn_scores = trace.rec('attn_scores', attn_scores)
        attn_probs = torch.softmax(attn_scores, dim=-1)
        attn_probs = trace.rec('attn_probs', attn_probs)
        attn_output = torch.einsum("bhqk,bkhd->bqhd", attn_probs, v)
        attn_output = trace.rec('attn_output_heads', attn_output)
        attn_output = attn_output.reshape(batch_size, seq_len, emb_dim)
        attn_output = trace.rec('attn_output', attn_output)
        out = self.fc_out(attn_output)
        out = trace.rec('output', out)
        self.last_probs = attn_probs
        return out


class TracedFFN(nn.Sequential):
    def forward(self, x):
        hidden = self[1](self[0](x))
        hidden = trace.rec('ffn_hidden', hidden)
        out = self[2](hidden)
        out = trace.rec('ffn_out', out)
        return out


def ffn(emb_dim, ffn_dim):
    return TracedFFN(nn.Linear(emb_dim, ffn_dim), nn.ReLU(), nn.Linear(ffn_dim, emb_dim))


class EncoderLayer(nn.Module):
    def __init__(self, emb_dim, num_heads, ffn_dim):
        super(EncoderLayer, self).__init__()
        self.attn = FusedMultiHeadSelfAttention(emb_dim, num_heads)
        self.norm1 = nn.LayerNorm(emb_dim)
        self.ffn = ffn(emb_dim, ffn_dim)
        self.norm2 = nn.LayerNorm(emb_dim)

    def forward(self, x):
        with trace.scope('attn.'):
            a = self.attn(x)
        r1 = x + a
        r1 = trace.rec('residual1', r1)
        x = self.norm1(r1)
        x = trace.rec('norm1', x)
        r2 = x + self.ffn(x)
        r2 = trace.rec('residual2', r2)
        x = self.norm2(r2)
        x = trace.rec('norm2', x)
        return x


class DecoderLayer(nn.Module):
    def __init__(self, emb_dim, num_heads, ffn_dim):
        super(DecoderLayer, self).__init__()
        self.self_attn = FusedMultiHeadSelfAttention(emb_dim, num_heads)
        self.norm1 = nn.LayerNorm(emb_dim)
        self.cross_attn = FusedMultiHeadSelfAttention(emb_dim, num_heads)
        self.norm2 = nn.LayerNorm(emb_dim)
        self.ffn = ffn(emb_dim, ffn_dim)
        self.norm3 = nn.LayerNorm(emb_dim)

    def forward(self, x, enc_output):
        with trace.scope('self_attn.'):
            a = self.self_attn(x)
        r1 = x + a
        r1 = trace.rec('residual1', r1)
        x = self.norm1(r1)
        x = trace.rec('norm1', x)
        with trace.scope('cross_attn.'):
            c = self.cross_attn(x, enc_output)
        r2 = x + c
        r2 = trace.rec('residual2', r2)
        x = self.norm2(r2)
        x = trace.rec('norm2', x)
        r3 = x + self.ffn(x)
        r3 = trace.rec('residual3', r3)
        x = self.norm3(r3)
        x = trace.rec('norm3', x)
        return x


class Transformer(nn.Module):
    def __init__(self, vocab_size, emb_dim, num_heads, ffn_dim, num_layers):
        super(Transformer, self).__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.pos_encoder = PositionalEncoding(emb_dim)
        self.encoder = nn.Sequential(*[EncoderLayer(emb_dim, num_heads, ffn_dim) for _ in range(num_layers)])
        self.decoder = nn.Sequential(*[DecoderLayer(emb_dim, num_heads, ffn_dim) for _ in range(num_layers)])
        self.fc_out = nn.Linear(emb_dim, vocab_size)

    def embed(self, ids, which):
        e = self.embedding(ids)
        e = trace.rec(f'{which}_embedding', e)
        with trace.scope(f'{which}_'):
            pos = self.pos_encoder(e)
        pos = trace.rec(f'{which}_pos', pos)
        return pos

    def forward(self, src, tgt):
        src = self.embed(src, 'src')
        tgt = self.embed(tgt, 'tgt')
        enc_output = src
        for i, layer in enumerate(self.encoder):
            with trace.scope(f'encoder.{i}.'):
                enc_output = layer(enc_output)
        dec_output = tgt
        for i, layer in enumerate(self.decoder):  # the fix: nn.Sequential passes one argument
            with trace.scope(f'decoder.{i}.'):
                dec_output = layer(dec_output, enc_output)
        logits = self.fc_out(dec_output)
        logits = trace.rec('logits', logits)
        return (logits,)

def cases():
    """seed 002's cases"""
    f = {}
    # seed 002
    f['seed002_fused_mhsa'] = {'module': 'FusedMultiHeadSelfAttention', 'config': {'emb_dim': 16, 'num_heads': 2}, 'seed': 0,
                               'inputs': [rand('x', [2, 5, 16])], 'trace': True}
    f['seed002_fused_mhsa_odd_T1'] = {'module': 'FusedMultiHeadSelfAttention', 'config': {'emb_dim': 15, 'num_heads': 3},
                                      'seed': 16, 'inputs': [rand('x', [1, 1, 15])], 'trace': True}
    f['seed002_positional_encoding'] = {'module': 'PositionalEncoding', 'config': {'emb_dim': 16}, 'seed': 0,
                                        'inputs': [rand('x', [2, 7, 16])], 'trace': True}
    f['positional_encoding_long'] = {'module': 'PositionalEncoding', 'config': {'emb_dim': 10, 'max_len': 400}, 'seed': 17,
                                     'inputs': [rand('x', [1, 400, 10])], 'trace': False}
    f['seed002_encoder_layer'] = {'module': 'EncoderLayer', 'config': {'emb_dim': 16, 'num_heads': 2, 'ffn_dim': 32}, 'seed': 0,
                                  'inputs': [rand('x', [2, 5, 16])], 'trace': True}
    f['encoder_layer_odd'] = {'module': 'EncoderLayer', 'config': {'emb_dim': 9, 'num_heads': 3, 'ffn_dim': 13}, 'seed': 18,
                              'inputs': [rand('x', [1, 6, 9])], 'trace': True}
    f['seed002_decoder_layer_cross'] = {'module': 'DecoderLayer', 'config': {'emb_dim': 16, 'num_heads': 4, 'ffn_dim': 24},
                                        'seed': 0, 'inputs': [rand('x', [2, 5, 16]), rand('enc_output', [2, 7, 16])], 'trace': True}
    f['decoder_layer_T1'] = {'module': 'DecoderLayer', 'config': {'emb_dim': 6, 'num_heads': 2, 'ffn_dim': 5},
                             'seed': 19, 'inputs': [rand('x', [1, 1, 6]), rand('enc_output', [1, 3, 6])], 'trace': True}
    f['seed002_transformer'] = {'module': 'Transformer',
                                'config': {'vocab_size': 7, 'emb_dim': 16, 'num_heads': 2, 'ffn_dim': 32, 'num_layers': 2},
                                'seed': 0, 'inputs': [data('src', [2, 6], [1, 2, 3, 4, 5, 6, 0, 6, 5, 4, 3, 2]),
                                                      data('tgt', [2, 5], [0, 3, 3, 1, 2, 5, 4, 6, 0, 1])], 'trace': True}
    f['transformer_one_layer'] = {'module': 'Transformer',
                                  'config': {'vocab_size': 11, 'emb_dim': 8, 'num_heads': 4, 'ffn_dim': 12, 'num_layers': 1},
                                  'seed': 20, 'inputs': [data('src', [1, 3], [10, 0, 5]), data('tgt', [1, 1], [7])], 'trace': True}
    return f
