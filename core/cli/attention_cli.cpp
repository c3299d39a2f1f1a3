// attention-cli: the core from the command line.
//   attention-cli run FILE.json [--weights W.safetensors]
//                                 print the result JSON of a scenario (SCENARIO.md); "-" reads stdin;
//                                 --weights loads a state_dict saved as safetensors (docs/modules.md);
//                                 "pretrained": "DIR" reads a Hugging Face model folder, relative to
//                                 FILE.json's folder (to the working directory for stdin)
//   attention-cli weights W.safetensors   list the tensors of a safetensors file (name, dtype, shape)
//   attention-cli modules         print the module table as JSON
//   attention-cli --version
// Bad input: exit 1 with one line "error: <what, rule, fix>" on stderr. Never aborts.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "cli/disk_folder.hpp"
#include "scenario/scenario.hpp"

namespace {

// false for a path that cannot be read, a folder among them (an ifstream opens one and reads nothing)
bool read_file(const std::string& path, std::string& out) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return false;
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string usage =
      "usage: attention-cli run FILE.json [--weights W.safetensors] | attention-cli weights W.safetensors | "
      "attention-cli modules | attention-cli --version";
  try {
    std::ios::sync_with_stdio(false);
    if (argc == 2 && std::string(argv[1]) == "--version") {
      std::cout << attn::version() << "\n";
      return 0;
    }
    if (argc == 2 && std::string(argv[1]) == "modules") {
      std::cout << attn::modules_json() << "\n";
      return 0;
    }
    if (argc == 3 && std::string(argv[1]) == "weights") {
      std::string bytes;
      if (!read_file(argv[2], bytes)) {
        std::cerr << "error: cannot read weights file '" << argv[2] << "': check the path\n";
        return 1;
      }
      std::cout << attn::safetensors_listing_json(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()) << "\n";
      return 0;
    }
    const bool with_weights = argc == 5 && std::string(argv[3]) == "--weights";
    if ((argc != 3 && !with_weights) || std::string(argv[1]) != "run") {
      std::cerr << usage << "\n";
      return 2;
    }
    std::string text;
    const std::string path = argv[2];
    if (path == "-") {
      text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else if (!read_file(path, text)) {
      std::cerr << "error: cannot read scenario file '" << path << "': check the path\n";
      return 1;
    }
    // The model folder of "pretrained", relative to the scenario file's folder.
    const std::string base = path == "-" || path.find('/') == std::string::npos ? std::string() : path.substr(0, path.find_last_of('/') + 1);
    // Its weight files planned from their headers, then read straight into the module (disk_folder.hpp).
    const attn::DiskFolder folder = attn::disk_folder(base);
    // A checkpoint's weights are held beside the working memory: the budget grows by the most a
    // model folder may hold (the Node CLI's too, bounded there by its 2 GB heap).
    // (Not valid JSON: parse_scenario says so.)
    const nlohmann::json peek = nlohmann::json::parse(text, nullptr, false);
    if (peek.is_object() && peek.contains("pretrained")) attn::set_memory_budget(attn::kDefaultMemoryBudget + attn::kMaxModelBytes);
    if (!with_weights) {
      attn::write_result_json(attn::run(attn::parse_scenario(text, nullptr, nullptr, &folder.files, &folder.sizes), &folder.range), std::cout);
      return 0;
    }
    std::vector<attn::Blob> blobs(1);
    std::string bytes;
    if (!read_file(argv[4], bytes)) {
      std::cerr << "error: cannot read weights file '" << argv[4] << "': check the path\n";
      return 1;
    }
    blobs[0].assign(bytes.begin(), bytes.end());
    // --weights supplies the file as buffer 0, and its name (messages name the file actually read,
    // not the one the scenario was made with).
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw attn::Error(std::string("scenario is not valid JSON: ") + e.what());
    }
    if (j.is_object()) {
      std::string name = argv[4];
      name = name.substr(name.find_last_of('/') + 1);
      j["weights"] = {{"name", name}, {"buffer", 0}};
    }
    attn::write_result_json(attn::run(attn::parse_scenario(j.dump(), nullptr, &blobs)), std::cout);
    return 0;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory: the scenario is too large for this machine\n";
  } catch (const std::exception& e) {
    std::string msg = e.what();
    for (char& c : msg)
      if (c == '\n') c = ' ';
    std::cerr << "error: " << msg << "\n";
  }
  return 1;
}
