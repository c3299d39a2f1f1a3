#!/usr/bin/python3
"""PyTorch 1.13's CPU generator streams: tests/fixtures/rng.json, for tests/native/test_random.cpp.

Each stream is torch.manual_seed(seed) followed by a sequence of draws (the ops the core's
Generator mirrors: torch.rand, torch.randn on both of ATen's paths (< 16 elements: serial with the
cached Box-Muller sample; >= 16: normal_fill, 16 at a time with a recomputed tail), uniform_,
bernoulli_, nn.Linear and nn.Embedding initialisation), in order, so that both the values and the
generator state each op leaves behind are checked.
"""
import json
import os

import torch
import torch.nn as nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures', 'rng.json')


def op(kind, **args):
    if kind == 'rand':
        t = torch.rand(args['n'])
    elif kind == 'randn':
        t = torch.randn(args['n'])
    elif kind == 'uniform_':
        t = torch.empty(args['n']).uniform_(args['from'], args['to'])
    elif kind == 'normal_':
        t = torch.empty(args['n']).normal_(args['mean'], args['std'])
    elif kind == 'bernoulli_':
        t = torch.empty(args['n']).bernoulli_(args['p'])
    elif kind == 'linear':
        lin = nn.Linear(args['in'], args['out'], bias=args['bias'])
        t = torch.cat([lin.weight.detach().flatten()] + ([lin.bias.detach()] if args['bias'] else []))
    elif kind == 'embedding':
        t = nn.Embedding(args['num'], args['dim']).weight.detach().flatten()
    else:
        raise ValueError(kind)
    return dict(op=kind, **args, values=t.tolist())


STREAMS = [
    (0, [('rand', dict(n=5)), ('rand', dict(n=20)), ('rand', dict(n=3))]),
    (123, [('rand', dict(n=6)), ('rand', dict(n=6)), ('rand', dict(n=6))]),   # SelfAttention_v1(3, 2)
    (42, [('randn', dict(n=1)), ('randn', dict(n=7)), ('randn', dict(n=2))]),  # serial path, cached sample
    (42, [('randn', dict(n=16)), ('randn', dict(n=33)), ('randn', dict(n=100))]),  # normal_fill, tails
    (7, [('randn', dict(n=3)), ('rand', dict(n=2)), ('randn', dict(n=17)), ('randn', dict(n=5))]),
    (2**40 + 7, [('rand', dict(n=4)), ('randn', dict(n=4))]),               # seeds above 2^32
    (9, [('uniform_', {'n': 10, 'from': -2.0, 'to': 3.0}), ('normal_', dict(n=9, mean=1.5, std=0.25)),
         ('normal_', dict(n=20, mean=-1.0, std=2.0))]),
    (5, [('bernoulli_', dict(n=37, p=0.5)), ('bernoulli_', dict(n=10, p=0.9)), ('rand', dict(n=3))]),
    (123, [('linear', {'in': 5, 'out': 3, 'bias': True}), ('linear', {'in': 4, 'out': 2, 'bias': False}),
           ('linear', {'in': 64, 'out': 16, 'bias': True})]),
    (0, [('embedding', dict(num=6, dim=2)), ('embedding', dict(num=5, dim=5)), ('randn', dict(n=3))]),
]


def main():
    streams = []
    for seed, ops in STREAMS:
        torch.manual_seed(seed)
        streams.append({'seed': seed, 'ops': [op(kind, **args) for kind, args in ops]})
    with open(OUT, 'w') as fh:
        json.dump({'torch': torch.__version__, 'streams': streams}, fh, separators=(',', ':'))
        fh.write('\n')
    print(f'{len(streams)} streams -> {os.path.relpath(OUT)}')


if __name__ == '__main__':
    main()
