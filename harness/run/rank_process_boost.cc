// The single translation unit that uses Boost.Process (see rank_process.h for why).
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <stdexcept>

#include "child_signals.h"
#include "rank_process.h"
#include "run_cgroup.h"

namespace ncclfi::cli {
namespace bp = boost::process;

namespace {

// A rank that is a node of its own (ProcessSpec::hostname): a UTS namespace with the node's name, so that
// gethostname() (and NCCL's `host:pid:tid` prefix) names it. Root may unshare the UTS namespace alone;
// anyone else first takes a user namespace of their own, mapping only their own uid and gid (as
// `unshare --user --map-current-user --uts` does), in which they may set a host name. Everything the
// child does is prepared here, before the fork: it only makes async-signal-safe calls.
class NodeIdentity {
 public:
  explicit NodeIdentity(std::string hostname) : hostname_(std::move(hostname)) {
    uid_map_ = std::to_string(geteuid()) + " " + std::to_string(geteuid()) + " 1\n";
    gid_map_ = std::to_string(getegid()) + " " + std::to_string(getegid()) + " 1\n";
  }
  // In the child: best effort (a host that allows neither namespace leaves the rank with its host's name).
  void enter() const {
    if (hostname_.empty()) return;
    if (unshare(CLONE_NEWUTS) != 0) {
      if (unshare(CLONE_NEWUSER | CLONE_NEWUTS) != 0) return;
      write_file("/proc/self/setgroups", "deny");  // before gid_map, as user_namespaces(7) requires
      write_file("/proc/self/uid_map", uid_map_);
      write_file("/proc/self/gid_map", gid_map_);
    }
    (void)sethostname(hostname_.data(), hostname_.size());
  }

 private:
  static void write_file(const char* path, const std::string& text) {
    const int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return;
    (void)!write(fd, text.data(), text.size());
    close(fd);
  }
  std::string hostname_, uid_map_, gid_map_;
};

class BoostRankProcess final : public RankProcess {
 public:
  explicit BoostRankProcess(ProcessSpec spec) : RankProcess(std::move(spec)) {
    boost::filesystem::path exe = spec_.argv.at(0);
    if (spec_.argv[0].find('/') == std::string::npos) {
      exe = bp::search_path(spec_.argv[0]);
      if (exe.empty()) throw std::runtime_error("cannot find `" + spec_.argv[0] + "` on PATH");
    } else if (access(spec_.argv[0].c_str(), X_OK) != 0) {
      throw std::runtime_error("cannot execute " + spec_.argv[0]);
    }
    bp::environment env;
    env.clear();
    for (const auto& [k, v] : spec_.env) env[k] = v;
    const std::vector<std::string> args(spec_.argv.begin() + 1, spec_.argv.end());
    const pid_t harness = getpid();
    const char* cgroup_procs = spec_.cgroup_procs.empty() ? nullptr : spec_.cgroup_procs.c_str();
    const NodeIdentity node(spec_.hostname);
    // In the child between fork and exec: the attempt's cgroup (before anything can fork), a cgroup
    // namespace rooted there where the host makes that a boundary (so that not even a rank running as
    // root can move itself out: run_cgroup.h), its own
    // process group (so a signal reaches the rank and its children, and the terminal's Ctrl-C reaches
    // only ncclfi), death with the harness, and default signal handling (child_signals.h: the harness's
    // ignored signals and mask must not leak into the job). Only async-signal-safe calls.
    auto setup = bp::extend::on_exec_setup([harness, cgroup_procs, &node](auto&) {
      if (cgroup_procs != nullptr) {
        const int fd = open(cgroup_procs, O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
          (void)!write(fd, "0", 1);  // "0": the writing process itself
          close(fd);
          if (RunCgroup::ranks_enter_cgroup_namespace()) (void)unshare(CLONE_NEWCGROUP);
        }
      }
      node.enter();  // after the cgroup: a user namespace may no longer write the host's cgroup files
      setpgid(0, 0);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != harness) _exit(127);  // the harness died before prctl took effect
      reset_signals_in_child();
    });
    std::error_code ec;
    const std::string cwd = spec_.cwd.empty() ? std::string(".") : spec_.cwd;
    child_ = bp::child(exe, bp::args(args), env, bp::start_dir(cwd),
                       bp::std_in<bp::null, (bp::std_out & bp::std_err)> spec_.log_path, setup, ec);
    if (ec) throw std::runtime_error("cannot start " + spec_.argv[0] + ": " + ec.message());
    pid_ = child_.id();
  }

  ~BoostRankProcess() override {
    if (!done_) {
      signal_group(SIGKILL);
      std::error_code ec;
      child_.wait(ec);
    }
  }

  int pid() const override { return pid_; }

  bool poll() override {
    if (done_) return true;
    std::error_code ec;
    const bool running = child_.running(ec);
    if (running && !ec) return false;
    done_ = true;
    const int status = child_.native_exit_code();
    if (WIFSIGNALED(status)) {
      signal_ = WTERMSIG(status);
    } else {
      code_ = WEXITSTATUS(status);
    }
    // The group may still hold children of the rank; they die with it.
    kill(-pid_, SIGKILL);
    return true;
  }

  void signal_group(int sig) override {
    if (done_ || pid_ <= 0) return;
    if (kill(-pid_, sig) != 0) kill(pid_, sig);  // setpgid may not have happened yet
  }

  std::optional<int> exit_code() const override { return code_; }
  std::optional<int> exit_signal() const override { return signal_; }

 private:
  bp::child child_;
  int pid_ = 0;
  bool done_ = false;
  std::optional<int> code_, signal_;
};

}  // namespace

std::unique_ptr<RankProcess> RankProcess::spawn(const ProcessSpec& spec) {
  return std::make_unique<BoostRankProcess>(spec);
}

}  // namespace ncclfi::cli
