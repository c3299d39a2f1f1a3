"""Hugging Face's GPT-2 and Llama as transformers writes them (models/gpt2/modeling_gpt2.py,
models/llama/modeling_llama.py: the eager attention path, no cache classes), copied down to the
lines a forward runs, with the trace hooks of common.py; Debian has no python3-transformers, so
the references are written here from that code. Used by scripts/make_pretrained_fixtures.py (model
folders as the Hub serves them) and by make_fixtures.py (the core's seeded "Llama" module).

Departures, each leaving the numbers as they are: GPT-2's causal mask fills torch.finfo.min where
the core fills -inf (softmax gives the same zeros); Llama's additive causal mask likewise; no
dropout (eval mode); Qwen2 is Llama with biases on q, k and v (its modelling file's one change
for these checkpoints)."""
import json
import math
import types

import torch
import torch.nn as nn
import torch.nn.functional as F

from .common import trace
from . import nanogpt


# ---- GPT-2 (modeling_gpt2.py) ----

class Conv1D(nn.Module):
    """transformers.pytorch_utils.Conv1D: a linear layer whose weight is stored [in, out]."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class NewGELUActivation(nn.Module):
    def forward(self, input):
        return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0))))


class GPT2Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        P = c['n_positions']
        self.register_buffer('bias', torch.tril(torch.ones((P, P), dtype=torch.bool)).view(1, 1, P, P))
        self.register_buffer('masked_bias', torch.tensor(-1e4))
        self.embed_dim, self.num_heads = c['n_embd'], c['n_head']
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim)

    def _split_heads(self, tensor, num_heads, attn_head_size):
        new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
        tensor = tensor.view(new_shape)
        return tensor.permute(0, 2, 1, 3)  # (batch, head, seq_length, head_features)

    def _attn(self, query, key, value):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype, device=attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        self.last_att = attn_weights
        return torch.matmul(attn_weights, value), attn_weights

    def forward(self, hidden_states):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        attn_output, _ = self._attn(query, key, value)
        attn_output = attn_output.permute(0, 2, 1, 3).contiguous()
        attn_output = attn_output.view(attn_output.size()[:-2] + (self.num_heads * self.head_dim,))
        return self.c_proj(attn_output)


class GPT2MLP(nn.Module):
    def __init__(self, intermediate_size, c):
        super().__init__()
        self.c_fc = Conv1D(intermediate_size, c['n_embd'])
        self.c_proj = Conv1D(c['n_embd'], intermediate_size)
        self.act = NewGELUActivation() if c.get('activation_function', 'gelu_new') != 'gelu' else nn.GELU()

    def forward(self, hidden_states):
        return self.c_proj(self.act(self.c_fc(hidden_states)))


class GPT2Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        eps = c.get('layer_norm_epsilon', 1e-5)
        self.ln_1 = nn.LayerNorm(c['n_embd'], eps=eps)
        self.attn = GPT2Attention(c)
        self.ln_2 = nn.LayerNorm(c['n_embd'], eps=eps)
        self.mlp = GPT2MLP(4 * c['n_embd'], c)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.attn(self.ln_1(hidden_states))
        hidden_states = hidden_states + residual
        residual = hidden_states
        feed_forward_hidden_states = self.mlp(self.ln_2(hidden_states))
        return residual + feed_forward_hidden_states


class GPT2Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c['vocab_size'], c['n_embd'])
        self.wpe = nn.Embedding(c['n_positions'], c['n_embd'])
        self.h = nn.ModuleList([GPT2Block(c) for _ in range(c['n_layer'])])
        self.ln_f = nn.LayerNorm(c['n_embd'], eps=c.get('layer_norm_epsilon', 1e-5))

    def forward(self, input_ids):
        position_ids = torch.arange(0, input_ids.size(-1), dtype=torch.long).unsqueeze(0)
        hidden_states = self.wte(input_ids) + self.wpe(position_ids)
        for block in self.h:
            hidden_states = block(hidden_states)
        return self.ln_f(hidden_states)


class GPT2LMHeadModel(nn.Module):
    """GPT2LMHeadModel(config) with lm_head tied to wte. forward(idx) -> (logits, attention weights
    of every layer), as the core's GPT module returns them; generate() is nanoGPT's."""

    def __init__(self, c):
        super().__init__()
        self.transformer = GPT2Model(c)
        self.lm_head = nn.Linear(c['n_embd'], c['vocab_size'], bias=False)
        self.lm_head.weight = self.transformer.wte.weight
        self.config = types.SimpleNamespace(block_size=c['n_positions'])

    def forward(self, idx):
        logits = self.lm_head(self.transformer(idx))
        return logits, torch.stack([b.attn.last_att for b in self.transformer.h])

    generate = nanogpt.GPT.generate


# ---- Llama (modeling_llama.py; Mistral and Qwen2 alike) ----

class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


def rope_scaled(inv_freq, rope_scaling):
    """modeling_rope_utils' _compute_linear_scaling_rope_parameters and _compute_llama3_parameters
    (their attention_factor is 1): inv_freq as rope_scaling changes it ('type' is the older key)."""
    kind = (rope_scaling or {}).get('rope_type', (rope_scaling or {}).get('type', 'default'))
    if kind == 'default':
        return inv_freq
    factor = rope_scaling['factor']
    if kind == 'linear':
        return inv_freq / factor
    assert kind == 'llama3', kind
    low_freq_factor, high_freq_factor = rope_scaling['low_freq_factor'], rope_scaling['high_freq_factor']
    old_context_len = rope_scaling['original_max_position_embeddings']
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim, base, rope_scaling=None):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer('inv_freq', rope_scaled(inv_freq, rope_scaling), persistent=False)

    def forward(self, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()


class LlamaAttention(nn.Module):
    def __init__(self, c, layer_idx=0):
        super().__init__()
        # Mistral's / Qwen2's sliding window, in the layers from max_window_layers on (masking_utils'
        # sliding_window_overlay: key j visible from query i iff i - sliding_window < j <= i)
        window = c.get('sliding_window') or 0
        self.sliding_window = window if window and layer_idx >= c.get('max_window_layers', 0) else 0
        H, Hk = c['num_attention_heads'], c.get('num_key_value_heads') or c['num_attention_heads']
        self.head_dim = c.get('head_dim') or c['hidden_size'] // H
        self.num_key_value_groups = H // Hk
        self.scaling = self.head_dim ** -0.5
        qkv_bias = c.get('attention_bias', False) or c.get('qkv_bias', False)
        self.q_proj = nn.Linear(c['hidden_size'], H * self.head_dim, bias=qkv_bias)
        self.k_proj = nn.Linear(c['hidden_size'], Hk * self.head_dim, bias=qkv_bias)
        self.v_proj = nn.Linear(c['hidden_size'], Hk * self.head_dim, bias=qkv_bias)
        self.o_proj = nn.Linear(H * self.head_dim, c['hidden_size'], bias=c.get('attention_bias', False))

    def forward(self, hidden_states, position_embeddings):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        q = trace.rec('q_proj', self.q_proj(hidden_states))
        query_states = trace.rec('query_states', q.view(hidden_shape).transpose(1, 2))
        k = trace.rec('k_proj', self.k_proj(hidden_states))
        key_states = trace.rec('key_states', k.view(hidden_shape).transpose(1, 2))
        v = trace.rec('v_proj', self.v_proj(hidden_states))
        value_states = trace.rec('value_states', v.view(hidden_shape).transpose(1, 2))
        cos, sin = position_embeddings
        cos, sin = trace.rec('cos', cos[0]), trace.rec('sin', sin[0])  # (seq, head_dim): batch rows are equal
        query_states = trace.rec('query_rot', (query_states * cos) + (rotate_half(query_states) * sin))
        key_states = trace.rec('key_rot', (key_states * cos) + (rotate_half(key_states) * sin))
        if self.num_key_value_groups > 1:
            key_states = trace.rec('key_repeated', repeat_kv(key_states, self.num_key_value_groups))
            value_states = trace.rec('value_repeated', repeat_kv(value_states, self.num_key_value_groups))
        attn_weights = trace.rec('attn_scores', torch.matmul(query_states, key_states.transpose(2, 3)) * self.scaling)
        T = attn_weights.size(-1)
        i, j = torch.arange(T).unsqueeze(1), torch.arange(T).unsqueeze(0)
        hidden = (j > i) | ((j <= i - self.sliding_window) if self.sliding_window else torch.zeros((T, T), dtype=torch.bool))
        causal_mask = torch.zeros((T, T)).masked_fill(hidden, torch.finfo(attn_weights.dtype).min)
        attn_weights = attn_weights + causal_mask
        # the core fills -inf where this adds finfo.min: the same softmax, its step shows -inf
        trace.rec('attn_masked', attn_weights.masked_fill(causal_mask != 0, float('-inf')))
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        attn_weights = trace.rec('attn_weights', attn_weights)
        self.last_att = attn_weights
        attn_output = trace.rec('attn_output_heads', torch.matmul(attn_weights, value_states))
        attn_output = trace.rec('attn_output', attn_output.transpose(1, 2).contiguous().reshape(*input_shape, -1).contiguous())
        return trace.rec('o_proj', self.o_proj(attn_output))


class LlamaMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        b = c.get('mlp_bias', False)
        self.gate_proj = nn.Linear(c['hidden_size'], c['intermediate_size'], bias=b)
        self.up_proj = nn.Linear(c['hidden_size'], c['intermediate_size'], bias=b)
        self.down_proj = nn.Linear(c['intermediate_size'], c['hidden_size'], bias=b)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        g = trace.rec('gate_proj', self.gate_proj(x))
        g = trace.rec('act_fn', self.act_fn(g))
        u = trace.rec('up_proj', self.up_proj(x))
        h = trace.rec('gated', g * u)
        return trace.rec('down_proj', self.down_proj(h))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, c, layer_idx=0):
        super().__init__()
        self.self_attn = LlamaAttention(c, layer_idx)
        self.mlp = LlamaMLP(c)
        self.input_layernorm = LlamaRMSNorm(c['hidden_size'], eps=c.get('rms_norm_eps', 1e-6))
        self.post_attention_layernorm = LlamaRMSNorm(c['hidden_size'], eps=c.get('rms_norm_eps', 1e-6))

    def forward(self, hidden_states, position_embeddings):
        residual = hidden_states
        hidden_states = trace.rec('input_layernorm', self.input_layernorm(hidden_states))
        with trace.scope('self_attn.'):
            hidden_states = self.self_attn(hidden_states, position_embeddings)
        hidden_states = trace.rec('residual_attn', residual + hidden_states)
        residual = hidden_states
        hidden_states = trace.rec('post_attention_layernorm', self.post_attention_layernorm(hidden_states))
        with trace.scope('mlp.'):
            hidden_states = self.mlp(hidden_states)
        return trace.rec('residual_mlp', residual + hidden_states)


class LlamaModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c['vocab_size'], c['hidden_size'])
        self.layers = nn.ModuleList([LlamaDecoderLayer(c, i) for i in range(c['num_hidden_layers'])])
        self.norm = LlamaRMSNorm(c['hidden_size'], eps=c.get('rms_norm_eps', 1e-6))
        head_dim = c.get('head_dim') or c['hidden_size'] // c['num_attention_heads']
        self.rotary_emb = LlamaRotaryEmbedding(head_dim, c.get('rope_theta', 10000.0), c.get('rope_scaling'))
        post_init(self)

    def forward(self, input_ids):
        hidden_states = trace.rec('inputs_embeds', self.embed_tokens(input_ids))
        position_ids = torch.arange(0, input_ids.size(1)).unsqueeze(0)
        position_embeddings = self.rotary_emb(position_ids)
        for i, layer in enumerate(self.layers):
            with trace.scope(f'model.layers.{i}.'):
                hidden_states = layer(hidden_states, position_embeddings)
        return trace.rec('norm', self.norm(hidden_states))


def post_init(model, std=0.02):
    """PreTrainedModel.post_init -> init_weights: _init_weights over model.apply() (children
    first), skipping modules an earlier post_init initialised (_is_hf_initialized)."""
    def init(module):
        if getattr(module, '_is_hf_initialized', False):
            return
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(mean=0.0, std=std)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(mean=0.0, std=std)
        elif isinstance(module, LlamaRMSNorm):
            module.weight.data.fill_(1.0)
        module._is_hf_initialized = True
    model.apply(init)


class LlamaForCausalLM(nn.Module):
    """LlamaForCausalLM(config): LlamaModel (its own post_init), lm_head, post_init, tie_weights.
    The core's module "Llama": forward(input_ids) -> (logits, attention weights of every layer);
    generate() is nanoGPT's, cropping to min(max_position_embeddings, 4096) as the core does."""

    def __init__(self, vocab_size, hidden_size, intermediate_size, num_hidden_layers, num_attention_heads,
                 num_key_value_heads=0, head_dim=0, max_position_embeddings=2048, rms_norm_eps=1e-6, rope_theta=10000.0,
                 tie_word_embeddings=False, attention_bias=False, mlp_bias=False, qkv_bias=False, sliding_window=0, max_window_layers=0,
                 rope_scaling=None):
        super().__init__()
        c = dict(vocab_size=vocab_size, hidden_size=hidden_size, intermediate_size=intermediate_size,
                 num_hidden_layers=num_hidden_layers, num_attention_heads=num_attention_heads,
                 num_key_value_heads=num_key_value_heads, head_dim=head_dim, rms_norm_eps=rms_norm_eps, rope_theta=rope_theta,
                 attention_bias=attention_bias, mlp_bias=mlp_bias, qkv_bias=qkv_bias, sliding_window=sliding_window,
                 max_window_layers=max_window_layers, rope_scaling=rope_scaling)
        self.model = LlamaModel(c)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)
        post_init(self)
        if tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight
        self.config = types.SimpleNamespace(block_size=min(max_position_embeddings, 4096))

    def forward(self, input_ids):
        logits = trace.rec('logits', self.lm_head(self.model(input_ids)))
        return logits, torch.stack([layer.self_attn.last_att for layer in self.model.layers])

    generate = nanogpt.GPT.generate


def llama(vocab_size, hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, **more):
    return {'vocab_size': vocab_size, 'hidden_size': hidden_size, 'intermediate_size': intermediate_size,
            'num_hidden_layers': num_hidden_layers, 'num_attention_heads': num_attention_heads, **more}


def cases(run_generation):
    """The core's seeded "Llama" module (LlamaForCausalLM's construction draws): forward traced
    with its parameters (GQA, untied; MQA, tied, head_dim given, Qwen2's q/k/v biases), and a greedy
    generation, with and without the KV cache."""
    from .common import data
    f = {}
    gqa = llama(13, 16, 24, 2, 4, num_key_value_heads=2, max_position_embeddings=16)
    f['llama_forward_gqa'] = {'module': 'Llama', 'config': gqa, 'seed': 0,
                              'inputs': [data('input_ids', [2, 5], [1, 5, 2, 7, 3, 12, 4, 10, 0, 6])],
                              'trace': True, 'return_params': True}
    f['llama_forward_mqa_tied_qkv_bias'] = {
        'module': 'Llama', 'seed': 1, 'trace': True, 'return_params': True,
        'config': llama(9, 12, 20, 1, 3, num_key_value_heads=1, head_dim=6, tie_word_embeddings=True, qkv_bias=True,
                        rope_theta=500.0, rms_norm_eps=1e-5),
        'inputs': [data('input_ids', [1, 6], [8, 0, 3, 3, 1, 5])]}
    for s in range(10, 1010):
        sc = {'module': 'Llama', 'config': gqa, 'seed': s, 'inputs': [data('input_ids', [1, 3], [1, 5, 2])],
              'generate': {'max_new_tokens': 16, 'temperature': 0}}
        try:
            run_generation(sc)
            break
        except AssertionError:
            continue
    else:
        raise AssertionError('no seed gives a generation far enough from float32 ties')
    # interventions, activation and attribution patching and the logit lens on Llama's own step names
    rows = data('input_ids', [2, 6], [1, 5, 2, 7, 3, 9, 4, 10, 2, 7, 3, 9])
    metric = {'kind': 'logit_diff', 'position': -1, 'token': 3, 'wrong': 9}
    f['interp_llama'] = {'module': 'Llama', 'config': gqa, 'seed': 3, 'inputs': [rows], 'trace': True, 'interventions': [
        {'step': 'model.layers.0.self_attn.attn_output_heads', 'head': 1, 'set': 'zero'},
        {'step': 'model.layers.1.self_attn.key_rot', 'head': 0, 'position': 2, 'set': 'mean'},
        {'step': 'model.layers.0.residual_attn', 'position': -1, 'batch': 1, 'set': {'from_batch': 0}},
        {'step': 'model.layers.1.mlp.act_fn', 'position': 3, 'set': {'scale': 0.5}}],
        'patching': {'clean': 0, 'corrupted': 1, 'steps': ['model.layers.*.self_attn.attn_output_heads'], 'by': 'head', 'metric': metric},
        'attribution_patching': {'clean': 0, 'corrupted': 1, 'steps': ['model.layers.*.self_attn.attn_output_heads'],
                                 'by': 'head_position', 'metric': metric},
        'logit_lens': True, 'logit_attribution': {'position': -1, 'token': 7, 'wrong': 2, 'batch': 0}}
    f['llama_generate_greedy'] = sc  # 3 + 16 tokens: crosses max_position_embeddings (16), the window crops
    nocache = json.loads(json.dumps(sc))
    nocache['generate']['cache'] = False
    f['llama_generate_greedy_nocache'] = nocache
    return f
