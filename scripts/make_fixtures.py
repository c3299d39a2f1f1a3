#!/usr/bin/python3
"""PyTorch reference fixtures for the core: tests/fixtures/<name>.{scenario,expected}.json.

Run with Debian's python3 and python3-torch (1.13): `npm run fixtures` installs both and runs this.
Each module below is the tutorial's own PyTorch code (../shared/seeds/, names and order of
construction as written there) with one addition: `trace.rec(name, tensor)` after the lines the
core records as steps, under the same names. A scenario (core/SCENARIO.md) is then run exactly as
the core runs it:

    torch.manual_seed(seed); module = Module(**config); [load params]; inputs in order; forward

and its outputs (and, for small scenarios, every step) are written as the expected result.

Two documented departures from the tutorials, both also made by the core:
  * seed 002: DecoderLayer.cross_attn(x, enc_output, enc_output) is real cross-attention (q from
    qkv_proj(x), k and v from qkv_proj(enc_output)), and Transformer runs its decoder layers one by
    one with enc_output; the tutorial's code cannot run as written.
  * rows of scores masked entirely with -inf give attention weights of 0 (PyTorch >= 2.5's
    scaled_dot_product_attention and ONNX do) where PyTorch 1.13's softmax gives NaN.

And one change that leaves every number as it was: seed 004 masks its scores in place
(`attn_scores.masked_fill_(...)`); here it is the out-of-place `attn_scores = attn_scores.masked_fill(...)`
so that the steps `attn_scores` and `attn_scores_masked` are distinct tensors, each with its own
gradient in the training fixtures (scripts/make_train_fixtures.py, tests/fixtures/train/), which
import this file's modules and trace machinery.
"""
import base64
import contextlib
import io
import json
import math
import os
import re
import struct
import sys
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures')
INLINE_MAX = 4096  # tensors larger than this are stored as base64 float32 (data_b64)


class Trace:
    """Named intermediate tensors, recorded in forward order under scope prefixes.

    With `grads` on, the recorded tensors themselves are kept too (`live`, in step order) and
    asked to retain their gradient, so that after `loss.backward()` each step's dL/dstep is
    `live[i].grad` (None for a step not on the path to the loss).
    """

    def __init__(self):
        self.on = False
        self.grads = False
        self.prefix = ''
        self.steps = []
        self.live = []

    def rec(self, name, t):
        if self.on:
            self.steps.append((self.prefix + name, t.detach().clone()))
            if self.grads:
                if t.requires_grad:
                    t.retain_grad()
                self.live.append(t)

    @contextlib.contextmanager
    def scope(self, prefix):
        old = self.prefix
        self.prefix = old + prefix
        try:
            yield
        finally:
            self.prefix = old


trace = Trace()


def softmax_masked_rows_zero(scores, dim=-1):
    """F.softmax, except that a row whose every score is -inf gives zeros instead of NaN.

    The fully masked rows are set to 0 before the softmax and its result to 0 after: the same
    numbers as masking F.softmax's NaN rows (softmax works row by row), and a gradient of 0
    through those rows instead of NaN."""
    full = torch.isneginf(scores).all(dim=dim, keepdim=True)
    w = F.softmax(scores.masked_fill(full, 0.0), dim=dim)
    return w.masked_fill(full, 0.0)


# ---------------------------------------------------------------------------------------------
# seed 003: softmax (numpy in the tutorial, the same three lines in torch) and
# scaled_dot_product_attention (its PyTorch version)

class Softmax(nn.Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x_max = torch.amax(x, dim=self.dim, keepdim=True)
        trace.rec('x_max', x_max)
        e_x = torch.exp(x - x_max)
        trace.rec('e_x', e_x)
        out = e_x / torch.sum(e_x, dim=self.dim, keepdim=True)
        trace.rec('softmax', out)
        return (out,)


def scaled_dot_product_attention_torch(Q, K, V, mask=None, dropout=None, output_name='output'):
    d_k = Q.size(-1)
    scores = torch.matmul(Q, K.transpose(-2, -1)) / torch.sqrt(torch.tensor(d_k, dtype=Q.dtype, device=Q.device))
    trace.rec('scores', scores)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-1e9"))
        trace.rec('scores_masked', scores)
    attn = F.softmax(scores, dim=-1)
    trace.rec('attn', attn)
    if dropout is not None:
        attn = dropout(attn)
        if dropout.training:  # nn.Dropout is the identity in eval mode: no step
            trace.rec('attn_dropout', attn)
    output = torch.matmul(attn, V)
    trace.rec(output_name, output)
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
        trace.rec('Q', Q)
        K = self.w_k(key)
        trace.rec('K', K)
        V = self.w_v(value)
        trace.rec('V', V)
        Q = self._split_heads(Q)
        trace.rec('Q_heads', Q)
        K = self._split_heads(K)
        trace.rec('K_heads', K)
        V = self._split_heads(V)
        trace.rec('V_heads', V)
        if mask is not None:
            mask = mask.unsqueeze(1)
        out, attn = scaled_dot_product_attention_torch(Q, K, V, mask=mask, dropout=self.dropout, output_name='out_heads')
        out = self._combine_heads(out)
        trace.rec('out_combined', out)
        out = self.w_o(out)
        trace.rec('out', out)
        return out, attn


# ---------------------------------------------------------------------------------------------
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
        trace.rec('Q', Q)
        K = self.W_K(K)
        trace.rec('K', K)
        V = self.W_V(V)
        trace.rec('V', V)
        Q = Q.view(batch_size, -1, self.num_heads, self.d_head).transpose(1, 2)
        trace.rec('Q_heads', Q)
        K = K.view(batch_size, -1, self.num_heads, self.d_head).transpose(1, 2)
        trace.rec('K_heads', K)
        V = V.view(batch_size, -1, self.num_heads, self.d_head).transpose(1, 2)
        trace.rec('V_heads', V)
        scores = torch.matmul(Q, K.transpose(-2, -1)) / (self.d_head ** 0.5)
        trace.rec('scores', scores)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float('-inf'))
            trace.rec('scores_masked', scores)
        attention_weights = softmax_masked_rows_zero(scores, dim=-1)
        trace.rec('attention_weights', attention_weights)
        attention_output = torch.matmul(attention_weights, V)
        trace.rec('attention_output_heads', attention_output)
        attention_output = attention_output.transpose(1, 2).contiguous().view(batch_size, -1, self.d_model)
        trace.rec('attention_output', attention_output)
        output = self.W_O(attention_output)
        trace.rec('output', output)
        return output, attention_weights


# ---------------------------------------------------------------------------------------------
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
        trace.rec('q', q)
        k = self.linear_k(x).reshape(batch, n, nh, dk).transpose(1, 2)
        trace.rec('k', k)
        v = self.linear_v(x).reshape(batch, n, nh, dv).transpose(1, 2)
        trace.rec('v', v)
        dist = torch.matmul(q, k.transpose(2, 3)) * self._norm_fact
        trace.rec('dist', dist)
        dist = torch.softmax(dist, dim=-1)
        trace.rec('dist_softmax', dist)
        att = torch.matmul(dist, v)
        trace.rec('att_heads', att)
        att = att.transpose(1, 2).reshape(batch, n, self.dim_v)
        trace.rec('att', att)
        return att, dist


# ---------------------------------------------------------------------------------------------
# seed 004: "Your journey starts with one step"

class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        keys = x @ self.W_key
        trace.rec('keys', keys)
        queries = x @ self.W_query
        trace.rec('queries', queries)
        values = x @ self.W_value
        trace.rec('values', values)
        attn_scores = queries @ keys.T
        trace.rec('attn_scores', attn_scores)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        trace.rec('attn_weights', attn_weights)
        context_vec = attn_weights @ values
        trace.rec('context_vec', context_vec)
        return context_vec, attn_weights


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        keys = self.W_key(x)
        trace.rec('keys', keys)
        queries = self.W_query(x)
        trace.rec('queries', queries)
        values = self.W_value(x)
        trace.rec('values', values)
        attn_scores = queries @ keys.T
        trace.rec('attn_scores', attn_scores)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        trace.rec('attn_weights', attn_weights)
        context_vec = attn_weights @ values
        trace.rec('context_vec', context_vec)
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
        trace.rec('keys', keys)
        queries = self.W_query(x)
        trace.rec('queries', queries)
        values = self.W_value(x)
        trace.rec('values', values)
        attn_scores = queries @ keys.transpose(1, 2)
        trace.rec('attn_scores', attn_scores)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)  # seed: masked_fill_
        trace.rec('attn_scores_masked', attn_scores)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        trace.rec('attn_weights', attn_weights)
        attn_weights = self.dropout(attn_weights)
        if self.training and self.dropout.p > 0:
            trace.rec('attn_weights_dropout', attn_weights)
        context_vec = attn_weights @ values
        trace.rec('context_vec', context_vec)
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
        trace.rec('context_vec', context_vec)
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
        trace.rec('keys', keys)
        trace.rec('queries', queries)
        trace.rec('values', values)
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)
        trace.rec('keys_heads', keys)
        trace.rec('queries_heads', queries)
        trace.rec('values_heads', values)
        attn_scores = queries @ keys.transpose(2, 3)
        trace.rec('attn_scores', attn_scores)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores = attn_scores.masked_fill(mask_bool, -torch.inf)  # seed: masked_fill_ (in place)
        trace.rec('attn_scores_masked', attn_scores)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        trace.rec('attn_weights', attn_weights)
        attn_weights = self.dropout(attn_weights)
        if self.training and self.dropout.p > 0:
            trace.rec('attn_weights_dropout', attn_weights)
        context_vec = (attn_weights @ values).transpose(1, 2)
        trace.rec('context_vec_heads', context_vec)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        trace.rec('context_vec_concat', context_vec)
        context_vec = self.out_proj(context_vec)
        trace.rec('context_vec', context_vec)
        return context_vec, attn_weights


# ---------------------------------------------------------------------------------------------
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
        trace.rec('output', out)
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
        trace.rec('qkv', qkv)
        q, k, v = qkv.chunk(3, dim=-1)
        if enc_output is not None:  # the fix: keys and values from the encoder output
            src_len = enc_output.shape[1]
            qkv_enc = self.qkv_proj(enc_output).reshape(batch_size, src_len, self.num_heads, 3 * self.head_dim)
            trace.rec('qkv_enc', qkv_enc)
            _, k, v = qkv_enc.chunk(3, dim=-1)
        trace.rec('q', q)
        trace.rec('k', k)
        trace.rec('v', v)
        attn_scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * self.scaling
        trace.rec('attn_scores', attn_scores)
        attn_probs = torch.softmax(attn_scores, dim=-1)
        trace.rec('attn_probs', attn_probs)
        attn_output = torch.einsum("bhqk,bkhd->bqhd", attn_probs, v)
        trace.rec('attn_output_heads', attn_output)
        attn_output = attn_output.reshape(batch_size, seq_len, emb_dim)
        trace.rec('attn_output', attn_output)
        out = self.fc_out(attn_output)
        trace.rec('output', out)
        self.last_probs = attn_probs
        return out


class TracedFFN(nn.Sequential):
    def forward(self, x):
        hidden = self[1](self[0](x))
        trace.rec('ffn_hidden', hidden)
        out = self[2](hidden)
        trace.rec('ffn_out', out)
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
        trace.rec('residual1', r1)
        x = self.norm1(r1)
        trace.rec('norm1', x)
        r2 = x + self.ffn(x)
        trace.rec('residual2', r2)
        x = self.norm2(r2)
        trace.rec('norm2', x)
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
        trace.rec('residual1', r1)
        x = self.norm1(r1)
        trace.rec('norm1', x)
        with trace.scope('cross_attn.'):
            c = self.cross_attn(x, enc_output)
        r2 = x + c
        trace.rec('residual2', r2)
        x = self.norm2(r2)
        trace.rec('norm2', x)
        r3 = x + self.ffn(x)
        trace.rec('residual3', r3)
        x = self.norm3(r3)
        trace.rec('norm3', x)
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
        trace.rec(f'{which}_embedding', e)
        with trace.scope(f'{which}_'):
            pos = self.pos_encoder(e)
        trace.rec(f'{which}_pos', pos)
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
        trace.rec('logits', logits)
        return (logits,)


# ---------------------------------------------------------------------------------------------
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
        trace.rec('residual1', r1)
        x = self.norm1(r1)
        trace.rec('norm1', x)
        r2 = x + self.ffn(x)
        trace.rec('residual2', r2)
        x = self.norm2(r2)
        trace.rec('norm2', x)
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
        trace.rec('tok_embedding', e)
        x = self.pos_encoder(e)
        trace.rec('x', x)
        for i, layer in enumerate(self.layers):
            with trace.scope(f'layers.{i}.'):
                x = layer(x)
        logits = self.fc_out(x)
        trace.rec('logits', logits)
        return (logits,)


# ---------------------------------------------------------------------------------------------
# nanoGPT (github.com/karpathy/nanoGPT, model.py): GPT, as its file writes it, with the trace
# lines added (core/modules/gpt.cpp). PyTorch 1.13 has no F.scaled_dot_product_attention, so
# self.flash is False and the manual attention path runs, with its causal-mask buffer `bias`.
# Three additions, marked "added": lines split where a traced value is an intermediate of one
# line; generate() decodes greedily at temperature 0 (nanoGPT would divide by zero) and filters
# with top_p as Hugging Face's TopPLogitsWarper; and it reports each step to `generation_log`.
# Also added: GPTConfig's Llama-style options (rope, rope_base, num_kv_heads, window, sink_tokens;
# issue "Modern attention"), off by default: with any of them on, each Block's attention is
# LlamaStyleSelfAttention (written from the words, below CausalSelfAttention), and with
# rope there is no wpe.

class LayerNorm(nn.Module):
    """ LayerNorm but with an optional bias. PyTorch doesn't support simply bias=False """

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):

    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        # key, query, value projections for all heads, but in a batch
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        # output projection
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        # regularization
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.dropout = config.dropout
        # flash attention make GPU go brrrrr but support is only in PyTorch >= 2.0
        self.flash = hasattr(torch.nn.functional, 'scaled_dot_product_attention')
        if not self.flash:
            print("WARNING: using slow attention. Flash Attention requires PyTorch >= 2.0")
            # causal mask to ensure that attention is only applied to the left in the input sequence
            self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                                        .view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size() # batch size, sequence length, embedding dimensionality (n_embd)

        # calculate query, key, values for all heads in batch and move head forward to be the batch dim
        qkv = self.c_attn(x)  # added: nanoGPT writes q, k, v  = self.c_attn(x).split(self.n_embd, dim=2)
        trace.rec('qkv', qkv)
        q, k, v  = qkv.split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        trace.rec('k', k)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        trace.rec('q', q)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        trace.rec('v', v)

        # causal self-attention; Self-attend: (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
        assert not self.flash, 'PyTorch 1.13: the manual attention path'
        # manual implementation of attention
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        trace.rec('att', att)
        att = att.masked_fill(self.bias[:,:,:T,:T] == 0, float('-inf'))
        trace.rec('att_masked', att)
        att = F.softmax(att, dim=-1)
        trace.rec('att_softmax', att)
        att = self.attn_dropout(att)
        if self.training and self.dropout > 0:
            trace.rec('att_dropout', att)
        self.last_att = att  # added: the module's attention_weights output
        y = att @ v # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        trace.rec('y', y)
        y = y.transpose(1, 2).contiguous().view(B, T, C) # re-assemble all head outputs side by side
        trace.rec('y_merged', y)

        # output projection
        y = self.resid_dropout(self.c_proj(y))
        trace.rec('y_proj', y)
        return y


class LlamaStyleSelfAttention(nn.Module):
    """added: nanoGPT's CausalSelfAttention with GPTConfig's Llama-style options. One c_attn of
    width (n_head + 2 * n_kv_head) * hs split as [q | k | v] (num_kv_heads = n_head: nanoGPT's
    3 * n_embd); rope: q and k rotated (rotate-half, inv_freq = 1 / base^(arange(0, hs, 2) / hs)) at
    positions 0..T-1; grouped-query: k and v repeat_interleave(n_head // n_kv_head, dim=1); window:
    key j visible from query i iff i - window < j <= i, or j < sink_tokens."""

    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.n_head = config.n_head
        self.n_kv_head = config.num_kv_heads or config.n_head
        assert self.n_head % self.n_kv_head == 0
        self.hs = config.n_embd // config.n_head
        self.c_attn = nn.Linear(config.n_embd, (self.n_head + 2 * self.n_kv_head) * self.hs, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.dropout = config.dropout
        self.rope, self.rope_base = config.rope, config.rope_base
        self.window, self.sink_tokens = config.window, config.sink_tokens

    def forward(self, x):
        B, T, C = x.size()
        H, H_kv, hs = self.n_head, self.n_kv_head, self.hs
        qkv = self.c_attn(x)
        trace.rec('qkv', qkv)
        q, k, v = qkv.split([H * hs, H_kv * hs, H_kv * hs], dim=2)
        k = k.view(B, T, H_kv, hs).transpose(1, 2)  # (B, n_kv_head, T, hs)
        trace.rec('k', k)
        q = q.view(B, T, H, hs).transpose(1, 2)  # (B, nh, T, hs)
        trace.rec('q', q)
        v = v.view(B, T, H_kv, hs).transpose(1, 2)
        trace.rec('v', v)
        pos = torch.arange(T)
        if self.rope:
            q, k = rope_qk(q, k, pos, hs, self.rope_base)
        k, v = repeat_kv_heads(k, v, H, H_kv)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        trace.rec('att', att)
        rel = pos[None, :] - pos[:, None]  # key position - query position
        mask = rel > 0
        if self.window > 0:
            mask |= (rel <= -self.window) & ~(pos[None, :] < self.sink_tokens)
        att = att.masked_fill(mask, float('-inf'))
        trace.rec('att_masked', att)
        att = F.softmax(att, dim=-1)
        trace.rec('att_softmax', att)
        att = self.attn_dropout(att)
        if self.training and self.dropout > 0:
            trace.rec('att_dropout', att)
        self.last_att = att
        y = att @ v
        trace.rec('y', y)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        trace.rec('y_merged', y)
        y = self.resid_dropout(self.c_proj(y))
        trace.rec('y_proj', y)
        return y


class MLP(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.c_fc    = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu    = nn.GELU()
        self.c_proj  = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        x = self.c_fc(x)
        trace.rec('c_fc', x)
        x = self.gelu(x)
        trace.rec('gelu', x)
        x = self.c_proj(x)
        trace.rec('c_proj', x)
        x = self.dropout(x)
        if self.training and self.dropout.p > 0:
            trace.rec('dropout', x)
        return x


class Block(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = LlamaStyleSelfAttention(config) if config.llama() else CausalSelfAttention(config)  # added: the options
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        h = self.ln_1(x)  # added: nanoGPT writes x = x + self.attn(self.ln_1(x))
        trace.rec('ln_1', h)
        with trace.scope('attn.'):
            x = x + self.attn(h)
        trace.rec('x_attn', x)
        h = self.ln_2(x)  # added: nanoGPT writes x = x + self.mlp(self.ln_2(x))
        trace.rec('ln_2', h)
        with trace.scope('mlp.'):
            x = x + self.mlp(h)
        trace.rec('x_mlp', x)
        return x


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304 # GPT-2 vocab_size of 50257, padded up to nearest multiple of 64 for efficiency
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True # True: bias in Linears and LayerNorms, like GPT-2. False: a bit better and faster
    rope: bool = False  # added: the Llama-style options (LlamaStyleSelfAttention)
    rope_base: float = 10000.0  # added
    num_kv_heads: int = 0  # added: 0 = n_head
    window: int = 0  # added
    sink_tokens: int = 0  # added

    def llama(self):  # added
        return self.rope or (self.num_kv_heads or self.n_head) != self.n_head or self.window > 0


class GPT(nn.Module):

    def __init__(self, config):
        super().__init__()
        assert config.vocab_size is not None
        assert config.block_size is not None
        self.config = config

        self.transformer = nn.ModuleDict(dict(
            wte = nn.Embedding(config.vocab_size, config.n_embd),
            wpe = None if config.rope else nn.Embedding(config.block_size, config.n_embd),  # added: rope, no wpe
            drop = nn.Dropout(config.dropout),
            h = nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f = LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        # with weight tying when using torch.compile() some warnings get generated:
        # "UserWarning: functional_call was passed multiple values for tied weights.
        # This behavior is deprecated and will be an error in future versions"
        # not 100% sure what this is, so far seems to be harmless. TODO investigate
        self.transformer.wte.weight = self.lm_head.weight # https://paperswithcode.com/method/weight-tying

        # init all weights
        self.apply(self._init_weights)
        # apply special scaled init to the residual projections, per GPT-2 paper
        for pn, p in self.named_parameters():
            if pn.endswith('c_proj.weight'):
                torch.nn.init.normal_(p, mean=0.0, std=0.02/math.sqrt(2 * config.n_layer))

        # report number of parameters
        print("number of parameters: %.2fM" % (self.get_num_params()/1e6,))

    def get_num_params(self, non_embedding=True):
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding and self.transformer.wpe is not None:  # added: rope, no wpe
            n_params -= self.transformer.wpe.weight.numel()
        return n_params

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.config.block_size, f"Cannot forward sequence of length {t}, block size is only {self.config.block_size}"
        pos = torch.arange(0, t, dtype=torch.long, device=device) # shape (t)

        # forward the GPT model itself
        tok_emb = self.transformer.wte(idx) # token embeddings of shape (b, t, n_embd)
        trace.rec('tok_emb', tok_emb)
        if self.config.rope:  # added: no wpe, positions rotate q and k
            x = self.transformer.drop(tok_emb)
        else:
            pos_emb = self.transformer.wpe(pos) # position embeddings of shape (t, n_embd)
            trace.rec('pos_emb', pos_emb)
            x = self.transformer.drop(tok_emb + pos_emb)
        trace.rec('x', x)
        for i, block in enumerate(self.transformer.h):
            with trace.scope(f'transformer.h.{i}.'):
                x = block(x)
        x = self.transformer.ln_f(x)
        trace.rec('ln_f', x)

        if targets is not None:
            # if we are given some desired targets also calculate the loss
            logits = self.lm_head(x)
            trace.rec('logits', logits)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            # inference-time mini-optimization: only forward the lm_head on the very last position
            logits = self.lm_head(x[:, [-1], :]) # note: using list [-1] to preserve the time dim
            trace.rec('logits', logits)
            loss = None

        return logits, loss

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, top_p=None):
        """
        Take a conditioning sequence of indices idx (LongTensor of shape (b,t)) and complete
        the sequence max_new_tokens times, feeding the predictions back into the model each time.
        Most likely you'll want to make sure to be in model.eval() mode of operation for this.
        """
        for _ in range(max_new_tokens):
            # if the sequence context is growing too long we must crop it at block_size
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            # forward the model to get the logits for the index in the sequence
            logits, _ = self(idx_cond)
            # pluck the logits at the final step and scale by desired temperature
            logits = logits[:, -1, :] / temperature if temperature > 0 else logits[:, -1, :].clone()  # added: greedy at 0
            raw = logits.clone()  # added: for generation_log
            # optionally crop the logits to only the top k options
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float('Inf')
            if top_p is not None:  # added
                logits = top_p_filter(logits, top_p)
            # apply softmax to convert logits to (normalized) probabilities
            probs = F.softmax(logits, dim=-1)
            # sample from the distribution
            q = generation_log.peek_exponential(probs)  # added: the draws multinomial is about to make
            if temperature > 0:
                idx_next = torch.multinomial(probs, num_samples=1)
            else:  # added: greedy decoding
                idx_next = torch.argmax(logits, dim=-1, keepdim=True)
            generation_log.record(raw, logits, probs, q if temperature > 0 else None, idx_next, top_k, top_p)  # added
            # append sampled index to the running sequence and continue
            idx = torch.cat((idx, idx_next), dim=1)

        return idx


def top_p_filter(scores, top_p, filter_value=-float("Inf"), min_tokens_to_keep=1):
    """Hugging Face transformers' TopPLogitsWarper.__call__ (generation/logits_process.py)."""
    sorted_logits, sorted_indices = torch.sort(scores, descending=False)
    cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)

    # Remove tokens with cumulative top_p above the threshold (token with 0 are kept)
    sorted_indices_to_remove = cumulative_probs <= (1 - top_p)
    # Keep at least min_tokens_to_keep
    sorted_indices_to_remove[..., -min_tokens_to_keep :] = 0

    # scatter sorted tensors to original indexing
    indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
    scores = scores.masked_fill(indices_to_remove, filter_value)
    return scores


class GenerationLog:
    """What generate() reports per new token (the core's "generated" entries): the ids and the ten
    most probable ids with their probabilities. It also refuses a fixture whose ids a float32
    rounding could flip: a sampled id must beat the runner-up of probs / q (the exponential draws
    torch.multinomial makes: it is argmax(probs / q), checked here) by a relative 1e-4, a greedy id
    the runner-up logit by 1e-4; top_k's k-th logit must stand 1e-4 clear of the next, every
    cumulative probability of top_p 1e-5 clear of its threshold, and the listed probabilities 2e-6
    apart so that their order is fixed."""

    def __init__(self):
        self.tokens = []

    def peek_exponential(self, probs):
        state = torch.get_rng_state()
        q = torch.empty_like(probs).exponential_(1)
        torch.set_rng_state(state)
        return q

    @staticmethod
    def gap(values):
        top2 = torch.topk(values, 2).values
        return float(top2[0] - top2[1]), float(top2[0])

    def check(self, raw, logits, probs, q, idx_next, top_k, top_p):
        for b in range(probs.size(0)):
            if q is not None:
                r = probs[b] / q[b]
                assert int(torch.argmax(r)) == int(idx_next[b]), 'torch.multinomial(probs, 1) is argmax(probs / exponential_())'
                d, best = self.gap(r)
                assert d > 1e-4 * best, ('sampled id too close to the runner-up', d / best)
            else:
                assert self.gap(logits[b])[0] > 1e-4, 'greedy id too close to the runner-up'
            if top_k is not None and top_k < raw.size(-1):
                kth = torch.sort(raw[b], descending=True).values
                assert float(kth[top_k - 1] - kth[top_k]) > 1e-4, 'top_k boundary too close'
            if top_p is not None:
                s = torch.sort(raw[b] if top_k is None else logits[b]).values
                cum = s.softmax(-1).cumsum(-1)
                assert float((cum - (1 - top_p)).abs().min()) > 1e-5, 'top_p boundary too close'
            p = torch.sort(probs[b][probs[b] > 0], descending=True).values[:11]
            assert p.numel() < 2 or float((p[:-1] - p[1:]).min()) > 2e-6, 'top probabilities too close to order'

    def record(self, raw, logits, probs, q, idx_next, top_k, top_p):
        self.check(raw, logits, probs, q, idx_next, top_k, top_p)
        top_ids, top_probs = [], []
        for b in range(probs.size(0)):
            order = sorted(((float(p), j) for j, p in enumerate(probs[b].tolist()) if p > 0), key=lambda e: (-e[0], e[1]))[:10]
            top_ids.append([j for _, j in order])
            top_probs.append([p for p, _ in order])
        self.tokens.append({'ids': idx_next[:, 0].tolist(), 'top_ids': top_ids, 'top_probs': top_probs})


generation_log = GenerationLog()


class GPTModule(GPT):
    """nanoGPT's GPT as the core's module "GPT": built from GPTConfig's fields; forward(idx) gives
    the logits of every position (nanoGPT's forward with targets) and every layer's attention
    weights (n_layer, B, H, T, T). generate() calls it and reads the last position, as it would
    read nanoGPT's own last-position logits."""

    def __init__(self, vocab_size, block_size, n_layer, n_head, n_embd, dropout=0.0, bias=True, rope=False,
                 rope_base=10000.0, num_kv_heads=0, window=0, sink_tokens=0):
        with contextlib.redirect_stdout(io.StringIO()):  # nanoGPT prints its warning and size
            super().__init__(GPTConfig(block_size=block_size, vocab_size=vocab_size, n_layer=n_layer, n_head=n_head,
                                       n_embd=n_embd, dropout=dropout, bias=bias, rope=rope, rope_base=rope_base,
                                       num_kv_heads=num_kv_heads, window=window, sink_tokens=sink_tokens))

    def forward(self, idx, targets=None):
        logits, _ = super().forward(idx, targets=idx.contiguous() if targets is None else targets)
        return logits, torch.stack([block.attn.last_att for block in self.transformer.h])


# ---------------------------------------------------------------------------------------------
# ModernAttention: the variants of attention in today's LLMs as switches on one module (no seed
# writes it; issue "Modern attention" gives it in words, written here from those words).

def alibi_slopes(n):
    """ALiBi's head slopes as the paper's reference code computes them (ofirpress/attention_with_linear_biases):
    2^(-8(h+1)/n) for n a power of two; otherwise the closest power of two's slopes, then every
    other slope of twice that many."""
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + alibi_slopes(2 * closest)[0::2][:n - closest]


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope_qk(q, k, pos, D, base):
    """RoPE (rotate-half) on q and k at positions pos, traced (ModernAttention, GPT's rope)."""
    inv_freq = 1.0 / (base ** (torch.arange(0, D, 2).float() / D))
    angles = pos.float()[:, None] * inv_freq[None, :]
    emb = torch.cat((angles, angles), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    trace.rec('cos', cos)
    trace.rec('sin', sin)
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin
    trace.rec('q_rot', q)
    trace.rec('k_rot', k)
    return q, k


def repeat_kv_heads(k, v, H, H_kv):
    """Grouped-query heads: each of the H_kv key/value heads repeated for its H // H_kv query heads, traced."""
    if H_kv == H:
        return k, v
    k = k.repeat_interleave(H // H_kv, dim=1)
    v = v.repeat_interleave(H // H_kv, dim=1)
    trace.rec('k_repeated', k)
    trace.rec('v_repeated', v)
    return k, v


class ModernAttention(nn.Module):
    def __init__(self, d_model, num_heads, num_kv_heads=0, causal=True, rope=False, rope_base=10000.0, alibi=False,
                 window=0, sink_tokens=0, bias=False):
        super().__init__()
        self.H = num_heads
        self.H_kv = num_kv_heads or num_heads
        self.D = d_model // num_heads
        self.causal, self.rope, self.rope_base, self.alibi = causal, rope, rope_base, alibi
        self.window, self.sink_tokens = window, sink_tokens
        self.q_proj = nn.Linear(d_model, self.H * self.D, bias=bias)
        self.k_proj = nn.Linear(d_model, self.H_kv * self.D, bias=bias)
        self.v_proj = nn.Linear(d_model, self.H_kv * self.D, bias=bias)
        self.o_proj = nn.Linear(self.H * self.D, d_model, bias=bias)

    def forward(self, x, positions=None):
        B, T, _ = x.shape
        H, H_kv, D = self.H, self.H_kv, self.D
        pos = torch.arange(T) if positions is None else positions
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        trace.rec('q', q)
        trace.rec('k', k)
        trace.rec('v', v)
        q = q.view(B, T, H, D).transpose(1, 2)
        k = k.view(B, T, H_kv, D).transpose(1, 2)
        v = v.view(B, T, H_kv, D).transpose(1, 2)
        trace.rec('q_heads', q)
        trace.rec('k_heads', k)
        trace.rec('v_heads', v)
        if self.rope:
            q, k = rope_qk(q, k, pos, D, self.rope_base)
        k, v = repeat_kv_heads(k, v, H, H_kv)
        scores = q @ k.transpose(-2, -1) / math.sqrt(D)
        trace.rec('scores', scores)
        rel = (pos[None, :] - pos[:, None]).float()  # key position - query position
        if self.alibi:
            bias = torch.tensor(alibi_slopes(H), dtype=torch.float32)[:, None, None] * rel[None]
            trace.rec('alibi_bias', bias)
            scores = scores + bias
            trace.rec('scores_alibi', scores)
        masked = torch.zeros(T, T, dtype=torch.bool)
        if self.causal or self.window > 0:
            masked |= rel > 0
        if self.window > 0:
            far = rel <= -self.window
            if self.sink_tokens > 0:
                far &= ~(pos[None, :] < self.sink_tokens)
            masked |= far
        if masked.any() or self.causal or self.window > 0:
            scores = scores.masked_fill(masked, -torch.inf)
            trace.rec('scores_masked', scores)
        attn_weights = softmax_masked_rows_zero(scores, dim=-1)
        trace.rec('attn_weights', attn_weights)
        context = (attn_weights @ v).transpose(1, 2)
        trace.rec('context_heads', context)
        context = context.contiguous().view(B, T, H * D)
        trace.rec('context', context)
        out = self.o_proj(context)
        trace.rec('output', out)
        return out, attn_weights


# The core's module ids, their classes, forward argument names and output names.
class Outputs:
    def __init__(self, cls, args, outputs, mask_kind=None, ids=False):
        self.cls, self.args, self.outputs, self.mask_kind, self.ids = cls, args, outputs, mask_kind, ids


def encoder_layer_outputs(m, ret):
    return ret, m.attn.last_probs


MODULES = {
    'softmax': Outputs(Softmax, ['x'], ['output']),
    'scaled_dot_product_attention': Outputs(ScaledDotProductAttention, ['Q', 'K', 'V', 'mask'],
                                            ['output', 'attention_weights'], mask_kind='true_is_masked'),
    'SelfAttention_v1': Outputs(SelfAttention_v1, ['x'], ['output', 'attention_weights']),
    'SelfAttention_v2': Outputs(SelfAttention_v2, ['x'], ['output', 'attention_weights']),
    'CausalAttention': Outputs(CausalAttention, ['x'], ['output', 'attention_weights']),
    'MultiHeadAttentionWrapper': Outputs(MultiHeadAttentionWrapper, ['x'], ['output', 'attention_weights']),
    'CausalMultiHeadAttention': Outputs(CausalMultiHeadAttention, ['x'], ['output', 'attention_weights']),
    'MultiHeadAttention': Outputs(MultiHeadAttention, ['Q', 'K', 'V', 'mask'], ['output', 'attention_weights'],
                                  mask_kind='zero_is_masked'),
    'SplitHeadsMultiHeadAttention': Outputs(SplitHeadsMultiHeadAttention, ['query', 'key', 'value', 'mask'],
                                            ['output', 'attention_weights'], mask_kind='true_is_masked'),
    'MultiHeadSelfAttention': Outputs(MultiHeadSelfAttention, ['x'], ['output', 'attention_weights']),
    'FusedMultiHeadSelfAttention': Outputs(FusedMultiHeadSelfAttention, ['x'], ['output', 'attention_weights']),
    'PositionalEncoding': Outputs(PositionalEncodingModule, ['x'], ['output']),
    'EncoderLayer': Outputs(EncoderLayer, ['x'], ['output', 'attention_weights']),
    'DecoderLayer': Outputs(DecoderLayer, ['x', 'enc_output'], ['output', 'attention_weights', 'cross_attention_weights']),
    'Transformer': Outputs(Transformer, ['src', 'tgt'], ['output'], ids=True),
    'CausalTransformer': Outputs(CausalTransformer, ['idx'], ['output'], ids=True),
    'GPT': Outputs(GPTModule, ['idx'], ['output', 'attention_weights'], ids=True),
    'ModernAttention': Outputs(ModernAttention, ['x', 'positions'], ['output', 'attention_weights']),
}


def module_outputs(module_id, m, ret):
    """The forward's return value as the core's named outputs."""
    if module_id == 'CausalAttention':
        ret = (ret, m.last_attn_weights)
    elif module_id == 'FusedMultiHeadSelfAttention':
        ret = (ret, m.last_probs)
    elif module_id == 'EncoderLayer':
        ret = (ret, m.attn.last_probs)
    elif module_id == 'DecoderLayer':
        ret = (ret, m.self_attn.last_probs, m.cross_attn.last_probs)
    return dict(zip(MODULES[module_id].outputs, ret))


def build(sc):
    """The scenario's module and forward arguments, drawn as the core draws them: seed, module,
    params, inputs in order. The generator is left where the inputs leave it."""
    spec = MODULES[sc['module']]
    torch.manual_seed(sc.get('seed', 0))
    m = spec.cls(**sc.get('config', {}))
    if 'params' in sc:
        state = {k: torch.tensor(v['data'], dtype=torch.float32).view(v['shape']) for k, v in sc['params'].items()}
        missing = set(state) - set(m.state_dict())
        assert not missing, missing
        m.load_state_dict(state, strict=False)
    kwargs = {}
    for e in sc.get('inputs', []):
        shape = e['shape']
        if 'init' in e:
            t = torch.rand(shape) if e['init'] == 'rand' else torch.randn(shape)
        elif 'embedding' in e:
            em = e['embedding']
            if 'num_embeddings' in em:
                table = nn.Embedding(em['num_embeddings'], shape[-1])
            else:
                w = torch.tensor(em['weight'], dtype=torch.float32)
                table = nn.Embedding.from_pretrained(w.view(-1, shape[-1]))
            with torch.no_grad():
                t = table(torch.tensor(em['ids'], dtype=torch.long).view(shape[:-1]))
        else:
            t = torch.tensor(e['data'], dtype=torch.float64).view(shape)
            if e['name'] == 'mask' and spec.mask_kind == 'true_is_masked':
                t = t != 0
            elif spec.ids or e['name'] == 'positions':
                t = t.long()
            else:
                t = t.float()
        assert e['name'] in spec.args, (sc['module'], e['name'])
        kwargs[e['name']] = t
    return m, kwargs


def run(sc):
    """Runs a scenario as the core does; returns (outputs, steps) as lists of (name, tensor)."""
    m, kwargs = build(sc)
    m.train(sc.get('train', False))
    if 'generate' in sc:  # the prompt's forward: its window, cropped as generate() crops it
        kwargs['idx'] = kwargs['idx'][:, -m.config.block_size:]
    trace.on = sc.get('trace', False)
    trace.steps = []
    trace.prefix = ''
    with torch.no_grad():
        ret = m(**kwargs)
    trace.on = False
    return list(module_outputs(sc['module'], m, ret).items()), trace.steps


def run_generation(sc):
    """nanoGPT's generate() from the scenario's prompt, as the core runs "generate" (SCENARIO.md,
    "Generation"): seed, module, prompt, model.eval(), then max_new_tokens tokens, multinomial
    drawing from the same generator. Returns {"ids", "generated"} for the expected result."""
    m, kwargs = build(sc)
    m.eval()
    g = sc['generate']
    generation_log.tokens = []
    idx = m.generate(kwargs['idx'], g['max_new_tokens'], temperature=g.get('temperature', 1.0), top_k=g.get('top_k'),
                     top_p=g.get('top_p'))
    return {'ids': idx.tolist(), 'generated': generation_log.tokens}


def tensor_json(name, t):
    t = t.detach().float().contiguous()
    e = {'name': name, 'shape': list(t.shape)}
    if t.numel() > INLINE_MAX:
        e['data_b64'] = base64.b64encode(struct.pack(f'<{t.numel()}f', *t.flatten().tolist())).decode()
    else:
        e['data'] = t.flatten().tolist()
    return e


def dumps(obj):
    # Non-finite values as the strings "-Infinity", "Infinity", "NaN", as the core writes them.
    s = json.dumps(obj, separators=(',', ':'))
    return re.sub(r'(?<=[\[,])(-?Infinity|NaN)(?=[\],])', r'"\1"', s)


# ---------------------------------------------------------------------------------------------
# The fixtures

def rand(name, shape, init='randn'):
    return {'name': name, 'shape': shape, 'init': init}


def data(name, shape, values):
    return {'name': name, 'shape': shape, 'data': values}


JOURNEY = [0.43, 0.15, 0.89, 0.55, 0.87, 0.66, 0.57, 0.85, 0.64, 0.22, 0.58, 0.33, 0.77, 0.25, 0.10, 0.05, 0.80, 0.55]


def causal4(d_in, d_out, context_length, dropout, num_heads=None, qkv_bias=False):
    c = {'d_in': d_in, 'd_out': d_out, 'context_length': context_length, 'dropout': dropout}
    if num_heads is not None:
        c['num_heads'] = num_heads
    c['qkv_bias'] = qkv_bias
    return c


def padding_mask_000(B, S, lengths):
    """(B, 1, 1, S): 1 = keep, 0 = padding (masked)."""
    return [1 if s < lengths[b] else 0 for b in range(B) for s in range(S)]


def fixtures():
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

    # seed 001: MultiHeadSelfAttention(dim_in, dim_k, dim_v, num_heads)
    f['seed001_mhsa'] = {'module': 'MultiHeadSelfAttention', 'config': {'dim_in': 32, 'dim_k': 32, 'dim_v': 64, 'num_heads': 8},
                         'seed': 0, 'inputs': [rand('x', [2, 6, 32])], 'trace': True}
    f['seed001_mhsa_odd'] = {'module': 'MultiHeadSelfAttention', 'config': {'dim_in': 5, 'dim_k': 6, 'dim_v': 9, 'num_heads': 3},
                             'seed': 14, 'inputs': [rand('x', [3, 7, 5])], 'trace': True}
    f['seed001_mhsa_T1'] = {'module': 'MultiHeadSelfAttention', 'config': {'dim_in': 4, 'dim_k': 8, 'dim_v': 8},
                            'seed': 15, 'inputs': [rand('x', [1, 1, 4])], 'trace': True}

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
    f['causal_transformer'] = {'module': 'CausalTransformer',
                               'config': {'vocab_size': 9, 'emb_dim': 12, 'num_heads': 3, 'ffn_dim': 20, 'num_layers': 2,
                                          'context_length': 8},
                               'seed': 21, 'inputs': [data('idx', [2, 7], [1, 2, 3, 4, 5, 6, 7, 8, 0, 8, 1, 7, 2, 6])],
                               'trace': True}
    f.update(gpt_fixtures())
    return f


def gpt(vocab_size, block_size, n_layer, n_head, n_embd, dropout=0.0, bias=True, **llama):
    return {'vocab_size': vocab_size, 'block_size': block_size, 'n_layer': n_layer, 'n_head': n_head, 'n_embd': n_embd,
            'dropout': dropout, 'bias': bias, **llama}


def gpt_fixtures():
    """nanoGPT's GPT: seeded construction (return_params), forward, attention weights; generation
    greedy and sampled (temperatures, top_k, top_p, batch 2, a prompt longer than block_size), each
    checked by the core with and without its KV cache (the "_nocache" twins share the expected ids)."""
    f = {}
    small = gpt(11, 8, 2, 2, 8)
    prompt = [1, 5, 2, 7, 3, 9, 4, 10, 0, 6, 8, 2]
    f['gpt_forward'] = {'module': 'GPT', 'config': small, 'seed': 0, 'inputs': [data('idx', [2, 6], prompt)],
                        'trace': True, 'return_params': True}
    f['gpt_forward_nobias_odd'] = {'module': 'GPT', 'config': gpt(7, 5, 3, 3, 6, bias=False), 'seed': 1,
                                   'inputs': [data('idx', [1, 5], [6, 0, 3, 3, 1])], 'trace': True, 'return_params': True}
    f['gpt_forward_T1'] = {'module': 'GPT', 'config': gpt(5, 4, 1, 1, 4), 'seed': 2, 'inputs': [data('idx', [1, 1], [3])],
                           'trace': True}
    f['gpt_forward_dropout_train'] = {'module': 'GPT', 'config': gpt(9, 8, 2, 2, 8, dropout=0.3), 'seed': 3, 'train': True,
                                      'inputs': [data('idx', [2, 5], [1, 5, 2, 7, 3, 8, 4, 0, 0, 6])], 'trace': True}
    f['gpt_forward_wide'] = {'module': 'GPT', 'config': gpt(65, 32, 2, 4, 64), 'seed': 4,
                             'inputs': [data('idx', [2, 32], [(7 * i + 3) % 65 for i in range(64)])]}
    # Llama-style options (LlamaStyleSelfAttention): rope + GQA + a window with a sink; MQA + window
    llama = gpt(11, 10, 2, 4, 16, rope=True, num_kv_heads=2, window=3, sink_tokens=1)
    f['gpt_forward_rope_gqa_window'] = {'module': 'GPT', 'config': llama, 'seed': 5,
                                        'inputs': [data('idx', [2, 9], [1, 5, 2, 7, 3, 9, 4, 10, 0, 6, 8, 2, 2, 1, 3, 3, 7, 9])],
                                        'trace': True, 'return_params': True}
    f['gpt_forward_mqa_window_nobias'] = {'module': 'GPT', 'config': gpt(7, 8, 1, 3, 12, bias=False, num_kv_heads=1, window=2),
                                          'seed': 6, 'inputs': [data('idx', [1, 7], [6, 0, 3, 3, 1, 5, 2])], 'trace': True,
                                          'return_params': True}

    def generation(seed, config, idx_shape, ids, **spec):
        """The scenario with the first seed from `seed` on whose generation passes generation_log's
        margins (deterministic: a re-run picks the same seed)."""
        for s in range(seed, seed + 1000):
            sc = {'module': 'GPT', 'config': config, 'seed': s, 'inputs': [data('idx', idx_shape, ids)],
                  'generate': {'max_new_tokens': spec.get('n', 10), **{k: v for k, v in spec.items() if k != 'n'}}}
            try:
                run_generation({**sc, 'generate': {k: v for k, v in sc['generate'].items() if k != 'trace'}})
                return sc
            except AssertionError:
                continue
        raise AssertionError('no seed gives a generation far enough from float32 ties')
    cases = {
        'greedy': generation(10, small, [1, 4], [1, 5, 2, 7], temperature=0, trace=True),
        'sample': generation(100, small, [1, 3], [3, 9, 4], temperature=1.0),
        'sample_again': generation(200, small, [1, 3], [3, 9, 4], temperature=1.0),
        'sample_vocab65': generation(300, gpt(65, 16, 2, 2, 16), [1, 5], [20, 43, 50, 50, 53], temperature=1.0, n=12),
        'temperature_top_k': generation(400, small, [1, 2], [4, 4], temperature=0.8, top_k=3),
        'top_p': generation(500, small, [1, 3], [2, 6, 1], temperature=1.3, top_p=0.9),
        'top_k_top_p_batch2': generation(600, small, [2, 3], [1, 2, 3, 4, 5, 6], temperature=1.0, top_k=5, top_p=0.8),
        'greedy_top_p_nobias': generation(700, gpt(7, 6, 2, 3, 6, bias=False), [1, 2], [0, 5], temperature=0, top_p=0.5),
        'prompt_longer_than_block': generation(800, small, [1, 10], [1, 5, 2, 7, 3, 9, 4, 10, 0, 6], temperature=1.0, n=6),
        'crosses_block': generation(900, small, [1, 5], [8, 1, 1, 2, 3], temperature=0.9, top_k=6, n=7),
        # Llama-style: rope + GQA (its cache keeps 2 of 4 heads), then with a window crossing block_size
        'rope_gqa_greedy': generation(1000, gpt(11, 16, 2, 4, 16, rope=True, num_kv_heads=2), [1, 3], [1, 5, 2],
                                      temperature=0, trace=True, n=10),
        'rope_gqa_sample': generation(1100, gpt(11, 16, 2, 4, 16, rope=True, num_kv_heads=2), [2, 3], [3, 9, 4, 1, 1, 2],
                                      temperature=1.0, n=10),
        'rope_gqa_window_crosses_block': generation(1200, llama, [1, 4], [2, 6, 1, 8], temperature=0.9, top_k=6, n=12),
    }
    # ModernAttention: each switch alone, then combined
    def modern(seed, B, T, config, positions=None):
        inputs = [rand('x', [B, T, config['d_model']])]
        if positions is not None:
            inputs.append(data('positions', [T], positions))
        return {'module': 'ModernAttention', 'config': config, 'seed': seed, 'inputs': inputs, 'trace': True,
                'return_params': True}
    f['modern_mha_causal'] = modern(0, 2, 6, {'d_model': 16, 'num_heads': 4})
    f['modern_noncausal_bias'] = modern(1, 1, 5, {'d_model': 12, 'num_heads': 3, 'causal': False, 'bias': True})
    f['modern_rope'] = modern(2, 2, 7, {'d_model': 16, 'num_heads': 2, 'rope': True})
    f['modern_rope_base100'] = modern(3, 1, 9, {'d_model': 24, 'num_heads': 2, 'rope': True, 'rope_base': 100.0})
    f['modern_gqa'] = modern(4, 2, 6, {'d_model': 32, 'num_heads': 4, 'num_kv_heads': 2})
    f['modern_mqa'] = modern(5, 1, 8, {'d_model': 24, 'num_heads': 6, 'num_kv_heads': 1})
    f['modern_alibi_6_heads'] = modern(6, 2, 7, {'d_model': 24, 'num_heads': 6, 'alibi': True})
    f['modern_alibi_4_heads'] = modern(7, 1, 6, {'d_model': 16, 'num_heads': 4, 'alibi': True})
    f['modern_window'] = modern(8, 1, 9, {'d_model': 16, 'num_heads': 2, 'window': 3})
    f['modern_window_sinks'] = modern(9, 1, 10, {'d_model': 16, 'num_heads': 2, 'window': 3, 'sink_tokens': 2})
    f['modern_combined'] = modern(10, 2, 10, {'d_model': 32, 'num_heads': 4, 'num_kv_heads': 2, 'rope': True, 'window': 4,
                                              'sink_tokens': 1, 'bias': True})
    f['modern_positions_offset'] = modern(11, 1, 5, {'d_model': 16, 'num_heads': 4, 'rope': True, 'alibi': True,
                                                     'window': 3}, positions=[6, 7, 8, 9, 10])
    for name, sc in cases.items():
        trace = sc['generate'].pop('trace', False)
        if trace:
            sc['trace'] = True
        f[f'gpt_generate_{name}'] = sc
        nocache = json.loads(json.dumps(sc))
        nocache['generate']['cache'] = False
        f[f'gpt_generate_{name}_nocache'] = nocache
    return f


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.set_num_threads(1)
    for old in os.listdir(OUT):
        if old.endswith('.scenario.json') or old.endswith('.expected.json'):
            os.remove(os.path.join(OUT, old))
    total = 0
    for name, sc in fixtures().items():
        if None in sc['inputs']:  # seed 003's demo passes x_kv as both key and value
            i = sc['inputs'].index(None)
            torch.manual_seed(sc['seed'])
            spec = MODULES[sc['module']]
            spec.cls(**sc['config'])
            drawn = [torch.randn(e['shape']) for e in sc['inputs'][:i] if e is not None and 'init' in e]
            sc['inputs'][i] = data('value', sc['inputs'][i - 1]['shape'], drawn[-1].flatten().tolist())
        outputs, steps = run(sc)
        expected = {'module': sc['module'], 'torch': torch.__version__,
                    'outputs': [tensor_json(n, t) for n, t in outputs]}
        if sc.get('trace'):
            expected['steps'] = [tensor_json(n, t) for n, t in steps]
        if sc.get('return_params'):  # the seeded construction, parameter by parameter
            m, _ = build(sc)
            expected['params'] = [tensor_json(n, p) for n, p in m.named_parameters()]
        if 'generate' in sc:
            expected.update(run_generation(sc))
        for suffix, obj in (('scenario', sc), ('expected', expected)):
            text = dumps(obj) + '\n'
            with open(os.path.join(OUT, f'{name}.{suffix}.json'), 'w') as fh:
                fh.write(text)
            total += len(text)
        print(f'{name}: {sc["module"]}, outputs {[list(t.shape) for _, t in outputs]}, {len(steps)} steps')
    print(f'{len(fixtures())} fixtures, {total / 1e6:.2f} MB in {os.path.relpath(OUT)}', file=sys.stderr)


if __name__ == '__main__':
    main()
