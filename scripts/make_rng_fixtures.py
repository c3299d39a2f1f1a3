#!/usr/bin/python3
"""PyTorch 1.13's CPU generator streams: tests/fixtures/rng.json, for tests/native/test_random.cpp.

Each stream is torch.manual_seed(seed) followed by a sequence of draws (the ops the core's
Generator mirrors: torch.rand, torch.randn on both of ATen's paths (< 16 elements: serial with the
cached Box-Muller sample; >= 16: normal_fill, 16 at a time with a recomputed tail), uniform_,
bernoulli_, nn.Linear and nn.Embedding initialisation), in order, so that both the values and the
generator state each op leaves behind are checked.

Also tests/fixtures/rng_sampling.json: Tensor.exponential_(lambd) and torch.multinomial(probs, 1)
(replacement=False, its default), the draws of nanoGPT's generate(). PyTorch 1.13's CPU kernels
(aten/src/ATen/native/Distributions.cpp, multinomial_out): without replacement multinomial is
q = torch.empty_like(probs).exponential_(1); argmax(probs / q, dim=-1); and exponential_ (no MKL in
Debian's build) is -1/lambd * log(1 - u) of one 53-bit uniform double per element, cast to float.
Both are checked here before they are written: the exponential draws against that formula on the
same mt19937 words (bit for bit) and multinomial against argmax(probs / q) from the same state.
"""
import json
import math
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


def sampling_op(kind, **args):
    if kind == 'exponential_':
        t = torch.empty(args['n']).exponential_(args['lambd'])
        return dict(op=kind, **args, values=t.tolist())
    if kind == 'multinomial':
        probs = torch.tensor(args['probs'], dtype=torch.float32)
        state = torch.get_rng_state()
        q = torch.empty_like(probs).exponential_(1)
        expect = torch.argmax(probs / q, dim=-1, keepdim=probs.dim() == 2)
        torch.set_rng_state(state)
        ids = torch.multinomial(probs, 1)
        assert torch.equal(ids.view(-1), expect.view(-1)), 'multinomial(probs, 1) is argmax(probs / exponential_(1))'
        return dict(op=kind, **args, values=ids.view(-1).tolist())
    return op(kind, **args)


def softmax_rows(rows, n, scale, seed):
    g = torch.Generator().manual_seed(seed)  # its own generator: the streams' state is untouched
    return torch.softmax(torch.randn(rows, n, generator=g) * scale, -1).squeeze(0).tolist()


SAMPLING = [
    (0, [('exponential_', dict(n=5, lambd=1.0)), ('exponential_', dict(n=33, lambd=2.5)), ('rand', dict(n=3))]),
    (42, [('multinomial', dict(probs=softmax_rows(1, 11, 1.0, 1))), ('multinomial', dict(probs=softmax_rows(1, 11, 1.0, 1))),
          ('multinomial', dict(probs=softmax_rows(1, 65, 3.0, 2))), ('randn', dict(n=2))]),
    (7, [('multinomial', dict(probs=softmax_rows(3, 17, 2.0, 3))), ('exponential_', dict(n=4, lambd=1.0)),
         ('multinomial', dict(probs=[[0.0, 0.5, 0.0, 0.5], [1.0, 0.0, 0.0, 0.0]]))]),
    (2**33 + 5, [('multinomial', dict(probs=[0.1, 0.2, 0.3, 0.4])) for _ in range(20)]),
]


def check_exponential():
    """exponential_ is (float)(-1/lambd * log(1 - u)), u the 53-bit double of two mt19937 words: the
    same numbers from a Python mt19937 (numpy's, seeded as torch.manual_seed seeds it)."""
    import numpy as np
    for seed in (0, 7, 123):
        mt = np.random.RandomState()
        mt.seed(seed)  # numpy's MT19937 init_genrand(seed), as std::mt19937(seed) and at::mt19937
        words = mt.randint(0, 2**32, size=2000, dtype=np.uint64)
        u = ((words[0::2] << np.uint64(32) | words[1::2]) & np.uint64(2**53 - 1)).astype(np.float64) / 2.0**53
        torch.manual_seed(seed)
        got = torch.empty(1000, dtype=torch.float64).exponential_(1).numpy()
        want = [-1.0 / 1.0 * math.log(1.0 - x) for x in u.tolist()]  # C's log (numpy's own may differ in the last bit)
        assert got.tolist() == want, 'exponential_ is -1/lambd * log(1 - u)'


def main():
    check_exponential()
    sampling = []
    for seed, ops in SAMPLING:
        torch.manual_seed(seed)
        sampling.append({'seed': seed, 'ops': [sampling_op(kind, **args) for kind, args in ops]})
    path = os.path.join(os.path.dirname(OUT), 'rng_sampling.json')
    with open(path, 'w') as fh:
        json.dump({'torch': torch.__version__, 'streams': sampling}, fh, separators=(',', ':'))
        fh.write('\n')
    print(f'{len(sampling)} streams -> {os.path.relpath(path)}')
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
