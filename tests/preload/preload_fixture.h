// Shared set-up of the preload tests: a scratch folder, plans, runs of the driver under LD_PRELOAD
// against the NCCL test double, and readers for its call log, its output and the event log.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_process.h"

namespace ncclfi::test {

using nlohmann::json;

class PreloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ncclfi-preload-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  static json fault(const std::string& id, const std::string& kind, json params, json target, json trigger) {
    return json{{"id", id},
                {"layer", "api"},
                {"kind", kind},
                {"params", std::move(params)},
                {"target", std::move(target)},
                {"trigger", std::move(trigger)}};
  }
  void write_plan(const json& faults) {
    std::ofstream(path("plan.json")) << json{{"seed", 7}, {"faults", faults}}.dump(2);
    plan_ = true;
  }

  // The driver with `args`; under the preload unless `preload` is false.
  ProcessResult run(const std::vector<std::string>& args, std::map<std::string, std::string> env = {},
                    bool preload = true, double timeout_s = 20) {
    std::vector<std::string> argv = {NCCLFI_TEST_DRIVER};
    argv.insert(argv.end(), args.begin(), args.end());
    env["NCCL_DOUBLE_LOG"] = path("calls.log");
    env["NCCLFI_EVENTS"] = path("events.jsonl");
    env.try_emplace("NCCLFI_CUDA_DRIVER_LIB", NCCLFI_TEST_CUDA_DOUBLE);  // unless the test names another
    if (plan_) env["NCCLFI_PLAN"] = path("plan.json");
    if (preload) env["LD_PRELOAD"] = NCCLFI_TEST_PRELOAD;
    return run_process(argv, env, timeout_s);
  }

  std::vector<std::string> calls() const { return lines(path("calls.log")); }
  std::vector<std::string> calls_named(const std::string& name) const {
    std::vector<std::string> out;
    for (const auto& l : calls()) {
      if (l.rfind(name + " ", 0) == 0 || l == name) out.push_back(l);
    }
    return out;
  }
  std::vector<json> events(const std::string& event) const {
    std::vector<json> out;
    for (const auto& l : lines(path("events.jsonl"))) {
      json j = json::parse(l);
      if (j.value("event", "") == event) out.push_back(j);
    }
    return out;
  }

  static std::vector<std::string> lines(const std::string& file) {
    std::ifstream in(file);
    std::vector<std::string> out;
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }
  static std::vector<std::string> split_lines(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }

  struct CallOutcome {
    int rc = -1;
    int end = -1;
    double ms = -1;
  };
  // "call I OP rc=RC [end=E] ms=MS" lines of the driver's output, by I.
  static std::map<int, CallOutcome> outcomes(const std::string& out) {
    std::map<int, CallOutcome> m;
    static const std::regex re(R"(^call (\d+) \S+ rc=(\d+)(?: end=(\d+))? ms=([0-9.]+)$)");
    for (const auto& l : split_lines(out)) {
      std::smatch s;
      if (std::regex_match(l, s, re)) {
        m[std::stoi(s[1])] = {std::stoi(s[2]), s[3].matched ? std::stoi(s[3]) : -1, std::stod(s[4])};
      }
    }
    return m;
  }
  // "async I CODE" lines, by I.
  static std::map<int, int> async_codes(const std::string& out) {
    std::map<int, int> m;
    static const std::regex re(R"(^async (\d+) (\d+)$)");
    for (const auto& l : split_lines(out)) {
      std::smatch s;
      if (std::regex_match(l, s, re)) m[std::stoi(s[1])] = std::stoi(s[2]);
    }
    return m;
  }
  static bool has_line(const std::string& out, const std::string& line) {
    for (const auto& l : split_lines(out)) {
      if (l == line) return true;
    }
    return false;
  }

  std::string dir_;
  bool plan_ = false;
};

}  // namespace ncclfi::test
