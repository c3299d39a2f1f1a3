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
