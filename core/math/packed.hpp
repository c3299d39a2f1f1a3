// nn.Linear's weights packed ahead for the kernels' few-row calls (Kernels::pack_nt): a call of
// more than half a vector and at most one vector of rows (9 to 16 tokens on AVX-512, 5 to 8 on
// AVX2) reads packed weights with a load per two multiply-adds instead of one (kernels_simd.hpp),
// as onnxruntime packs its weights when a session starts. A copy is made at a weight's second use
// with no write between (a training step uses each weight once before the optimizer writes it, a
// one-shot run uses it once: neither packs anything), kept while its tensor lives, and dropped at
// its next use after weights_changed(). At most 256 MB of copies: the weights met first keep
// theirs and later ones are read in place (a model larger than that, a GPT-2's 494 MB, run round
// after round would otherwise pack every weight at every use, evicting the next one's copy).
// Native AVX2 and AVX-512 only: the WASM and scalar tables have no packed kernels.
#pragma once
#include <memory>

#include "base/tensor.hpp"
#include "kernels/kernels.hpp"

namespace attn {

#if defined(__EMSCRIPTEN__)
// WebAssembly's tables have no packed kernels (kernels_wasm.cpp), and neither packed.cpp nor
// linear()'s call into it is built there (the page's first view is within bytes of its budget):
// no copies to drop.
inline void weights_changed() {}
#else
// w (rows x cols, contiguous) packed by k.pack_nt, or nullptr: no packed kernels in k, w not yet
// used twice since it was last written, or no room left. Keyed by w's storage (a freed buffer reused
// for another tensor is another key), its first element and shape: the slices of one fused
// weight are separate copies.
std::shared_ptr<const float> packed_weights(const Tensor& w, const Kernels& k);

// Every in-place write to a tensor linear() may have read as weights calls this after writing
// (the optimizers' steps do); tensors assigned anew need nothing. Builds with
// -DATTN_CHECK_PACKED (the sanitizer tree) compare each copy with its weights at every use and
// throw on a difference, so a write without this call fails the tests.
void weights_changed();
#endif

}  // namespace attn
