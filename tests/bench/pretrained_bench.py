#!/usr/bin/python3
"""PyTorch side of `npm run bench -- --pretrained` (tests/bench/pretrained.mjs runs it): GPT-2
small's shape (12 layers, 12 heads, 768 wide, 50,257 tokens, 1,024 positions: 124,439,808
parameters) with one set of random weights, as Hugging Face's GPT2LMHeadModel computes it
(scripts/torch_refs/hf.py) with its KV cache (use_cache=True: past keys and values in, present out).

    /usr/bin/python3 tests/bench/pretrained_bench.py --write DIR
        the folder as the Hub lays it out (config.json, model.safetensors: float32, Conv1D's
        [in, out] weights, no `transformer.` prefix, lm_head tied so not saved), written by
        torch.manual_seed(0) + GPT2LMHeadModel(config) with the embeddings drawn at GPT-2's std
        0.02; the two graphs onnxruntime runs, exported by torch.onnx.export from the same module:
        prefill.onnx (input_ids [1, 128] -> logits of the last position [1, 50257], present.{i}.key /
        .value [1, 12, 128, 64]) and decode.onnx (input_ids [1, 1], past_key_values.{i}.key /
        .value [1, 12, 128, 64] -> logits, present of 129); and the references every engine checks:
        ids.json (the 128 prompt ids, the prefill's greedy id, the decode step's greedy id),
        prefill_logits.f32, decode_logits.f32 (raw float32) and past.f32 (the prefill's cache, the
        decode graph's input: layer by layer, key then value).
    /usr/bin/python3 tests/bench/pretrained_bench.py --time DIR [--warmup 2] [--warmup-ms 0]
        [--runs 7] [--min-run-ms 100] [--long-call-ms 5000]
        in a fresh process: the folder read into a new module (the load, timed once), then the
        prefill (128 tokens into an empty cache, the last position's logits: what generation needs)
        and one decode step at position 128 on the prefill's cache, by the bench protocol
        (torch_bench.py's timed()), under torch.no_grad(), OpenBLAS, one thread (BENCH_THREADS=N: N); both checked
        against the references; the process's peak resident memory (ru_maxrss). Prints one JSON object.
"""
import argparse
import contextlib
import json
import mmap
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_bench import THREADS, blas_library, timed  # noqa: E402  (sets the BLAS threads before torch loads)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'bindings', 'python'))
from attention_playground.safetensors import safetensors_bytes, safetensors_tensors  # noqa: E402
from torch_refs.hf import GPT2LMHeadModel  # noqa: E402

CONFIG = {'model_type': 'gpt2', 'architectures': ['GPT2LMHeadModel'], 'activation_function': 'gelu_new', 'layer_norm_epsilon': 1e-5,
          'n_layer': 12, 'n_head': 12, 'n_embd': 768, 'n_positions': 1024, 'vocab_size': 50257}
PROMPT = 128
PROMPT_IDS = [(i * 7919 + 13) % CONFIG['vocab_size'] for i in range(PROMPT)]


class Cached(nn.Module):
    """GPT2LMHeadModel's forward as generate() runs it with use_cache=True (modeling_gpt2.py:
    GPT2Attention concatenates layer_past's key and value before its own): input_ids and the past
    keys and values (k0, v0, k1, v1, ...) in, the last position's logits and the present ones out."""

    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, input_ids, *past):
        tr = self.m.transformer
        P, T = (past[0].size(-2) if past else 0), input_ids.size(-1)
        h = tr.wte(input_ids) + tr.wpe(torch.arange(P, P + T, dtype=torch.long).unsqueeze(0))
        presents = []
        for i, block in enumerate(tr.h):
            a = block.attn
            q, k, v = a.c_attn(block.ln_1(h)).split(a.split_size, dim=2)
            q, k, v = (a._split_heads(t, a.num_heads, a.head_dim) for t in (q, k, v))
            if past:
                k, v = torch.cat((past[2 * i], k), dim=-2), torch.cat((past[2 * i + 1], v), dim=-2)
            presents += [k, v]
            y, _ = a._attn(q, k, v)
            h = h + a.c_proj(y.permute(0, 2, 1, 3).reshape(1, T, a.embed_dim))
            h = h + block.mlp(block.ln_2(h))
        logits = F.linear(tr.ln_f(h[:, -1, :]), tr.wte.weight)  # lm_head, tied; the last position only
        return (logits, *presents)


def write(folder):
    torch.manual_seed(0)
    model = GPT2LMHeadModel(CONFIG).eval()
    with torch.no_grad():
        model.transformer.wte.weight.normal_(std=0.02)
        model.transformer.wpe.weight.normal_(std=0.01)
    os.makedirs(folder, exist_ok=True)
    state = {k: v for k, v in model.transformer.state_dict().items() if not k.endswith(('.attn.bias', '.attn.masked_bias'))}
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        json.dump(CONFIG, f)
    with open(os.path.join(folder, 'model.safetensors'), 'wb') as f:
        f.write(safetensors_bytes(state))
    del state
    cached = Cached(model).eval()
    ids = torch.tensor([PROMPT_IDS], dtype=torch.long)
    with torch.no_grad():
        full = model(ids)[0][0, -1]
        logits, *past = cached(ids)
        next_id = int(torch.argmax(logits))
        step, *_ = cached(torch.tensor([[next_id]]), *past)
        full_step = model(torch.cat((ids, torch.tensor([[next_id]])), dim=1))[0][0, -1]
    for got, want, what in ((logits[0], full, 'prefill'), (step[0], full_step, 'decode')):
        d = float((got - want).abs().max())
        assert d <= 1e-4, f'the cached {what} differs from GPT2LMHeadModel\'s forward by {d}'
    names = [f'present.{i}.{kv}' for i in range(CONFIG['n_layer']) for kv in ('key', 'value')]
    past_names = [n.replace('present', 'past_key_values') for n in names]
    opts = {'opset_version': 14, 'do_constant_folding': False}
    torch.onnx.export(cached, (ids,), os.path.join(folder, 'prefill.onnx'), input_names=['input_ids'], output_names=['logits', *names], **opts)
    torch.onnx.export(cached, (torch.tensor([[next_id]]), *past), os.path.join(folder, 'decode.onnx'),
                      input_names=['input_ids', *past_names], output_names=['logits', *names], **opts)
    logits[0].numpy().tofile(os.path.join(folder, 'prefill_logits.f32'))
    step[0].numpy().tofile(os.path.join(folder, 'decode_logits.f32'))
    torch.cat([p.flatten() for p in past]).numpy().tofile(os.path.join(folder, 'past.f32'))
    with open(os.path.join(folder, 'ids.json'), 'w') as f:
        json.dump({'ids': PROMPT_IDS, 'next_id': next_id, 'step_id': int(torch.argmax(step)),
                   'parameters': sum(p.numel() for p in model.parameters())}, f)
    print(json.dumps({'folder': folder, 'parameters': sum(p.numel() for p in model.parameters()),
                      'bytes': {f: os.path.getsize(os.path.join(folder, f)) for f in sorted(os.listdir(folder))}}))


@contextlib.contextmanager
def no_init_weights():
    """transformers' no_init_weights(): from_pretrained builds the module without drawing the
    values its checkpoint replaces (torch.nn.init's fills do nothing meanwhile)."""
    names = ['normal_', 'uniform_', 'kaiming_uniform_', 'ones_', 'zeros_', 'constant_']
    saved = {n: getattr(torch.nn.init, n) for n in names}
    for n in names:
        setattr(torch.nn.init, n, lambda t, *a, **k: t)
    try:
        yield
    finally:
        for n, f in saved.items():
            setattr(torch.nn.init, n, f)


def load(folder):
    """The folder into a new GPT2LMHeadModel as from_pretrained reads a float32 safetensors file:
    the module built without init draws, the file mapped (safetensors' safe_open maps it), each
    tensor copied from the mapping into its parameter."""
    with open(os.path.join(folder, 'config.json')) as f:
        config = json.load(f)
    with no_init_weights():
        model = GPT2LMHeadModel(config).eval()
    with open(os.path.join(folder, 'model.safetensors'), 'rb') as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    state = safetensors_tensors(data)
    missing, unexpected = model.transformer.load_state_dict(state, strict=False)
    assert not unexpected and all(k.endswith(('.attn.bias', '.attn.masked_bias')) for k in missing), (missing, unexpected)
    del state
    data.close()
    return Cached(model).eval()


def read_f32(path):
    return torch.frombuffer(bytearray(open(path, 'rb').read()), dtype=torch.float32)


def time_folder(folder, proto):
    torch.set_num_threads(THREADS)
    t0 = time.perf_counter()
    cached = load(folder)
    load_ms = (time.perf_counter() - t0) * 1e3
    with open(os.path.join(folder, 'ids.json')) as f:
        ref = json.load(f)
    ids = torch.tensor([ref['ids']], dtype=torch.long)
    runs = []
    with torch.no_grad():
        logits, *past = cached(ids)
        new = torch.tensor([[ref['next_id']]])
        step, *_ = cached(new, *past)
        checks = {'prefill': (logits[0], read_f32(os.path.join(folder, 'prefill_logits.f32')), int(torch.argmax(logits)), ref['next_id']),
                  'decode': (step[0], read_f32(os.path.join(folder, 'decode_logits.f32')), int(torch.argmax(step)), ref['step_id'])}
        for case, fn in (('prefill', lambda: cached(ids)), ('decode', lambda: cached(new, *past))):
            got, want, gid, wid = checks[case]
            runs.append({'case': case, 'id': gid, 'id_ref': wid, 'max_abs_diff_vs_ref': float((got - want).abs().max()), **timed(fn, *proto)})
    return {'torch': torch.__version__, 'threads': torch.get_num_threads(), 'blas': blas_library(), 'load_ms': load_ms,
            'omp_wait_policy': os.environ.get('OMP_WAIT_POLICY'),
            'peak_rss_bytes': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, 'results': runs}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--write')
    ap.add_argument('--time')
    ap.add_argument('--warmup', type=int, default=2)
    ap.add_argument('--warmup-ms', type=float, default=0)
    ap.add_argument('--runs', type=int, default=7)
    ap.add_argument('--min-run-ms', type=float, default=100)
    ap.add_argument('--long-call-ms', type=float, default=5000)
    a = ap.parse_args()
    if a.write:
        write(a.write)
    if a.time:
        print(json.dumps(time_folder(a.time, (a.warmup, a.warmup_ms, a.runs, a.min_run_ms, a.long_call_ms))))


if __name__ == '__main__':
    main()
