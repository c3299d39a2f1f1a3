#!/usr/bin/python3
"""nanoGPT's logits for the page's shipped models (web/public/models/<task>/, npm run train-models):
each model.safetensors loaded strictly into nanoGPT's GPT (make_fixtures.py's model.py) with the
config of its card, model.eval(), then GPT(idx, targets) on the ids given, so the logits of every
position come back. tests/node/shipped-models.test.mjs compares them with the core's.

    shipped_logits.py < {"models": [{"dir": ..., "idx": [[...], ...]}]}  ->  {"logits": [[...], ...]}
"""
import contextlib
import io
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import GPT, GPTConfig  # noqa: E402
from make_nanogpt_fixtures import read_safetensors  # noqa: E402


def logits_of(folder, idx):
    card = json.load(open(os.path.join(folder, 'card.json')))
    with contextlib.redirect_stdout(io.StringIO()):  # nanoGPT prints its parameter count
        model = GPT(GPTConfig(**card['config']))
    model.load_state_dict(read_safetensors(os.path.join(folder, 'model.safetensors')), strict=True)
    model.eval()
    x = torch.tensor(idx, dtype=torch.long)
    with torch.no_grad():
        logits, _ = model(x, torch.zeros_like(x))  # with targets: every position's logits
    return logits.flatten().tolist()


def main():
    req = json.load(sys.stdin)
    print(json.dumps({'logits': [logits_of(m['dir'], m['idx']) for m in req['models']]}))


if __name__ == '__main__':
    main()
