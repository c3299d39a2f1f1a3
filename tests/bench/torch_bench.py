#!/usr/bin/python3
"""PyTorch side of `npm run bench` (tests/bench/run.mjs runs it; neighbours: native_bench.cpp,
train_bench.cpp, page.js): seed 000's MultiHeadAttention forward and the training steps, as the
tutorials write them, timed on the CPU with one thread and OpenBLAS, plus the ONNX models
onnxruntime-web and onnxruntime-node run and the references every other backend is checked against.

    /usr/bin/python3 tests/bench/torch_bench.py [--shapes 1,16,768,12;64,10,512,8] [--train causal,mha] [--generate]
        --out build/bench [--warmup 2] [--warmup-ms 0] [--runs 7] [--min-run-ms 100] [--long-call-ms 5000] [--onnx]

Forward, for each shape (B, T, C, H): torch.manual_seed(0); mha = MultiHeadAttention(C, H);
x = torch.randn(B, T, C); output = mha(x, x, x) -- the draws the core makes for the same seed, so
both hold the same weights and input. Writes the output as raw float32 to
<out>/ref_B<B>_T<T>_C<C>_H<H>.f32 (the core's outputs are checked against it), x as
<out>/x_B<B>_T<T>_C<C>_H<H>.f32 (onnxruntime-node's input, ort_node_bench.mjs) and prints one JSON
object with the timings. --onnx also exports mha_C<C>_H<H>.onnx (x -> output, B and T dynamic), the
model onnxruntime-web and onnxruntime-node run.

Training (--train), one timed call = opt.zero_grad(); loss = fn(module(*inputs), target);
loss.backward(); opt.step() with torch.optim.AdamW(lr=1e-3), for the cases of TRAIN_CASES below.
Each case is written as <out>/train_<case>.json: the core's scenario (core/SCENARIO.md "Training":
the same seed, so the core builds the same weights and inputs), the parameters' names and shapes
(named_parameters order), and the first step's loss; beside it, raw float32: train_<case>.params.f32
(the parameters before the first step), .grads.f32 (the first step's gradients), .inputs.f32 (the
float input and target, for the tfjs page) -- every backend checks its first step against these.

Generation (--generate): one decode step of nanoGPT's GPT (make_fixtures.py's, nanoGPT's code) at
T = 256, GENERATE_CONFIG below, seed 0, under torch.no_grad() as generate() runs: the prompt is 255
ids (i % 65), the 256th its greedy next id; "nocache" is what nanoGPT's generate does for the next
token (forward of the 256-token window, logits[:, -1, :], argmax), "cache" a minimal KV cache of
the same blocks (decode_step below: every layer's k, v of the 255 earlier positions kept, only the
new token's q, k, v computed). Writes <out>/generate.json: the core's scenario, the greedy id and
both steps' logits (the core's are checked against the uncached ones); the cached logits must
equal the uncached within 1e-5.

BLAS: Debian's python3-torch multiplies matrices with whatever libblas.so.3 the alternatives
system points at. The bench wants OpenBLAS (scripts/setup.sh --fixtures installs
libopenblas0-pthread) on one thread, so OPENBLAS_NUM_THREADS / OMP_NUM_THREADS are set to 1 before
torch is imported, and the output names the BLAS library actually mapped (/proc/self/maps).
BENCH_THREADS=N (run.mjs --threads): N threads instead, for BLAS, OpenMP and torch.set_num_threads.
"""
import os

THREADS = int(os.environ.get('BENCH_THREADS', '1'))
os.environ['OPENBLAS_NUM_THREADS'] = str(THREADS)  # read when libopenblas loads, i.e. at `import torch`
os.environ['OMP_NUM_THREADS'] = str(THREADS)
# On N > 1 threads two pools share the cores: PyTorch's OpenMP team (elementwise ops, softmax) and
# OpenBLAS's pthreads (the products). libgomp's default keeps the team spinning after each parallel
# region, against OpenBLAS's threads: the 1 x 16 x 768 forward took 10.2-11.1 ms on 2 threads of a
# 2-core AMD EPYC against 0.95-1.06 with the team asleep (PASSIVE), 1.4 ms on 1 thread.
if THREADS > 1:
    os.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE')

import argparse
import contextlib
import io
import json
import math
import re
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'scripts'))
from make_fixtures import GPT, CausalTransformer, GPTConfig  # noqa: E402  (the core's twins; imported, not copied)
from torch_refs import interp as interp_refs  # noqa: E402  (the fixtures' patching references)
from torch_refs.common import trace  # noqa: E402
from torch_refs.runner import build  # noqa: E402


class MultiHeadAttention(nn.Module):  # seed 000, verbatim (comments dropped)
    def __init__(self, d_model, num_heads):
        super(MultiHeadAttention, self).__init__()
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
        K = self.W_K(K)
        V = self.W_V(V)
        Q = Q.view(batch_size, -1, self.num_heads, self.d_head).transpose(1, 2)
        K = K.view(batch_size, -1, self.num_heads, self.d_head).transpose(1, 2)
        V = V.view(batch_size, -1, self.num_heads, self.d_head).transpose(1, 2)
        scores = torch.matmul(Q, K.transpose(-2, -1)) / (self.d_head ** 0.5)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float('-inf'))
        attention_weights = F.softmax(scores, dim=-1)
        attention_output = torch.matmul(attention_weights, V)
        attention_output = attention_output.transpose(1, 2).contiguous().view(batch_size, -1, self.d_model)
        output = self.W_O(attention_output)
        return output


class SelfAttention(nn.Module):
    """Q = K = V = x: the benchmarked call, with one input for the ONNX model."""

    def __init__(self, mha):
        super().__init__()
        self.mha = mha

    def forward(self, x):
        return self.mha(x, x, x)


def timed(fn, warmup, warmup_ms, runs, min_run_ms, long_call_ms):
    """Median/min/max milliseconds per call, by the protocol of run.mjs: a first call, then a
    second that sizes a run (a run repeats fn until it lasts min_run_ms, so short calls are not
    lost in the timer's resolution); warm-up is `warmup` runs and at least warmup_ms; a call over
    long_call_ms gets 1 warm-up run and 3 kept."""
    t0 = time.perf_counter()
    fn()
    first = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    fn()
    once = (time.perf_counter() - t0) * 1e3
    if once > long_call_ms:
        warmup, runs = min(warmup, 1), min(runs, 3)
    inner = max(1, math.ceil(min_run_ms / max(once, 1e-3)))
    w0, warmup_runs = time.perf_counter(), 0
    while warmup_runs < warmup or (once <= long_call_ms and (time.perf_counter() - w0) * 1e3 < warmup_ms):
        for _ in range(inner):
            fn()
        warmup_runs += 1
    per_call = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        per_call.append((time.perf_counter() - t0) * 1e3 / inner)
    s = sorted(per_call)
    return {'median_ms': s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2,
            'min_ms': s[0], 'max_ms': s[-1], 'runs': runs, 'calls_per_run': inner, 'warmup_runs': warmup_runs,
            'first_call_ms': first, 'second_call_ms': once, 'all_ms': per_call}


# The training cases of the bench's "Training" table: the scenario the core runs (its seed gives
# the core PyTorch's weights and draws) and how PyTorch builds the same module, inputs and target.
CAUSAL_CONFIG = {'vocab_size': 16, 'emb_dim': 64, 'num_heads': 4, 'ffn_dim': 128, 'num_layers': 2,
                 'context_length': 32, 'dropout': 0.0}
ADAMW = {'optimizer': 'AdamW', 'lr': 1e-3, 'steps': 1}  # torch.optim.AdamW's defaults otherwise


def causal_case():
    """(a) the page's default training model: CausalTransformer, batch 16 x T 32, next-token
    cross_entropy on random target ids in [0, 16) with one position in 8 ignored (-100)."""
    B, T, V = 16, 32, CAUSAL_CONFIG['vocab_size']
    g = torch.Generator().manual_seed(1234)  # its own generator: the module's draws stay seed 0's
    idx = torch.randint(0, V, (B, T), generator=g)
    target = torch.randint(0, V, (B, T), generator=g)
    target[torch.rand(B, T, generator=g) < 0.125] = -100
    scenario = {'module': 'CausalTransformer', 'config': CAUSAL_CONFIG, 'seed': 0, 'train': True,
                'inputs': [{'name': 'idx', 'shape': [B, T], 'data': idx.flatten().tolist()}],
                'loss': {'fn': 'cross_entropy', 'ignore_index': -100,
                         'target': {'shape': [B, T], 'data': target.flatten().tolist()}},
                'optimize': ADAMW}
    torch.manual_seed(0)
    model = CausalTransformer(**CAUSAL_CONFIG).train()
    loss = lambda: F.cross_entropy(model(idx)[0].reshape(-1, V), target.reshape(-1), ignore_index=-100)
    return scenario, model, loss, []


def mha_case(B=1, T=512, C=768, H=12):
    """(b) seed 000's MultiHeadAttention at T=512, C=768, H=12: Q = K = V = x ~ randn, mse against
    a randn target drawn after x (the order the core draws a scenario's inputs, then its target)."""
    scenario = {'module': 'MultiHeadAttention', 'config': {'d_model': C, 'num_heads': H}, 'seed': 0, 'train': True,
                'inputs': [{'name': 'Q', 'shape': [B, T, C], 'init': 'randn'}, {'name': 'K', 'same_as': 'Q'},
                           {'name': 'V', 'same_as': 'Q'}],
                'loss': {'fn': 'mse', 'target': {'shape': [B, T, C], 'init': 'randn'}},
                'optimize': ADAMW}
    torch.manual_seed(0)
    mha = MultiHeadAttention(C, H).train()
    x = torch.randn(B, T, C)
    target = torch.randn(B, T, C)
    loss = lambda: F.mse_loss(mha(x, x, x), target)
    return scenario, mha, loss, [x, target]


TRAIN_CASES = {'causal': causal_case, 'mha': mha_case}


def train_case(name, out, proto):
    """Writes the case's references (first step) and times the step; returns the JSON entry."""
    scenario, model, loss_fn, float_inputs = TRAIN_CASES[name]()
    named = list(model.named_parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=ADAMW['lr'])
    with open(os.path.join(out, f'train_{name}.params.f32'), 'wb') as f:
        for _, p in named:
            f.write(p.detach().numpy().astype('float32').tobytes())
    with open(os.path.join(out, f'train_{name}.inputs.f32'), 'wb') as f:
        for t in float_inputs:
            f.write(t.numpy().astype('float32').tobytes())

    def step():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        return loss

    first_loss = step().item()  # the reference step: its gradients are still in .grad
    with open(os.path.join(out, f'train_{name}.grads.f32'), 'wb') as f:
        for _, p in named:
            f.write(p.grad.numpy().astype('float32').tobytes())
    manifest = {'case': name, 'scenario': scenario, 'loss': first_loss,
                'params': [{'name': n, 'shape': list(p.shape)} for n, p in named],
                'inputs': [list(t.shape) for t in float_inputs]}
    with open(os.path.join(out, f'train_{name}.json'), 'w') as f:
        json.dump(manifest, f)
    t = timed(step, *proto)
    return {'case': name, 'loss': first_loss, 'params': sum(p.numel() for _, p in named), **t}


# The generation table: one decode step at T = 256 (issue 17).
GENERATE_CONFIG = {'vocab_size': 65, 'block_size': 256, 'n_layer': 4, 'n_head': 4, 'n_embd': 256}
GENERATE_PROMPT = 255


def prefill(model, idx):
    """The prompt's forward through the blocks, keeping each layer's k and v (B, nh, T, hs)."""
    tr = model.transformer
    n_embd, n_head = model.config.n_embd, model.config.n_head
    B, T = idx.size()
    x = tr.drop(tr.wte(idx) + tr.wpe(torch.arange(0, T, dtype=torch.long)))
    cache = []
    for block in tr.h:
        _, k, v = block.attn.c_attn(block.ln_1(x)).split(n_embd, dim=2)
        cache.append((k.view(B, T, n_head, n_embd // n_head).transpose(1, 2),
                      v.view(B, T, n_head, n_embd // n_head).transpose(1, 2)))
        x = block(x)
    return cache


def decode_step(model, idx_next, cache):
    """One new token per row (idx_next (B, 1)) at position cache's T: nanoGPT's Block, CausalSelfAttention
    and MLP with only its own q, k, v computed and k, v appended to the cached ones (torch.cat: the
    cache passed in is left as it was). Returns (logits (B, 1, V), the grown cache)."""
    tr = model.transformer
    C, n_head = model.config.n_embd, model.config.n_head
    B, pos = idx_next.size(0), cache[0][0].size(2)
    x = tr.drop(tr.wte(idx_next) + tr.wpe(torch.tensor([pos], dtype=torch.long)))
    grown = []
    for block, (k_cache, v_cache) in zip(tr.h, cache):
        a = block.attn
        q, k, v = a.c_attn(block.ln_1(x)).split(C, dim=2)
        q = q.view(B, 1, n_head, C // n_head).transpose(1, 2)  # (B, nh, 1, hs)
        k = torch.cat((k_cache, k.view(B, 1, n_head, C // n_head).transpose(1, 2)), dim=2)  # (B, nh, pos + 1, hs)
        v = torch.cat((v_cache, v.view(B, 1, n_head, C // n_head).transpose(1, 2)), dim=2)
        grown.append((k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # the new query sees every position: no mask
        att = a.attn_dropout(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, 1, C)
        x = x + a.resid_dropout(a.c_proj(y))
        x = x + block.mlp(block.ln_2(x))
    return model.lm_head(tr.ln_f(x)), grown


def generate_case(out, proto):
    """The decode step at T = 256, with and without the KV cache: references and timings."""
    torch.manual_seed(0)
    with contextlib.redirect_stdout(io.StringIO()):  # nanoGPT prints its warning and size
        model = GPT(GPTConfig(**GENERATE_CONFIG)).eval()
    V, block = GENERATE_CONFIG['vocab_size'], GENERATE_CONFIG['block_size']
    prompt = torch.tensor([[i % V for i in range(GENERATE_PROMPT)]], dtype=torch.long)
    with torch.no_grad():
        logits, _ = model(prompt)
        next_id = int(torch.argmax(logits[:, -1, :], dim=-1))
        idx = torch.cat((prompt, torch.tensor([[next_id]])), dim=1)  # 256 ids: the window of the timed step
        cache = prefill(model, prompt)
        new = idx[:, -1:]

        def nocache():  # nanoGPT's generate(), one token at temperature 0
            idx_cond = idx if idx.size(1) <= block else idx[:, -block:]
            lg, _ = model(idx_cond)
            lg = lg[:, -1, :]
            return lg, torch.argmax(lg, dim=-1, keepdim=True)

        def cached():
            lg, _ = decode_step(model, new, cache)
            lg = lg[:, -1, :]
            return lg, torch.argmax(lg, dim=-1, keepdim=True)

        ref, ref_next = nocache()
        got, got_next = cached()
        diff = float((ref - got).abs().max())
        assert diff <= 1e-5 and int(ref_next) == int(got_next), f'cached decode differs from the uncached step: {diff}'
        scenario = {'module': 'GPT', 'config': GENERATE_CONFIG, 'seed': 0,
                    'inputs': [{'name': 'idx', 'shape': [1, GENERATE_PROMPT], 'data': prompt.flatten().tolist()}],
                    'generate': {'max_new_tokens': 2, 'temperature': 0}}
        with open(os.path.join(out, 'generate.json'), 'w') as f:
            json.dump({'scenario': scenario, 'position': GENERATE_PROMPT, 'next_id': next_id, 'step_id': int(ref_next),
                       'logits': ref.flatten().tolist(), 'logits_cache': got.flatten().tolist()}, f)
        runs = [{'case': 'cache', **timed(cached, *proto)}, {'case': 'nocache', **timed(nocache, *proto)}]
    return {'config': GENERATE_CONFIG, 'prompt': GENERATE_PROMPT, 'next_id': next_id,
            'params': sum(p.numel() for p in model.parameters()), 'cache_vs_nocache_max_abs_diff': diff, 'runs': runs}


# The interpretability table (--interp): a 2-layer, 4-head, 64-wide GPT at B = 2 (clean row 0,
# corrupted row 1), T = 32; the metric is the logit difference of two tokens at the last position.
INTERP_CONFIG = {'vocab_size': 64, 'block_size': 32, 'n_layer': 2, 'n_head': 4, 'n_embd': 64, 'dropout': 0.0, 'bias': True}
INTERP_METRIC = {'kind': 'logit_diff', 'position': -1, 'token': 3, 'wrong': 4}
INTERP_CASES = {  # case: (steps, by, attribution)
    'heads': (['transformer.h.*.attn.y'], 'head_position', False),
    'positions': (['x', 'transformer.h.*.x_attn', 'transformer.h.*.x_mlp'], 'position', False),
    'attribution': (['transformer.h.*.attn.y'], 'head_position', True),
}


def interp_case(out, proto):
    """Activation patching as a PyTorch user runs it (TransformerLens's patching helpers): the model
    built once, then one full forward per cell under torch.no_grad() with a hook on the patched line
    (the references' trace.rec, the hook at every traced line, only that cell's active); attribution
    patching as one forward and one backward with the steps' gradients retained. Writes
    <out>/interp.json: the core's scenarios and PyTorch's cells (the core's are checked against them)."""
    g = torch.Generator().manual_seed(7)
    T = INTERP_CONFIG['block_size']
    idx = torch.randint(0, INTERP_CONFIG['vocab_size'], (2, T), generator=g)
    base = {'module': 'GPT', 'config': INTERP_CONFIG, 'seed': 1, 'inputs': [{'name': 'idx', 'shape': [2, T], 'data': idx.flatten().tolist()}]}
    model, kwargs = build(base)
    model.eval()
    cases, runs = {'forward': base}, []
    with torch.no_grad():
        runs.append({'case': 'forward', **timed(lambda: model(**kwargs), *proto)})
    for name, (steps, by, attribution) in INTERP_CASES.items():
        p = {'clean': 0, 'corrupted': 1, 'steps': steps, 'by': by, 'metric': INTERP_METRIC}
        sc = {**base, ('attribution_patching' if attribution else 'patching'): p}
        _, _, recorded, _ = interp_refs.forward(base)
        cells = interp_refs.cells(recorded, p)
        if attribution:
            ref = interp_refs.attribution_patching(sc, p)

            def sweep():
                trace.on, trace.grads, trace.steps, trace.live, trace.prefix = True, True, [], [], ''
                try:
                    logits = model(**kwargs)[0]
                    (logits[1, -1, 3] - logits[1, -1, 4]).backward()
                    return [t.grad for t in trace.live]
                finally:
                    trace.on, trace.grads = False, False
                    model.zero_grad(set_to_none=True)
        else:
            ref = interp_refs.patching(sc, p)

            def sweep():
                out = []
                with torch.no_grad():
                    for step, h, q, _ in cells:
                        iv = {'step': step, 'batch': 1, 'set': {'patch_from': 0}}
                        if h is not None:
                            iv['head'] = h
                        if q is not None:
                            iv['position'] = q
                        trace.interventions = [iv]
                        try:
                            out.append(interp_refs.metric(model(**kwargs)[0], 1, INTERP_METRIC))
                        finally:
                            trace.interventions = []
                return out
        cases[name] = {'scenario': sc, 'expected': ref}
        runs.append({'case': name, 'cells': len(cells), **timed(sweep, *proto)})
    with open(os.path.join(out, 'interp.json'), 'w') as f:
        json.dump(cases, f)
    return {'config': INTERP_CONFIG, 'B': 2, 'T': T, 'metric': INTERP_METRIC, 'steps': {k: v[0] for k, v in INTERP_CASES.items()},
            'params': sum(p.numel() for p in model.parameters()), 'runs': runs}


def blas_library():
    """Which BLAS the process mapped: Debian's torch uses the libblas.so.3 alternative."""
    libs = set()
    with open('/proc/self/maps') as f:
        for line in f:
            m = re.search(r'(/\S*(?:blas|lapack|mkl|dnnl)\S*\.so\S*)', line)
            if m:
                libs.add(os.path.realpath(m.group(1)))
    return sorted(libs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--shapes', default='', help='B,T,C,H;B,T,C,H;... (forward)')
    ap.add_argument('--train', default='', help=f'training cases, comma-separated: {",".join(TRAIN_CASES)}')
    ap.add_argument('--out', required=True)
    ap.add_argument('--warmup', type=int, default=2)
    ap.add_argument('--warmup-ms', type=float, default=0)
    ap.add_argument('--runs', type=int, default=7)
    ap.add_argument('--min-run-ms', type=float, default=100)
    ap.add_argument('--long-call-ms', type=float, default=5000)
    ap.add_argument('--onnx', action='store_true')
    ap.add_argument('--generate', action='store_true', help='the decode step at T = 256, with and without a KV cache')
    ap.add_argument('--interp', action='store_true', help='activation and attribution patching sweeps on a small GPT')
    a = ap.parse_args()
    torch.set_num_threads(THREADS)
    os.makedirs(a.out, exist_ok=True)
    shapes = [tuple(int(v) for v in s.split(',')) for s in a.shapes.split(';') if s]
    results, models = [], {}
    for B, T, C, H in shapes:
        torch.manual_seed(0)
        mha = MultiHeadAttention(C, H).eval()
        x = torch.randn(B, T, C)
        with torch.no_grad():
            out = mha(x, x, x)
            out.numpy().astype('float32').tofile(os.path.join(a.out, f'ref_B{B}_T{T}_C{C}_H{H}.f32'))
            x.numpy().astype('float32').tofile(os.path.join(a.out, f'x_B{B}_T{T}_C{C}_H{H}.f32'))
            t = timed(lambda: mha(x, x, x), a.warmup, a.warmup_ms, a.runs, a.min_run_ms, a.long_call_ms)
        results.append({'B': B, 'T': T, 'C': C, 'H': H, **t})
        if a.onnx and (C, H) not in models:
            path = os.path.join(a.out, f'mha_C{C}_H{H}.onnx')
            torch.onnx.export(SelfAttention(mha), (x,), path, input_names=['x'], output_names=['output'],
                              dynamic_axes={'x': {0: 'B', 1: 'T'}, 'output': {0: 'B', 1: 'T'}}, opset_version=14)
            models[(C, H)] = os.path.basename(path)
    proto = (a.warmup, a.warmup_ms, a.runs, a.min_run_ms, a.long_call_ms)
    train = [train_case(name, a.out, proto) for name in a.train.split(',') if name]
    generate = generate_case(a.out, proto) if a.generate else None
    interp = interp_case(a.out, proto) if a.interp else None
    print(json.dumps({'torch': torch.__version__, 'threads': torch.get_num_threads(), 'blas': blas_library(),
                      'openblas_num_threads': os.environ.get('OPENBLAS_NUM_THREADS'), 'omp_wait_policy': os.environ.get('OMP_WAIT_POLICY'),
                      'onnx_models': [{'C': c, 'H': h, 'file': f} for (c, h), f in models.items()],
                      'results': results, 'train': train, 'generate': generate, 'interp': interp}))


if __name__ == '__main__':
    main()
