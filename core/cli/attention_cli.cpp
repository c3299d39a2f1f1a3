// attention-cli: the core from the command line.
//   attention-cli run FILE.json   print the result JSON of a scenario (SCENARIO.md); "-" reads stdin
//   attention-cli modules         print the module table as JSON
//   attention-cli --version
// Bad input: exit 1 with one line "error: <what, rule, fix>" on stderr. Never aborts.
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "scenario.hpp"

int main(int argc, char** argv) {
  const std::string usage = "usage: attention-cli run FILE.json | attention-cli modules | attention-cli --version";
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
    if (argc != 3 || std::string(argv[1]) != "run") {
      std::cerr << usage << "\n";
      return 2;
    }
    std::string text;
    const std::string path = argv[2];
    if (path == "-") {
      text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
      std::ifstream f(path, std::ios::binary);
      if (!f) {
        std::cerr << "error: cannot read scenario file '" << path << "': check the path\n";
        return 1;
      }
      std::ostringstream ss;
      ss << f.rdbuf();
      text = ss.str();
    }
    std::cout << attn::run_json(text);
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
