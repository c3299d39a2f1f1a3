"""Attention Playground in a Jupyter notebook: the playground's view of a PyTorch module of the
seeds, inline and offline.

    from attention_playground import show
    mha = MultiHeadAttention(d_model=16, num_heads=4)      # seed 000's class, as in the tutorial
    show(mha, x, x, x, tokens="the cat sat on the mat".split())

`show` recognises the seed class (class name + state_dict names, or module_id=), writes its
parameters as safetensors in memory and the inputs as a scenario (core/SCENARIO.md), and returns a
View whose HTML is the playground page itself (the repository's `npm run build`, dist/notebook/)
with the WASM core, the weights and the inputs inline, in an <iframe srcdoc>: nothing is fetched,
so it works offline, after `jupyter nbconvert --to html`, and several in one notebook. Depends on
torch and the standard library only; View.outputs() also needs Node.js (it runs the same core).
"""
import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import torch

from .modules import MODULES, read_config, recognise
from .safetensors import safetensors_bytes

__all__ = ['show', 'scenario', 'View', 'safetensors_bytes', 'bundle_dir', 'core_dir']

MARKER = '<!-- notebook-data -->'  # web/vite.notebook.config.mjs writes it into the page
PAGE = 'playground.html'  # dist/notebook/ of a built repository (npm run build)
CORE_FILES = ('bindings/cli.mjs', 'bindings/attention.mjs', 'build/wasm/attention.js', 'build/wasm/attention.wasm')


def _first_with(files, candidates, what):
    for path in candidates:
        if all((path / f).is_file() for f in files):
            return path
    raise FileNotFoundError(f'no {what} in ' + ' or '.join(str(p) for p in candidates)
                            + ': run `npm run build` in the Attention Playground repository (it writes dist/notebook/ '
                            'and build/wasm/), then `pip install ./bindings/python`, or set ATTENTION_PLAYGROUND_BUNDLE '
                            'to a folder holding playground.html, bindings/ and build/wasm/')


def _candidates(repo_sub):
    here = Path(__file__).resolve().parent
    env = os.environ.get('ATTENTION_PLAYGROUND_BUNDLE')
    return ([Path(env)] if env else []) + [here / 'bundle', here.parents[2] / repo_sub]


def bundle_dir():
    """The built notebook page: in $ATTENTION_PLAYGROUND_BUNDLE, else the copy a pip install carries,
    else dist/notebook/ of the repository this package sits in (the first that has it)."""
    return _first_with((PAGE,), _candidates('dist/notebook'), 'built playground page (playground.html)')


def core_dir():
    """The WASM core and its JS (bindings/, build/wasm/): beside the page in a pip install, else the
    repository's own (a built repository keeps one copy of each file)."""
    return _first_with(CORE_FILES, _candidates(''), 'built WASM core (build/wasm/attention.wasm)')


def _weights(module):
    """The module's parameters by state_dict name (buffers such as a causal mask are recomputed by the core)."""
    params = dict(module.named_parameters())
    return {k: v for k, v in module.state_dict().items() if k in params}


def _input(name, kind, value, earlier):
    if not torch.is_tensor(value):
        raise TypeError(f'input {name}: expected a torch.Tensor, got {type(value).__name__}')
    for other_name, other in earlier:
        if value is other:  # seed 003's mha(x_q, x_kv, x_kv), seed 000's mha(x, x, x): one tensor
            return {'name': name, 'same_as': other_name}
    t = value.detach().cpu()
    if kind == 'ids':
        if t.is_floating_point():
            raise TypeError(f'input {name}: token ids must be an integer tensor, got {t.dtype}')
        data = [int(v) for v in t.reshape(-1).tolist()]
    elif kind == 'mask':
        data = [float(v) for v in t.to(torch.float32).reshape(-1).tolist()]
    else:
        if not t.is_floating_point():
            raise TypeError(f'input {name}: expected a float tensor, got {t.dtype}')
        data = [float(v) for v in t.to(torch.float32).reshape(-1).tolist()]
    return {'name': name, 'shape': list(t.shape), 'data': data}


def _scenario(module, inputs, module_id, config, seed):
    mid = recognise(module, module_id)
    spec = MODULES[mid]['inputs']
    if len(inputs) > len(spec):
        raise ValueError(f'{mid} takes at most {len(spec)} inputs ({", ".join(n for n, _ in spec)}), got {len(inputs)}')
    required = [n for n, k in spec if k != 'mask' and not (mid == 'ModernAttention' and n == 'positions')]
    if len(inputs) < len(required):
        raise ValueError(f'{mid} needs the inputs {", ".join(required)} (in the order its forward takes them), got {len(inputs)}')
    items, seen = [], []
    for (name, kind), value in zip(spec, inputs):
        if value is None:
            continue
        items.append(_input(name, kind, value, seen))
        seen.append((name, value))
    return mid, {'module': mid, 'config': read_config(module, mid, config), 'seed': int(seed), 'train': bool(module.training),
                 'inputs': items}


def scenario(module, *inputs, module_id=None, config=None, seed=0):
    """The scenario JSON (core/SCENARIO.md) of module(*inputs): runnable by `attention-cli run FILE
    --weights W.safetensors` and `node bindings/cli.mjs run` with the module's weights
    (View.weights, or scripts/export_state_dict.py)."""
    return json.dumps(_scenario(module, inputs, module_id, config, seed)[1])


def _labels(tokens, scen):
    """tokens= as labels per input per batch item: a list of strings (one per position, every
    sequence input of that length), a list of such lists (per batch item), or {input: ...}."""
    if tokens is None:
        return None
    kinds = dict(MODULES[scen['module']]['inputs'])
    seqs = {i['name']: i for i in scen['inputs'] if 'shape' in i and len(i['shape']) >= 2 and kinds[i['name']] != 'mask'}
    out = {}
    for name, inp in seqs.items():
        given = tokens.get(name) if isinstance(tokens, dict) else tokens
        if given is None:
            continue
        n = inp['shape'][-2] if kinds[name] == 'float' else inp['shape'][-1]
        batch = inp['shape'][0] if len(inp['shape']) >= (3 if kinds[name] == 'float' else 2) else 1
        rows = [list(map(str, given))] * batch if all(isinstance(t, str) for t in given) else [list(map(str, r)) for r in given]
        if any(len(r) != n for r in rows) or len(rows) != batch:
            if isinstance(tokens, dict):
                raise ValueError(f'tokens for {name}: {len(rows)} rows of {[len(r) for r in rows]} labels, but {name} has shape '
                                 f'{tuple(inp["shape"])}: give one label per position ({n}) per batch item ({batch})')
            continue
        out[name] = rows
    if not out:
        raise ValueError(f'tokens= fits no input: {len(tokens)} labels, inputs '
                         + ', '.join(f'{k} {tuple(v["shape"])}' for k, v in seqs.items()) + ': one label per position')
    return out


class View:
    """The playground for one module and its inputs: shown by Jupyter (_repr_html_), written to a
    file (to_html), its scenario and weights as the core takes them, and the core's outputs."""

    def __init__(self, module, inputs, tokens=None, vocab=None, lang='en', height=900, module_id=None, config=None,
                 seed=0, backend='auto'):
        if lang not in ('en', 'zh'):
            raise ValueError(f"lang {lang!r}: the playground speaks 'en' or 'zh'")
        if not re.fullmatch(r'\d+|\d+(\.\d+)?(px|em|rem|vh|%)', str(height)):
            raise ValueError(f"height {height!r}: pixels (900) or a CSS length ('80vh', '600px')")
        if backend not in ('auto', 'wasm', 'webgpu'):
            raise ValueError(f"backend {backend!r}: one of 'auto', 'wasm', 'webgpu'")
        self.module_id, self.scenario = _scenario(module, inputs, module_id, config, seed)
        self.tokens = _labels(tokens, self.scenario)
        self.vocab = [str(t) for t in vocab] if vocab is not None else None
        if self.vocab is not None and 'vocab_size' in self.scenario['config'] and len(self.vocab) != self.scenario['config']['vocab_size']:
            raise ValueError(f'vocab has {len(self.vocab)} tokens but the module\'s vocab_size is '
                             f'{self.scenario["config"]["vocab_size"]}: one token per embedding row')
        self.weights = safetensors_bytes(_weights(module))
        self.lang, self.height, self.backend = lang, height, backend
        self.id = f'attention-playground-{uuid.uuid4().hex[:12]}'

    def data(self):
        """The notebook data the page reads (web/notebook.js)."""
        wasm = (core_dir() / 'build' / 'wasm' / 'attention.wasm').read_bytes()
        return {'scenario': self.scenario, 'tokens': self.tokens, 'vocab': self.vocab, 'lang': self.lang, 'backend': self.backend,
                'weights': base64.b64encode(self.weights).decode(), 'weights_name': f'{self.module_id}.safetensors',
                'wasm': base64.b64encode(wasm).decode()}

    def page(self):
        """The whole page as one HTML document: the built playground with this view's data inside."""
        page = (bundle_dir() / 'playground.html').read_text(encoding='utf-8')
        if MARKER not in page:
            raise ValueError(f'{bundle_dir() / "playground.html"} is not the notebook build (no {MARKER}): run `npm run build`')
        data = json.dumps(self.data(), ensure_ascii=False).replace('<', '\\u003c')  # never closes the <script>
        return page.replace(MARKER, f'<script type="application/json" id="notebook-data">{data}</script>', 1)

    def _repr_html_(self):
        # An attribute value: & and " escaped, and every non-ASCII character as a character
        # reference, so the page survives a notebook page of any declared encoding.
        srcdoc = self.page().replace('&', '&amp;').replace('"', '&quot;').encode('ascii', 'xmlcharrefreplace').decode('ascii')
        # Pixels as the height attribute; another CSS length (e.g. '80vh') as a style.
        size = f'height="{self.height}"' if str(self.height).isdigit() else f'height="900" style="height: {self.height}"'
        return (f'<iframe class="attention-playground" id="{self.id}" data-module="{self.module_id}" '
                f'title="Attention Playground: {self.module_id}" width="100%" {size} srcdoc="{srcdoc}"></iframe>')

    def to_html(self, path):
        """A standalone file: the page with this view's data, opened from disk with no server."""
        Path(path).write_text(self.page(), encoding='utf-8')
        return str(path)

    def outputs(self, node=None):
        """{output name: tensor} as the playground's WASM core computes them for this scenario and
        these weights (run headless under Node.js: `node` on PATH, or node=path)."""
        node = node or os.environ.get('ATTENTION_PLAYGROUND_NODE') or shutil.which('node')
        if not node:
            raise FileNotFoundError('outputs() runs the playground\'s WASM core under Node.js (20 or later): '
                                    'no `node` on PATH; pass node="/path/to/node"')
        with tempfile.TemporaryDirectory() as tmp:
            scen, weights = Path(tmp) / 'scenario.json', Path(tmp) / 'weights.safetensors'
            scen.write_text(json.dumps(self.scenario))
            weights.write_bytes(self.weights)
            run = subprocess.run([node, str(core_dir() / 'bindings' / 'cli.mjs'), 'run', str(scen), '--weights', str(weights)],
                                 capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(f'the core refused {self.module_id}: {run.stderr.strip()}')
        result = json.loads(run.stdout)
        return {o['name']: torch.tensor([float(v) for v in o['data']], dtype=torch.float32).reshape(o['shape']) for o in result['outputs']}


def show(module, *inputs, tokens=None, vocab=None, lang='en', height=900, module_id=None, config=None, seed=0, backend='auto'):
    """The playground's view of module(*inputs), inline in the notebook.

    module: an instance of a seed class (recognised by class name and state_dict names; module_id=
    names the core's module otherwise, config= its constructor arguments where they cannot be read).
    inputs: the tensors its forward takes, in order (None skips an optional one, e.g. a mask).
    tokens: labels for the positions (a list of strings, per batch item a list of lists, or
    {input name: ...}); vocab: token i of an embedding row i (token-id models: labels and the
    vocabulary view). lang 'en' or 'zh'; height in px (or a CSS length); backend 'auto' (WebGPU
    checked against WASM when there is an adapter), 'wasm' or 'webgpu'; seed: torch.manual_seed for
    what the core draws (dropout in train mode).
    """
    return View(module, inputs, tokens=tokens, vocab=vocab, lang=lang, height=height, module_id=module_id, config=config,
                seed=seed, backend=backend)
