"""A .safetensors file's bytes from tensors, and its tensors from bytes, with no package beyond
torch: an 8-byte header length, the JSON header, the raw data. scripts/export_state_dict.py writes
weights files with it; show() hands the module's parameters to the page with it, in memory; the
fixture scripts and the pretrained bench read files with safetensors_tensors()."""
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


def safetensors_tensors(buf):
    """{name: tensor} of a .safetensors file's bytes, each a view on `buf` as stored (F32, F16 or
    BF16; no copy): `buf` a writable bytes-like object (a bytearray, an mmap)."""
    n = struct.unpack('<Q', buf[:8])[0]
    header = json.loads(bytes(buf[8:8 + n]))
    by_name = {v: k for k, v in DTYPES.items()}
    out = {}
    for name, e in header.items():
        if name == '__metadata__':
            continue
        begin, end = e['data_offsets']
        dtype = by_name[e['dtype']]
        size = torch.tensor([], dtype=dtype).element_size()
        out[name] = (torch.frombuffer(buf, dtype=dtype, offset=8 + n + begin, count=(end - begin) // size).view(e['shape'])
                     if end > begin else torch.empty(e['shape'], dtype=dtype))
    return out

