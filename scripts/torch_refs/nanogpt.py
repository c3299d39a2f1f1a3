"""nanoGPT's GPT (core: GPT) with the Llama-style switches (rope, num_kv_heads, window, sinks),
its generate() with PyTorch's draws, and its cases: forward, seeded construction, generation with
and without the KV cache."""
import contextlib
import io
import json
from dataclasses import dataclass

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .common import data, softmax_masked_rows_zero, trace
from .modern import repeat_kv_heads, rope_qk

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
        qkv = trace.rec('qkv', qkv)
        q, k, v  = qkv.split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        k = trace.rec('k', k)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        q = trace.rec('q', q)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        v = trace.rec('v', v)

        # causal self-attention; Self-attend: (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
        assert not self.flash, 'PyTorch 1.13: the manual attention path'
        # manual implementation of attention
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = trace.rec('att', att)
        att = att.masked_fill(self.bias[:,:,:T,:T] == 0, float('-inf'))
        att = trace.rec('att_masked', att)
        att = F.softmax(att, dim=-1)
        att = trace.rec('att_softmax', att)
        att = self.attn_dropout(att)
        if self.training and self.dropout > 0:
            att = trace.rec('att_dropout', att)
        self.last_att = att  # added: the module's attention_weights output
        y = att @ v # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        y = trace.rec('y', y)
        y = y.transpose(1, 2).contiguous().view(B, T, C) # re-assemble all head outputs side by side
        y = trace.rec('y_merged', y)

        # output projection
        y = self.resid_dropout(self.c_proj(y))
        y = trace.rec('y_proj', y)
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
        qkv = trace.rec('qkv', qkv)
        q, k, v = qkv.split([H * hs, H_kv * hs, H_kv * hs], dim=2)
        k = k.view(B, T, H_kv, hs).transpose(1, 2)  # (B, n_kv_head, T, hs)
        k = trace.rec('k', k)
        q = q.view(B, T, H, hs).transpose(1, 2)  # (B, nh, T, hs)
        q = trace.rec('q', q)
        v = v.view(B, T, H_kv, hs).transpose(1, 2)
        v = trace.rec('v', v)
        pos = torch.arange(T)
        if self.rope:
            q, k = rope_qk(q, k, pos, hs, self.rope_base)
        k, v = repeat_kv_heads(k, v, H, H_kv)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = trace.rec('att', att)
        rel = pos[None, :] - pos[:, None]  # key position - query position
        mask = rel > 0
        if self.window > 0:
            mask |= (rel <= -self.window) & ~(pos[None, :] < self.sink_tokens)
        att = att.masked_fill(mask, float('-inf'))
        att = trace.rec('att_masked', att)
        att = F.softmax(att, dim=-1)
        att = trace.rec('att_softmax', att)
        att = self.attn_dropout(att)
        if self.training and self.dropout > 0:
            att = trace.rec('att_dropout', att)
        self.last_att = att
        y = att @ v
        y = trace.rec('y', y)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        y = trace.rec('y_merged', y)
        y = self.resid_dropout(self.c_proj(y))
        y = trace.rec('y_proj', y)
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
        x = trace.rec('c_fc', x)
        x = self.gelu(x)
        x = trace.rec('gelu', x)
        x = self.c_proj(x)
        x = trace.rec('c_proj', x)
        x = self.dropout(x)
        if self.training and self.dropout.p > 0:
            x = trace.rec('dropout', x)
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
        h = trace.rec('ln_1', h)
        with trace.scope('attn.'):
            x = x + self.attn(h)
        x = trace.rec('x_attn', x)
        h = self.ln_2(x)  # added: nanoGPT writes x = x + self.mlp(self.ln_2(x))
        h = trace.rec('ln_2', h)
        with trace.scope('mlp.'):
            x = x + self.mlp(h)
        x = trace.rec('x_mlp', x)
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
        tok_emb = trace.rec('tok_emb', tok_emb)
        if self.config.rope:  # added: no wpe, positions rotate q and k
            x = self.transformer.drop(tok_emb)
        else:
            pos_emb = self.transformer.wpe(pos) # position embeddings of shape (t, n_embd)
            pos_emb = trace.rec('pos_emb', pos_emb)
            x = self.transformer.drop(tok_emb + pos_emb)
        x = trace.rec('x', x)
        for i, block in enumerate(self.transformer.h):
            with trace.scope(f'transformer.h.{i}.'):
                x = block(x)
        x = self.transformer.ln_f(x)
        x = trace.rec('ln_f', x)

        if targets is not None:
            # if we are given some desired targets also calculate the loss
            logits = self.lm_head(x)
            logits = trace.rec('logits', logits)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            # inference-time mini-optimization: only forward the lm_head on the very last position
            logits = self.lm_head(x[:, [-1], :]) # note: using list [-1] to preserve the time dim
            logits = trace.rec('logits', logits)
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
            trace.offset, trace.length = idx.size(1) - idx_cond.size(1), idx.size(1)  # added: interventions' positions
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


def gpt(vocab_size, block_size, n_layer, n_head, n_embd, dropout=0.0, bias=True, **llama):
    return {'vocab_size': vocab_size, 'block_size': block_size, 'n_layer': n_layer, 'n_head': n_head, 'n_embd': n_embd,
            'dropout': dropout, 'bias': bias, **llama}


def cases(run_generation):
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
    for name, sc in cases.items():
        trace = sc['generate'].pop('trace', False)
        if trace:
            sc['trace'] = True
        f[f'gpt_generate_{name}'] = sc
        nocache = json.loads(json.dumps(sc))
        nocache['generate']['cache'] = False
        f[f'gpt_generate_{name}_nocache'] = nocache
    return f
