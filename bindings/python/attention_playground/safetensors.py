"""A .safetensors file's bytes from tensors, with no package beyond torch: an 8-byte header
length, the JSON header, the raw data. scripts/export_state_dict.py writes weights files with it;
show() hands the module's parameters to the page with it, in memory."""
import json
import struct

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
