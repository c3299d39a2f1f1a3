// Attention Playground core: the PyTorch code of five attention tutorials (docs/tutorials.md) in
// C++17 with xsimd kernels, number for number. Read this header as the table of contents.
//
// Shape letters, used in every comment of the core:
//   B = batch, T = query length (seq_q), S = key/value length (seq_k), C = d_model / emb_dim,
//   H = heads, D = head dim (C / H), V = vocabulary size.
//
// Worked example (what the CLI and the bindings do):
//   attn::Scenario s = attn::parse_scenario(R"({"module": "SelfAttention_v1",
//       "config": {"d_in": 3, "d_out": 2}, "seed": 123,
//       "inputs": [{"name": "x", "shape": [6, 3], "data": [0.43, 0.15, 0.89, ...]}]})");
//   attn::Result r = attn::run(s);          // r.outputs[0] is the context vectors, (6, 2)
//   std::string json = attn::result_to_json(r);
#pragma once

// The layers, lowest first (core/LAYERS.md); a file includes only its own layer and those below.
#include "base/error.hpp"        // attn::Error: every bad input, with value, rule and fix
#include "base/limits.hpp"       // every bound a run is checked against
#include "base/tensor.hpp"       // Tensor: shape + strides, views for view/transpose/chunk
#include "base/random.hpp"       // Generator: PyTorch 1.13's CPU generator (manual_seed, rand, randn, nn.Linear init)
#include "base/safetensors.hpp"  // a state_dict saved as safetensors (F32, F16, BF16) -> tensors
#include "base/threads.hpp"      // parallel_for: the work split across threads, never a sum (ATTENTION_THREADS)
#include "kernels/kernels.hpp"   // Kernels: scalar reference + xsimd versions of the inner loops
#include "math/ops.hpp"          // on tensors: linear, matmul, softmax, masked_fill, layer_norm, gelu, embedding, ...
#include "math/packed.hpp"       // nn.Linear weights packed ahead for a few tokens, weights_changed()
#include "tape/tape.hpp"         // Context, Var, Node, Step: the typed record of a forward pass (the steps)
#include "tape/graph.hpp"        // the ops modules call: each computes and records a node (one file per family in tape/ops/)
#include "tape/autograd.hpp"     // backward(): the tape walked in reverse
#include "nn/attention_spec.hpp" // one description of each module's attention conventions
#include "nn/module.hpp"         // Module, ModuleInfo, Config
#include "nn/generative.hpp"     // Generative, KVCache: what a language model offers generation
#include "modules/modules.hpp"   // the seeds' modules and the module table (registry.cpp)
#include "run/train.hpp"         // Trainer: forward, loss, backward, clip, optimizer step
#include "run/generate.hpp"      // Generation token by token (GPT): KV cache, nanoGPT's sampling, PyTorch's draws
#include "scenario/scenario.hpp" // Scenario JSON -> Result JSON (SCENARIO.md)
#include "scenario/session.hpp"  // a scenario's module built once and kept
