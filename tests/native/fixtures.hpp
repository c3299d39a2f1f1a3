// Reading tests/fixtures/: scenario + expected result pairs written by scripts/make_fixtures.py
// from PyTorch 1.13, and the comparison every test uses (atol 1e-5, rtol 1e-4, max diff reported).
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace fixtures {

using json = nlohmann::json;

inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::string dir() { return ATTN_FIXTURES_DIR; }

// Fixture names (without .scenario.json), sorted; `sub`: a subfolder ("train/"), its names prefixed by it.
inline std::vector<std::string> names(const std::string& sub = "") {
  std::vector<std::string> out;
  if (!std::filesystem::exists(dir() + "/" + sub)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir() + "/" + sub)) {
    const std::string f = e.path().filename().string();
    const std::string suffix = ".scenario.json";
    if (f.size() > suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(sub + f.substr(0, f.size() - suffix.size()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::vector<float> base64_floats(const std::string& s) {
  static const std::string chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<unsigned char> bytes;
  unsigned buf = 0;
  int bits = 0;
  for (char c : s) {
    if (c == '=') break;
    const size_t v = chars.find(c);
    if (v == std::string::npos) continue;
    buf = (buf << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<unsigned char>((buf >> bits) & 0xff));
    }
  }
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);  // little-endian, as written
  return out;
}

// One number of a result's "data": JSON numbers, or the strings "-Infinity", "Infinity" and "NaN"
// that stand for the values JSON numbers cannot hold (masked scores are -inf).
inline float number(const json& x) {
  if (x.is_number()) return x.get<float>();
  const std::string s = x.is_string() ? x.get<std::string>() : "";
  if (s == "-Infinity") return -INFINITY;
  if (s == "Infinity") return INFINITY;
  if (s == "NaN") return NAN;
  throw std::runtime_error("not a number in a result's data: " + x.dump());
}

inline std::vector<float> numbers(const json& data) {
  std::vector<float> v;
  for (const json& x : data) v.push_back(number(x));
  return v;
}

// The values of an expected tensor entry: "data" or "data_b64".
inline std::vector<float> values(const json& t) {
  if (t.contains("data_b64")) return base64_floats(t["data_b64"].get<std::string>());
  std::vector<float> v;
  for (const json& x : t["data"]) v.push_back(number(x));
  return v;
}

// A step's expected gradient: "grad" or "grad_b64" (absent: the step is not on the loss's path).
inline bool has_grad(const json& t) { return t.contains("grad") || t.contains("grad_b64"); }
inline std::vector<float> grad_values(const json& t) {
  return t.contains("grad_b64") ? base64_floats(t["grad_b64"].get<std::string>()) : numbers(t["grad"]);
}

struct Diff {
  double max_abs = 0;
  size_t worst = 0;
  bool ok = true;
};

// a == b or |a - b| <= atol + rtol * |b| everywhere (b is PyTorch's value; a NaN never passes).
inline Diff compare(const float* a, const std::vector<float>& b, double atol = 1e-5, double rtol = 1e-4) {
  Diff d;
  for (size_t i = 0; i < b.size(); ++i) {
    if (a[i] == b[i]) continue;  // also a masked -inf against -inf
    const double diff = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (!(diff <= atol + rtol * std::fabs(b[i]))) d.ok = false;
    if (!(diff <= d.max_abs)) {
      d.max_abs = diff;
      d.worst = i;
    }
  }
  return d;
}

}  // namespace fixtures
