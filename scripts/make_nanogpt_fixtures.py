#!/usr/bin/python3
"""tests/fixtures/nanogpt/: a nanoGPT checkpoint through scripts/export_nanogpt.py, and what PyTorch
computes from the exported weights.

No download is possible here, so the checkpoint is made the way nanoGPT makes one: a
character-level dataset prepared as data/shakespeare_char/prepare.py prepares it (meta.pkl with
vocab_size, itos, stoi), nanoGPT's GPT (make_fixtures.py holds its model.py) trained a few AdamW
steps on it as train.py trains (betas (0.9, 0.95), grad_clip 1.0), and ckpt.pt saved as train.py
saves it ({'model', 'optimizer', 'model_args', 'iter_num', 'best_val_loss', 'config'}); a second
one as torch.compile leaves it ('_orig_mod.' before every name). Both are exported:

    nanogpt_char.safetensors          F16 (the default), + nanogpt_char.vocab.json
    nanogpt_char_compiled_f32.safetensors   F32, from the '_orig_mod.' checkpoint

and for each, PyTorch runs the scenario from the very weights in the file (F16-rounded for the
first): seed, GPT(config) (its draws), load_state_dict, model.eval(), the prompt's forward
(outputs) and generate() (ids and per-token probabilities, as make_fixtures.py's generation
fixtures). Run with Debian's python3 + python3-torch 1.13.

    make_nanogpt_fixtures.py --shakespeare-size DIR
writes instead DIR/ckpt.pt + DIR/meta.pkl for nanoGPT's Shakespeare-char config (n_layer 6, n_head
6, n_embd 384, block_size 256, the dataset's 65 characters; ~10.7M parameters, as initialised),
exported F16 to DIR/shakespeare.safetensors: what scripts/measure-generate.mjs times.
"""
import json
import os
import pickle
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bindings', 'python'))
from attention_playground.safetensors import safetensors_tensors  # noqa: E402
import export_nanogpt  # noqa: E402
import make_fixtures as mf  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures', 'nanogpt')
TEXT = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n"
        "First Citizen:\nYou are all resolved rather to die than to famish?\n\nAll:\nResolved. resolved.\n")
MODEL_ARGS = dict(n_layer=2, n_head=4, n_embd=32, block_size=32, bias=True, vocab_size=None, dropout=0.0)


def prepare(meta_path):
    """data/shakespeare_char/prepare.py's vocabulary: every character of the text, sorted."""
    chars = sorted(list(set(TEXT)))
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    with open(meta_path, 'wb') as f:
        pickle.dump({'vocab_size': len(chars), 'itos': itos, 'stoi': stoi}, f)
    return stoi


def train(stoi, steps=40):
    """A few of train.py's iterations on batches of the text."""
    torch.manual_seed(1337)
    args = dict(MODEL_ARGS, vocab_size=len(stoi))
    model = mf.GPTModule(**{k: args[k] for k in ('vocab_size', 'block_size', 'n_layer', 'n_head', 'n_embd', 'dropout', 'bias')})
    data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.95), weight_decay=0.1)
    B, T = 4, args['block_size']
    for _ in range(steps):
        ix = torch.randint(len(data) - T, (B,))
        x = torch.stack([data[i:i + T] for i in ix])
        y = torch.stack([data[i + 1:i + 1 + T] for i in ix])
        logits, _ = mf.GPT.forward(model, x, y)
        loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1), ignore_index=-1)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    return model, optimizer, args, float(loss)


def save_checkpoint(path, model, optimizer, args, loss, compiled=False):
    """train.py's torch.save(checkpoint, os.path.join(out_dir, 'ckpt.pt'))."""
    state = model.state_dict()
    if compiled:  # torch.compile(model) wraps it: its state_dict names carry '_orig_mod.'
        state = {'_orig_mod.' + k: v for k, v in state.items()}
    checkpoint = {'model': state, 'optimizer': optimizer.state_dict(), 'model_args': args, 'iter_num': 40,
                  'best_val_loss': loss, 'config': {'dataset': 'shakespeare_char', 'batch_size': 4, 'compile': compiled}}
    torch.save(checkpoint, path)


def read_safetensors(path):
    """{name: float32 tensor} of a .safetensors file (export_nanogpt's F16/F32)."""
    with open(path, 'rb') as f:
        return {k: v.float() for k, v in safetensors_tensors(bytearray(f.read())).items()}


def reference(scenario, weights):
    """PyTorch from the file's weights, as the core runs the scenario: outputs, ids, generated."""
    state = dict(weights, **{'lm_head.weight': weights['transformer.wte.weight']})
    expected = {'module': 'GPT', 'torch': torch.__version__}
    for part in ('forward', 'generate'):
        torch.manual_seed(scenario['seed'])
        model = mf.GPTModule(**scenario['config'])
        missing, unexpected = model.load_state_dict(state, strict=False)
        assert not unexpected and all(k.endswith('.attn.bias') for k in missing), (missing, unexpected)
        model.eval()
        idx = torch.tensor(scenario['inputs'][0]['data'], dtype=torch.long).view(scenario['inputs'][0]['shape'])
        if part == 'forward':
            with torch.no_grad():
                logits, att = model(idx[:, -model.config.block_size:])
            expected['outputs'] = [mf.tensor_json('output', logits), mf.tensor_json('attention_weights', att)]
        else:
            g = scenario['generate']
            mf.generation_log.tokens = []
            ids = model.generate(idx, g['max_new_tokens'], temperature=g['temperature'], top_k=g.get('top_k'), top_p=g.get('top_p'))
            expected.update(ids=ids.tolist(), generated=mf.generation_log.tokens)
    return expected


def scenarios(config, stoi, weights_name):
    prompt = [stoi[c] for c in 'First Citizen:\n']
    base = {'module': 'GPT', 'config': config, 'weights': {'name': weights_name},
            'inputs': [{'name': 'idx', 'shape': [1, len(prompt)], 'data': prompt}]}
    return {
        'sample': {**base, 'seed': 1337, 'generate': {'max_new_tokens': 40, 'temperature': 0.8, 'top_k': 20}},
        'greedy': {**base, 'seed': 0, 'generate': {'max_new_tokens': 40, 'temperature': 0}},
    }


SHAKESPEARE_CHARS = "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # its prepare.py's 65


def shakespeare_size(out_dir):
    """train.py's config/train_shakespeare_char.py model, as constructed (iter 0), saved and exported."""
    os.makedirs(out_dir, exist_ok=True)
    chars = sorted(SHAKESPEARE_CHARS)
    with open(os.path.join(out_dir, 'meta.pkl'), 'wb') as f:
        pickle.dump({'vocab_size': len(chars), 'itos': dict(enumerate(chars)), 'stoi': {c: i for i, c in enumerate(chars)}}, f)
    args = dict(n_layer=6, n_head=6, n_embd=384, block_size=256, bias=False, vocab_size=len(chars), dropout=0.2)
    torch.manual_seed(1337)
    model = mf.GPTModule(**{k: args[k] for k in ('vocab_size', 'block_size', 'n_layer', 'n_head', 'n_embd', 'dropout', 'bias')})
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.99))
    save_checkpoint(os.path.join(out_dir, 'ckpt.pt'), model, optimizer, args, float('inf'))
    config = export_nanogpt.export(os.path.join(out_dir, 'ckpt.pt'), os.path.join(out_dir, 'meta.pkl'),
                                   os.path.join(out_dir, 'shakespeare'), 'f16')
    n = sum(p.numel() for p in model.parameters())
    print(f'{out_dir}/shakespeare.safetensors: {os.path.getsize(os.path.join(out_dir, "shakespeare.safetensors"))} bytes, '
          f'{n} parameters, GPT {json.dumps(config)}')


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--shakespeare-size':
        return shakespeare_size(sys.argv[2])
    os.makedirs(OUT, exist_ok=True)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        stoi = prepare(os.path.join(tmp, 'meta.pkl'))
        model, optimizer, args, loss = train(stoi)
        for name, compiled, dtype in (('nanogpt_char', False, 'f16'), ('nanogpt_char_compiled_f32', True, 'f32')):
            ckpt = os.path.join(tmp, f'{name}.pt')
            save_checkpoint(ckpt, model, optimizer, args, loss, compiled)
            out = os.path.join(OUT, name)
            config = export_nanogpt.export(ckpt, os.path.join(tmp, 'meta.pkl') if not compiled else '', out, dtype)
            os.remove(f'{out}.scenario.json')  # the tests' own scenarios follow
            weights = read_safetensors(f'{out}.safetensors')
            for kind, sc in scenarios(config, stoi, f'{name}.safetensors').items():
                for suffix, obj in (('scenario', sc), ('expected', reference(sc, weights))):
                    with open(os.path.join(OUT, f'{name}_{kind}.{suffix}.json'), 'w') as f:
                        f.write(mf.dumps(obj) + '\n')
            print(f'{name}: {os.path.getsize(out + ".safetensors")} bytes ({dtype.upper()}), trained loss {loss:.3f}, '
                  f'GPT {json.dumps(config)}')


if __name__ == '__main__':
    main()
