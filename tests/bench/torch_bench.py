#!/usr/bin/python3
"""PyTorch side of `npm run bench` (tests/bench/run.mjs runs it; neighbours: native_bench.cpp,
page.js): seed 000's MultiHeadAttention, as the tutorial writes it, timed on the CPU with one
thread, plus the ONNX models onnxruntime-web runs in the bench page.

    /usr/bin/python3 tests/bench/torch_bench.py --shapes 1,16,768,12;64,10,512,8 --out build/bench
        [--warmup 2] [--warmup-ms 0] [--runs 7] [--min-run-ms 100] [--long-call-ms 5000] [--onnx]

For each shape (B, T, C, H): torch.manual_seed(0); mha = MultiHeadAttention(C, H);
x = torch.randn(B, T, C); output = mha(x, x, x) -- the draws the core makes for the same seed, so
both hold the same weights and input. Writes the output as raw float32 to
<out>/ref_B<B>_T<T>_C<C>_H<H>.f32 (the core's outputs are checked against it) and prints one JSON
object with the timings. --onnx also exports mha_C<C>_H<H>.onnx (x -> output, B and T dynamic).
"""
import argparse
import json
import math
import os
import re
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


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


def blas_library():
    """Which BLAS the process mapped: Debian's torch uses the libblas.so.3 alternative."""
    libs = set()
    with open('/proc/self/maps') as f:
        for line in f:
            m = re.search(r'(/\S*(?:blas|mkl|dnnl)\S*\.so\S*)', line)
            if m:
                libs.add(os.path.realpath(m.group(1)))
    return sorted(libs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--shapes', required=True, help='B,T,C,H;B,T,C,H;...')
    ap.add_argument('--out', required=True)
    ap.add_argument('--warmup', type=int, default=2)
    ap.add_argument('--warmup-ms', type=float, default=0)
    ap.add_argument('--runs', type=int, default=7)
    ap.add_argument('--min-run-ms', type=float, default=100)
    ap.add_argument('--long-call-ms', type=float, default=5000)
    ap.add_argument('--onnx', action='store_true')
    a = ap.parse_args()
    torch.set_num_threads(1)
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
            t = timed(lambda: mha(x, x, x), a.warmup, a.warmup_ms, a.runs, a.min_run_ms, a.long_call_ms)
        results.append({'B': B, 'T': T, 'C': C, 'H': H, **t})
        if a.onnx and (C, H) not in models:
            path = os.path.join(a.out, f'mha_C{C}_H{H}.onnx')
            torch.onnx.export(SelfAttention(mha), (x,), path, input_names=['x'], output_names=['output'],
                              dynamic_axes={'x': {0: 'B', 1: 'T'}, 'output': {0: 'B', 1: 'T'}}, opset_version=14)
            models[(C, H)] = os.path.basename(path)
    print(json.dumps({'torch': torch.__version__, 'threads': torch.get_num_threads(), 'blas': blas_library(),
                      'onnx_models': [{'C': c, 'H': h, 'file': f} for (c, h), f in models.items()],
                      'results': results}))


if __name__ == '__main__':
    main()
