#!/usr/bin/python3
"""A nanoGPT checkpoint for Attention Playground: ckpt.pt (+ the dataset's meta.pkl) -> the core's
GPT weights (.safetensors, F16 by default: half the download) and vocabulary (.vocab.json).

    python3 scripts/export_nanogpt.py out-shakespeare-char/ckpt.pt data/shakespeare_char/meta.pkl shakespeare
      -> shakespeare.safetensors, shakespeare.vocab.json, shakespeare.scenario.json

ckpt.pt is what nanoGPT's train.py saves: {'model': raw_model.state_dict(), 'model_args': {n_layer,
n_head, n_embd, block_size, bias, vocab_size, dropout}, 'optimizer': ..., 'iter_num': ..., ...};
a model trained with torch.compile has '_orig_mod.' before every name (sample.py strips it; so does
this). meta.pkl is what a character-level dataset's prepare.py saves: {'vocab_size', 'itos', 'stoi'}.

The .safetensors holds the parameters by nanoGPT's state_dict names (transformer.wte.weight,
transformer.h.0.attn.c_attn.weight, ...), once each: lm_head.weight is the same tensor as
transformer.wte.weight (nanoGPT ties them; this checks it) and the causal-mask buffers attn.bias
are recomputed by the core. Its __metadata__ says {"format": "pt", "module": "GPT", "config":
"<the GPT config as JSON>"}, as the page's own exports do. The .vocab.json is {"tokens": [...]},
token i = row i of wte (web/weights.js reads it): itos in id order. The .scenario.json generates
from the first token of the vocabulary with the checkpoint's config:

    build/native/attention-cli run shakespeare.scenario.json --weights shakespeare.safetensors
"""
import argparse
import json
import pickle
import struct
import sys

import torch

DTYPES = {'f32': (torch.float32, 'F32'), 'f16': (torch.float16, 'F16'), 'bf16': (torch.bfloat16, 'BF16')}
CONFIG_KEYS = ('vocab_size', 'block_size', 'n_layer', 'n_head', 'n_embd', 'dropout', 'bias')


def load_checkpoint(path):
    """(state_dict without the torch.compile prefix, model_args) of a nanoGPT ckpt.pt."""
    ckpt = torch.load(path, map_location='cpu')
    if not isinstance(ckpt, dict) or 'model' not in ckpt or 'model_args' not in ckpt:
        sys.exit(f"{path}: not a nanoGPT checkpoint (a dict with 'model' and 'model_args', as train.py saves)")
    state = dict(ckpt['model'])
    unwanted_prefix = '_orig_mod.'  # as nanoGPT's sample.py strips it
    for k in list(state):
        if k.startswith(unwanted_prefix):
            state[k[len(unwanted_prefix):]] = state.pop(k)
    return state, dict(ckpt['model_args'])


def gpt_config(model_args, state):
    """The core's GPT config: model_args' fields, vocab_size from wte when model_args left it None."""
    config = {k: model_args[k] for k in CONFIG_KEYS if model_args.get(k) is not None}
    config['vocab_size'] = int(state['transformer.wte.weight'].shape[0])
    config.setdefault('dropout', 0.0)
    config.setdefault('bias', True)
    missing = [k for k in CONFIG_KEYS if k not in config]
    if missing:
        sys.exit(f'model_args lacks {", ".join(missing)}')
    return {k: (float(config[k]) if k == 'dropout' else bool(config[k]) if k == 'bias' else int(config[k])) for k in CONFIG_KEYS}


def parameters(state):
    """nanoGPT's named_parameters(): lm_head.weight (tied to wte) and the attn.bias buffers dropped."""
    wte, head = state['transformer.wte.weight'], state.get('lm_head.weight')
    if head is not None and not torch.equal(head, wte):
        sys.exit('lm_head.weight differs from transformer.wte.weight: nanoGPT ties them, the core does too')
    return {k: v for k, v in state.items()
            if k != 'lm_head.weight' and not k.endswith('.attn.bias') and not k.endswith('.attn.masked_bias')}


def safetensors_bytes(tensors, dtype, metadata):
    """{name: tensor} -> a .safetensors file, every tensor stored as dtype, with __metadata__ (strings)."""
    torch_dtype, name = DTYPES[dtype]
    header, blobs, offset = {'__metadata__': metadata}, [], 0
    for key, t in tensors.items():
        t = t.detach().to('cpu', torch_dtype).contiguous()
        blob = (t.view(torch.int16) if torch_dtype == torch.bfloat16 else t).numpy().tobytes()
        header[key] = {'dtype': name, 'shape': list(t.shape), 'data_offsets': [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    head = json.dumps(header, separators=(',', ':')).encode()
    head += b' ' * (-len(head) % 8)
    return struct.pack('<Q', len(head)) + head + b''.join(blobs)


def vocabulary(meta_path, vocab_size):
    """itos in id order; ids the dataset never uses (a vocab_size padded up) get '<unused N>'."""
    with open(meta_path, 'rb') as f:
        meta = pickle.load(f)
    itos = meta['itos']
    tokens = [itos[i] if i in itos else f'<unused {i}>' for i in range(vocab_size)]
    if len(set(tokens)) != len(tokens):
        sys.exit(f'{meta_path}: the vocabulary has a token twice')
    return tokens


def scenario(config, weights_name, max_new_tokens=200):
    return {'module': 'GPT', 'config': config, 'seed': 1337, 'weights': {'name': weights_name},
            'inputs': [{'name': 'idx', 'shape': [1, 1], 'data': [0]}],
            'generate': {'max_new_tokens': max_new_tokens, 'temperature': 0.8, 'top_k': 200}}


def export(ckpt_path, meta_path, out, dtype='f16'):
    """Writes out.safetensors, out.vocab.json and out.scenario.json; returns the config."""
    state, model_args = load_checkpoint(ckpt_path)
    config = gpt_config(model_args, state)
    metadata = {'format': 'pt', 'module': 'GPT', 'config': json.dumps(config)}
    with open(f'{out}.safetensors', 'wb') as f:
        f.write(safetensors_bytes(parameters(state), dtype, metadata))
    if meta_path:
        with open(f'{out}.vocab.json', 'w') as f:
            json.dump({'tokens': vocabulary(meta_path, config['vocab_size'])}, f, ensure_ascii=False)
    with open(f'{out}.scenario.json', 'w') as f:
        json.dump(scenario(config, f'{out.rsplit("/", 1)[-1]}.safetensors'), f)
    return config


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('ckpt')
    p.add_argument('meta', help="the dataset's meta.pkl (stoi/itos), or '' for none")
    p.add_argument('out', help='output prefix: OUT.safetensors, OUT.vocab.json, OUT.scenario.json')
    p.add_argument('--dtype', choices=sorted(DTYPES), default='f16')
    a = p.parse_args()
    config = export(a.ckpt, a.meta, a.out, a.dtype)
    print(f'{a.out}.safetensors ({a.dtype.upper()}): GPT {json.dumps(config)}')


if __name__ == '__main__':
    main()
