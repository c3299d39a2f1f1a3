// See safetensors.hpp. The file is untrusted input (a drag-and-drop, a URL): the header is parsed
// with nlohmann::json under a size bound, then each entry is checked before any byte is read.
#include "base/safetensors.hpp"

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/limits.hpp"

namespace attn {
namespace {

using json = nlohmann::json;

float f16_to_f32(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(mant), -24);  // zero and subnormals
  else if (exp == 31) v = mant ? NAN : INFINITY;
  else v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

float bf16_to_f32(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

std::string brief(const json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// The JSON header after the 8-byte length, checked against the file's size and nesting.
json read_header(const uint8_t* bytes, size_t size, uint64_t& n) {
  if (size < 8) fail("weights file has ", size, " bytes: a safetensors file starts with an 8-byte header length");
  n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];
  if (n > kMaxSafetensorsHeader)
    fail("weights file header length (", n, " bytes) is above the ", kMaxSafetensorsHeader,
         "-byte limit: this is not a safetensors file, or a damaged one");
  if (n > size - 8)
    fail("weights file header length (", n, " bytes) runs past the end of the file (", size,
         " bytes): the file is truncated or not safetensors");
  json header;
  try {
    // A header is at most 3 deep ({name: {"shape": [..]}}); refusing deeper nesting while parsing
    // keeps every later walk of it (the messages' dump()) from recursing off the stack.
    header = json::parse(bytes + 8, bytes + 8 + n, [](int depth, json::parse_event_t, json&) {
      if (depth > kMaxSafetensorsDepth)
        fail("weights file header nests deeper than ", kMaxSafetensorsDepth,
             " levels: a safetensors header is {\"name\": {\"dtype\", \"shape\", \"data_offsets\"}}");
      return true;
    });
  } catch (const json::exception& e) {
    fail("weights file header is not valid JSON: ", e.what());
  }
  if (!header.is_object()) fail("weights file header must be a JSON object of tensors, got ", brief(header));
  return header;
}

// One header entry, checked: its dtype's element size, shape and byte range inside the data.
struct Entry {
  std::string dtype;
  size_t elem = 0;
  Shape shape;
  int64_t count = 1;
  uint64_t begin = 0, end = 0;
};

Entry read_entry(const json& e, const std::string& where, uint64_t data_size) {
  Entry r;
  if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
    fail(where, " must have dtype, shape and data_offsets, got ", brief(e));
  if (!e["dtype"].is_string()) fail(where, ": dtype ", brief(e["dtype"]), " must be a string");
  r.dtype = e["dtype"].get<std::string>();
  if (r.dtype == "F32") r.elem = 4;
  else if (r.dtype == "F16" || r.dtype == "BF16") r.elem = 2;
  else fail(where, " has dtype ", r.dtype, ": the core reads F32, F16 and BF16 (save float weights: model.float())");
  if (!e["shape"].is_array() || e["shape"].size() > 8) fail(where, ": shape ", brief(e["shape"]), " must be a list of at most 8 sizes");
  for (const json& d : e["shape"]) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > static_cast<uint64_t>(kMaxInputElements))
      fail(where, ": shape ", brief(e["shape"]), " must hold sizes from 0 to ", kMaxInputElements);
    r.shape.push_back(d.get<int64_t>());
    r.count *= r.shape.back();
    if (r.count > kMaxInputElements) fail(where, " has more than ", kMaxInputElements, " elements: the limit per tensor");
  }
  const json& off = e["data_offsets"];
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
    fail(where, ": data_offsets ", brief(off), " must be [begin, end] byte offsets");
  r.begin = off[0].get<uint64_t>(), r.end = off[1].get<uint64_t>();
  if (r.begin > r.end || r.end > data_size)
    fail(where, ": data_offsets [", r.begin, ", ", r.end, "] must satisfy begin <= end <= ", data_size,
         " (the data after the header): the file is truncated or damaged");
  if (r.end - r.begin != static_cast<uint64_t>(r.count) * r.elem)
    fail(where, ": data_offsets span ", r.end - r.begin, " bytes but ", r.dtype, " ", shape_str(r.shape), " needs ",
         static_cast<uint64_t>(r.count) * r.elem);
  return r;
}

// The entry's values as float32 (little-endian F32, F16 or BF16), every one finite.
Tensor decode(const Entry& e, const uint8_t* src, const std::string& where) {
  Tensor t = Tensor::empty(e.shape);
  float* dst = t.data();
  for (int64_t i = 0; i < e.count; ++i) {
    const uint8_t* p = src + static_cast<size_t>(i) * e.elem;
    float v;
    if (e.elem == 4) {
      const uint32_t bits = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                            static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
      std::memcpy(&v, &bits, 4);
    } else {
      const uint16_t h = static_cast<uint16_t>(p[0] | p[1] << 8);
      v = e.dtype == "F16" ? f16_to_f32(h) : bf16_to_f32(h);
    }
    if (!std::isfinite(v)) fail(where, " holds ", v, " at index ", i, ": weights must be finite");
    dst[i] = v;
  }
  return t;
}

}  // namespace

std::vector<SafeTensor> read_safetensors(const uint8_t* bytes, size_t size) {
  uint64_t n = 0;
  const json header = read_header(bytes, size, n);
  const uint64_t data_size = size - 8 - n;
  const uint8_t* data = bytes + 8 + n;
  std::vector<SafeTensor> out;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const std::string where = "weights file tensor '" + it.key() + "'";
    const Entry e = read_entry(it.value(), where, data_size);
    out.push_back({it.key(), e.dtype, decode(e, data + e.begin, where)});
  }
  if (out.empty()) fail("weights file holds no tensors");
  return out;
}

std::string safetensors_listing_json(const uint8_t* bytes, size_t size) {
  json list = json::array();
  for (const SafeTensor& t : read_safetensors(bytes, size))
    list.push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.value.shape()}});
  return list.dump();
}

}  // namespace attn
