// Reading a PyTorch state_dict saved as safetensors (https://github.com/huggingface/safetensors):
// 8 bytes little-endian header length N, N bytes of JSON {"<name>": {"dtype", "shape",
// "data_offsets": [begin, end]}, "__metadata__": {...}}, then the raw little-endian data.
// F32, F16 and BF16 become float32; every offset, size and value is checked, nothing is read
// past the buffer, and any problem is an attn::Error naming the tensor and the rule.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/limits.hpp"
#include "base/tensor.hpp"

namespace attn {

struct SafeTensor {
  std::string name;
  std::string dtype;  // as in the file: "F32", "F16" or "BF16"
  Tensor value;       // float32
};


std::vector<SafeTensor> read_safetensors(const uint8_t* bytes, size_t size);

// [{"name", "dtype", "shape"}] of a file, for listing it (the page, the CLI); throws like the reader.
std::string safetensors_listing_json(const uint8_t* bytes, size_t size);

}  // namespace attn
