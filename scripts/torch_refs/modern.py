"""ModernAttention: the attention of today's LLMs as switches on one module (RoPE, ALiBi, GQA / MQA,
a sliding window with sinks; no seed writes it, written from the issue's words), the helpers
nanoGPT's Llama-style attention shares, and its cases."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .common import data, rand, softmax_masked_rows_zero, trace

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
    cos = trace.rec('cos', cos)
    sin = trace.rec('sin', sin)
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin
    q = trace.rec('q_rot', q)
    k = trace.rec('k_rot', k)
    return q, k


def repeat_kv_heads(k, v, H, H_kv):
    """Grouped-query heads: each of the H_kv key/value heads repeated for its H // H_kv query heads, traced."""
    if H_kv == H:
        return k, v
    k = k.repeat_interleave(H // H_kv, dim=1)
    v = v.repeat_interleave(H // H_kv, dim=1)
    k = trace.rec('k_repeated', k)
    v = trace.rec('v_repeated', v)
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
        q = trace.rec('q', q)
        k = trace.rec('k', k)
        v = trace.rec('v', v)
        q = q.view(B, T, H, D).transpose(1, 2)
        k = k.view(B, T, H_kv, D).transpose(1, 2)
        v = v.view(B, T, H_kv, D).transpose(1, 2)
        q = trace.rec('q_heads', q)
        k = trace.rec('k_heads', k)
        v = trace.rec('v_heads', v)
        if self.rope:
            q, k = rope_qk(q, k, pos, D, self.rope_base)
        k, v = repeat_kv_heads(k, v, H, H_kv)
        scores = q @ k.transpose(-2, -1) / math.sqrt(D)
        scores = trace.rec('scores', scores)
        rel = (pos[None, :] - pos[:, None]).float()  # key position - query position
        if self.alibi:
            bias = torch.tensor(alibi_slopes(H), dtype=torch.float32)[:, None, None] * rel[None]
            bias = trace.rec('alibi_bias', bias)
            scores = scores + bias
            scores = trace.rec('scores_alibi', scores)
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
            scores = trace.rec('scores_masked', scores)
        attn_weights = softmax_masked_rows_zero(scores, dim=-1)
        attn_weights = trace.rec('attn_weights', attn_weights)
        context = (attn_weights @ v).transpose(1, 2)
        context = trace.rec('context_heads', context)
        context = context.contiguous().view(B, T, H * D)
        context = trace.rec('context', context)
        out = self.o_proj(context)
        out = trace.rec('output', out)
        return out, attn_weights


# The core's module ids, their classes, forward argument names and output names.

def cases():
    """ModernAttention's cases: each switch alone, then combined"""
    f = {}
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
    return f
