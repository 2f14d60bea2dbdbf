// Output that fits the terminal: `list` as a narrow list (Markdown only when asked), the run's table,
// progress line and failure details at the terminal's width (read from the terminal itself: these run
// ncclfi under a pseudo-terminal of a known size), plain progress lines in a log.
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <sstream>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {
using json = nlohmann::json;

// Runs ncclfi with `args` on a pseudo-terminal `columns` wide (stdout and stderr both), with `env`
// ("NAME=value") added to the environment; returns everything it wrote.
std::string run_on_terminal(const std::vector<std::string>& args, unsigned short columns,
                            const std::vector<std::string>& env = {}, double timeout_s = 60) {
  winsize size{};
  size.ws_row = 40;
  size.ws_col = columns;
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, &size);
  if (pid == 0) {
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<std::string> argv{NCCLFI_CLI};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> raw;
    for (auto& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    execv(raw[0], raw.data());
    _exit(127);
  }
  std::string out;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO: the child closed the terminal
    out.append(buf, static_cast<size_t>(n));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  close(master);
  return out;
}

// Each piece of `text` the terminal shows on one row: split at "\r" and "\n", ANSI sequences removed.
std::vector<std::string> screen_pieces(const std::string& text) {
  static const std::regex ansi("\033\\[[0-9;]*[A-Za-z]");
  const std::string plain = std::regex_replace(text, ansi, "");
  std::vector<std::string> pieces;
  std::string piece;
  for (char ch : plain) {
    if (ch == '\r' || ch == '\n') {
      pieces.push_back(piece);
      piece.clear();
    } else {
      piece += ch;
    }
  }
  pieces.push_back(piece);
  return pieces;
}

size_t widest(const std::string& text) {
  size_t w = 0;
  for (const auto& piece : screen_pieces(text)) w = std::max(w, piece.size());
  return w;
}

CliResult run_with_env(const std::vector<std::string>& env, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"/usr/bin/env", "-u", "COLUMNS"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(NCCLFI_CLI);
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv);
}

TEST(CliTerminal, ListFitsTheTerminalItRunsOn) {
  for (const std::string what : {"faults", "sites", "mechanisms", "launchers", "reports", "scenarios"}) {
    // The terminal's own width wins over COLUMNS.
    const std::string out = run_on_terminal({"list", what}, 70, {"COLUMNS=300"});
    EXPECT_LE(widest(out), 70u) << what << ":\n" << out;
    EXPECT_GT(out.size(), 200u) << what;
  }
}

TEST(CliTerminal, PipedListWrapsAtEightyOrColumnsAndKeepsMarkdownOnRequest) {
  const auto piped = run_with_env({}, {"list", "faults"});
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_LE(widest(piped.out), 80u);
  EXPECT_EQ(piped.out.find("| net"), std::string::npos) << "no table by default";
  EXPECT_NE(piped.out.find("\nnet delay\n"), std::string::npos) << piped.out.substr(0, 2000);
  EXPECT_LE(widest(run_with_env({"COLUMNS=50"}, {"list", "sites"}).out), 50u);
  // --format markdown: the tables the docs hold, byte for byte; --json as before.
  const auto markdown = run_with_env({}, {"list", "faults", "--format", "markdown"});
  EXPECT_EQ(markdown.out, run_with_env({}, {"doc-table", "faults"}).out);
  EXPECT_NE(markdown.out.find("| layer | kind"), std::string::npos);
  EXPECT_TRUE(json::parse(run_with_env({}, {"list", "faults", "--json"}).out).is_array());
  EXPECT_EQ(run_with_env({}, {"list", "faults", "--format", "html"}).exit_code, 2);
}

json failing_scenario() {
  // Rank 1's watchdog fires at 1.3 s (exit 3): detected, but the scenario expects a hang.
  json s = shell_scenario("terminal-watchdog-a-long-scenario-name-for-a-narrow-table", 2,
                          "echo rank $RANK up; if [ $RANK = 1 ]; then sleep 1.3; echo 'watchdog: op 7 "
                          "timed out after 1000 ms'; exit 3; fi; sleep 1.5; exit 3",
                          {{"outcome", "hung"}, {"detected_by", {"harness_deadline"}}}, 10);
  s["faults"] = json::array({{{"id", "poke"},
                              {"layer", "proc"},
                              {"kind", "stop"},
                              {"target", {{"ranks", {0}}}},
                              {"trigger", {{"after_ms", 300}}},
                              {"params", {{"ms", 1}}}}});
  return s;
}

TEST(CliTerminal, FailingRunOnATerminalFitsAndSaysWhereAndWhoNoticed) {
  TempDir dir;
  const std::string file = write_scenario(dir.path, failing_scenario());
  const std::string out = run_on_terminal({"run", file, "--out", dir.path + "/runs"}, 80);
  EXPECT_LE(widest(out), 80u) << out;
  // The progress line is redrawn in place and never reaches the last column.
  EXPECT_NE(out.find("\r\033[K[1/1] terminal-watchdog"), std::string::npos) << out;
  for (const auto& piece : screen_pieces(out)) {
    if (piece.rfind("[1/1] terminal-watchdog", 0) == 0) {
      EXPECT_LE(piece.size(), 79u) << piece;
    }
  }
  EXPECT_NE(out.find("faulted: poke on rank 0"), std::string::npos) << out;
  EXPECT_NE(out.find("first noticed by workload_watchdog on rank 1"), std::string::npos) << out;
  EXPECT_NE(out.find("| watchdog: op 7 timed out after 1000 ms"), std::string::npos) << out;
  EXPECT_NE(out.find("| rank 1 up"), std::string::npos) << out;
  EXPECT_NE(out.find("/report.html"), std::string::npos) << out;
}

TEST(CliTerminal, LogGetsPlainProgressLinesAndWholeTable) {
  TempDir dir;
  const std::string file = write_scenario(dir.path, failing_scenario());
  const auto r = run_with_env({}, {"run", file, "--out", dir.path + "/runs"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[1/1] terminal-watchdog-a-long-scenario-name-for-a-narrow-table  starting"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("ETA "), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("clipped"), std::string::npos) << "nothing cut in a pipe: " << r.out;
  EXPECT_NE(r.out.find("first noticed by workload_watchdog on rank 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("html report: "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ncclfi::e2e
