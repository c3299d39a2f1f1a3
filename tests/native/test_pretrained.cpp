// Hugging Face model folders (tests/fixtures/pretrained/, written by PyTorch with
// scripts/make_pretrained_fixtures.py): GPT-2 and Llama-family checkpoints open by "pretrained" and
// give the references' logits, attention weights and greedy ids, with and without the KV cache;
// and every way a downloaded folder can lie is refused with a message naming it, before any
// tensor is decoded (and, for the index's claims, before a shard is read).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "attention.hpp"
#include "cli/disk_folder.hpp"
#include "cli_run.hpp"
#include "fixtures.hpp"
#include "generation_check.hpp"

namespace {

const std::string kDir = std::string(ATTN_FIXTURES_DIR) + "/pretrained/";

// A folder held in memory, its files editable, every read recorded.
struct Folder {
  std::map<std::string, attn::Blob> files;
  mutable std::vector<std::string> reads;
  explicit Folder(const std::string& name) {
    for (const auto& e : std::filesystem::directory_iterator(kDir + name)) {
      const std::string s = fixtures::read_text(e.path().string());
      files[e.path().filename().string()] = attn::Blob(s.begin(), s.end());
    }
  }
  attn::FolderReader reader() const {
    return [this](const std::string&, const std::string& name, attn::Blob& out) {
      reads.push_back(name);
      auto it = files.find(name);
      if (it == files.end()) return false;
      out = it->second;
      return true;
    };
  }
  fixtures::json json_file(const std::string& name) const {
    const attn::Blob& b = files.at(name);
    return fixtures::json::parse(b.begin(), b.end());
  }
  void set_json(const std::string& name, const fixtures::json& j) {
    const std::string s = j.dump();
    files[name] = attn::Blob(s.begin(), s.end());
  }
  // Each weight file cut to its header (not one byte of data), as a page reads it before the
  // download: their whole sizes.
  std::map<std::string, uint64_t> cut_to_headers() {
    std::map<std::string, uint64_t> sizes;
    for (auto& [file, bytes] : files) {
      if (!attn::ends_with(file, ".safetensors")) continue;
      sizes[file] = bytes.size();
      uint64_t n = 0;
      for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(bytes[static_cast<size_t>(i)]) << (8 * i);
      bytes.resize(static_cast<size_t>(8 + n));
    }
    return sizes;
  }
  // The folder written to a fresh directory (for the CLIs' reader of a folder on disk), its own
  // for each process (ctest runs test cases side by side).
  std::string write(const std::string& name) const {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("attn_folder_" + name + "_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    for (const auto& [file, bytes] : files) std::ofstream(dir / file, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return dir.string();
  }
  bool read_weights() const {
    for (const std::string& r : reads)
      if (r.size() > 12 && r.compare(r.size() - 12, 12, ".safetensors") == 0) return true;
    return false;
  }
};

// A safetensors file from a header and data as given (the lies written by hand).
attn::Blob safetensors(const std::string& header, size_t data_bytes, uint64_t claimed_length = 0) {
  attn::Blob b(8);
  const uint64_t n = claimed_length ? claimed_length : header.size();
  for (int i = 0; i < 8; ++i) b[static_cast<size_t>(i)] = static_cast<uint8_t>(n >> (8 * i));
  b.insert(b.end(), header.begin(), header.end());
  b.resize(b.size() + data_bytes, 0);
  return b;
}

std::string scenario_of(const std::string& name) { return fixtures::read_text(kDir + name + ".scenario.json"); }

// The message of opening `scenario` over `folder` (parsing it, then building the module from the
// weights), "" when it runs; the error's field must name where the fault lies. Both ways a folder
// is read must refuse it: whole files (the bindings' run), and as the native CLI reads a folder on
// disk (cli/disk_folder.hpp: the headers, then the weights streamed in): both say the same.
std::string refusal(const Folder& folder, const std::string& scenario) {
  const auto message = [](const std::function<void()>& open) -> std::string {
    try {
      open();
    } catch (const attn::Error& e) {
      INFO(e.what());
      CHECK((e.field() == "pretrained" || e.field() == "weights" || e.field() == "module" || e.field().rfind("config.", 0) == 0));
      return e.what();
    }
    return "";
  };
  const attn::FolderReader read = folder.reader();
  const std::string whole = message([&] { attn::run(attn::parse_scenario(scenario, nullptr, nullptr, &read)); });
  const std::string dir = folder.write("refusal");
  const attn::DiskFolder disk = attn::disk_folder("");
  auto sc = fixtures::json::parse(scenario);
  sc["pretrained"] = dir;
  const std::string planned = message([&] { attn::run(attn::parse_scenario(sc.dump(), nullptr, nullptr, &disk.files, &disk.sizes), &disk.range); });
  std::filesystem::remove_all(dir);
  // the same words, the folder named as each was given
  std::string same = planned;
  const std::string label = fixtures::json::parse(scenario)["pretrained"].get<std::string>();
  for (size_t at = same.find(dir); at != std::string::npos; at = same.find(dir, at + label.size())) same.replace(at, dir.size(), label);
  CHECK(same == whole);
  return whole;
}

const char* const kCases[] = {"gpt2_prefix_f32", "gpt2_bare_f16_sharded", "llama_gqa_f32", "llama_mqa_tied_bf16_sharded",
                              "qwen2_bias_f16_bare", "mistral_window_f32", "qwen2_window_bf16", "llama3_rope_f32", "llama_linear_rope_bf16"};

}  // namespace

TEST_CASE("Hugging Face folders give the references' logits, attention and greedy ids, cached or not", "[pretrained][generate]") {
  for (const char* name : kCases)
    for (bool cache : {true, false}) {
      INFO(name << (cache ? " (KV cache)" : " (no cache)"));
      auto sc = fixtures::json::parse(scenario_of(name));
      sc["generate"]["cache"] = cache;
      const Folder folder(name);
      const attn::FolderReader read = folder.reader();
      const attn::Scenario s = attn::parse_scenario(sc.dump(), nullptr, nullptr, &read);
      CHECK(s.module == (std::string(name).rfind("gpt2", 0) == 0 ? "GPT" : "Llama"));
      const attn::Result r = attn::run(s);
      const auto expected = fixtures::json::parse(fixtures::read_text(kDir + name + ".expected.json"));
      fixtures::check_outputs(r, expected);
      fixtures::check_generation(r, expected);
    }
}

TEST_CASE("a folder's module draws nothing as it is built: a sampled generation takes the seed's first draws, as after from_pretrained",
          "[pretrained][generate]") {
  for (const char* name : kCases)
    for (bool cache : {true, false}) {
      INFO(name << (cache ? " (KV cache)" : " (no cache)"));
      const auto sampled = fixtures::json::parse(fixtures::read_text(kDir + name + ".sampled.json"));
      auto sc = sampled["scenario"];
      sc["generate"]["cache"] = cache;
      const Folder folder(name);
      const attn::FolderReader read = folder.reader();
      CHECK(fixtures::json(attn::run(attn::parse_scenario(sc.dump(), nullptr, nullptr, &read)).ids) == sampled["ids"]);
    }
}

TEST_CASE("a model folder's config.json decides the module and is checked by name", "[pretrained][errors]") {
  const std::string sc = scenario_of("llama_gqa_f32");
  auto with_config = [&](const std::function<void(fixtures::json&)>& edit) {
    Folder f("llama_gqa_f32");
    fixtures::json c = f.json_file("config.json");
    edit(c);
    f.set_json("config.json", c);
    return refusal(f, sc);
  };
  CHECK_THAT(with_config([](auto& c) { c["model_type"] = "bert"; }),
             Catch::Contains("model_type 'bert' is not supported") && Catch::Contains("gpt2, llama, mistral and qwen2"));
  CHECK_THAT(with_config([](auto& c) { c["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 8.0}}; }),
             Catch::Contains("rope_scaling (yarn) is not implemented") && Catch::Contains("\"linear\" and \"llama3\""));
  CHECK_THAT(with_config([](auto& c) { c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}}; }),
             Catch::Contains("rope_scaling.low_freq_factor (missing) must be a number above 0 (rope_type \"llama3\")"));
  CHECK_THAT(with_config([](auto& c) {
               c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 4.0}, {"high_freq_factor", 1.0},
                                    {"original_max_position_embeddings", 64}};
             }),
             Catch::Contains("rope_scaling.high_freq_factor (1) must be above its low_freq_factor (4)"));
  CHECK_THAT(with_config([](auto& c) { c["rope_scaling"] = {{"type", "linear"}, {"factor", -2}}; }),
             Catch::Contains("rope_scaling.factor (-2) must be a number above 0"));
  CHECK_THAT(with_config([](auto& c) { c["hidden_act"] = "gelu"; }), Catch::Contains("hidden_act") && Catch::Contains("silu"));
  // Qwen2's sliding layers must be the last ones (layer_types as newer transformers save it)
  CHECK_THAT(with_config([](auto& c) {
               c["model_type"] = "qwen2", c["use_sliding_window"] = true, c["sliding_window"] = 4;
               c["layer_types"] = {"sliding_attention", "full_attention"};
             }),
             Catch::Contains("layer_types") && Catch::Contains("\"sliding_attention\" at layer 0") && Catch::Contains("last layers only"));
  CHECK_THAT(with_config([](auto& c) { c["num_key_value_heads"] = 3; }), Catch::Contains("num_key_value_heads (3) must divide"));
  // a config.json that disagrees with the weights: the tensor, its shape and the shape the config needs
  CHECK_THAT(with_config([](auto& c) { c["intermediate_size"] = 64; }),
             Catch::Contains("'model.layers.0.mlp.down_proj.weight' has shape [32, 48] but config.json") &&
                 Catch::Contains("needs [32, 64]"));
  Folder untied("llama_mqa_tied_bf16_sharded");
  fixtures::json u = untied.json_file("config.json");
  u["tie_word_embeddings"] = false;
  untied.set_json("config.json", u);
  CHECK_THAT(refusal(untied, scenario_of("llama_mqa_tied_bf16_sharded")),
             Catch::Contains("parameter 'lm_head.weight' [48, 32] of Llama is missing"));
  Folder none("llama_gqa_f32");
  none.files.erase("config.json");
  CHECK_THAT(refusal(none, sc), Catch::Contains("has no config.json"));
  Folder gpt2("gpt2_prefix_f32");
  fixtures::json g = gpt2.json_file("config.json");
  g["activation_function"] = "relu";
  gpt2.set_json("config.json", g);
  CHECK_THAT(refusal(gpt2, scenario_of("gpt2_prefix_f32")), Catch::Contains("activation_function") && Catch::Contains("gelu_new"));
  // module, config, weights or params beside pretrained: the folder decides them
  fixtures::json clash = fixtures::json::parse(sc);
  clash["module"] = "GPT";
  CHECK_THAT(refusal(Folder("llama_gqa_f32"), clash.dump()), Catch::Contains("cannot be given with pretrained"));
  // no files handed over
  try {
    attn::parse_scenario(sc);
    FAIL("parsed without files");
  } catch (const attn::Error& e) {
    CHECK(e.field() == "pretrained");
    CHECK_THAT(e.what(), Catch::Contains("no files were handed over"));
  }
}

TEST_CASE("an untrusted folder's lies are refused before any large allocation or read", "[pretrained][errors]") {
  const std::string sc = scenario_of("llama_gqa_f32"), sharded = scenario_of("llama_mqa_tied_bf16_sharded");
  auto with_weights = [&](const attn::Blob& file) {
    Folder f("llama_gqa_f32");
    f.files["model.safetensors"] = file;
    return refusal(f, sc);
  };
  // a header that claims more bytes than the file holds
  {
    Folder f("llama_gqa_f32");
    attn::Blob& b = f.files["model.safetensors"];
    b.resize(b.size() - 100);
    CHECK_THAT(refusal(f, sc), Catch::Contains("model.safetensors") && Catch::Contains("truncated or damaged"));
  }
  CHECK_THAT(with_weights(safetensors("{}", 0, 4096)), Catch::Contains("runs past the end of the file"));
  // a header of several MB: refused by its length before it is parsed
  CHECK_THAT(with_weights(safetensors(std::string(20 << 20, ' '), 0)), Catch::Contains("above the 16777216-byte limit"));
  // overlapping, out-of-order and gapped offsets
  CHECK_THAT(with_weights(safetensors(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12)),
             Catch::Contains("[4, 12] overlap the tensor before it"));
  CHECK_THAT(with_weights(safetensors(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8)),
             Catch::Contains("must satisfy begin <= end"));
  CHECK_THAT(with_weights(safetensors(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8)),
             Catch::Contains("leave a gap after the tensor before it"));
  CHECK_THAT(with_weights(safetensors(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 8)),
             Catch::Contains("4 bytes after its last tensor"));
  // a shape whose product overflows 64 bits
  CHECK_THAT(with_weights(safetensors(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", 0)),
             Catch::Contains("must hold sizes from 0 to"));
  CHECK_THAT(with_weights(safetensors(R"({"a":{"dtype":"F32","shape":[65536,65536],"data_offsets":[0,0]}})", 0)),
             Catch::Contains("elements: the limit per tensor"));
  // a wrong dtype, a missing tensor
  CHECK_THAT(with_weights(safetensors(R"({"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", 8)),
             Catch::Contains("has dtype I64") && Catch::Contains("F32, F16 and BF16"));
  CHECK_THAT(with_weights(safetensors(R"({"model.norm.weight":{"dtype":"F32","shape":[32],"data_offsets":[0,128]}})", 128)),
             Catch::Contains("is missing from the file"));
  // the shard index: a file outside the folder, and a total_size beyond memory, refused before any shard is read
  for (const char* outside : {"../model-00001-of-00003.safetensors", "/etc/passwd.safetensors", ".hidden.safetensors", "sub/x.safetensors",
                              "model.bin"}) {
    Folder f("llama_mqa_tied_bf16_sharded");
    fixtures::json index = f.json_file("model.safetensors.index.json");
    index["weight_map"]["model.norm.weight"] = outside;
    f.set_json("model.safetensors.index.json", index);
    INFO(outside);
    CHECK_THAT(refusal(f, sharded), Catch::Contains("a shard must be a .safetensors file in the model folder itself"));
    CHECK_FALSE(f.read_weights());
  }
  {
    Folder f("llama_mqa_tied_bf16_sharded");
    fixtures::json index = f.json_file("model.safetensors.index.json");
    index["metadata"]["total_size"] = 16.0e9;
    f.set_json("model.safetensors.index.json", index);
    CHECK_THAT(refusal(f, sharded), Catch::Contains("total_size (16000000000 bytes) is beyond the 2048 MiB"));
    CHECK_FALSE(f.read_weights());
    Folder missing("llama_mqa_tied_bf16_sharded");
    missing.files.erase("model-00002-of-00003.safetensors");
    CHECK_THAT(refusal(missing, sharded), Catch::Contains("has no model-00002-of-00003.safetensors: the shard index names it"));
  }
  // weights whose float32 size is beyond what the core can hold, counted from the headers (the
  // folder's bound lowered to 1 MiB so the test needs no gigabytes): F16 widens to twice its bytes
  {
    Folder f("llama_gqa_f32");
    f.files["model.safetensors"] = safetensors(R"({"a":{"dtype":"F16","shape":[512,600],"data_offsets":[0,614400]}})", 614400);
    attn::ModelFolder folder{"big", [&](const std::string& name, attn::Blob& out) {
                               f.reads.push_back(name);
                               if (!f.files.count(name)) return false;
                               out = f.files.at(name);
                               return true;
                             },
                             uint64_t{1} << 20};
    try {
      attn::load_pretrained(folder);
      FAIL("loaded");
    } catch (const attn::Error& e) {
      CHECK_THAT(e.what(), Catch::Contains("as float32, more than the 1.0 MiB the core can hold here"));
    }
    // the header alone tells the size: 8 + N bytes of a file of any claimed length
    const attn::Blob big = safetensors(R"({"a":{"dtype":"BF16","shape":[65536,4096],"data_offsets":[0,536870912]}})", 0);
    const attn::SafeTensorsHeader h = attn::read_safetensors_header(big.data(), big.size(), big.size() + 536870912);
    CHECK(h.f32_bytes() == uint64_t{1} << 30);
  }
}

TEST_CASE("attention-cli reads a model folder beside the scenario file, and says what is wrong with one", "[pretrained][cli]") {
  const auto [status, out] = run_cli("run " + kDir + "gpt2_bare_f16_sharded.scenario.json");
  REQUIRE(status == 0);
  const auto expected = fixtures::json::parse(fixtures::read_text(kDir + "gpt2_bare_f16_sharded.expected.json"));
  CHECK(fixtures::json::parse(out)["ids"] == expected["ids"]);
  // the folder is found relative to the scenario, not the working directory
  const std::string tmp = std::filesystem::temp_directory_path().string() + "/attn_pretrained_cli.json";
  {
    std::ofstream f(tmp);
    f << R"({"pretrained": "no_such_model", "inputs": [{"name": "idx", "shape": [1, 1], "data": [0]}]})";
  }
  const auto [bad, msg] = run_cli("run " + tmp);
  CHECK(bad == 1);
  CHECK_THAT(msg, Catch::StartsWith("error: model folder 'no_such_model' has no config.json"));
  std::filesystem::remove(tmp);
}

// A page checks a folder from config.json, the index and each weight file's first bytes (its
// header) before it fetches the rest: plan_pretrained reads nothing past a header and refuses what
// load_pretrained would refuse of the headers.
TEST_CASE("a folder is planned from the weight files' headers alone", "[pretrained]") {
  for (const std::string name : {"gpt2_bare_f16_sharded", "llama_gqa_f32"}) {
    Folder whole(name), heads(name);
    std::map<std::string, uint64_t> sizes = heads.cut_to_headers();
    const attn::FolderReader r = heads.reader();
    attn::ModelFolder folder{name, [&](const std::string& f, attn::Blob& out) { return r(name, f, out); }, attn::kMaxModelBytes,
                             [&](const std::string& f) { return sizes.at(f); }};
    const attn::PretrainedPlan plan = attn::plan_pretrained(folder);
    const attn::FolderReader w = whole.reader();
    const attn::PretrainedModel m = attn::load_pretrained({name, [&](const std::string& f, attn::Blob& out) { return w(name, f, out); }, attn::kMaxModelBytes, {}});
    CHECK(plan.module == m.module);
    CHECK(plan.config == m.config);
    CHECK(plan.files.size() == sizes.size());
    int64_t elements = 0;
    for (const attn::SafeTensor& t : m.weights) elements += t.value.numel();
    CHECK(plan.parameters >= elements);  // GPT-2's skipped buffers are in the file, not the module
    CHECK(plan.f32_bytes == static_cast<uint64_t>(plan.parameters) * 4);
    // a file shorter than its header claims (a truncated download) is refused from the header
    sizes[plan.files.back()] -= 1;
    CHECK_THROWS_WITH(attn::plan_pretrained(folder), Catch::Contains(plan.files.back()) && Catch::Contains("the file is truncated"));
    sizes[plan.files.back()] += 1;
    // the caller's memory bounds the plan
    folder.max_bytes = plan.f32_bytes - 1;
    CHECK_THROWS_WITH(attn::plan_pretrained(folder), Catch::Contains("more than the"));
  }
}

// A page streams a checkpoint into the module (Session::write_weights): built from config.json and
// the headers alone, each tensor's bytes in pieces of any whole-value size, F16 / BF16 widened and
// GPT-2's Conv1D transposed on the way; the forward equals the folder loaded whole, to the bit.
TEST_CASE("weights streamed into a session give the numbers of the folder loaded whole", "[pretrained]") {
  for (const std::string name : {"gpt2_bare_f16_sharded", "llama_mqa_tied_bf16_sharded", "llama_gqa_f32"}) {
    INFO(name);
    const Folder whole(name);
    Folder heads(name);
    const std::map<std::string, uint64_t> sizes = heads.cut_to_headers();
    const std::string input = name.rfind("gpt2", 0) == 0 ? "idx" : "input_ids";
    const std::string scenario = R"({"pretrained": ")" + name + R"(", "inputs": [{"name": ")" + input + R"(", "shape": [1, 4], "data": [3, 1, 4, 1]}]})";
    const attn::FolderReader hr = heads.reader(), wr = whole.reader();
    const attn::FolderSizes size = [&](const std::string&, const std::string& f) { return sizes.at(f); };
    attn::Session streamed(attn::parse_scenario(scenario, nullptr, nullptr, &hr, &size));
    REQUIRE(streamed.streamed() != nullptr);
    const attn::StreamedWeights& w = *streamed.streamed();
    REQUIRE(!w.tensors.empty());
    CHECK_THROWS_WITH(streamed.finish_weights(), Catch::Contains("the download was cut"));
    // nothing computes on parameters whose values have not come (it ran on uninitialised memory)
    const auto still_coming = Catch::Contains("the model's weights are still coming (" + std::to_string(w.tensors.size()) + " tensors");
    CHECK_THROWS_WITH(streamed.forward(false), still_coming);
    CHECK_THROWS_WITH(streamed.generation(), still_coming);
    for (size_t i = 0; i < w.tensors.size(); ++i) {
      const attn::PlannedTensor& t = w.tensors[i];
      const attn::Blob& file = whole.files.at(w.files[t.file]);
      const size_t elem = t.entry.dtype == "F32" ? 4 : 2, at = static_cast<size_t>(w.data_offsets[t.file] + t.entry.begin);
      if (i == 0 && t.entry.count > 1)  // a piece out of order, or not whole values, is refused
        CHECK_THROWS_WITH(streamed.write_weights(i, 1, file.data() + at + elem, elem), Catch::Contains("in order"));
      // pieces across rows, within one, and of more than 16 rows (a Conv1D's rows are 32 to 128 values)
      const int64_t pieces[] = {7, 2500, 3, 700};
      for (int64_t v = 0, p = 0; v < t.entry.count; v += pieces[p++ % 4]) {
        const int64_t k = std::min<int64_t>(pieces[p % 4], t.entry.count - v);
        streamed.write_weights(i, v, file.data() + at + static_cast<size_t>(v) * elem, static_cast<size_t>(k) * elem);
      }
    }
    streamed.finish_weights();
    attn::Session loaded(attn::parse_scenario(scenario, nullptr, nullptr, &wr));
    const attn::Result a = streamed.forward(false), b = loaded.forward(false);
    REQUIRE(a.outputs.size() == b.outputs.size());
    for (size_t o = 0; o < a.outputs.size(); ++o) {
      const attn::Tensor &x = a.outputs[o].value, &y = b.outputs[o].value;
      REQUIRE(x.shape() == y.shape());
      CHECK(std::equal(x.data(), x.data() + x.numel(), y.data()));
    }
    // a run (not a session) of a planned folder needs a reader of its weights' bytes
    const attn::Scenario planned = attn::parse_scenario(scenario, nullptr, nullptr, &hr, &size);
    CHECK_THROWS_WITH(attn::run(planned), Catch::Contains("streamed"));
    // with one (the CLIs'), the weights are read a range at a time, straight into the module
    size_t ranges = 0;
    const attn::FolderRange range = [&](const std::string&, const std::string& f, uint64_t offset, uint8_t* dst, size_t n) {
      const attn::Blob& bytes = whole.files.at(f);
      if (offset + n > bytes.size()) return false;
      std::copy(bytes.begin() + static_cast<std::ptrdiff_t>(offset), bytes.begin() + static_cast<std::ptrdiff_t>(offset + n), dst);
      ++ranges;
      return true;
    };
    const attn::Result c = attn::run(planned, &range);
    CHECK(ranges >= w.tensors.size());
    REQUIRE(c.outputs.size() == b.outputs.size());
    for (size_t o = 0; o < c.outputs.size(); ++o)
      CHECK(std::equal(c.outputs[o].value.data(), c.outputs[o].value.data() + c.outputs[o].value.numel(), b.outputs[o].value.data()));
    // a file that ends before its header's last tensor (cut after it was planned)
    const attn::FolderRange cut = [&](const std::string& folder, const std::string& f, uint64_t offset, uint8_t* dst, size_t n) {
      return offset + n < whole.files.at(f).size() && range(folder, f, offset, dst, n);
    };
    CHECK_THROWS_WITH(attn::run(planned, &cut), Catch::Contains("could not be read at byte") && Catch::Contains("shorter than its header says"));
  }
}
