// The one error type of the core. Every public entry point checks its input and throws
// attn::Error with a message naming the value, the rule it broke and the fix, e.g.
//   "num_heads (3) must divide d_model (10)". Asserts live only inside hot loops.
// An error about one field of the scenario also says which, as a path (core/SCENARIO.md,
// "Errors"): "config.num_heads", "inputs.mask", "weights", ... so a page can put the message
// beside that control without reading the text.
#pragma once
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace attn {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, std::string field = "")
      : std::runtime_error(message), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// The pieces of a message, printed as std::ostream's defaults would (numbers as %g with 6
// digits, bool as 1 / 0) without <sstream>: iostreams and their locales are 200 KB of the WASM.
namespace detail {
inline void put(std::string& s, const std::string& v) { s += v; }
inline void put(std::string& s, const char* v) { s += v; }
inline void put(std::string& s, char v) { s += v; }
inline void put(std::string& s, bool v) { s += v ? '1' : '0'; }
inline void put(std::string& s, double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  s += buf;
}
inline void put(std::string& s, float v) { put(s, static_cast<double>(v)); }
template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
void put(std::string& s, T v) {
  s += std::to_string(v);
}
template <class... Parts>
std::string message(const Parts&... parts) {
  std::string s;
  (put(s, parts), ...);
  return s;
}
}  // namespace detail

// fail("num_heads (", h, ") must divide d_model (", c, ")") builds the message from its pieces.
template <class... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  throw Error(detail::message(parts...));
}

// The same, about one field of the scenario: fail_at("config.num_heads", "num_heads (", h, ") ...").
template <class... Parts>
[[noreturn]] void fail_at(const std::string& field, const Parts&... parts) {
  throw Error(detail::message(parts...), field);
}

}  // namespace attn
