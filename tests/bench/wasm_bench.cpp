// WASM side of `npm run bench`: MhaSession (mha_session.hpp) for the bench page (page.js), which
// times forward() from JavaScript beside onnxruntime-web and tfjs. Thin, as bindings/bindings.cpp:
// tensors go out as views into the heap (valid until the next call), x comes in by copy.
// peak() measures the WASM SIMD128 multiply-add ceiling in this engine (peak.hpp), as JSON.
#include <emscripten/bind.h>

#include <string>

#include "base/threads.hpp"
#include "mha_session.hpp"
#include "peak.hpp"

using namespace emscripten;
using attn::bench::MhaSession;

namespace {

val view(const attn::Tensor& t) { return val(typed_memory_view(static_cast<size_t>(t.numel()), t.base())); }

class Session {
 public:
  Session(int B, int T, int C, int H) : s_(B, T, C, H) {}
  val x() { return view(s_.x()); }                 // write a new input into it, or read it
  val forward() { return view(s_.forward()); }     // output (B,T,C)
  int paramCount() const { return static_cast<int>(s_.params().size()); }
  std::string paramName(int i) const { return s_.params().at(static_cast<size_t>(i)).first; }
  val param(int i) const { return view(*s_.params().at(static_cast<size_t>(i)).second); }

 private:
  MhaSession s_;
};

std::string kernels_name() { return attn::kernels().name; }

}  // namespace

EMSCRIPTEN_BINDINGS(attention_bench) {
  class_<Session>("Session")
      .constructor<int, int, int, int>()
      .function("x", &Session::x)
      .function("forward", &Session::forward)
      .function("paramCount", &Session::paramCount)
      .function("paramName", &Session::paramName)
      .function("param", &Session::param);
  function("kernelsName", &kernels_name);
  function("kernelsDetail", &attn::kernels_detail);  // the GEMM tiles timed at start-up, and their GFLOP/s
  function("peak", optional_override([]() { return attn::bench::peak::to_json(attn::bench::peak::measure(20, 10)); }));
  function("setThreads", optional_override([](int n) { attn::set_threads(n); }));  // the threaded bench: its pool's size
  function("threads", optional_override([]() { return attn::threads(); }));
  function("setMemoryBudget", optional_override([](double bytes) { attn::set_memory_budget(static_cast<size_t>(bytes)); }));
}
