"""PyTorch references of the core's modules, one file per family (the tutorial each comes from),
with their fixture cases; scripts/make_fixtures.py writes them to tests/fixtures/.

    common.py              the trace, masked softmax, a case's inputs, writing a case
    seed000.py ... seed004.py   each tutorial's modules, as the tutorial writes them, and their cases
    causal_transformer.py  the model training mode trains (seeds 002 + 004)
    nanogpt.py             nanoGPT's GPT, its generation, the Llama-style switches
    modern.py              ModernAttention (RoPE, ALiBi, GQA / MQA, window, sinks)
    runner.py              the module table; a scenario run as the core runs it
"""
