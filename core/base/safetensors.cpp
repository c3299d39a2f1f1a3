// See safetensors.hpp. The file is untrusted input (a drag-and-drop, a URL): the header is parsed
// with nlohmann::json under a size bound, then each entry is checked before any byte is read.
#include "base/safetensors.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/build.hpp"
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

}  // namespace

void decode_values(const std::string& dtype, const uint8_t* src, int64_t count, float* dst, const std::string& where, int64_t first) {
  const size_t elem = dtype == "F32" ? 4 : 2;
  const bool f16 = dtype == "F16";
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t* p = src + static_cast<size_t>(i) * elem;
    float v;
    if (elem == 4) {
      const uint32_t bits = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                            static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
      std::memcpy(&v, &bits, 4);
    } else {
      const uint16_t h = static_cast<uint16_t>(p[0] | p[1] << 8);
      v = f16 ? f16_to_f32(h) : bf16_to_f32(h);
    }
    if (!std::isfinite(v)) fail(where, " holds ", v, " at index ", first + i, ": weights must be finite");
    dst[i] = v;
  }
}

namespace {

std::string brief(const json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// The JSON header after the 8-byte length, checked against the file's size and nesting.
json read_header(const uint8_t* bytes, uint64_t size, uint64_t& n) {
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
SafeTensorEntry read_entry(const json& e, const std::string& where, uint64_t data_size) {
  SafeTensorEntry r;
  if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
    fail(where, " must have dtype, shape and data_offsets, got ", brief(e));
  if (!e["dtype"].is_string()) fail(where, ": dtype ", brief(e["dtype"]), " must be a string");
  r.dtype = e["dtype"].get<std::string>();
  if (r.dtype != "F32" && r.dtype != "F16" && r.dtype != "BF16")
    fail(where, " has dtype ", r.dtype, ": the core reads F32, F16 and BF16 (save float weights: model.float())");
  const uint64_t elem = r.dtype == "F32" ? 4 : 2;
  if (!e["shape"].is_array() || e["shape"].size() > 8) fail(where, ": shape ", brief(e["shape"]), " must be a list of at most 8 sizes");
  for (const json& d : e["shape"]) {
    // each size and the running product stay below the limit, so the product never overflows
    if (!d.is_number_unsigned() || d.get<uint64_t>() > static_cast<uint64_t>(kMaxWeightElements))
      fail(where, ": shape ", brief(e["shape"]), " must hold sizes from 0 to ", kMaxWeightElements);
    r.shape.push_back(d.get<int64_t>());
    r.count *= r.shape.back();
    if (r.count > kMaxWeightElements) fail(where, " has more than ", kMaxWeightElements, " elements: the limit per tensor");
  }
  const json& off = e["data_offsets"];
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
    fail(where, ": data_offsets ", brief(off), " must be [begin, end] byte offsets");
  r.begin = off[0].get<uint64_t>(), r.end = off[1].get<uint64_t>();
  if (r.begin > r.end || r.end > data_size)
    fail(where, ": data_offsets [", r.begin, ", ", r.end, "] must satisfy begin <= end <= ", data_size,
         " (the data after the header): the file is truncated or damaged");
  if (r.end - r.begin != static_cast<uint64_t>(r.count) * elem)
    fail(where, ": data_offsets span ", r.end - r.begin, " bytes but ", r.dtype, " ", shape_str(r.shape), " needs ",
         static_cast<uint64_t>(r.count) * elem);
  return r;
}

// The entry's values as float32 (little-endian F32, F16 or BF16), every one finite.
Tensor decode(const SafeTensorEntry& e, const uint8_t* src, const std::string& where) {
  Tensor t = Tensor::empty(e.shape);
  decode_values(e.dtype, src, e.count, t.data(), where, 0);
  return t;
}

std::string where_of(const std::string& name) { return "weights file tensor '" + name + "'"; }

}  // namespace

static void check_tiling(const std::vector<SafeTensorEntry>& entries, uint64_t data_size);

uint64_t SafeTensorsHeader::f32_bytes() const {
  uint64_t total = 0;
  for (const SafeTensorEntry& e : entries) total += static_cast<uint64_t>(e.count) * 4;
  return total;
}

SafeTensorsHeader read_safetensors_header(const uint8_t* bytes, size_t available, uint64_t size) {
  uint64_t n = 0;
  if (available < size) {  // only the header's bytes at hand: its length must say they are
    for (int i = 7; available >= 8 && i >= 0; --i) n = (n << 8) | bytes[i];
    if (available < 8 || (n <= kMaxSafetensorsHeader && n <= size - 8 && n > available - 8))
      fail("internal: a safetensors header needs its 8 + ", n, " bytes, ", available, " were given");
  }
  const json header = read_header(bytes, size, n);
  SafeTensorsHeader h;
  h.data_offset = 8 + n;
  const uint64_t data_size = size - 8 - n;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    SafeTensorEntry e = read_entry(it.value(), where_of(it.key()), data_size);
    e.name = it.key();
    h.entries.push_back(std::move(e));
  }
  if (h.entries.empty()) fail("weights file holds no tensors");
  // By offset, the tensors must tile the data (as the safetensors crate checks): each begins where
  // the one before it ends, so no byte is two tensors' and none is left over. (libc's qsort: an
  // untrusted header may list 10^5 entries.)
  check_tiling(h.entries, data_size);
  h.data_size = data_size;
  return h;
}

static void check_tiling(const std::vector<SafeTensorEntry>& entries, uint64_t data_size) {
  std::vector<const SafeTensorEntry*> order;
  for (const SafeTensorEntry& e : entries) order.push_back(&e);
  std::qsort(order.data(), order.size(), sizeof order[0], [](const void* x, const void* y) {
    const SafeTensorEntry *a = *static_cast<const SafeTensorEntry* const*>(x), *b = *static_cast<const SafeTensorEntry* const*>(y);
    return a->begin != b->begin ? (a->begin < b->begin ? -1 : 1) : a->end < b->end ? -1 : a->end > b->end ? 1 : 0;
  });
  uint64_t at = 0;
  for (const SafeTensorEntry* e : order) {
    if (e->begin != at)
      fail(where_of(e->name), ": data_offsets [", e->begin, ", ", e->end, "] ", e->begin < at ? "overlap" : "leave a gap after",
           " the tensor before it (which ends at byte ", at, "): each tensor's bytes must follow the previous one's, the file is damaged");
    at = e->end;
  }
  if (at != data_size)
    fail("weights file has ", data_size - at, " bytes after its last tensor (the tensors end at ", at, " of ", data_size,
         "): the file is damaged or not safetensors");
}

std::vector<SafeTensor> read_safetensors(const SafeTensorsHeader& h, const uint8_t* bytes) {
  std::vector<SafeTensor> out;
  for (const SafeTensorEntry& e : h.entries) out.push_back({e.name, e.dtype, decode(e, bytes + h.data_offset + e.begin, where_of(e.name))});
  return out;
}

std::vector<SafeTensor> read_safetensors(const uint8_t* bytes, size_t size) {
  // The full core checks the header as a whole (the tensors tile the data), then decodes; the
  // page's small build, which reads one module's weights file and no model folders, leaves that
  // out (its vector of entries and sort: 1.5 KB) and checks each entry as it decodes it.
  if constexpr (kPretrained) return read_safetensors(read_safetensors_header(bytes, size, size), bytes);
  uint64_t n = 0;
  const json header = read_header(bytes, size, n);
  std::vector<SafeTensor> out;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const SafeTensorEntry e = read_entry(it.value(), where_of(it.key()), size - 8 - n);
    out.push_back({it.key(), e.dtype, decode(e, bytes + 8 + n + e.begin, where_of(it.key()))});
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
