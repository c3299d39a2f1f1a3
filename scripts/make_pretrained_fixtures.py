#!/usr/bin/python3
"""Model folders as the Hugging Face Hub serves them, written by PyTorch here (no download):
tests/fixtures/pretrained/<name>/ (config.json, model.safetensors or an index and its shards) and
<name>.{scenario,expected,sampled}.json beside them: the scenario opens the folder ("pretrained": "<name>",
relative to the scenario file) and greedily generates from a prompt; the expected result holds the
prompt's logits and attention weights and the generation, computed by the references written from
Hugging Face's modelling code (torch_refs/hf.py) on the weights as stored (F16 / BF16 rounded).

The cases cover what checkpoints on the Hub differ in: GPT-2 with and without the `transformer.`
prefix, its attn.bias / attn.masked_bias buffers and a saved lm_head.weight, F32 and F16, one file
and shards; Llama with GQA (untied) and MQA (tied, head_dim given, BF16, sharded); Qwen2 with its
q/k/v biases (F16, names without the `model.` prefix, as LlamaModel saves them); Mistral's sliding
window in every layer and Qwen2's in the layers from max_window_layers on. llama_gqa_f32 also
has a Llama-2-style tokenizer.json (37 tokens) for the text-input tests.

Weights are drawn wider than initialisation's 0.02 (logits of a few units, as a trained model's)
so that every greedy choice stands clear of float32 ties (generation_log's margins; the first seed
that passes is kept).

Run: /usr/bin/python3 scripts/make_pretrained_fixtures.py (npm run fixtures runs it).
"""
import json
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bindings', 'python'))
from attention_playground.safetensors import safetensors_bytes  # noqa: E402
from torch_refs.common import dumps, tensor_json  # noqa: E402
from torch_refs.hf import GPT2LMHeadModel, LlamaForCausalLM  # noqa: E402
from torch_refs.nanogpt import generation_log  # noqa: E402

OUT = os.environ.get('ATTN_FIXTURES_OUT') or os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures', 'pretrained')
DTYPES = {'F32': torch.float32, 'F16': torch.float16, 'BF16': torch.bfloat16}


def widen(model, seed, dtype):
    """Every parameter redrawn wide (norm weights near 1), rounded to the file's dtype and back."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1 and ('ln' in name or 'norm' in name) and name.endswith('weight'):
                v = 1 + 0.2 * torch.randn(p.shape, generator=g)
            elif p.dim() == 1:
                v = 0.1 * torch.randn(p.shape, generator=g)
            else:
                fan_in = p.shape[0] if 'transformer.h' in name else p.shape[-1]  # Conv1D stores [in, out]
                v = torch.randn(p.shape, generator=g) * (0.3 if 'wte' in name or 'embed' in name else 1.2 / fan_in ** 0.5)
            p.copy_(v.to(DTYPES[dtype]).float())


def gpt2_state(model, prefix, lm_head, buffers):
    sd = {}
    for k, v in model.state_dict().items():
        if k == 'lm_head.weight':
            if lm_head:
                sd[k] = v
            continue
        if (k.endswith('.attn.bias') or k.endswith('.attn.masked_bias')) and not buffers:
            continue
        sd[k if prefix else k[len('transformer.'):]] = v.float()
    return sd


def llama_state(model, prefix, tied):
    sd = {}
    for k, v in model.state_dict().items():
        if tied and k == 'lm_head.weight':
            continue
        sd[k if prefix or not k.startswith('model.') else k[len('model.'):]] = v
    return sd


def write_folder(name, config, state, dtype, shards):
    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        json.dump(config, f, indent=2)
    names = list(state)
    if shards == 1:
        with open(os.path.join(folder, 'model.safetensors'), 'wb') as f:
            f.write(safetensors_bytes(state, DTYPES[dtype]))
        return
    weight_map, total = {}, 0
    per = (len(names) + shards - 1) // shards
    for i in range(shards):
        file = f'model-{i + 1:05d}-of-{shards:05d}.safetensors'
        part = {k: state[k] for k in names[i * per:(i + 1) * per]}
        with open(os.path.join(folder, file), 'wb') as f:
            f.write(safetensors_bytes(part, DTYPES[dtype]))
        for k, v in part.items():
            weight_map[k] = file
            total += v.numel() * (4 if dtype == 'F32' else 2)
    with open(os.path.join(folder, 'model.safetensors.index.json'), 'w') as f:
        json.dump({'metadata': {'total_size': total}, 'weight_map': weight_map}, f, indent=2)


def llama_tokenizer_json():
    """A Llama-2-style tokenizer.json (SentencePiece BPE as `tokenizers` converts it: ▁ for spaces,
    <unk>/<s>/</s>, merges by rank), 37 tokens: letters, and merges that make "▁the" and "▁cat"."""
    pieces = ['<unk>', '<s>', '</s>', '▁'] + [chr(c) for c in range(ord('a'), ord('z') + 1)] + ['▁t', 'he', '▁the', 'at', '▁c', '▁cat', 'in']
    merges = ['▁ t', 'h e', '▁t he', 'a t', '▁ c', '▁c at', 'i n']
    special = [{'id': i, 'content': t, 'single_word': False, 'lstrip': False, 'rstrip': False, 'normalized': False, 'special': True}
               for i, t in enumerate(pieces[:3])]
    return {'version': '1.0', 'truncation': None, 'padding': None, 'added_tokens': special,
            'normalizer': {'type': 'Sequence', 'normalizers': [{'type': 'Prepend', 'prepend': '▁'},
                                                                {'type': 'Replace', 'pattern': {'String': ' '}, 'content': '▁'}]},
            'pre_tokenizer': None, 'post_processor': None,
            'decoder': {'type': 'Sequence', 'decoders': [{'type': 'Replace', 'pattern': {'String': '▁'}, 'content': ' '},
                                                         {'type': 'ByteFallback'}, {'type': 'Fuse'},
                                                         {'type': 'Strip', 'content': ' ', 'start': 1, 'stop': 0}]},
            'model': {'type': 'BPE', 'dropout': None, 'unk_token': '<unk>', 'continuing_subword_prefix': None, 'end_of_word_suffix': None,
                      'fuse_unk': True, 'byte_fallback': False, 'ignore_merges': False,
                      'vocab': {t: i for i, t in enumerate(pieces)}, 'merges': merges}}


def expected_of(model, module, prompt, n):
    """The prompt's forward (outputs as the core names them) and the greedy generation."""
    idx = torch.tensor([prompt])
    with torch.no_grad():
        logits, att = model(idx)
        generation_log.tokens = []
        out = model.generate(idx, n, temperature=0)
    names = ('output' if module == 'GPT' else 'logits', 'attention_weights')
    return {'module': module, 'torch': torch.__version__, 'outputs': [tensor_json(names[0], logits), tensor_json(names[1], att)],
            'ids': out.tolist(), 'generated': generation_log.tokens}


CASES = {
    # name: (model_type, config.json, dtype, shards, state options, prompt)
    'gpt2_prefix_f32': ('gpt2', {'architectures': ['GPT2LMHeadModel'], 'model_type': 'gpt2', 'vocab_size': 50, 'n_positions': 32,
                                 'n_ctx': 32, 'n_embd': 24, 'n_layer': 2, 'n_head': 3, 'n_inner': None, 'activation_function': 'gelu_new',
                                 'layer_norm_epsilon': 1e-5, 'resid_pdrop': 0.1, 'embd_pdrop': 0.1, 'attn_pdrop': 0.1,
                                 'initializer_range': 0.02, 'bos_token_id': 49, 'eos_token_id': 49, 'torch_dtype': 'float32'},
                        'F32', 1, {'prefix': True, 'lm_head': True, 'buffers': True}, [3, 17, 42, 8, 8, 30]),
    'gpt2_bare_f16_sharded': ('gpt2', {'model_type': 'gpt2', 'vocab_size': 64, 'n_positions': 24, 'n_embd': 32, 'n_layer': 2,
                                       'n_head': 4, 'layer_norm_epsilon': 1e-5},
                              'F16', 2, {'prefix': False, 'lm_head': False, 'buffers': True}, [1, 2, 3, 60, 5]),
    'llama_gqa_f32': ('llama', {'architectures': ['LlamaForCausalLM'], 'model_type': 'llama', 'vocab_size': 40, 'hidden_size': 32,
                                'intermediate_size': 48, 'num_hidden_layers': 2, 'num_attention_heads': 4, 'num_key_value_heads': 2,
                                'max_position_embeddings': 64, 'rms_norm_eps': 1e-6, 'rope_theta': 10000.0, 'rope_scaling': None,
                                'hidden_act': 'silu', 'tie_word_embeddings': False, 'attention_bias': False, 'mlp_bias': False,
                                'bos_token_id': 1, 'eos_token_id': 2, 'torch_dtype': 'float32'},
                      'F32', 1, {'prefix': True}, [1, 9, 33, 4, 27]),
    'llama_mqa_tied_bf16_sharded': ('llama', {'model_type': 'llama', 'vocab_size': 48, 'hidden_size': 32, 'intermediate_size': 40,
                                              'num_hidden_layers': 2, 'num_attention_heads': 4, 'num_key_value_heads': 1,
                                              'head_dim': 12, 'max_position_embeddings': 32, 'rms_norm_eps': 1e-5,
                                              'rope_theta': 500000.0, 'tie_word_embeddings': True, 'hidden_act': 'silu'},
                                    'BF16', 3, {'prefix': True}, [5, 6, 7, 40, 2, 2, 19]),
    'qwen2_bias_f16_bare': ('qwen2', {'architectures': ['Qwen2ForCausalLM'], 'model_type': 'qwen2', 'vocab_size': 36, 'hidden_size': 24,
                                      'intermediate_size': 56, 'num_hidden_layers': 2, 'num_attention_heads': 6,
                                      'num_key_value_heads': 2, 'max_position_embeddings': 128, 'rms_norm_eps': 1e-6,
                                      'rope_theta': 1000000.0, 'tie_word_embeddings': True, 'use_sliding_window': False,
                                      'sliding_window': 4096, 'hidden_act': 'silu'},
                            'F16', 1, {'prefix': False}, [30, 1, 2, 3]),
    # sliding windows: Mistral's in every layer (3 keys: the prompt and the generation run past it),
    # Qwen2's in the layers from max_window_layers on (layer 1 of 2)
    'mistral_window_f32': ('mistral', {'architectures': ['MistralForCausalLM'], 'model_type': 'mistral', 'vocab_size': 40,
                                       'hidden_size': 32, 'intermediate_size': 48, 'num_hidden_layers': 2, 'num_attention_heads': 4,
                                       'num_key_value_heads': 2, 'max_position_embeddings': 64, 'rms_norm_eps': 1e-5,
                                       'rope_theta': 10000.0, 'sliding_window': 3, 'hidden_act': 'silu', 'tie_word_embeddings': False},
                           'F32', 1, {'prefix': True}, [4, 19, 7, 33, 2, 21]),
    'qwen2_window_bf16': ('qwen2', {'model_type': 'qwen2', 'vocab_size': 36, 'hidden_size': 24, 'intermediate_size': 40,
                                    'num_hidden_layers': 2, 'num_attention_heads': 6, 'num_key_value_heads': 3,
                                    'max_position_embeddings': 64, 'rms_norm_eps': 1e-6, 'rope_theta': 1000000.0,
                                    'tie_word_embeddings': True, 'use_sliding_window': True, 'sliding_window': 4,
                                    'max_window_layers': 1, 'hidden_act': 'silu'},
                          'BF16', 1, {'prefix': True}, [3, 30, 12, 5, 9]),
    # rope_scaling: Llama 3's (head_dim 8: wavelengths 6.3, 63, 628 and 6283 against 16 and 64, so
    # one frequency is kept, one smoothed, two divided by the factor) and the older "type": "linear"
    'llama3_rope_f32': ('llama', {'architectures': ['LlamaForCausalLM'], 'model_type': 'llama', 'vocab_size': 40, 'hidden_size': 32,
                                  'intermediate_size': 48, 'num_hidden_layers': 2, 'num_attention_heads': 4, 'num_key_value_heads': 2,
                                  'max_position_embeddings': 512, 'rms_norm_eps': 1e-5, 'rope_theta': 10000.0,
                                  'rope_scaling': {'rope_type': 'llama3', 'factor': 8.0, 'low_freq_factor': 1.0, 'high_freq_factor': 4.0,
                                                   'original_max_position_embeddings': 64},
                                  'hidden_act': 'silu', 'tie_word_embeddings': False},
                        'F32', 1, {'prefix': True}, [1, 9, 33, 4, 27, 12, 5]),
    'llama_linear_rope_bf16': ('llama', {'model_type': 'llama', 'vocab_size': 36, 'hidden_size': 24, 'intermediate_size': 40,
                                         'num_hidden_layers': 2, 'num_attention_heads': 3, 'max_position_embeddings': 128,
                                         'rms_norm_eps': 1e-6, 'rope_theta': 1000.0, 'rope_scaling': {'type': 'linear', 'factor': 4.0},
                                         'tie_word_embeddings': True, 'hidden_act': 'silu'},
                               'BF16', 1, {'prefix': False}, [7, 3, 30, 21, 9, 11]),
}


def window_of(model_type, c):
    """The sliding window as MistralConfig / Qwen2Config set it (Qwen2's only with use_sliding_window)."""
    if model_type == 'mistral':
        return {'sliding_window': c.get('sliding_window') or 0}
    if model_type == 'qwen2' and c.get('use_sliding_window'):
        return {'sliding_window': c.get('sliding_window', 4096), 'max_window_layers': c.get('max_window_layers', 28)}
    return {}


def build(model_type, c):
    if model_type == 'gpt2':
        return GPT2LMHeadModel({k: c.get(k) for k in ('vocab_size', 'n_positions', 'n_embd', 'n_layer', 'n_head')} |
                               {'layer_norm_epsilon': c.get('layer_norm_epsilon', 1e-5),
                                'activation_function': c.get('activation_function', 'gelu_new')}), 'GPT', 'idx'
    m = LlamaForCausalLM(c['vocab_size'], c['hidden_size'], c['intermediate_size'], c['num_hidden_layers'], c['num_attention_heads'],
                         num_key_value_heads=c.get('num_key_value_heads') or 0, head_dim=c.get('head_dim') or 0,
                         max_position_embeddings=c['max_position_embeddings'], rms_norm_eps=c['rms_norm_eps'],
                         rope_theta=c['rope_theta'], tie_word_embeddings=c.get('tie_word_embeddings', False),
                         qkv_bias=model_type == 'qwen2', rope_scaling=c.get('rope_scaling'), **window_of(model_type, c))
    return m, 'Llama', 'input_ids'


def main():
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    for name, (model_type, config, dtype, shards, opts, prompt) in CASES.items():
        for seed in range(1000):
            torch.manual_seed(seed)
            model, module, ids_name = build(model_type, config)
            model.eval()
            widen(model, seed, dtype)
            try:
                expected = expected_of(model, module, prompt, 8)
                break
            except AssertionError:
                continue
        else:
            raise AssertionError(f'{name}: no seed gives a generation clear of float32 ties')
        state = gpt2_state(model, **opts) if model_type == 'gpt2' else llama_state(model, opts['prefix'], config.get('tie_word_embeddings'))
        write_folder(name, config, state, dtype, shards)
        if model_type == 'llama' and config['vocab_size'] >= 37 and not config.get('tie_word_embeddings'):
            with open(os.path.join(OUT, name, 'tokenizer.json'), 'w') as f:
                json.dump(llama_tokenizer_json(), f, ensure_ascii=False, indent=1)
        scenario = {'pretrained': name, 'seed': 0, 'inputs': [{'name': ids_name, 'shape': [1, len(prompt)], 'data': prompt}],
                    'generate': {'max_new_tokens': 8, 'temperature': 0}}
        # sampled after the seed: from_pretrained draws nothing while it builds the module, so the
        # seed's first draws are the sampler's (the core's construction from a folder draws none either)
        sampled = {**scenario, 'seed': 7, 'generate': {'max_new_tokens': 8, 'temperature': 0.8, 'top_k': 10}}
        torch.manual_seed(sampled['seed'])
        generation_log.tokens = []  # a new list: expected['generated'] keeps the greedy run's
        with torch.no_grad():
            ids = model.generate(torch.tensor([prompt]), 8, temperature=0.8, top_k=10).tolist()
        for suffix, obj in (('scenario', scenario), ('expected', expected), ('sampled', {'scenario': sampled, 'ids': ids})):
            with open(os.path.join(OUT, f'{name}.{suffix}.json'), 'w') as f:
                f.write(dumps(obj) + '\n')
        size = sum(os.path.getsize(os.path.join(OUT, name, f)) for f in os.listdir(os.path.join(OUT, name)))
        print(f'{name}: {module} from {model_type}, {dtype} in {shards} file(s), {size / 1e3:.1f} kB, seed {seed}, ids {expected["ids"][0]}')


if __name__ == '__main__':
    main()
