#!/usr/bin/python3
"""Save a PyTorch module's state_dict as .safetensors for Attention Playground, with no package
beyond torch (the format is written directly: 8-byte header length, JSON header, raw data, by
../bindings/python/attention_playground/safetensors.py, which the notebook package shares).

    from export_state_dict import save_state_dict
    save_state_dict(model, "model.safetensors")                    # float32
    save_state_dict(model, "model-f16.safetensors", torch.float16)  # or torch.bfloat16
    save_state_dict(model, "model.safetensors", vocab=["<pad>", "I", "love", "you"])  # + model.vocab.json

Command line (a module of ../core's list built from a Python file of yours):
    python3 scripts/export_state_dict.py my_model.py MODEL_VARIABLE out.safetensors [f32|f16|bf16]
"""
import json
import os
import runpy
import sys

import torch

# The writer lives in the notebook package (torch and the standard library only), used from here as it is.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bindings', 'python'))
from attention_playground.safetensors import DTYPES, safetensors_bytes  # noqa: E402


def save_state_dict(model, path, dtype=torch.float32, vocab=None):
    """The module's parameters (buffers such as a causal mask are recomputed by the core)."""
    params = dict(model.named_parameters())
    with open(path, 'wb') as f:
        f.write(safetensors_bytes({k: v for k, v in model.state_dict().items() if k in params}, dtype))
    if vocab is not None:  # the embedding table's tokens, in row order
        with open(path.rsplit('.', 1)[0] + '.vocab.json', 'w') as f:
            json.dump({'tokens': list(vocab)}, f, ensure_ascii=False)


if __name__ == '__main__':
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    model = runpy.run_path(sys.argv[1])[sys.argv[2]]
    dtype = {'f32': torch.float32, 'f16': torch.float16, 'bf16': torch.bfloat16}[sys.argv[4] if len(sys.argv) == 5 else 'f32']
    save_state_dict(model, sys.argv[3], dtype)
    print(f'{sys.argv[3]}: {len(dict(model.named_parameters()))} tensors as {DTYPES[dtype]}')
