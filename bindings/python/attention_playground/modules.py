"""Which core module a PyTorch module is, and its constructor arguments.

A seed's class is recognised by its class name and its state_dict names (seeds 000, 003 and 004
all call theirs `MultiHeadAttention`), and its arguments are read from its parameters' shapes and
the attributes the seed stores. Module ids, argument names and input names are the core's
(core/SCENARIO.md, "Modules"); `show(..., module_id=..., config=...)` names what cannot be read.
"""

# Per core module id: the class names it answers to (the seed's and the core's own), the
# state_dict names that tell it apart, its forward's inputs in order (name, kind), and how its
# constructor arguments are read from an instance (None: give `config=`).
MODULES = {}


def _module(module_id, names, keys, inputs, read=None):
    MODULES[module_id] = {'names': set(names) | {module_id}, 'keys': keys, 'inputs': inputs, 'read': read}


def _heads(module, default=None):
    """The first `num_heads` attribute of the module or a submodule (seeds keep it as an attribute)."""
    for sub in module.modules():
        value = getattr(sub, 'num_heads', None)
        if isinstance(value, int):
            return value
    if default is None:
        raise ValueError(f'{type(module).__name__}: no num_heads attribute to read the number of heads from; '
                         'pass config={"num_heads": ...} to show()')
    return default


def _dropout(module):
    for sub in module.modules():
        if type(sub).__name__ == 'Dropout':
            return float(sub.p)
    return 0.0


def _context_length(module, sd):
    mask = next((v for k, v in sd.items() if k.endswith('mask')), None)
    if mask is None:
        raise ValueError(f'{type(module).__name__}: no mask buffer to read context_length from; pass config={{"context_length": ...}}')
    return int(mask.shape[-1])


def _linear_qkv(prefix=''):
    def read(module, sd):
        w = sd[f'{prefix}W_query.weight']
        return {'d_in': int(w.shape[1]), 'd_out': int(w.shape[0]), 'qkv_bias': f'{prefix}W_query.bias' in sd}
    return read


X = [('x', 'float')]
QKV_MASK = lambda q, k, v: [(q, 'float'), (k, 'float'), (v, 'float'), ('mask', 'mask')]

_module('SelfAttention_v1', [], ['W_query', 'W_key', 'W_value'], X,
        lambda m, sd: {'d_in': int(sd['W_query'].shape[0]), 'd_out': int(sd['W_query'].shape[1])})
_module('SelfAttention_v2', [], ['W_query.weight', 'W_key.weight', 'W_value.weight'], X, _linear_qkv())
_module('CausalAttention', [], ['W_query.weight', 'W_key.weight', 'W_value.weight', 'mask'], X,
        lambda m, sd: {**_linear_qkv()(m, sd), 'context_length': _context_length(m, sd), 'dropout': _dropout(m)})
_module('MultiHeadAttentionWrapper', [], ['heads.0.W_query.weight'], X,
        lambda m, sd: {**_linear_qkv('heads.0.')(m, sd), 'context_length': _context_length(m, sd), 'dropout': _dropout(m),
                       'num_heads': len(m.heads)})
_module('CausalMultiHeadAttention', ['MultiHeadAttention'], ['W_query.weight', 'W_key.weight', 'W_value.weight', 'out_proj.weight'], X,
        lambda m, sd: {**_linear_qkv()(m, sd), 'context_length': _context_length(m, sd), 'dropout': _dropout(m),
                       'num_heads': _heads(m)})
_module('MultiHeadAttention', [], ['W_Q.weight', 'W_K.weight', 'W_V.weight', 'W_O.weight'], QKV_MASK('Q', 'K', 'V'),
        lambda m, sd: {'d_model': int(sd['W_Q.weight'].shape[1]), 'num_heads': _heads(m)})
_module('SplitHeadsMultiHeadAttention', ['MultiHeadAttention'], ['w_q.weight', 'w_k.weight', 'w_v.weight', 'w_o.weight'],
        QKV_MASK('query', 'key', 'value'),
        lambda m, sd: {'d_model': int(sd['w_q.weight'].shape[1]), 'num_heads': _heads(m), 'dropout': _dropout(m)})
_module('MultiHeadSelfAttention', [], ['linear_q.weight', 'linear_k.weight', 'linear_v.weight'], X,
        lambda m, sd: {'dim_in': int(sd['linear_q.weight'].shape[1]), 'dim_k': int(sd['linear_q.weight'].shape[0]),
                       'dim_v': int(sd['linear_v.weight'].shape[0]), 'num_heads': _heads(m, 8)})
_module('FusedMultiHeadSelfAttention', ['MultiHeadSelfAttention'], ['qkv_proj.weight', 'fc_out.weight'], X,
        lambda m, sd: {'emb_dim': int(sd['qkv_proj.weight'].shape[1]), 'num_heads': _heads(m)})
_module('PositionalEncoding', [], ['pe'], X,
        lambda m, sd: {'emb_dim': int(sd['pe'].shape[-1]), 'max_len': int(sd['pe'].shape[-2])})
_module('EncoderLayer', [], ['attn.qkv_proj.weight', 'ffn.0.weight'], X,
        lambda m, sd: {'emb_dim': int(sd['attn.qkv_proj.weight'].shape[1]), 'num_heads': _heads(m),
                       'ffn_dim': int(sd['ffn.0.weight'].shape[0])})
_module('DecoderLayer', [], ['self_attn.qkv_proj.weight', 'cross_attn.qkv_proj.weight', 'ffn.0.weight'], [('x', 'float'), ('enc_output', 'float')],
        lambda m, sd: {'emb_dim': int(sd['self_attn.qkv_proj.weight'].shape[1]), 'num_heads': _heads(m),
                       'ffn_dim': int(sd['ffn.0.weight'].shape[0])})
_module('Transformer', [], ['embedding.weight', 'encoder.0.attn.qkv_proj.weight', 'fc_out.weight'], [('src', 'ids'), ('tgt', 'ids')],
        lambda m, sd: {'vocab_size': int(sd['embedding.weight'].shape[0]), 'emb_dim': int(sd['embedding.weight'].shape[1]),
                       'num_heads': _heads(m), 'ffn_dim': int(sd['encoder.0.ffn.0.weight'].shape[0]), 'num_layers': len(m.encoder)})
_module('GPT', [], ['transformer.wte.weight', 'transformer.h.0.attn.c_attn.weight'], [('idx', 'ids')],
        lambda m, sd: {k: getattr(m.config, k) for k in ('vocab_size', 'block_size', 'n_layer', 'n_head', 'n_embd', 'dropout', 'bias')})
_module('CausalTransformer', [], ['embedding.weight', 'layers.0.attn.W_query.weight'], [('idx', 'ids')])
_module('ModernAttention', [], [], [('x', 'float'), ('positions', 'ids')])
_module('scaled_dot_product_attention', [], [], QKV_MASK('Q', 'K', 'V'), lambda m, sd: {})
_module('softmax', [], [], X)


def recognise(module, module_id=None):
    """The core module id of a PyTorch module: module_id when given, else the one whose class name
    and state_dict names it has. Raises ValueError naming the class and what was looked for."""
    if module_id is not None:
        if module_id not in MODULES:
            raise ValueError(f'module_id {module_id!r} is not a module of the core: one of {", ".join(MODULES)}')
        return module_id
    name = type(module).__name__
    keys = set(module.state_dict())
    found = [mid for mid, m in MODULES.items() if name in m['names'] and m['keys'] and set(m['keys']) <= keys]
    if len(found) == 1:
        return found[0]
    named = [mid for mid, m in MODULES.items() if name in m['names']]
    hint = (f'a class named {name} is one of {", ".join(named)}, told apart by state_dict names '
            + '; '.join(f'{mid}: {", ".join(MODULES[mid]["keys"])}' for mid in named)) if named else \
        f'no seed module is called {name}'
    raise ValueError(f'cannot tell which seed module {name} is ({hint}; its state_dict has '
                     f'{", ".join(sorted(keys)[:8]) or "nothing"}): pass module_id= (one of {", ".join(MODULES)})')


def read_config(module, module_id, config=None):
    """The constructor arguments: those read from the instance, overridden by `config`."""
    entry = MODULES[module_id]
    read = {}
    if entry['read'] is not None:
        try:
            read = entry['read'](module, module.state_dict())
        except (KeyError, AttributeError) as e:
            if config is None:
                raise ValueError(f'{type(module).__name__} as {module_id}: cannot read its arguments ({e!r} missing); '
                                 'pass config={...} with its constructor arguments') from None
    elif config is None:
        raise ValueError(f'{module_id}: its arguments are not read from the instance; pass config={{...}} '
                         '(the constructor arguments by name)')
    return {**read, **(config or {})}
