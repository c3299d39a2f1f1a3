#!/usr/bin/python3
"""PyTorch reference fixtures for the core: tests/fixtures/<name>.{scenario,expected}.json.

Run with Debian's python3 and python3-torch (1.13): `npm run fixtures` installs both and runs this.
The references live in scripts/torch_refs/, one file per family (seed000.py ... seed004.py for the
five tutorials, causal_transformer.py, nanogpt.py, modern.py, hf.py), each module as its tutorial writes
it with one addition: `trace.rec(name, tensor)` after the lines the core records as steps, under the
same names; each file ends with its cases. A scenario (core/SCENARIO.md) is run exactly as the
core runs it (torch_refs/runner.py):

    torch.manual_seed(seed); module = Module(**config); [load params]; inputs in order; forward

and its outputs (and, for small scenarios, every step) are written as the expected result.

Two documented departures from the tutorials, both also made by the core:
  * seed 002: DecoderLayer.cross_attn(x, enc_output, enc_output) is real cross-attention (q from
    qkv_proj(x), k and v from qkv_proj(enc_output)), and Transformer runs its decoder layers one by
    one with enc_output; the tutorial's code cannot run as written.
  * rows of scores masked entirely with -inf give attention weights of 0 (PyTorch >= 2.5's
    scaled_dot_product_attention and ONNX do) where PyTorch 1.13's softmax gives NaN.

And one change that leaves every number as it was: seed 004 masks its scores in place
(`attn_scores.masked_fill_(...)`); here it is the out-of-place `attn_scores = attn_scores.masked_fill(...)`
so that the steps `attn_scores` and `attn_scores_masked` are distinct tensors, each with its own
gradient in the training fixtures (scripts/make_train_fixtures.py, tests/fixtures/train/), which
import the references and the trace machinery from here.

ATTN_FIXTURES_OUT=<folder> writes the cases there instead (to compare a regeneration with the
committed files byte for byte).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_refs import causal_transformer, hf, interp, modern, nanogpt, seed000, seed001, seed002, seed003, seed004  # noqa: E402
from torch_refs.causal_transformer import CausalTransformer  # noqa: E402,F401  (for the other scripts)
from torch_refs.common import (INLINE_MAX, JOURNEY, OUT, causal4, data, dumps, padding_mask_000, rand,  # noqa: E402,F401
                               softmax_masked_rows_zero, tensor_json, trace, write_case)
from torch_refs.nanogpt import GPT, GPTConfig, GPTModule, generation_log  # noqa: E402,F401
from torch_refs.runner import MODULES, build, module_outputs, run, run_generation  # noqa: E402,F401

def fixtures():
    """Every family's cases, name -> scenario. nanoGPT's generation cases pick their seeds by running
    the generation (run_generation, which knows every family's module: handed over, not imported)."""
    f = {}
    for family in (seed003, seed004, seed000, seed001, seed002, causal_transformer):
        f.update(family.cases())
    f.update(nanogpt.cases(run_generation))
    f.update(modern.cases())
    f.update(interp.cases(run_generation))
    f.update(hf.cases(run_generation))
    return f


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.set_num_threads(1)
    for old in os.listdir(OUT):
        if old.endswith('.scenario.json') or old.endswith('.expected.json'):
            os.remove(os.path.join(OUT, old))
    total = 0
    cases = fixtures()
    for name, sc in cases.items():
        if None in sc['inputs']:  # seed 003's demo passes x_kv as both key and value
            i = sc['inputs'].index(None)
            torch.manual_seed(sc['seed'])
            spec = MODULES[sc['module']]
            spec.cls(**sc['config'])
            drawn = [torch.randn(e['shape']) for e in sc['inputs'][:i] if e is not None and 'init' in e]
            sc['inputs'][i] = data('value', sc['inputs'][i - 1]['shape'], drawn[-1].flatten().tolist())
        outputs, steps = run(sc)
        expected = {'module': sc['module'], 'torch': torch.__version__,
                    'outputs': [tensor_json(n, t) for n, t in outputs]}
        if sc.get('trace'):
            expected['steps'] = [tensor_json(n, t) for n, t in steps]
        if sc.get('return_params'):  # the seeded construction, parameter by parameter
            m, _ = build(sc)
            expected['params'] = [tensor_json(n, p) for n, p in m.named_parameters()]
        if 'generate' in sc:
            expected.update(run_generation(sc))
        expected.update(interp.expected(sc))
        total += write_case(name, sc, expected)
        print(f'{name}: {sc["module"]}, outputs {[list(t.shape) for _, t in outputs]}, {len(steps)} steps')
    print(f'{len(cases)} fixtures, {total / 1e6:.2f} MB in {os.path.relpath(OUT)}', file=sys.stderr)


if __name__ == '__main__':
    main()
