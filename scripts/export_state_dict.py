#!/usr/bin/python3
"""Save a PyTorch module's state_dict as .safetensors for Attention Playground, with no package
beyond torch (the format is written directly: 8-byte header length, JSON header, raw data).

    from export_state_dict import save_state_dict
    save_state_dict(model, "model.safetensors")                    # float32
    save_state_dict(model, "model-f16.safetensors", torch.float16)  # or torch.bfloat16
    save_state_dict(model, "model.safetensors", vocab=["<pad>", "I", "love", "you"])  # + model.vocab.json

Command line (a module of ../core's list built from a Python file of yours):
    python3 scripts/export_state_dict.py my_model.py MODEL_VARIABLE out.safetensors [f32|f16|bf16]
"""
import json
import runpy
import struct
import sys

import torch

DTYPES = {torch.float32: 'F32', torch.float16: 'F16', torch.bfloat16: 'BF16'}


def safetensors_bytes(tensors, dtype=torch.float32):
    """{name: tensor} -> the bytes of a .safetensors file, every tensor stored as `dtype`."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().to('cpu', dtype).contiguous()
        raw = t.view(torch.int16) if dtype == torch.bfloat16 else t  # numpy has no bfloat16
        blob = raw.numpy().tobytes() if t.numel() else b''
        header[name] = {'dtype': DTYPES[dtype], 'shape': list(t.shape), 'data_offsets': [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    head = json.dumps(header, separators=(',', ':')).encode()
    head += b' ' * (-len(head) % 8)  # the format pads the header to 8 bytes
    return struct.pack('<Q', len(head)) + head + b''.join(blobs)


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
