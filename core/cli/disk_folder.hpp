// A model folder on disk as the native CLI and the native bench read it (SCENARIO.md, "Pretrained"):
// config.json, the shard index and the tokenizer's files whole; of each weight file (*.safetensors)
// its size and its first bytes up to the end of its header, so the core plans the module from the
// headers, then reads the weights straight into it a chunk at a time (parse_scenario with `sizes`,
// then run or Session::stream_weights with `range`): no copy of a whole file is ever held.
// `base` is prepended to a relative folder (the scenario file's own folder, ending in '/').
#pragma once
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "base/limits.hpp"
#include "nn/module.hpp"  // ends_with
#include "scenario/scenario.hpp"

namespace attn {

struct DiskFolder {
  FolderReader files;
  FolderSizes sizes;
  FolderRange range;
};

inline DiskFolder disk_folder(const std::string& base) {
  const auto path = [base](const std::string& folder, const std::string& name) {
    std::string dir = folder.empty() || folder[0] == '/' ? folder : base + folder;
    if (!dir.empty() && dir.back() != '/') dir += '/';
    return dir + name;
  };
  DiskFolder d;
  d.files = [path](const std::string& folder, const std::string& name, Blob& out) {
    std::ifstream f(path(folder, name), std::ios::binary | std::ios::ate);
    if (!f) return false;
    const uint64_t size = static_cast<uint64_t>(f.tellg());
    uint64_t want = size;
    if (ends_with(name, ".safetensors")) {  // the 8-byte length, then the header if the core's limit allows it
      unsigned char len[8] = {};
      f.seekg(0);
      f.read(reinterpret_cast<char*>(len), 8);
      uint64_t n = 0;
      for (int k = 7; k >= 0; --k) n = n << 8 | len[k];
      want = std::min<uint64_t>(size, n <= kMaxSafetensorsHeader ? 8 + n : 8);
    }
    out.resize(static_cast<size_t>(want));
    f.clear();
    f.seekg(0);
    return static_cast<bool>(f.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(want)));
  };
  d.sizes = [path](const std::string& folder, const std::string& name) -> uint64_t {
    std::ifstream f(path(folder, name), std::ios::binary | std::ios::ate);
    return f ? static_cast<uint64_t>(f.tellg()) : 0;
  };
  // the file stays open from one chunk to the next
  auto open = std::make_shared<std::pair<std::string, std::ifstream>>();
  d.range = [path, open](const std::string& folder, const std::string& name, uint64_t offset, uint8_t* dst, size_t n) {
    const std::string p = path(folder, name);
    if (open->first != p || !open->second.is_open()) {
      open->second = std::ifstream(p, std::ios::binary);
      open->first = p;
    }
    std::ifstream& f = open->second;
    f.clear();
    f.seekg(static_cast<std::streamoff>(offset));
    return static_cast<bool>(f.read(reinterpret_cast<char*>(dst), static_cast<std::streamsize>(n)));
  };
  return d;
}

}  // namespace attn
