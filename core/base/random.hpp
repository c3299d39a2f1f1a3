// Generator: PyTorch 1.13's CPU generator (at::CPUGeneratorImpl), so that a seed gives PyTorch's
// numbers: mt19937 seeded as torch.manual_seed does, and ATen's transformations of its draws for
// torch.rand, torch.randn (serial path with the cached Box-Muller sample, and the >= 16-element
// normal_fill path), Tensor.bernoulli_, and nn.Linear / nn.Embedding initialisation.
#pragma once
#include <cstddef>
#include <cstdint>
#include <random>

namespace attn {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ULL);  // torch's default seed
  void manual_seed(uint64_t seed);  // resets the engine and the cached normal sample
  uint32_t random();                // one 32-bit mt19937 draw
  uint64_t random64();              // two draws, the first is the high word (as ATen)
  void rand(float* out, size_t n);                              // torch.rand
  void uniform_(float* out, size_t n, double from, double to);  // Tensor.uniform_ on float32
  void randn(float* out, size_t n);                             // torch.randn
  void normal_(float* out, size_t n, double mean, double std);  // Tensor.normal_ on float32
  void bernoulli_(float* out, size_t n, double p);              // Tensor.bernoulli_(p), float32
  void exponential_(float* out, size_t n, double lambd = 1.0);  // Tensor.exponential_(lambd), float32
  // torch.multinomial(probs, 1) (replacement=False, PyTorch's default) for `rows` rows of `n`
  // probabilities: out[r] = argmax_j probs[r][j] / q[r][j], q = exponential_ of the rows*n
  // entries, drawn in row-major order (the first maximum wins).
  void multinomial1(const float* probs, size_t rows, size_t n, int64_t* out);
  // nn.Linear(in, out, bias): kaiming_uniform_(a=sqrt(5)) on weight (out, in), then
  // uniform_(-1/sqrt(fan_in), 1/sqrt(fan_in)) on bias (nullptr when bias=False)
  void linear_init(float* weight, size_t weight_n, float* bias, size_t bias_n, int64_t fan_in);
  void embedding_init(float* weight, size_t n);                 // nn.Embedding: normal_(0, 1)
  // Draws that only move the stream (uniform_, and normal_ of >= 16 elements, leave `out` as it
  // is): for a module whose every parameter a state_dict replaces right after construction. The
  // generator ends exactly where the real draws leave it, so later draws (inputs, dropout,
  // sampling) are PyTorch's.
  void set_skip_values(bool on) { skip_values_ = on; }
  bool skips_values() const { return skip_values_; }
  // No draws at all (uniform_ and normal_ leave `out` and the stream as they are): a model folder's
  // module, built as Hugging Face's from_pretrained builds it (torch.nn.init's fills are no-ops
  // while the checkpoint's values replace every parameter), so the seed's first draws go to what
  // follows (sampling, dropout) as after from_pretrained.
  void set_no_draws(bool on) { no_draws_ = on; }

 private:
  double uniform_double();  // at::uniform_real_distribution<double>(0, 1): 53 bits of random64()
  double normal_double();   // at::normal_distribution<double>(0, 1) with the cached second sample
  std::mt19937 engine_;     // at::mt19937 is the standard MT19937 seeded with seed & 0xffffffff
  bool has_next_normal_ = false;
  bool skip_values_ = false;
  bool no_draws_ = false;
  double next_normal_ = 0;
};

}  // namespace attn
