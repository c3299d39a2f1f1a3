// Running the native CLI (attention-cli, ATTN_CLI_PATH) from a test: its exit status and its
// stdout and stderr together (test_cli.cpp, test_pretrained.cpp).
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace {

struct Proc {
  int status;
  std::string out;
};

// The CLI with `env` (VAR=value) set for it.
inline Proc run_cli_env(const std::string& env, const std::string& args) {
  const std::string cmd = (env.empty() ? "" : env + " ") + std::string(ATTN_CLI_PATH) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  Proc r{-1, ""};
  if (!p) return r;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline Proc run_cli(const std::string& args) { return run_cli_env("", args); }

}  // namespace
