#!/usr/bin/python3
"""PyTorch autograd and torch.optim reference fixtures for the core's training support:
tests/fixtures/train/<name>.{scenario,expected}.json.

Run with Debian's python3 and python3-torch 1.13: `/usr/bin/python3 scripts/make_train_fixtures.py`.
The modules, the trace machinery, the way a scenario builds its module and inputs and the JSON
writing all come from make_fixtures.py (imported, not copied); this file adds the loss, the
backward pass and the optimizer loop. A training scenario is the forward scenario of
core/SCENARIO.md plus these fields:

    "loss": {"fn": "mse" | "cross_entropy" | "sum",
             "output": "output" | "attention_weights",            (default "output")
             "target": {"shape": [...], "init": "rand" | "randn"} or {"shape": [...], "data": [...]},
             "ignore_index": -100},                                (cross_entropy only; default -100)
    "grads": true,
    "optimize": {"optimizer": "SGD" | "Adam" | "AdamW", "lr": 0.01, "momentum": 0.9, "dampening": 0.0,
                 "nesterov": false, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.0,
                 "clip_grad_norm": 1.0, "steps": 20}

meaning the PyTorch program

    torch.manual_seed(seed); module = Module(**config); [load params]; inputs in order
    target = torch.rand(shape) | torch.randn(shape) | data     # drawn after the inputs
    module.train(train)
    out = outputs[loss.output]
    loss = F.mse_loss(out, target)                             # mean
         | F.cross_entropy(out.reshape(-1, V), target.reshape(-1).long(), ignore_index=ignore_index)
         | out.sum()

With "grads": one forward, `loss.backward()`. The expected result is the forward's, plus

    "loss": <float>,
    "grads": [{"name": <state_dict name>, "shape", "data"}, ...    every parameter, named_parameters() order
              {"name": "input:<input name>", "shape", "data"}, ...]  every float input (not masks, not ids),
                                                                     as the module receives it (an
                                                                     "embedding" input: the looked-up rows)
and with "trace" every step also has "grad": dL/dstep, flat, the step's shape. A step not on the
path to the loss (e.g. `values` when the loss is on attention_weights, a buffer such as `pe`) has
no "grad"; a parameter or input not on that path has a gradient of zeros.

With "optimize": `steps` times { opt.zero_grad(); forward; loss; loss.backward();
[torch.nn.utils.clip_grad_norm_(module.parameters(), clip_grad_norm)]; opt.step() }, with the
torch.optim 1.13 class and PyTorch's defaults for every field left out (SGD: momentum 0,
dampening 0, weight_decay 0, nesterov False, lr required; Adam: lr 1e-3, betas (0.9, 0.999),
eps 1e-8, weight_decay 0; AdamW: the same with weight_decay 1e-2; amsgrad False). Dropout keeps
drawing from the global generator, step after step. The expected result has

    "losses": [the loss of each step's forward, before its update]   (length steps),
    "loss": losses[-1],
    "params": [{"name", "shape", "data"}] after the last step        (with "return_params": true),
    "outputs": one more forward after the last step, without grad     (only in eval mode or
                                                                       without active dropout)

Tolerances the core is tested at: gradients (and steps' grads, loss) atol 1e-5 + rtol 1e-4; after
N optimizer steps params atol 1e-4 + rtol 1e-3, losses rtol 1e-4. Every fixture is checked here
against the same program in float64 (from the same float32 draws): a fixture whose float32 numbers
stray from float64 by more than a quarter of these tolerances would test rounding, not the
algorithm, and is refused. This is why the Adam/AdamW runs of modules with a key bias
(EncoderLayer, Transformer: the k-part of qkv_proj.bias) set eps to 1e-4: that bias's gradient is
exactly 0 in exact arithmetic (softmax ignores a shift shared by a whole row), so in float32 it is
rounding noise of ~1e-9, and with eps 1e-8 Adam turns noise into steps of ~lr/10 in random
directions.
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402
from make_fixtures import JOURNEY, build, causal4, data, dumps, module_outputs, padding_mask_000, rand, tensor_json, trace  # noqa: E402

OUT = os.path.join(mf.OUT, 'train')
GRAD_TOL = (1e-5, 1e-4)     # atol, rtol: gradients, steps' grads, loss
PARAM_TOL = (1e-4, 1e-3)    # after N optimizer steps
LOSSES_TOL = (0.0, 1e-4)
MARGIN = 0.25               # float32 vs float64 must stay within this fraction of the tolerance

OPTIMIZERS = {
    'SGD': (torch.optim.SGD, ('lr', 'momentum', 'dampening', 'nesterov', 'weight_decay')),
    'Adam': (torch.optim.Adam, ('lr', 'betas', 'eps', 'weight_decay')),
    'AdamW': (torch.optim.AdamW, ('lr', 'betas', 'eps', 'weight_decay')),
}


# ---------------------------------------------------------------------------------------------
# Running a training scenario

def float_inputs(kwargs):
    """The inputs that get a gradient: float tensors other than masks (token ids are long)."""
    return [n for n, t in kwargs.items() if n != 'mask' and t.is_floating_point()]


def target_tensor(loss):
    """The loss target, drawn from the generator (after the inputs) or given."""
    t = loss.get('target')
    if t is None:
        return None
    if 'init' in t:
        return torch.rand(t['shape']) if t['init'] == 'rand' else torch.randn(t['shape'])
    x = torch.tensor(t['data'], dtype=torch.float64).view(t['shape'])
    return x.long() if loss['fn'] == 'cross_entropy' else x.float()


def prepare(sc, dtype):
    """Module, forward arguments and target as the core builds them; in float64 for the check
    (cast after every draw, so both precisions start from the very same float32 numbers)."""
    m, kwargs = build(sc)
    target = target_tensor(sc['loss'])
    if dtype != torch.float32:
        m.to(dtype)
        kwargs = {n: t.to(dtype) if n in float_inputs(kwargs) else t for n, t in kwargs.items()}
        if target is not None and target.is_floating_point():
            target = target.to(dtype)
    m.train(sc.get('train', False))
    return m, kwargs, target


def loss_of(sc, m, ret, target):
    spec = sc['loss']
    outputs = module_outputs(sc['module'], m, ret)
    out = outputs[spec.get('output', 'output')]
    fn = spec['fn']
    if fn == 'mse':
        assert target.shape == out.shape, (sc['module'], target.shape, out.shape)
        loss = F.mse_loss(out, target)
    elif fn == 'cross_entropy':
        assert target.shape == out.shape[:-1], (sc['module'], target.shape, out.shape)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1).long(),
                               ignore_index=spec.get('ignore_index', -100))
    else:
        assert fn == 'sum' and target is None, fn
        loss = out.sum()
    return outputs, loss


def run_grads(sc, dtype=torch.float32):
    """One forward and backward; returns loss, outputs, grads and steps (name, value, grad)."""
    m, kwargs, target = prepare(sc, dtype)
    for n in float_inputs(kwargs):
        kwargs[n].requires_grad_()
    trace.on, trace.grads, trace.prefix, trace.steps, trace.live = sc.get('trace', False), True, '', [], []
    try:
        ret = m(**kwargs)
    finally:
        trace.on = trace.grads = False
    outputs, loss = loss_of(sc, m, ret, target)
    loss.backward()
    def grad(t):  # not on the path to the loss: a gradient of zeros
        return torch.zeros_like(t) if t.grad is None else t.grad
    grads = [(n, grad(p)) for n, p in m.named_parameters()]
    grads += [(f'input:{n}', grad(kwargs[n])) for n in float_inputs(kwargs)]
    steps = [(name, value, live.grad) for (name, value), live in zip(trace.steps, trace.live)]
    trace.live = []
    return {'loss': loss.item(), 'outputs': [(n, t.detach()) for n, t in outputs.items()], 'grads': grads, 'steps': steps}


def has_active_dropout(m):
    return m.training and any(isinstance(d, nn.Dropout) and d.p > 0 for d in m.modules())


def make_optimizer(spec, params):
    cls, fields = OPTIMIZERS[spec['optimizer']]
    unknown = set(spec) - set(fields) - {'optimizer', 'steps', 'clip_grad_norm'}
    assert not unknown, (spec['optimizer'], unknown)
    kw = {k: (tuple(v) if k == 'betas' else v) for k, v in spec.items() if k in fields}
    return cls(params, **kw)


def run_optimize(sc, dtype=torch.float32):
    """`steps` optimizer steps; returns losses, the final params and outputs, the grad norms."""
    m, kwargs, target = prepare(sc, dtype)
    spec = sc['optimize']
    opt = make_optimizer(spec, m.parameters())
    losses, norms = [], []
    for _ in range(spec['steps']):
        opt.zero_grad()
        _, loss = loss_of(sc, m, m(**kwargs), target)
        loss.backward()
        if spec.get('clip_grad_norm') is not None:
            norms.append(float(torch.nn.utils.clip_grad_norm_(m.parameters(), spec['clip_grad_norm'])))
        opt.step()
        losses.append(loss.item())
    r = {'losses': losses, 'loss': losses[-1], 'norms': norms,
         'params': [(n, p.detach().clone()) for n, p in m.named_parameters()]}
    if not has_active_dropout(m):  # one more forward would draw dropout masks: left out
        with torch.no_grad():
            r['outputs'] = list(module_outputs(sc['module'], m, m(**kwargs)).items())
    return r


def grad_json(entry, g):
    g = g.detach().float().contiguous()
    assert list(g.shape) == entry['shape'], (entry['name'], list(g.shape), entry['shape'])
    if g.numel() > mf.INLINE_MAX:
        entry['grad_b64'] = tensor_json('', g)['data_b64']
    else:
        entry['grad'] = g.flatten().tolist()
    return entry


def expected_json(sc, r):
    e = {'module': sc['module'], 'torch': torch.__version__}
    if 'outputs' in r:
        e['outputs'] = [tensor_json(n, t) for n, t in r['outputs']]
    e['loss'] = r['loss']
    if 'losses' in r:
        e['losses'] = r['losses']
    if 'grads' in r:
        e['grads'] = [tensor_json(n, t) for n, t in r['grads']]
    if 'params' in r and sc.get('return_params'):
        e['params'] = [tensor_json(n, t) for n, t in r['params']]
    if sc.get('trace') and 'steps' in r:
        e['steps'] = [tensor_json(n, v) if g is None else grad_json(tensor_json(n, v), g) for n, v, g in r['steps']]
    return e


# ---------------------------------------------------------------------------------------------
# Checks: finite, not trivially zero, clipping happened, float32 within tolerance of float64

def worst_ratio(a, b, tol):
    """max |a - b| / (atol + rtol |b|): above 1 fails the tolerance (b is the float64 value)."""
    a, b = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    both_inf = torch.isinf(a) & (a == b)
    d = torch.where(both_inf, torch.zeros_like(a), (a - b).abs())
    return float((d / (tol[0] + tol[1] * b.abs().nan_to_num(posinf=0, neginf=0))).max()) if a.numel() else 0.0


def check(name, sc, r):
    """Asserts what a reference must satisfy; returns a line for the summary."""
    def finite(label, t):
        assert torch.isfinite(torch.as_tensor(t)).all(), (name, label)
    if 'grads' in r:
        finite('loss', r['loss'])
        for n, g in r['grads']:
            finite(n, g)
        for n, v, g in r['steps']:
            assert not torch.isnan(v).any(), (name, n)
            if g is not None:
                finite(n + '.grad', g)
        r64 = run_grads(sc, torch.float64)
        ratio = max([worst_ratio(r['loss'], r64['loss'], GRAD_TOL)]
                    + [worst_ratio(g, g64, GRAD_TOL) for (_, g), (_, g64) in zip(r['grads'], r64['grads'])]
                    + [worst_ratio(g, g64, GRAD_TOL) for (_, _, g), (_, _, g64) in zip(r['steps'], r64['steps'])
                       if g is not None])
        pmax = max(float(g.abs().max()) for n, g in r['grads'] if not n.startswith('input:'))
        imax = [float(g.abs().max()) for n, g in r['grads'] if n.startswith('input:')]
        zero = [n for n, g in r['grads'] if not g.any()]
        assert pmax > 1e-4 and all(x > 1e-4 for x in imax), (name, pmax, imax)
        with_grad = sum(g is not None for _, _, g in r['steps'])
        line = (f'max|grad| params {pmax:.3g}, inputs {", ".join(f"{x:.3g}" for x in imax) or "-"}; '
                f'all-zero grads: {", ".join(zero) or "none"}; steps with grad {with_grad}/{len(r["steps"])}')
    else:
        finite('losses', r['losses'])
        for n, p in r['params']:
            finite(n, p)
        clip = sc['optimize'].get('clip_grad_norm')
        if clip is not None:
            clipped = sum(n > clip for n in r['norms'])
            assert clipped > 0, (name, 'clip_grad_norm never clipped', max(r['norms']))
        r64 = run_optimize(sc, torch.float64)
        ratio = max([worst_ratio(r['losses'], r64['losses'], LOSSES_TOL)]
                    + [worst_ratio(p, p64, PARAM_TOL) for (_, p), (_, p64) in zip(r['params'], r64['params'])])
        line = f'loss {r["losses"][0]:.4g} -> {r["loss"]:.4g}'
        if clip is not None:
            line += f'; clipped {clipped}/{len(r["norms"])} steps (norm {min(r["norms"]):.3g}..{max(r["norms"]):.3g} > {clip})'
        if 'outputs' not in r:
            line += '; no final outputs (dropout active)'
    assert ratio < MARGIN, (name, 'float32 strays from float64', ratio)
    return line + f'; float32/float64 {ratio:.2g} of tolerance'


# ---------------------------------------------------------------------------------------------
# The fixtures

def mse(shape, init='randn', output=None):
    loss = {'fn': 'mse', 'target': {'shape': shape, 'init': init}}
    if output is not None:
        loss['output'] = output
    return loss


def grads(sc, loss):
    return {**sc, 'loss': loss, 'grads': True, 'trace': True}


def optimize(sc, loss, **opt):
    return {**sc, 'loss': loss, 'optimize': {**opt, 'steps': 20}, 'return_params': True}


def grad_fixtures_seed004():
    """seed 004, "the journey": SelfAttention_v1/v2, CausalAttention, the wrapper, the causal MHA."""
    f = {}
    f['grad_selfattention_v1_journey_sum'] = grads(
        {'module': 'SelfAttention_v1', 'config': {'d_in': 3, 'd_out': 2}, 'seed': 123,
         'inputs': [data('x', [6, 3], JOURNEY)]}, {'fn': 'sum'})
    f['grad_selfattention_v2_odd'] = grads(
        {'module': 'SelfAttention_v2', 'config': {'d_in': 5, 'd_out': 3}, 'seed': 41,
         'inputs': [rand('x', [5, 5])]}, mse([5, 3], output='output'))
    f['grad_selfattention_v2_bias_attention_weights'] = grads(
        {'module': 'SelfAttention_v2', 'config': {'d_in': 4, 'd_out': 7, 'qkv_bias': True}, 'seed': 42,
         'inputs': [rand('x', [7, 4], 'rand')]}, mse([7, 7], 'rand', output='attention_weights'))
    f['grad_causal_attention_eval'] = grads(
        {'module': 'CausalAttention', 'config': causal4(5, 4, 8, 0.0), 'seed': 43, 'train': False,
         'inputs': [rand('x', [2, 5, 5], 'rand')]}, mse([2, 5, 4], output='output'))
    f['grad_causal_attention_dropout_train'] = grads(
        {'module': 'CausalAttention', 'config': causal4(3, 4, 6, 0.3, qkv_bias=True), 'seed': 44, 'train': True,
         'inputs': [rand('x', [2, 6, 3])]}, mse([2, 6, 4], output='output'))
    f['grad_mha_wrapper_sum'] = grads(
        {'module': 'MultiHeadAttentionWrapper', 'config': causal4(4, 3, 6, 0.0, 2), 'seed': 45,
         'inputs': [rand('x', [2, 5, 4])]}, {'fn': 'sum'})
    f['grad_causal_mha_eval'] = grads(  # dropout 0.1, but eval mode: no dropout
        {'module': 'CausalMultiHeadAttention', 'config': causal4(5, 6, 8, 0.1, 2, True), 'seed': 46, 'train': False,
         'inputs': [rand('x', [2, 7, 5], 'rand')]}, mse([2, 7, 6], output='output'))
    f['grad_causal_mha_dropout_train'] = grads(
        {'module': 'CausalMultiHeadAttention', 'config': causal4(6, 8, 8, 0.25, 4), 'seed': 47, 'train': True,
         'inputs': [rand('x', [2, 6, 6])]}, mse([2, 6, 8], output='output'))
    f['grad_causal_mha_embedding'] = grads(  # input grad: w.r.t. the looked-up rows
        {'module': 'CausalMultiHeadAttention', 'config': causal4(8, 4, 8, 0.0, 2), 'seed': 58,
         'inputs': [{'name': 'x', 'shape': [1, 6, 8], 'embedding': {'num_embeddings': 5, 'ids': [0, 3, 1, 4, 3, 2]}}]},
        mse([1, 6, 4]))
    return f


def grad_fixtures_seed000():
    """seed 000's MultiHeadAttention (mask == 0 -> -inf): no mask, padding, a fully masked row."""
    f = {}
    f['grad_seed000_no_mask'] = grads(
        {'module': 'MultiHeadAttention', 'config': {'d_model': 8, 'num_heads': 2}, 'seed': 48,
         'inputs': [rand('Q', [2, 4, 8]), rand('K', [2, 4, 8]), rand('V', [2, 4, 8])]}, mse([2, 4, 8], output='output'))
    f['grad_seed000_padding_mask'] = grads(
        {'module': 'MultiHeadAttention', 'config': {'d_model': 12, 'num_heads': 3}, 'seed': 49,
         'inputs': [rand('Q', [2, 5, 12]), rand('K', [2, 5, 12]), rand('V', [2, 5, 12]),
                    data('mask', [2, 1, 1, 5], padding_mask_000(2, 5, [5, 3]))]}, mse([2, 5, 12], output='output'))
    keep = [1] * (2 * 4 * 6)
    for s in range(6):
        keep[1 * 24 + 2 * 6 + s] = 0  # batch 1, query 2: every key masked -> weights 0, gradient 0
    for t in range(4):
        keep[t * 6 + 5] = 0           # batch 0: the last key masked for every query
    f['grad_seed000_cross_fully_masked_row'] = grads(
        {'module': 'MultiHeadAttention', 'config': {'d_model': 10, 'num_heads': 2}, 'seed': 50,
         'inputs': [rand('Q', [2, 4, 10]), rand('K', [2, 6, 10]), rand('V', [2, 6, 10]), data('mask', [2, 1, 4, 6], keep)]},
        mse([2, 4, 10], output='output'))
    return f


def grad_fixtures_seed003():
    """seed 003's MultiHeadAttention (_split_heads; True = masked -> -1e9), dropout in train mode."""
    m3 = [0] * 60
    for s in range(6):
        m3[3 * 6 + s] = 1      # batch 0, query 3 fully masked (-1e9: uniform weights, as PyTorch)
    for t in range(5):
        m3[30 + t * 6 + 1] = 1  # batch 1: key 1 masked for every query
        m3[30 + t * 6 + 5] = t % 2
    return {'grad_seed003_mask_dropout_train': grads(
        {'module': 'SplitHeadsMultiHeadAttention', 'config': {'d_model': 8, 'num_heads': 2, 'dropout': 0.3}, 'seed': 51,
         'train': True, 'inputs': [rand('query', [2, 5, 8]), rand('key', [2, 6, 8]), rand('value', [2, 6, 8]),
                                   data('mask', [2, 5, 6], m3)]}, mse([2, 5, 8], output='output'))}


def grad_fixtures_seed001_002():
    """seed 001's MultiHeadSelfAttention; seed 002's fused attention, encoder and decoder layers."""
    f = {}
    f['grad_seed001_mhsa'] = grads(
        {'module': 'MultiHeadSelfAttention', 'config': {'dim_in': 5, 'dim_k': 6, 'dim_v': 9, 'num_heads': 3}, 'seed': 52,
         'inputs': [rand('x', [2, 5, 5])]}, mse([2, 5, 9], output='output'))
    f['grad_seed002_fused_mhsa'] = grads(
        {'module': 'FusedMultiHeadSelfAttention', 'config': {'emb_dim': 9, 'num_heads': 3}, 'seed': 53,
         'inputs': [rand('x', [2, 4, 9])]}, mse([2, 4, 9], output='output'))
    f['grad_encoder_layer'] = grads(
        {'module': 'EncoderLayer', 'config': {'emb_dim': 8, 'num_heads': 2, 'ffn_dim': 12}, 'seed': 54,
         'inputs': [rand('x', [2, 5, 8])]}, mse([2, 5, 8], output='output'))
    f['grad_decoder_layer_cross'] = grads(
        {'module': 'DecoderLayer', 'config': {'emb_dim': 6, 'num_heads': 2, 'ffn_dim': 10}, 'seed': 55,
         'inputs': [rand('x', [2, 4, 6]), rand('enc_output', [2, 5, 6])]}, mse([2, 4, 6], output='output'))
    return f


def grad_fixtures_transformer():
    """seed 002's Transformer: cross-entropy over its vocabulary, target ids given."""
    f = {}
    f['grad_transformer_ce'] = grads(
        {'module': 'Transformer', 'config': {'vocab_size': 7, 'emb_dim': 8, 'num_heads': 2, 'ffn_dim': 12, 'num_layers': 1},
         'seed': 56, 'inputs': [data('src', [2, 5], [1, 2, 3, 4, 5, 6, 0, 6, 5, 4]), data('tgt', [2, 4], [0, 3, 3, 1, 2, 5, 4, 6])]},
        {'fn': 'cross_entropy', 'target': {'shape': [2, 4], 'data': [3, 3, 1, 6, 5, 4, 6, 0]}})
    f['grad_transformer_ce_ignore_index'] = grads(
        {'module': 'Transformer', 'config': {'vocab_size': 11, 'emb_dim': 6, 'num_heads': 3, 'ffn_dim': 7, 'num_layers': 2},
         'seed': 57, 'inputs': [data('src', [1, 6], [10, 0, 5, 7, 2, 9]), data('tgt', [1, 5], [1, 4, 4, 8, 3])]},
        {'fn': 'cross_entropy', 'output': 'output', 'ignore_index': -100,
         'target': {'shape': [1, 5], 'data': [4, -100, 8, 3, -100]}})
    return f


def grad_fixtures_causal_transformer():
    """The page's decoder-only CausalTransformer: next-token cross-entropy, the prompt ignored."""
    f = {}
    f['grad_causal_transformer_ce'] = grads(
        {'module': 'CausalTransformer',
         'config': {'vocab_size': 8, 'emb_dim': 8, 'num_heads': 2, 'ffn_dim': 12, 'num_layers': 2, 'context_length': 8},
         'seed': 58, 'inputs': [data('idx', [2, 6], [1, 2, 3, 7, 1, 2, 4, 4, 6, 7, 4, 4])]},
        {'fn': 'cross_entropy', 'ignore_index': -100,
         'target': {'shape': [2, 6], 'data': [-100, -100, -100, 1, 2, 3, -100, -100, -100, 4, 4, 6]}})
    return f


def grad_fixtures_gpt():
    """nanoGPT's GPT: next-token cross-entropy through the tied wte / lm_head (both of its uses add
    to one gradient), GELU, bias-free LayerNorms and Linears, dropout in train mode."""
    f = {}
    cfg = {'vocab_size': 11, 'block_size': 8, 'n_layer': 2, 'n_head': 2, 'n_embd': 8, 'dropout': 0.0, 'bias': True}
    ids = [1, 5, 2, 7, 3, 9, 4, 10, 0, 6, 8, 2]
    targets = [5, 2, 7, 3, 9, -100, 10, 0, 6, 8, 2, -100]
    ce = {'fn': 'cross_entropy', 'ignore_index': -100, 'target': {'shape': [2, 6], 'data': targets}}
    f['grad_gpt_ce'] = grads({'module': 'GPT', 'config': cfg, 'seed': 70, 'inputs': [data('idx', [2, 6], ids)]}, ce)
    f['grad_gpt_nobias_ce'] = grads(
        {'module': 'GPT', 'config': {**cfg, 'vocab_size': 7, 'n_head': 4, 'bias': False}, 'seed': 71,
         'inputs': [data('idx', [1, 7], [0, 6, 3, 3, 1, 5, 2])]},
        {'fn': 'cross_entropy', 'target': {'shape': [1, 7], 'data': [6, 3, 3, 1, 5, 2, 4]}})
    f['grad_gpt_dropout_train'] = grads(
        {'module': 'GPT', 'config': {**cfg, 'dropout': 0.2}, 'seed': 72, 'train': True, 'inputs': [data('idx', [2, 6], ids)]}, ce)
    f['grad_gpt_sum_attention_weights'] = grads(
        {'module': 'GPT', 'config': {**cfg, 'n_layer': 1}, 'seed': 73, 'inputs': [data('idx', [1, 5], [3, 1, 4, 1, 5])]},
        mse([1, 1, 2, 5, 5], 'rand', output='attention_weights'))
    # Llama-style options: rope (no wpe), grouped kv heads (the k and v columns of c_attn get
    # the sum over the query heads they serve), a window with a sink; dropout in train mode
    llama = {**cfg, 'n_head': 4, 'n_embd': 16, 'rope': True, 'num_kv_heads': 2, 'window': 3, 'sink_tokens': 1}
    f['grad_gpt_rope_gqa_window_ce'] = grads({'module': 'GPT', 'config': llama, 'seed': 75, 'inputs': [data('idx', [2, 6], ids)]}, ce)
    f['grad_gpt_rope_mqa_window_dropout_train'] = grads(
        {'module': 'GPT', 'config': {**llama, 'num_kv_heads': 1, 'dropout': 0.2, 'bias': False}, 'seed': 76, 'train': True,
         'inputs': [data('idx', [2, 6], ids)]}, ce)
    return f


def grad_fixtures_modern():
    """ModernAttention: gradients through RoPE (rotate_half's transpose), the repeated kv heads of
    GQA / MQA (each kv head sums its copies'), ALiBi, the window and its sinks."""
    f = {}
    f['grad_modern_rope_gqa_window_sinks'] = grads(
        {'module': 'ModernAttention', 'seed': 80, 'inputs': [rand('x', [2, 8, 32])],
         'config': {'d_model': 32, 'num_heads': 4, 'num_kv_heads': 2, 'rope': True, 'window': 3, 'sink_tokens': 1, 'bias': True}},
        mse([2, 8, 32]))
    f['grad_modern_alibi_mqa_weights'] = grads(
        {'module': 'ModernAttention', 'seed': 81, 'inputs': [rand('x', [1, 7, 24])],
         'config': {'d_model': 24, 'num_heads': 6, 'num_kv_heads': 1, 'alibi': True}},
        mse([1, 6, 7, 7], 'rand', output='attention_weights'))
    f['grad_modern_positions_offset_sum'] = grads(
        {'module': 'ModernAttention', 'seed': 82, 'inputs': [rand('x', [1, 5, 16]), data('positions', [5], [4, 5, 6, 7, 8])],
         'config': {'d_model': 16, 'num_heads': 2, 'rope': True, 'rope_base': 500.0, 'alibi': True, 'window': 2}},
        {'fn': 'sum'})
    f['grad_modern_noncausal'] = grads(
        {'module': 'ModernAttention', 'seed': 83, 'inputs': [rand('x', [2, 4, 12])],
         'config': {'d_model': 12, 'num_heads': 3, 'causal': False}},
        mse([2, 4, 12]))
    return f


def optimize_fixtures():
    """20 steps of SGD (momentum; nesterov + weight decay), Adam, AdamW; each without and with
    gradient clipping; one run in train mode with dropout (its draws continue step after step)."""
    f = {}
    cmha = {'module': 'CausalMultiHeadAttention', 'config': causal4(6, 8, 8, 0.0, 2), 'seed': 60,
            'inputs': [rand('x', [2, 6, 6], 'rand')]}
    enc = {'module': 'EncoderLayer', 'config': {'emb_dim': 8, 'num_heads': 2, 'ffn_dim': 12}, 'seed': 61,
           'inputs': [rand('x', [2, 5, 8])]}
    tr = {'module': 'Transformer', 'config': {'vocab_size': 9, 'emb_dim': 8, 'num_heads': 2, 'ffn_dim': 12, 'num_layers': 1},
          'seed': 62, 'inputs': [data('src', [2, 5], [1, 2, 3, 4, 5, 8, 7, 6, 5, 0]), data('tgt', [2, 4], [0, 3, 3, 1, 2, 5, 4, 6])]}
    tr_ce = {'fn': 'cross_entropy', 'target': {'shape': [2, 4], 'data': [3, 3, 1, 7, 5, 4, 6, 0]}}
    tr_ignore = {'fn': 'cross_entropy', 'ignore_index': -100, 'target': {'shape': [2, 4], 'data': [3, -100, 1, 7, 5, 4, -100, 0]}}
    cmha_dropout = {'module': 'CausalMultiHeadAttention', 'config': causal4(6, 8, 8, 0.2, 2, True), 'seed': 63, 'train': True,
                    'inputs': [rand('x', [2, 6, 6], 'rand')]}

    f['opt_sgd_momentum_causal_mha'] = optimize(cmha, mse([2, 6, 8]), optimizer='SGD', lr=0.1, momentum=0.9)
    f['opt_sgd_momentum_clip_encoder'] = optimize(enc, mse([2, 5, 8]), optimizer='SGD', lr=0.05, momentum=0.9,
                                                  dampening=0.0, clip_grad_norm=0.5)
    f['opt_sgd_nesterov_transformer'] = optimize(tr, tr_ce, optimizer='SGD', lr=0.03, momentum=0.9, dampening=0.0,
                                                 nesterov=True, weight_decay=0.01)
    f['opt_sgd_nesterov_clip_causal_mha_dropout_train'] = optimize(
        cmha_dropout, mse([2, 6, 8]), optimizer='SGD', lr=0.1, momentum=0.9, dampening=0.0, nesterov=True,
        weight_decay=0.01, clip_grad_norm=0.2)
    f['opt_adam_causal_mha'] = optimize(cmha, mse([2, 6, 8]), optimizer='Adam', lr=0.01)
    f['opt_adam_clip_transformer'] = optimize(tr, tr_ce, optimizer='Adam', lr=0.01, betas=[0.8, 0.99], eps=1e-4,
                                              clip_grad_norm=0.5)
    f['opt_adamw_encoder'] = optimize(enc, mse([2, 5, 8]), optimizer='AdamW', lr=0.01, eps=1e-4)
    f['opt_adamw_clip_transformer_ignore_index'] = optimize(tr, tr_ignore, optimizer='AdamW', lr=0.01, eps=1e-4,
                                                            weight_decay=0.1, clip_grad_norm=0.5)
    f['opt_adamw_clip_causal_mha_defaults'] = optimize(cmha, mse([2, 6, 8]), optimizer='AdamW', clip_grad_norm=0.05)
    ct = {'module': 'CausalTransformer',
          'config': {'vocab_size': 8, 'emb_dim': 8, 'num_heads': 2, 'ffn_dim': 12, 'num_layers': 2, 'context_length': 8},
          'seed': 64, 'inputs': [data('idx', [2, 6], [1, 2, 3, 7, 1, 2, 4, 4, 6, 7, 4, 4])]}
    ct_ce = {'fn': 'cross_entropy', 'target': {'shape': [2, 6], 'data': [-100, -100, -100, 1, 2, 3, -100, -100, -100, 4, 4, 6]}}
    f['opt_adamw_causal_transformer'] = optimize(ct, ct_ce, optimizer='AdamW', lr=0.01, eps=1e-4, clip_grad_norm=1.0)
    f.update(optimize_fixtures_gpt())
    return f


def optimize_fixtures_gpt():
    """nanoGPT's GPT trained as its train.py trains it (AdamW, betas (0.9, 0.95), grad_clip 1.0),
    20 steps of next-token cross-entropy on one batch."""
    gpt = {'module': 'GPT', 'config': {'vocab_size': 11, 'block_size': 8, 'n_layer': 2, 'n_head': 2, 'n_embd': 8},
           'seed': 74, 'inputs': [data('idx', [2, 7], [1, 5, 2, 7, 3, 9, 4, 10, 0, 6, 8, 2, 2, 1])]}
    ce = {'fn': 'cross_entropy', 'target': {'shape': [2, 7], 'data': [5, 2, 7, 3, 9, 4, 10, 0, 6, 8, 2, 2, 1, 3]}}
    llama = {**gpt, 'config': {**gpt['config'], 'n_head': 4, 'n_embd': 16, 'rope': True, 'num_kv_heads': 2, 'window': 4},
             'seed': 77}
    return {'opt_adamw_gpt': optimize(gpt, ce, optimizer='AdamW', lr=0.01, betas=[0.9, 0.95], eps=1e-4, weight_decay=0.1,
                                      clip_grad_norm=1.0),
            'opt_adamw_gpt_rope_gqa_window': optimize(llama, ce, optimizer='AdamW', lr=0.01, betas=[0.9, 0.95], eps=1e-4,
                                                      weight_decay=0.1, clip_grad_norm=1.0)}


def fixtures():
    f = {}
    for family in (grad_fixtures_seed004, grad_fixtures_seed000, grad_fixtures_seed003, grad_fixtures_seed001_002,
                   grad_fixtures_transformer, grad_fixtures_causal_transformer, optimize_fixtures, grad_fixtures_gpt,
                   grad_fixtures_modern):
        f.update(family())
    return f


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.set_num_threads(1)
    for old in os.listdir(OUT):
        if old.endswith('.scenario.json') or old.endswith('.expected.json'):
            os.remove(os.path.join(OUT, old))
    total, summary = 0, []
    for name, sc in fixtures().items():
        r = run_optimize(sc) if 'optimize' in sc else run_grads(sc)
        line = check(name, sc, r)
        for suffix, obj in (('scenario', sc), ('expected', expected_json(sc, r))):
            text = dumps(obj) + '\n'
            assert 'NaN' not in text, (name, suffix)  # -Infinity only in masked scores' data
            with open(os.path.join(OUT, f'{name}.{suffix}.json'), 'w') as fh:
                fh.write(text)
            total += len(text)
        print(f'{name}: {line}')
        o = sc.get('optimize')
        summary.append((name, sc['module'], sc['loss']['fn'] + (f'({sc["loss"]["output"]})' if sc['loss'].get('output', 'output') != 'output' else ''),
                        'grads' if o is None else o['optimizer'] + (f', clip {o["clip_grad_norm"]}' if 'clip_grad_norm' in o else '')))
    print('\nfixtures (name, module, loss, optimizer):')
    w = [max(len(s[i]) for s in summary) for i in range(3)]
    for s in summary:
        print(f'  {s[0]:<{w[0]}}  {s[1]:<{w[1]}}  {s[2]:<{w[2]}}  {s[3]}')
    print(f'{len(summary)} fixtures, {total / 1e6:.2f} MB in {os.path.relpath(OUT)}', file=sys.stderr)


if __name__ == '__main__':
    main()
