#!/usr/bin/python3
"""Trained-looking weights for tests/fixtures/weights/: a seed-002 EncoderLayer and a seed-004
CausalMultiHeadAttention (classes from make_fixtures.py, as the tutorials write them), their
weights moved away from the initialisation (as training would), saved with export_state_dict.py
in F32, F16 and BF16, each with a scenario (the same module and config, a given input) and
PyTorch's output computed from exactly the weights in that file. Plus damaged files, each of which
the core must refuse with a clear error. Run by `npm run fixtures`.
"""
import json
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402
from export_state_dict import safetensors_bytes, save_state_dict  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures', 'weights')
DT = {'f32': torch.float32, 'f16': torch.float16, 'bf16': torch.bfloat16}

MODELS = {
    'encoder_layer': ('EncoderLayer', {'emb_dim': 16, 'num_heads': 2, 'ffn_dim': 32}, [('x', [2, 5, 16])]),
    'causal_mha': ('CausalMultiHeadAttention',
                   {'d_in': 6, 'd_out': 8, 'context_length': 10, 'dropout': 0.0, 'num_heads': 2, 'qkv_bias': True},
                   [('x', [1, 7, 6])]),
}

# Every other seed module with parameters, saved as a user would (save_state_dict: parameters
# only, F32), so each module's state_dict names are checked against the core's. The Transformer's
# embedding table comes with its vocabulary (module_Transformer.vocab.json): token i is row i.
VOCAB = ['<pad>', 'the', 'cat', 'sat', 'on', 'mat', '.']
EVERY_MODULE = {
    'SelfAttention_v1': ({'d_in': 3, 'd_out': 2}, [('x', [6, 3])]),
    'SelfAttention_v2': ({'d_in': 3, 'd_out': 2, 'qkv_bias': True}, [('x', [6, 3])]),
    'CausalAttention': ({'d_in': 3, 'd_out': 4, 'context_length': 6, 'dropout': 0.0, 'qkv_bias': True}, [('x', [2, 5, 3])]),
    'MultiHeadAttentionWrapper': ({'d_in': 3, 'd_out': 2, 'context_length': 6, 'dropout': 0.0, 'num_heads': 2,
                                   'qkv_bias': True}, [('x', [2, 5, 3])]),
    'MultiHeadAttention': ({'d_model': 8, 'num_heads': 2}, [('Q', [2, 4, 8]), ('K', [2, 4, 8]), ('V', [2, 4, 8])]),
    'SplitHeadsMultiHeadAttention': ({'d_model': 16, 'num_heads': 4, 'dropout': 0.0},
                                     [('query', [2, 4, 16]), ('key', [2, 5, 16]), ('value', [2, 5, 16])]),
    'MultiHeadSelfAttention': ({'dim_in': 8, 'dim_k': 8, 'dim_v': 12, 'num_heads': 4}, [('x', [2, 5, 8])]),
    'FusedMultiHeadSelfAttention': ({'emb_dim': 12, 'num_heads': 3}, [('x', [2, 5, 12])]),
    'DecoderLayer': ({'emb_dim': 8, 'num_heads': 2, 'ffn_dim': 12}, [('x', [1, 4, 8]), ('enc_output', [1, 5, 8])]),
    'Transformer': ({'vocab_size': len(VOCAB), 'emb_dim': 8, 'num_heads': 2, 'ffn_dim': 16, 'num_layers': 1},
                    [('src', [1, 6], 'the cat sat on the mat'), ('tgt', [1, 4], 'the cat sat .')]),
}


def every_module():
    for seed, (module_id, (config, inputs)) in enumerate(EVERY_MODULE.items(), start=60):
        name = f'module_{module_id}'
        model = trained(module_id, config, seed)
        path = os.path.join(OUT, f'{name}.safetensors')
        save_state_dict(model, path, vocab=VOCAB if module_id == 'Transformer' else None)
        params = {k: v for k, v in model.state_dict().items() if k in dict(model.named_parameters())}
        scenario = {'module': module_id, 'config': config, 'seed': 0, 'weights': {'name': f'{name}.safetensors'},
                    'inputs': [{'name': i[0], 'shape': i[1], 'data': [VOCAB.index(t) for t in i[2].split()]}
                               if len(i) == 3 else {'name': i[0], 'shape': i[1], 'init': 'randn'} for i in inputs]}
        # mf.run: seed, construct, load the given parameters, draw the inputs: the core's order.
        given = {k: {'shape': list(v.shape), 'data': v.flatten().tolist()} for k, v in params.items()}
        outputs, _ = mf.run(dict(scenario, params=given))
        expected = {'module': module_id, 'torch': torch.__version__, 'weights_dtype': 'f32',
                    'outputs': [mf.tensor_json(k, v) for k, v in outputs]}
        for suffix, obj in (('scenario', scenario), ('expected', expected)):
            with open(os.path.join(OUT, f'{name}.{suffix}.json'), 'w') as f:
                f.write(mf.dumps(obj) + '\n')
        print(f'{name}: {os.path.getsize(path)} bytes, {len(params)} tensors')


def trained(module_id, config, seed):
    torch.manual_seed(seed)
    m = mf.MODULES[module_id].cls(**config)
    with torch.no_grad():
        for p in m.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return m.eval()


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    for seed, (stem, (module_id, config, inputs)) in enumerate(MODELS.items(), start=40):
        model = trained(module_id, config, seed)
        state = model.state_dict()  # with buffers (the causal mask): the core accepts and skips them
        for tag, dtype in DT.items():
            name = f'{stem}_{tag}'
            blob = safetensors_bytes(state, dtype)
            with open(os.path.join(OUT, f'{name}.safetensors'), 'wb') as f:
                f.write(blob)
            # The scenario as the core (and the page, inputs "random normal", seed 0) runs it:
            # torch.manual_seed(0); construct (seeded draws); load the file's weights, rounded to
            # the dtype as stored; then draw the inputs.
            torch.manual_seed(0)
            rounded = mf.MODULES[module_id].cls(**config).eval()
            rounded.load_state_dict({k: v.to(dtype).float() for k, v in state.items()})
            data = {name: torch.randn(shape) for name, shape in inputs}
            with torch.no_grad():
                ret = rounded(**data)
            outputs = mf.module_outputs(module_id, rounded, ret)
            scenario = {'module': module_id, 'config': config, 'seed': 0,
                        'weights': {'name': f'{name}.safetensors'},
                        'inputs': [{'name': k, 'shape': list(v.shape), 'init': 'randn'} for k, v in data.items()]}
            expected = {'module': module_id, 'torch': torch.__version__, 'weights_dtype': tag,
                        'outputs': [mf.tensor_json(k, v) for k, v in outputs.items()]}
            for suffix, obj in (('scenario', scenario), ('expected', expected)):
                with open(os.path.join(OUT, f'{name}.{suffix}.json'), 'w') as f:
                    f.write(mf.dumps(obj) + '\n')
            print(f'{name}: {len(blob)} bytes')

    every_module()

    # Damaged files, for the causal_mha scenario; each must give the error in bad.json.
    good = open(os.path.join(OUT, 'causal_mha_f32.safetensors'), 'rb').read()
    n = struct.unpack('<Q', good[:8])[0]
    header = json.loads(good[8:8 + n])
    state = trained('CausalMultiHeadAttention', MODELS['causal_mha'][1], 41).state_dict()

    def with_header(h, data=good[8 + n:]):
        head = json.dumps(h).encode()
        return struct.pack('<Q', len(head)) + head + data

    wrong_dtype = dict(header)
    wrong_dtype['W_key.weight'] = dict(header['W_key.weight'], dtype='I32')
    wrong_shape = dict(state)
    wrong_shape['W_query.weight'] = torch.zeros(8, 5)
    missing = {k: v for k, v in state.items() if k != 'out_proj.bias'}
    extra = dict(state)
    extra['W_gate.weight'] = torch.zeros(2, 2)
    bad = {
        'truncated': (good[:-10], 'the file is truncated or damaged'),
        'oversized_header': (struct.pack('<Q', 1 << 40) + good[8:], 'above the 16777216-byte limit'),
        'header_not_json': (struct.pack('<Q', 5) + b'{"a":' + good[13:], 'header is not valid JSON'),
        'wrong_dtype': (with_header(wrong_dtype), "'W_key.weight' has dtype I32: the core reads F32, F16 and BF16"),
        'wrong_shape': (safetensors_bytes(wrong_shape), "'W_query.weight' has shape [8, 5] but CausalMultiHeadAttention"),
        'missing_name': (safetensors_bytes(missing), "parameter 'out_proj.bias' [8] of CausalMultiHeadAttention is missing"),
        'unknown_name': (safetensors_bytes(extra), "'W_gate.weight' is not a parameter of CausalMultiHeadAttention"),
        'too_short': (b'\x01\x02', 'has 2 bytes'),
    }
    for name, (blob, _) in bad.items():
        with open(os.path.join(OUT, f'bad_{name}.safetensors'), 'wb') as f:
            f.write(blob)
    with open(os.path.join(OUT, 'bad.json'), 'w') as f:
        json.dump({'scenario': 'causal_mha_f32.scenario.json',
                   'files': {f'bad_{k}.safetensors': v[1] for k, v in bad.items()}}, f, indent=1)
        f.write('\n')
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f'{len(os.listdir(OUT))} files, {total / 1e3:.0f} KB in {os.path.relpath(OUT)}', file=sys.stderr)


if __name__ == '__main__':
    main()
