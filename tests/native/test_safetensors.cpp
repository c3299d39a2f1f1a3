// Weights saved by PyTorch as safetensors (tests/fixtures/weights/, scripts/make_weights_fixtures.py):
// a trained EncoderLayer and CausalMultiHeadAttention in F32, F16 and BF16 reproduce PyTorch's
// outputs from the same weights (atol 1e-5, rtol 1e-4); damaged files give their errors; the
// format's corner cases (F16 subnormals and infinities, BF16) convert exactly.
#include <cstring>
#include <filesystem>

#include "attention.hpp"
#include "fixtures.hpp"

namespace {

const std::string kDir = std::string(ATTN_FIXTURES_DIR) + "/weights/";

attn::Blob read_blob(const std::string& path) {
  const std::string s = fixtures::read_text(path);
  return attn::Blob(s.begin(), s.end());
}

attn::Result run_with(const std::string& scenario_file, const std::string& weights_file) {
  auto j = fixtures::json::parse(fixtures::read_text(kDir + scenario_file));
  j["weights"]["buffer"] = 0;
  const std::vector<attn::Blob> blobs{read_blob(kDir + weights_file)};
  return attn::run(attn::parse_scenario(j.dump(), nullptr, &blobs));
}

// A safetensors file of one tensor with the given dtype and raw little-endian bytes.
attn::Blob one_tensor(const std::string& dtype, const std::vector<uint8_t>& raw, const std::string& shape) {
  std::string head = R"({"t":{"dtype":")" + dtype + R"(","shape":)" + shape + R"(,"data_offsets":[0,)" +
                     std::to_string(raw.size()) + "]}}";
  attn::Blob b(8);
  uint64_t n = head.size();
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(n >> (8 * i));
  b.insert(b.end(), head.begin(), head.end());
  b.insert(b.end(), raw.begin(), raw.end());
  return b;
}

}  // namespace

// Runs <name>.scenario.json with <name>.safetensors and compares every output with PyTorch's.
void check_against_pytorch(const std::string& name) {
  const attn::Result r = run_with(name + ".scenario.json", name + ".safetensors");
  const auto expected = fixtures::json::parse(fixtures::read_text(kDir + name + ".expected.json"));
  REQUIRE(!expected["outputs"].empty());
  for (const auto& e : expected["outputs"]) {
    const attn::Tensor* got = nullptr;
    for (const auto& o : r.outputs)
      if (o.name == e["name"].get<std::string>()) got = &o.value;
    INFO(name << " output " << e["name"].get<std::string>());
    REQUIRE(got != nullptr);
    const attn::Tensor c = got->contiguous();
    const fixtures::Diff d = fixtures::compare(c.data(), fixtures::values(e));
    INFO("max |core - pytorch| = " << d.max_abs);
    CHECK(d.ok);
  }
}

TEST_CASE("PyTorch-saved safetensors weights in F32, F16 and BF16 reproduce PyTorch's outputs", "[safetensors]") {
  for (const char* model : {"encoder_layer", "causal_mha"})
    for (const char* dtype : {"f32", "f16", "bf16"}) check_against_pytorch(std::string(model) + "_" + dtype);
}

TEST_CASE("every seed module's state_dict saved as safetensors by export_state_dict.py gives PyTorch's outputs",
          "[safetensors]") {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(kDir)) {
    const std::string f = e.path().filename().string();
    if (f.rfind("module_", 0) == 0 && f.size() > 12 && f.compare(f.size() - 12, 12, ".safetensors") == 0)
      names.push_back(f.substr(0, f.size() - 12));
  }
  CHECK(names.size() >= 10);
  for (const std::string& name : names) check_against_pytorch(name);
}

TEST_CASE("damaged or mismatched safetensors files give clear errors", "[safetensors]") {
  const auto bad = fixtures::json::parse(fixtures::read_text(kDir + "bad.json"));
  REQUIRE(bad["files"].size() >= 8);
  for (auto it = bad["files"].begin(); it != bad["files"].end(); ++it) {
    INFO(it.key());
    CHECK_THROWS_WITH(run_with(bad["scenario"].get<std::string>(), it.key()), Catch::Contains(it.value().get<std::string>()));
  }
}

TEST_CASE("the safetensors listing names each tensor with its dtype and shape", "[safetensors]") {
  const attn::Blob b = read_blob(kDir + "causal_mha_bf16.safetensors");
  const auto list = fixtures::json::parse(attn::safetensors_listing_json(b.data(), b.size()));
  bool found = false;
  for (const auto& t : list)
    if (t["name"] == "W_query.weight") found = t["dtype"] == "BF16" && t["shape"] == fixtures::json::array({8, 6});
  CHECK(found);
}

TEST_CASE("safetensors F16 and BF16 convert exactly, non-finite weights are refused", "[safetensors]") {
  // F16: 1.0, -2.0, the smallest subnormal (2^-24), 65504 (the largest finite)
  const attn::Blob f16 = one_tensor("F16", {0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00, 0xff, 0x7b}, "[4]");
  const auto t = attn::read_safetensors(f16.data(), f16.size());
  REQUIRE(t.size() == 1);
  const float* v = t[0].value.data();
  CHECK(v[0] == 1.0f);
  CHECK(v[1] == -2.0f);
  CHECK(v[2] == std::ldexp(1.0f, -24));
  CHECK(v[3] == 65504.0f);
  // BF16: the top half of float32's bits: 0x3f80 = 1.0, 0xc0a0 = -5.0
  const attn::Blob bf16 = one_tensor("BF16", {0x80, 0x3f, 0xa0, 0xc0}, "[2]");
  const auto b = attn::read_safetensors(bf16.data(), bf16.size());
  CHECK(b[0].value.data()[0] == 1.0f);
  CHECK(b[0].value.data()[1] == -5.0f);
  const attn::Blob inf = one_tensor("F16", {0x00, 0x7c}, "[1]");
  CHECK_THROWS_WITH(attn::read_safetensors(inf.data(), inf.size()), Catch::Contains("weights must be finite"));
  const attn::Blob span = one_tensor("F32", {0, 0, 0, 0}, "[2]");
  CHECK_THROWS_WITH(attn::read_safetensors(span.data(), span.size()), Catch::Contains("span 4 bytes but F32 [2] needs 8"));
  const attn::Blob negative = one_tensor("F32", {0, 0, 0, 0}, "[-1]");
  CHECK_THROWS_WITH(attn::read_safetensors(negative.data(), negative.size()), Catch::Contains("must hold sizes"));
}

TEST_CASE("a scenario naming safetensors weights that were not loaded says how to load them", "[safetensors]") {
  CHECK_THROWS_WITH(attn::run(attn::parse_scenario(fixtures::read_text(kDir + "causal_mha_f32.scenario.json"))),
                    Catch::Contains("the file is not loaded"));
}

TEST_CASE("a safetensors header nested too deep is refused before anything walks it", "[safetensors]") {
  // 200,000 levels used to overflow the stack when the error message printed the value.
  for (const std::string key : {R"("a":)", R"("a":{"dtype":"F32","shape":)"}) {
    const size_t depth = 200000;
    std::string head = "{" + key + std::string(depth, '[') + std::string(depth, ']') + "}";
    if (key.size() > 5) head += "}";
    attn::Blob b(8);
    for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(static_cast<uint64_t>(head.size()) >> (8 * i));
    b.insert(b.end(), head.begin(), head.end());
    CHECK_THROWS_WITH(attn::read_safetensors(b.data(), b.size()), Catch::Contains("nests deeper than 8 levels"));
  }
  // the deepest header the format has ({name: {"shape": [..]}}) still reads
  const attn::Blob ok = one_tensor("F32", {0, 0, 0x80, 0x3f}, "[1]");
  CHECK(attn::read_safetensors(ok.data(), ok.size())[0].value.data()[0] == 1.0f);
}
