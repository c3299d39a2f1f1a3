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


// One tensor of a header, checked: its dtype, shape and byte range in the data after the header.
struct SafeTensorEntry {
  std::string name, dtype;
  Shape shape;
  int64_t count = 1;
  uint64_t begin = 0, end = 0;
};
struct SafeTensorsHeader {
  uint64_t data_offset = 0;  // 8 + the header's length: where the data starts
  uint64_t data_size = 0;    // the bytes after the header, as the entries claim them
  std::vector<SafeTensorEntry> entries;  // in the file's (header's) order
  uint64_t f32_bytes() const;  // the tensors as float32, as the core holds them
};
// The header alone, every entry checked against the file's `size` (which may exceed the bytes
// given: a page reads the header of a file before it fetches the rest): F32 / F16 / BF16, shapes
// within kMaxWeightElements, byte ranges that tile the data exactly (no overlap, no gap, nothing
// past the end, as the safetensors crate requires). `bytes` must hold the header (8 + N bytes).
SafeTensorsHeader read_safetensors_header(const uint8_t* bytes, size_t available, uint64_t size);
// The tensors of a file whose header `h` was read from these bytes, decoded (every value finite).
std::vector<SafeTensor> read_safetensors(const SafeTensorsHeader& h, const uint8_t* bytes);

std::vector<SafeTensor> read_safetensors(const uint8_t* bytes, size_t size);
// `count` little-endian values of `dtype` (F32, F16, BF16) at src as float32 into dst, each finite
// (else an Error naming `where` and the index, counted from `first`).
void decode_values(const std::string& dtype, const uint8_t* src, int64_t count, float* dst, const std::string& where, int64_t first);

// [{"name", "dtype", "shape"}] of a file, for listing it (the page, the CLI); throws like the reader.
std::string safetensors_listing_json(const uint8_t* bytes, size_t size);

}  // namespace attn
