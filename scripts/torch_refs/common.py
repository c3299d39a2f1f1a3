"""What every reference family shares: the trace of named steps (`trace.rec(name, tensor)` after
each line the core records), softmax with fully masked rows at zero (as the core and PyTorch >= 2.5),
a case's inputs (rand, data), and writing a case as the core reads it (tensor_json, dumps, write_case)."""
import base64
import contextlib
import json
import os
import re
import struct

import torch
import torch.nn.functional as F

# where the cases go: tests/fixtures/ (ATTN_FIXTURES_OUT: another folder, to compare a regeneration)
OUT = os.environ.get('ATTN_FIXTURES_OUT') or os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'fixtures')
INLINE_MAX = 4096  # tensors larger than this are stored as base64 float32 (data_b64)


class Trace:
    """Named intermediate tensors, recorded in forward order under scope prefixes, and the hook
    every traced line calls: `x = trace.rec('x', x)` returns x, or x with the scenario's
    interventions on that step applied (SCENARIO.md, "Interventions"), as a forward hook on the
    line would replace it.

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
        self.interventions = []  # the scenario's, in order
        self.offset = 0          # the absolute position of a seq dim's row 0 (generation's cropped window)
        self.length = None       # the whole sequence's length (None: the step's own rows from offset on)

    def rec(self, name, t):
        full = self.prefix + name
        computed = t
        for iv in self.interventions:
            if iv['step'] == full:
                t = intervene(t, computed, iv, step_dims(full, t), self.offset, self.length)
        if self.on:
            self.steps.append((full, t.detach().clone()))
            if self.grads:
                if t.requires_grad:
                    t.retain_grad()
                self.live.append(t)
        return t

    @contextlib.contextmanager
    def scope(self, prefix):
        old = self.prefix
        self.prefix = old + prefix
        try:
            yield
        finally:
            self.prefix = old


def step_dims(name, t):
    """Which dim of a step is the batch, the heads and the positions, by its layout: (B, H, T, .)
    for rank 4 (seed 004's context_vec_heads is (B, T, H, D)), (B, T, .) for rank 3, (T, .) for
    rank 2 (pos_emb, cos, sin), seed 002's pe (1, T, C) -- the named dims the core gives the same steps."""
    if name.endswith('context_vec_heads'):
        return {'batch': 0, 'seq': 1, 'heads': 2}
    if name == 'pe' or name.endswith('.pe'):  # seed 002's table rows, (1, T, C): no batch
        return {'seq': 1}
    return {4: {'batch': 0, 'heads': 1, 'seq': 2}, 3: {'batch': 0, 'seq': 1}, 2: {'seq': 0}}.get(t.dim(), {})


def intervene(t, computed, iv, dims, offset=0, length=None):
    """One intervention {"step", "head"?, "position"?, "batch"?, "set"} on a step's value t (the
    value so far); "mean" and "from_batch" read `computed`, the step's value before any
    intervention. Differentiable: an index assignment into a clone."""
    idx = [slice(None)] * t.dim()
    if 'head' in iv:
        idx[dims['heads']] = iv['head']
    if 'position' in iv:
        total = length if length is not None else offset + t.shape[dims['seq']]
        row = (iv['position'] + total if iv['position'] < 0 else iv['position']) - offset
        if not 0 <= row < t.shape[dims['seq']]:
            return t  # a position this forward does not compute
        idx[dims['seq']] = row
    if 'batch' in iv:
        idx[dims['batch']] = iv['batch']
    idx = tuple(idx)
    out = t.clone()
    how = iv['set']
    if how == 'zero':
        out[idx] = 0.0
    elif how == 'mean':
        over = tuple(dims[k] for k in ('batch', 'seq') if k in dims)
        out[idx] = computed.mean(dim=over, keepdim=True).expand_as(t)[idx]
    elif 'from_batch' in how:
        b = dims['batch']
        out[idx] = computed.narrow(b, how['from_batch'], 1).expand_as(t)[idx]
    elif 'patch_from' in how:  # activation patching (interp.py): another row's value as the forward has it here
        b = dims['batch']
        out[idx] = t.narrow(b, how['patch_from'], 1).expand_as(t)[idx]
    else:
        out[idx] = t[idx] * how['scale']
    return out


trace = Trace()


def softmax_masked_rows_zero(scores, dim=-1):
    """F.softmax, except that a row whose every score is -inf gives zeros instead of NaN.

    The fully masked rows are set to 0 before the softmax and its result to 0 after: the same
    numbers as masking F.softmax's NaN rows (softmax works row by row), and a gradient of 0
    through those rows instead of NaN."""
    full = torch.isneginf(scores).all(dim=dim, keepdim=True)
    w = F.softmax(scores.masked_fill(full, 0.0), dim=dim)
    return w.masked_fill(full, 0.0)



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



def write_case(name, scenario, expected, out=None):
    """Writes <name>.scenario.json and <name>.expected.json; returns the bytes written."""
    total = 0
    for suffix, obj in (('scenario', scenario), ('expected', expected)):
        text = dumps(obj) + '\n'
        with open(os.path.join(out or OUT, f'{name}.{suffix}.json'), 'w') as fh:
            fh.write(text)
        total += len(text)
    return total


# A case's inputs, as a scenario lists them (core/SCENARIO.md)

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
