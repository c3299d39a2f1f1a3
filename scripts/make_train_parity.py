#!/usr/bin/python3
"""PyTorch's losses for "Train in the page": tests/fixtures/train-parity/<task>.json.

Run with Debian's python3 and python3-torch 1.13: `/usr/bin/python3 scripts/make_train_parity.py`.
For every task of web/train/tasks.js, with the task's default model, optimizer, batch size and
seed 1, this trains make_fixtures.py's CausalTransformer (imported, not copied) exactly as the page's
engine (web/train/engine.js) does through the core:

    torch.manual_seed(seed); model = CausalTransformer(**config); model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=..., betas=..., weight_decay=...)
    for idx, target in batches:                       # from scripts/task-batches.mjs, not re-made here
        opt.zero_grad()
        loss = F.cross_entropy(model(idx)[0].reshape(-1, V), target.reshape(-1), ignore_index=-100)
        loss.backward(); [clip_grad_norm_(model.parameters(), clip)]; opt.step()

and writes the 50 losses, plus the logits of the task's sample after those 50 steps (the check for
an exported .safetensors: tests/node/train-tasks.test.mjs). Each run is repeated in float64 from
the same float32 start; a task whose float32 losses stray from float64's by more than a quarter of
the test's tolerance (rtol 1e-3) would test rounding, not training, and is refused.

    /usr/bin/python3 scripts/make_train_parity.py --check-export W.safetensors LOGITS.json
loads a page export into the PyTorch model with a strict load_state_dict and prints the largest
difference between its sample logits and LOGITS.json ({"logits": [...]}, the page's).
"""
import json
import os
import struct
import subprocess
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_fixtures import CausalTransformer  # noqa: E402

ROOT = os.path.join(HERE, '..')
OUT = os.path.join(ROOT, 'tests', 'fixtures', 'train-parity')
SEED = 1
STEPS = 50
RTOL = 1e-3      # the page's losses must match these at this relative tolerance
MARGIN = 0.25    # float32 vs float64 must stay within this fraction of it


def task_batches(task, seed=SEED, steps=STEPS):
    """The engine's batches and settings, from the one generator (scripts/task-batches.mjs)."""
    out = subprocess.run(['node', os.path.join(HERE, 'task-batches.mjs'), '--task', task, '--seed', str(seed),
                          '--steps', str(steps)], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def task_ids():
    out = subprocess.run(['node', os.path.join(HERE, 'task-batches.mjs'), '--list'], capture_output=True, text=True, check=True)
    return out.stdout.split()


def optimizer(params, settings):
    """torch.optim 1.13 from the engine's settings (core/SCENARIO.md "Training"), and the clip norm."""
    s = dict(settings)
    kind = s.pop('optimizer')
    clip = s.pop('clip_grad_norm', None)
    if 'betas' in s:
        s['betas'] = tuple(s['betas'])
    return getattr(torch.optim, kind)(params, **s), clip


def ids(data, shape):
    return torch.tensor(data, dtype=torch.long).view(shape)


def train(d, dtype=torch.float32):
    """(model, losses) after len(d['batches']) steps of d's settings, the parameters in dtype."""
    torch.manual_seed(d['seed'])
    model = CausalTransformer(**d['config']).to(dtype)  # drawn in float32 as the core draws them
    model.train()
    opt, clip = optimizer(model.parameters(), d['optimizer'])
    V = d['config']['vocab_size']
    losses = []
    for b in d['batches']:
        opt.zero_grad()
        logits = model(ids(b['idx'], d['shape']))[0]
        loss = F.cross_entropy(logits.reshape(-1, V), ids(b['target'], [-1]), ignore_index=-100)
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        losses.append(loss.item())
    return model, losses


def sample_logits(model, d):
    model.eval()
    with torch.no_grad():
        return model(ids(d['sample']['idx'], d['sample']['shape']))[0].float()


def fixture(task):
    d = task_batches(task)
    model, losses = train(d)
    _, losses64 = train(d, torch.float64)
    drift = max(abs(a - b) / abs(b) for a, b in zip(losses, losses64))
    if drift > MARGIN * RTOL:
        raise SystemExit(f'{task}: float32 losses stray from float64 by {drift:.2e} (> {MARGIN * RTOL:.0e}): '
                         'the fixture would test rounding; change the task\'s settings')
    logits = sample_logits(model, d)
    return {'task': task, 'torch': torch.__version__, 'seed': d['seed'], 'batch': d['batch'], 'steps': STEPS,
            'shape': d['shape'], 'config': d['config'], 'optimizer': d['optimizer'], 'rtol': RTOL,
            'losses': [float(f'{x:.9g}') for x in losses],
            'sample': {'idx': d['sample']['idx'], 'shape': list(logits.shape),
                       'logits': [float(f'{x:.9g}') for x in logits.flatten().tolist()]}}, drift


def read_safetensors(path):
    """({name: float32 tensor}, metadata) of an F32 safetensors file (torch 1.13 has no reader)."""
    with open(path, 'rb') as fh:
        raw = fh.read()
    n = struct.unpack('<Q', raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = header.pop('__metadata__', {})
    data = raw[8 + n:]
    tensors = {}
    for name, e in header.items():
        assert e['dtype'] == 'F32', f'{name}: {e["dtype"]}'
        a, b = e['data_offsets']
        tensors[name] = torch.frombuffer(bytearray(data[a:b]), dtype=torch.float32).view(e['shape'])
    return tensors, meta


def check_export(weights, logits_json):
    tensors, meta = read_safetensors(weights)
    model = CausalTransformer(**json.loads(meta['config']))
    model.load_state_dict(tensors, strict=True)
    d = task_batches(meta['task'], int(meta['seed']), 0)
    ours = sample_logits(model, d).flatten()
    with open(logits_json) as fh:
        page = torch.tensor(json.load(fh)['logits'], dtype=torch.float32)
    diff = (ours - page).abs().max().item()
    print(f'{meta["task"]} step {meta.get("step")}: strict load_state_dict ok, max |torch - page| over the sample logits = {diff:.3g}')
    return 0 if diff < 1e-4 else 1


def main(argv):
    if len(argv) == 3 and argv[0] == '--check-export':
        return check_export(argv[1], argv[2])
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    for task in task_ids():
        f, drift = fixture(task)
        with open(os.path.join(OUT, f'{task}.json'), 'w') as fh:
            json.dump(f, fh, separators=(',', ':'))
            fh.write('\n')
        print(f'{task}: losses {f["losses"][0]:.4f} -> {f["losses"][-1]:.4f} in {STEPS} steps, '
              f'float32 vs float64 {drift:.1e}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
