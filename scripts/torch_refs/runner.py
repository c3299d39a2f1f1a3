"""Runs a scenario as the core runs it (core/SCENARIO.md): the module table (id -> the family's
class, its forward's arguments and named outputs), build (seed, module, params, inputs in order),
run (outputs and traced steps) and run_generation (nanoGPT's generate)."""
import torch
import torch.nn as nn

from .causal_transformer import CausalTransformer
from .hf import LlamaForCausalLM
from .common import trace
from .modern import ModernAttention
from .nanogpt import GPTModule, generation_log
from .seed000 import MultiHeadAttention
from .seed001 import MultiHeadSelfAttention
from .seed002 import DecoderLayer, EncoderLayer, FusedMultiHeadSelfAttention, PositionalEncodingModule, Transformer
from .seed003 import ScaledDotProductAttention, Softmax, SplitHeadsMultiHeadAttention
from .seed004 import CausalAttention, CausalMultiHeadAttention, MultiHeadAttentionWrapper, SelfAttention_v1, SelfAttention_v2


class Outputs:
    def __init__(self, cls, args, outputs, mask_kind=None, ids=False):
        self.cls, self.args, self.outputs, self.mask_kind, self.ids = cls, args, outputs, mask_kind, ids


def encoder_layer_outputs(m, ret):
    return ret, m.attn.last_probs


MODULES = {
    'softmax': Outputs(Softmax, ['x'], ['output']),
    'scaled_dot_product_attention': Outputs(ScaledDotProductAttention, ['Q', 'K', 'V', 'mask'],
                                            ['output', 'attention_weights'], mask_kind='true_is_masked'),
    'SelfAttention_v1': Outputs(SelfAttention_v1, ['x'], ['output', 'attention_weights']),
    'SelfAttention_v2': Outputs(SelfAttention_v2, ['x'], ['output', 'attention_weights']),
    'CausalAttention': Outputs(CausalAttention, ['x'], ['output', 'attention_weights']),
    'MultiHeadAttentionWrapper': Outputs(MultiHeadAttentionWrapper, ['x'], ['output', 'attention_weights']),
    'CausalMultiHeadAttention': Outputs(CausalMultiHeadAttention, ['x'], ['output', 'attention_weights']),
    'MultiHeadAttention': Outputs(MultiHeadAttention, ['Q', 'K', 'V', 'mask'], ['output', 'attention_weights'],
                                  mask_kind='zero_is_masked'),
    'SplitHeadsMultiHeadAttention': Outputs(SplitHeadsMultiHeadAttention, ['query', 'key', 'value', 'mask'],
                                            ['output', 'attention_weights'], mask_kind='true_is_masked'),
    'MultiHeadSelfAttention': Outputs(MultiHeadSelfAttention, ['x'], ['output', 'attention_weights']),
    'FusedMultiHeadSelfAttention': Outputs(FusedMultiHeadSelfAttention, ['x'], ['output', 'attention_weights']),
    'PositionalEncoding': Outputs(PositionalEncodingModule, ['x'], ['output']),
    'EncoderLayer': Outputs(EncoderLayer, ['x'], ['output', 'attention_weights']),
    'DecoderLayer': Outputs(DecoderLayer, ['x', 'enc_output'], ['output', 'attention_weights', 'cross_attention_weights']),
    'Transformer': Outputs(Transformer, ['src', 'tgt'], ['output'], ids=True),
    'CausalTransformer': Outputs(CausalTransformer, ['idx'], ['output'], ids=True),
    'GPT': Outputs(GPTModule, ['idx'], ['output', 'attention_weights'], ids=True),
    'ModernAttention': Outputs(ModernAttention, ['x', 'positions'], ['output', 'attention_weights']),
    'Llama': Outputs(LlamaForCausalLM, ['input_ids'], ['logits', 'attention_weights'], ids=True),
}


def module_outputs(module_id, m, ret):
    """The forward's return value as the core's named outputs."""
    if module_id == 'CausalAttention':
        ret = (ret, m.last_attn_weights)
    elif module_id == 'FusedMultiHeadSelfAttention':
        ret = (ret, m.last_probs)
    elif module_id == 'EncoderLayer':
        ret = (ret, m.attn.last_probs)
    elif module_id == 'DecoderLayer':
        ret = (ret, m.self_attn.last_probs, m.cross_attn.last_probs)
    return dict(zip(MODULES[module_id].outputs, ret))


def build(sc):
    """The scenario's module and forward arguments, drawn as the core draws them: seed, module,
    params, inputs in order. The generator is left where the inputs leave it."""
    spec = MODULES[sc['module']]
    torch.manual_seed(sc.get('seed', 0))
    m = spec.cls(**sc.get('config', {}))
    if 'params' in sc:
        state = {k: torch.tensor(v['data'], dtype=torch.float32).view(v['shape']) for k, v in sc['params'].items()}
        missing = set(state) - set(m.state_dict())
        assert not missing, missing
        m.load_state_dict(state, strict=False)
    kwargs = {}
    for e in sc.get('inputs', []):
        shape = e['shape']
        if 'init' in e:
            t = torch.rand(shape) if e['init'] == 'rand' else torch.randn(shape)
        elif 'embedding' in e:
            em = e['embedding']
            if 'num_embeddings' in em:
                table = nn.Embedding(em['num_embeddings'], shape[-1])
            else:
                w = torch.tensor(em['weight'], dtype=torch.float32)
                table = nn.Embedding.from_pretrained(w.view(-1, shape[-1]))
            with torch.no_grad():
                t = table(torch.tensor(em['ids'], dtype=torch.long).view(shape[:-1]))
        else:
            t = torch.tensor(e['data'], dtype=torch.float64).view(shape)
            if e['name'] == 'mask' and spec.mask_kind == 'true_is_masked':
                t = t != 0
            elif spec.ids or e['name'] == 'positions':
                t = t.long()
            else:
                t = t.float()
        assert e['name'] in spec.args, (sc['module'], e['name'])
        kwargs[e['name']] = t
    return m, kwargs


def run(sc):
    """Runs a scenario as the core does; returns (outputs, steps) as lists of (name, tensor)."""
    m, kwargs = build(sc)
    m.train(sc.get('train', False))
    trace.interventions = sc.get('interventions', [])
    if 'generate' in sc:  # the prompt's forward: its window, cropped as generate() crops it
        ids = MODULES[sc['module']].args[0]
        L = kwargs[ids].size(1)
        kwargs[ids] = kwargs[ids][:, -m.config.block_size:]
        trace.offset, trace.length = L - kwargs[ids].size(1), L
    trace.on = sc.get('trace', False)
    trace.steps = []
    trace.prefix = ''
    with torch.no_grad():
        ret = m(**kwargs)
    trace.on = False
    trace.interventions, trace.offset, trace.length = [], 0, None
    return list(module_outputs(sc['module'], m, ret).items()), trace.steps


def run_generation(sc):
    """nanoGPT's generate() from the scenario's prompt, as the core runs "generate" (SCENARIO.md,
    "Generation"): seed, module, prompt, model.eval(), then max_new_tokens tokens, multinomial
    drawing from the same generator. Returns {"ids", "generated"} for the expected result."""
    m, kwargs = build(sc)
    m.eval()
    g = sc['generate']
    generation_log.tokens = []
    trace.interventions = sc.get('interventions', [])  # every token's forward (generate() sets the positions)
    try:
        idx = m.generate(kwargs[MODULES[sc['module']].args[0]], g['max_new_tokens'], temperature=g.get('temperature', 1.0), top_k=g.get('top_k'),
                         top_p=g.get('top_p'))
    finally:
        trace.interventions, trace.offset, trace.length = [], 0, None
    return {'ids': idx.tolist(), 'generated': generation_log.tokens}
