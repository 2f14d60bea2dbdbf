// The help, the man page and the shell completion, all written from ncclfi's command model: values of a
// fixed set listed plainly and only the accepted ones offered, scenario files, lab names, run
// directories and fault ids where those go, at every level of commands and after a global option; the
// bash script driven as bash drives it (COMP_WORDS, COMP_CWORD), the zsh and fish ones checked by their
// shells where installed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cli_process.h"

namespace ncclfi::e2e {
namespace {

using nlohmann::json;

std::set<std::string> lines_of(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.insert(line.substr(0, line.find('\t')));
  }
  return out;
}

// What `ncclfi __complete WORDS...` offers: its kind line, then the words.
struct Offer {
  std::string kind;
  std::set<std::string> words;
};
Offer offer(const std::vector<std::string>& words, const std::string& cwd = "") {
  std::vector<std::string> args{"__complete"};
  args.insert(args.end(), words.begin(), words.end());
  const auto r = run_cli(args, 30, cwd);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Offer o;
  o.kind = r.out.substr(0, r.out.find('\n'));
  o.words = lines_of(r.out.substr(r.out.find('\n') + 1));
  return o;
}

TEST(CliHelp, EnumValuesAreListedPlainly) {
  const auto root = run_cli({"--help"});
  EXPECT_EQ(root.exit_code, 0);
  EXPECT_TRUE(contains(root.out, "--color WHEN")) << root.out;
  EXPECT_TRUE(contains(root.out, "always|auto|never (default auto)")) << root.out;
  const auto run = run_cli({"run", "--help"});
  EXPECT_TRUE(contains(run.out, "--gpu-sharing WHEN")) << run.out;
  EXPECT_TRUE(contains(run.out, "auto|always|never (default auto)")) << run.out;
  EXPECT_TRUE(contains(run.out, "--mps WHEN")) << run.out;
  EXPECT_TRUE(contains(run.out, "--repeat N")) << run.out;
  for (const auto& text : {root.out, run.out}) {
    for (const char* internal : {"ENUM", "->", "BOOLEAN", "TEXT", "INT:"}) {
      EXPECT_FALSE(contains(text, internal)) << "CLI11's spelling '" << internal << "' in:\n" << text;
    }
  }
}

TEST(CliHelp, ManPageHasEveryCommandWithPlainValues) {
  const auto man = run_cli({"help-man"});
  EXPECT_EQ(man.exit_code, 0) << man.err;
  EXPECT_EQ(man.out.rfind(".TH ncclfi 1", 0), 0u) << man.out.substr(0, 200);
  for (const char* command :
       {"run", "validate", "list", "report", "sweep", "arm", "disarm", "abort", "lab start"}) {
    EXPECT_TRUE(contains(man.out, std::string(".SS \"ncclfi ") + command)) << command;
  }
  EXPECT_TRUE(contains(man.out, "\\-\\-gpu\\-sharing WHEN\nauto|always|never (default auto)")) << man.out;
  EXPECT_TRUE(contains(man.out, "\\-\\-repeat"));
  EXPECT_FALSE(contains(man.out, "ENUM")) << man.out;
  EXPECT_FALSE(contains(man.out, "help\\-man")) << "the generators stay hidden";
  EXPECT_FALSE(contains(man.out, "__complete"));
}

TEST(CliCompletion, OffersOnlyTheValuesTheParserAccepts) {
  EXPECT_EQ(offer({"run", "--gpu-sharing", ""}).words, (std::set<std::string>{"auto", "always", "never"}));
  EXPECT_EQ(offer({"run", "--mps", ""}).words, (std::set<std::string>{"auto", "never"}));
  EXPECT_EQ(offer({"--color", ""}).words, (std::set<std::string>{"always", "auto", "never"}));
  EXPECT_EQ(offer({"--color=n"}).words, (std::set<std::string>{"--color=never"}));
  // bash splits --color=n at '=': the '=' stays in the word it replaces.
  EXPECT_EQ(offer({"--color", "=", ""}).words, (std::set<std::string>{"always", "auto", "never"}));
  EXPECT_EQ(offer({"--color", "="}).words, (std::set<std::string>{"=always", "=auto", "=never"}));
  // Every value offered is one the parser takes.
  for (const auto& value : offer({"run", "--gpu-sharing", ""}).words) {
    const auto r = run_cli({"run", "--gpu-sharing", value, "--dry-run", "/nonexistent.json"});
    EXPECT_FALSE(contains(r.err, "--gpu-sharing")) << value << ": " << r.err;
  }
  EXPECT_EQ(offer({"list", ""}).words.count("faults"), 1u);
  EXPECT_EQ(offer({"completion", ""}).words, (std::set<std::string>{"bash", "zsh", "fish"}));
}

TEST(CliCompletion, CommandsAtEveryLevelAndAfterAGlobalOption) {
  const Offer top = offer({""});
  EXPECT_EQ(top.kind, "words");
  for (const char* command : {"run", "validate", "lab", "abort"}) EXPECT_EQ(top.words.count(command), 1u);
  EXPECT_EQ(top.words.count("help-man"), 0u) << "hidden commands are not offered";
  EXPECT_EQ(top.words.count("__complete"), 0u);
  EXPECT_EQ(offer({"--color", "never", ""}).words, top.words);
  EXPECT_EQ(offer({"--color", "never", "ru"}).words, (std::set<std::string>{"run"}));
  EXPECT_EQ(offer({"lab", "st"}).words, (std::set<std::string>{"start"}));
  EXPECT_EQ(offer({"--color", "never", "run", "--gpu-sharing", ""}).words,
            (std::set<std::string>{"auto", "always", "never"}));
  const Offer options = offer({"run", "--re"});
  EXPECT_EQ(options.words, (std::set<std::string>{"--repeat", "--report"}));
  EXPECT_EQ(offer({"run", "--col"}).words, (std::set<std::string>{"--color"})) << "global options count";
}

TEST(CliCompletion, ValuesByWhatTheyAre) {
  const Offer labs = offer({"lab", "start", ""});
  EXPECT_EQ(labs.kind, "words");
  EXPECT_EQ(labs.words.count("slow-no-error"), 1u) << "lab names, not files";
  EXPECT_EQ(offer({"--color", "never", "lab", "start", "slow-no"}).words,
            (std::set<std::string>{"slow-no-error"}));
  EXPECT_EQ(offer({"lab", "answer", "ws", "--cause", "congest"}).words.count("congestion"), 1u);
  EXPECT_EQ(offer({"run", ""}).kind, "scenarios");
  EXPECT_EQ(offer({"validate", "a.json", ""}).kind, "scenarios");
  EXPECT_EQ(offer({"sweep", "x.json", "--hang", ""}).kind, "scenarios");
  for (const char* command : {"report", "arm", "disarm", "abort"})
    EXPECT_EQ(offer({command, ""}).kind, "dirs");
  EXPECT_EQ(offer({"run", "--allowed-hosts", ""}).kind, "files");
  EXPECT_EQ(offer({"run", "--out", ""}).kind, "dirs");
  EXPECT_EQ(offer({"run", "--filter", ""}).kind, "nothing");
  EXPECT_EQ(offer({"run", "--report", "ju"}).words, (std::set<std::string>{"junit"}));
  // arm's second word: the fault ids of the run named first.
  TempDir dir;
  std::filesystem::create_directories(dir.path + "/run");
  std::ofstream(dir.path + "/run/plan.json") << R"({"faults": [{"id": "slow", "layer": "net", "kind": "delay",
      "params": {"ms": 5}}, {"id": "stop", "layer": "proc", "kind": "stop"}]})";
  EXPECT_EQ(offer({"arm", dir.path + "/run", ""}).words, (std::set<std::string>{"slow", "stop"}));
}

// The bash script, as bash calls it: COMP_WORDS and COMP_CWORD set, then the function.
std::string bash_complete(const std::string& script, const std::vector<std::string>& words,
                          const std::string& cwd) {
  std::string array = std::string("'") + NCCLFI_CLI + "'";
  for (const auto& w : words) array += " '" + w + "'";
  const auto r = run_program(
      {"/bin/bash", "-c",
       "source " + script + "; COMP_WORDS=(" + array + "); COMP_CWORD=" + std::to_string(words.size()) +
           "; _ncclfi_complete; printf '%s\\n' \"${COMPREPLY[@]}\""},
      30, cwd);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST(CliCompletion, BashScriptCompletesAsBashCallsIt) {
  TempDir dir;
  const auto script = run_cli({"completion", "bash"});
  ASSERT_EQ(script.exit_code, 0);
  EXPECT_TRUE(contains(script.out, "complete -F _ncclfi_complete ncclfi")) << script.out;
  const std::string path = dir.path + "/ncclfi.bash";
  std::ofstream(path) << script.out;
  const std::string work = dir.path + "/work";
  std::filesystem::create_directories(work + "/scenarios");
  for (const char* file : {"a.json", "b.yaml", "c.yml", "notes.txt"})
    std::ofstream(work + "/" + file) << "{}";
  EXPECT_EQ(bash_complete(path, {"va"}, work), "validate\n");
  EXPECT_EQ(lines_of(bash_complete(path, {"run", "--gpu-sharing", ""}, work)),
            (std::set<std::string>{"auto", "always", "never"}));
  EXPECT_EQ(lines_of(bash_complete(path, {"--color", "never", "lab", "start", "slow-no"}, work)),
            (std::set<std::string>{"slow-no-error"}));
  EXPECT_EQ(lines_of(bash_complete(path, {"lab", "strat"}, work)), std::set<std::string>{})
      << "no word starts so";
  EXPECT_EQ(lines_of(bash_complete(path, {"run", ""}, work)),
            (std::set<std::string>{"a.json", "b.yaml", "c.yml", "scenarios"}));
  EXPECT_EQ(lines_of(bash_complete(path, {"abort", ""}, work)), (std::set<std::string>{"scenarios"}));
  EXPECT_TRUE(contains(bash_complete(path, {"run", "--rep"}, work), "--repeat"));
}

TEST(CliCompletion, ZshScriptIsValidAndAsksNcclfi) {
  if (run_program({"/bin/sh", "-c", "command -v zsh"}).exit_code != 0) GTEST_SKIP() << "zsh is not installed";
  TempDir dir;
  const std::string path = dir.path + "/_ncclfi";
  std::ofstream(path) << run_cli({"completion", "zsh"}).out;
  const auto syntax = run_program({"/usr/bin/env", "zsh", "-n", path});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  // Outside a completion widget: the completion system's functions are stood in for, and what the
  // script hands them is printed.
  const std::string stubs =
      "compdef() { :; }; _describe() { print -l -- \"${(@P)4}\"; }; _files() { print -- \"files $*\"; }; ";
  auto zsh_complete = [&](const std::string& typed) {
    return run_program({"/usr/bin/env", "zsh", "-c",
                        stubs + "source " + path + "; words=('" + NCCLFI_CLI + "' " + typed +
                            "); CURRENT=${#words}; _ncclfi"})
        .out;
  };
  EXPECT_EQ(lines_of(zsh_complete("run --gpu-sharing ''")),
            (std::set<std::string>{"auto", "always", "never"}));
  EXPECT_TRUE(contains(zsh_complete("lab st"), "start:")) << zsh_complete("lab st");
  EXPECT_EQ(zsh_complete("run ''"), "files -g *.(json|yaml|yml)\n");
  EXPECT_EQ(zsh_complete("abort ''"), "files -/\n");
}

TEST(CliCompletion, FishScriptIsValidAndCompletes) {
  if (run_program({"/bin/sh", "-c", "command -v fish"}).exit_code != 0)
    GTEST_SKIP() << "fish is not installed";
  TempDir dir;
  const std::string path = dir.path + "/ncclfi.fish";
  std::ofstream(path) << run_cli({"completion", "fish"}).out;
  const auto syntax = run_program({"/usr/bin/env", "fish", "--no-execute", path});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  // `complete -C` runs the completion of a command line as fish would at <TAB>; ncclfi is found on PATH.
  const std::string bin = std::filesystem::path(NCCLFI_CLI).parent_path().string();
  auto fish_complete = [&](const std::string& line) {
    return run_program({"/usr/bin/env", "PATH=" + bin + ":/usr/bin:/bin", "HOME=" + dir.path, "fish",
                        "--no-config", "-c", "source " + path + "; complete -C '" + line + "'"})
        .out;
  };
  EXPECT_EQ(lines_of(fish_complete("ncclfi run --gpu-sharing ")),
            (std::set<std::string>{"auto", "always", "never"}));
  EXPECT_EQ(lines_of(fish_complete("ncclfi --color never lab st")), (std::set<std::string>{"start"}));
  EXPECT_EQ(lines_of(fish_complete("ncclfi lab start slow-no")), (std::set<std::string>{"slow-no-error"}));
}

}  // namespace
}  // namespace ncclfi::e2e
