// `ncclfi lab serve`, the class's grading service (docs/labs-instructor.md, "The lab service"): a student's
// start, hint, answer and debrief go through a Unix socket to a service that alone reads the key
// directory. The kernel names the student (their account), the jobs run as the service's account, and
// the workspace comes back over the socket. Checked here: the whole round through the service, another
// student's ticket refused, a start that never draws twice, strangers on the socket, and that a second
// account cannot read the running job's environment or find the plan on any command line.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "cli_process.h"
#include "lab_fixture.h"

namespace ncclfi::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string own_account() {
  return ::getpwuid(::getuid())->pw_name;
}

bool is_socket(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

// Every regular file under `dir` with its bytes, by relative path.
std::map<std::string, std::string> tree_of(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = read_text(e.path().string());
  return files;
}

// A raw connection to the service: what a stranger can do.
int connect_raw(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

class LabServe : public LabCourse {
 protected:
  void TearDown() override {
    if (server_ > 0) {
      ::kill(server_, SIGTERM);
      const int st = wait_pid(server_, 30);
      EXPECT_TRUE(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0) << read_text(dir_.path + "/serve.log");
      EXPECT_FALSE(fs::exists(socket_)) << "the service leaves its socket behind";
    }
  }
  void serve() {
    server_ = start_cli({"lab", "serve", "--key-dir", keys_, "--socket", socket_, "--catalogue", catalogue_},
                        dir_.path + "/serve.log");
    for (int i = 0; i < 200 && !is_socket(socket_); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(is_socket(socket_)) << read_text(dir_.path + "/serve.log");
  }
  CliResult start(const std::string& ws) {
    return run_cli({"lab", "start", "tiny", "--server", socket_, "--dir", ws});
  }
  std::string ticket_of(const std::string& ws) {
    return read_json(ws + "/lab.json").at("ticket").get<std::string>();
  }
  json progress_of(const std::string& ticket) { return read_json(keys_ + "/" + ticket + "/progress.json"); }

  const std::string socket_ = dir_.path + "/lab.sock";
  pid_t server_ = -1;
};

TEST_F(LabServe, TheWholeRoundGoesThroughTheServiceAsTheCallersAccount) {
  if (own_account().empty()) GTEST_SKIP() << "this account has no name: the service would refuse it";
  serve();
  const std::string ws = dir_.path + "/ws";
  const auto r = start(ws);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "workspace: " + ws + "\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "A tiny lab")) << r.out;
  // The student is the account that asked; the workspace names the service, never the key directory's files.
  const json lab = read_json(ws + "/lab.json");
  EXPECT_EQ(lab.at("student"), own_account());
  EXPECT_EQ(lab.at("server"), socket_);
  const std::string ticket = ticket_of(ws);
  const std::string service_copy = keys_ + "/" + ticket + "/workspace";
  EXPECT_EQ(read_json(keys_ + "/" + ticket + "/key.json").at("workspace"), service_copy);
  // What came back is the service's copy byte for byte, and its briefing names the student's path.
  EXPECT_EQ(tree_of(ws), tree_of(service_copy));
  EXPECT_TRUE(contains(read_text(ws + "/BRIEFING.md"), "ncclfi lab answer " + ws + " "))
      << read_text(ws + "/BRIEFING.md");
  EXPECT_FALSE(contains(read_text(ws + "/BRIEFING.md"), service_copy));
  EXPECT_EQ(fs::status(ws).permissions() & (fs::perms::group_all | fs::perms::others_all), fs::perms::none);

  // A wrong answer, a hint and the right answer, each graded by the service into the key directory.
  auto a = run_cli({"lab", "answer", ws, "--rank", "0", "--cause", "hung_rank"});
  EXPECT_EQ(a.exit_code, 1) << a.out << a.err;
  EXPECT_TRUE(contains(a.out, "WRONG")) << a.out;
  EXPECT_EQ(progress_of(ticket).at("attempts").size(), 1U);
  const auto h = run_cli({"lab", "hint", ws});
  EXPECT_EQ(h.exit_code, 0) << h.err;
  EXPECT_TRUE(contains(h.out, "hint 1 of 2")) << h.out;
  a = run_cli({"lab", "answer", ws, "--rank", "1", "--cause", "nic"});
  EXPECT_EQ(a.exit_code, 0) << a.out << a.err;
  EXPECT_TRUE(contains(a.out, "RIGHT")) << a.out;
  EXPECT_EQ(progress_of(ticket).at("attempts").size(), 2U);
  EXPECT_EQ(progress_of(ticket).at("hints_used"), 1);
  const auto d = run_cli({"lab", "debrief", ws});
  EXPECT_EQ(d.exit_code, 0) << d.out << d.err;
  EXPECT_TRUE(contains(d.out, "mlx5_0:1")) << d.out;  // a line quoted from the workspace

  // A second start of the same lab sends the same ticket's workspace back: no second draw.
  const std::string again = dir_.path + "/again";
  const auto r2 = start(again);
  ASSERT_EQ(r2.exit_code, 0) << r2.out << r2.err;
  EXPECT_TRUE(contains(r2.out, "already")) << r2.out;
  EXPECT_EQ(ticket_of(again), ticket);
  size_t tickets = 0;
  for (const auto& e : fs::directory_iterator(keys_)) tickets += e.is_directory() ? 1U : 0U;
  EXPECT_EQ(tickets, 1U);
}

// Two starts into one directory at once: one writes the workspace, the other stops before it writes a
// file (the workspace is claimed while a start writes it) and undoes nothing of the first's.
TEST_F(LabServe, TwoStartsIntoOneDirectoryLeaveOneWholeWorkspace) {
  if (own_account().empty()) GTEST_SKIP() << "this account has no name: the service would refuse it";
  serve();
  const std::string ws = dir_.path + "/ws";
  const std::vector<std::string> args = {"lab", "start", "tiny", "--server", socket_, "--dir", ws};
  const pid_t first = start_cli(args, dir_.path + "/first.log");
  const pid_t second = start_cli(args, dir_.path + "/second.log");
  const int a = wait_pid(first, 120), b = wait_pid(second, 120);
  ASSERT_TRUE(WIFEXITED(a) && WIFEXITED(b));
  EXPECT_EQ((WEXITSTATUS(a) == 0 ? 1 : 0) + (WEXITSTATUS(b) == 0 ? 1 : 0), 1)
      << read_text(dir_.path + "/first.log") << read_text(dir_.path + "/second.log");
  const std::string lost = read_text(dir_.path + (WEXITSTATUS(a) == 0 ? "/second.log" : "/first.log"));
  EXPECT_TRUE(contains(lost, "another `lab start` is writing this workspace") ||
              contains(lost, "the workspace exists already"))
      << lost;
  const std::string ticket = ticket_of(ws);
  EXPECT_EQ(tree_of(ws), tree_of(keys_ + "/" + ticket + "/workspace"));
  EXPECT_FALSE(fs::exists(ws + "/.starting"));
}

TEST_F(LabServe, AnotherStudentsTicketIsRefusedAndLeftAlone) {
  // grace's ticket, started by the instructor into the same key directory.
  const std::string grace = dir_.path + "/ws-grace";
  const auto g = run_cli({"lab", "start", "tiny", "--student", "grace", "--dir", grace, "--key-dir", keys_,
                          "--catalogue", catalogue_});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  serve();
  const std::string ws = dir_.path + "/ws";
  ASSERT_EQ(start(ws).exit_code, 0);
  json lab = read_json(ws + "/lab.json");
  lab["ticket"] = ticket_of(grace);
  lab["student"] = "grace";
  std::ofstream(ws + "/lab.json") << lab.dump();
  for (const char* op : {"hint", "answer"}) {
    std::vector<std::string> args = {"lab", op, ws};
    if (std::string(op) == "answer") args.insert(args.end(), {"--rank", "1", "--cause", "nic"});
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << op << ": " << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "is not yours")) << op << ": " << r.err;
  }
  const json progress = progress_of(ticket_of(grace));
  EXPECT_EQ(progress.at("attempts").size(), 0U);
  EXPECT_EQ(progress.at("hints_used"), 0);
  // And the instructor's options are refused with a service: the service alone draws and names.
  const auto r =
      run_cli({"lab", "start", "tiny", "--server", socket_, "--seed", "3", "--dir", dir_.path + "/x"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--seed")) << r.err;
  EXPECT_FALSE(fs::exists(dir_.path + "/x"));
}

// What the service answers one raw connection that sends `bytes` and closes its side.
std::string raw_exchange(const std::string& socket, const std::string& bytes) {
  const int fd = connect_raw(socket);
  if (fd < 0) return "(no connection)";
  // The service may hang up in the middle of a long line: MSG_NOSIGNAL, and no check of what was sent.
  (void)!::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);
  char buf[4096];
  std::string reply;
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) reply.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return reply;
}

TEST_F(LabServe, StrangersOnTheSocketDoNotStopIt) {
  serve();
  // One account holds at most kMaxLabRequestsPerAccount (4) requests: a fifth is told at once that the
  // service is busy, and once the four are gone the account is served again.
  std::vector<int> silent;
  for (int i = 0; i < 4; ++i) silent.push_back(connect_raw(socket_));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the service has taken all four
  const std::string busy = raw_exchange(socket_, "{\"op\":\"hint\"}\n");
  EXPECT_TRUE(contains(busy, "\"status\":3")) << busy;
  for (const int fd : silent) ::close(fd);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // Another account's twenty silent connections hold its own slots only (root can act as nobody).
  int held[2] = {-1, -1};
  pid_t stranger = -1;
  if (::getuid() == 0) {
    fs::permissions(dir_.path, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
    ASSERT_EQ(::pipe(held), 0);
    stranger = ::fork();
    if (stranger == 0) {
      ::close(held[1]);
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
      std::vector<int> fds;
      for (int i = 0; i < 20; ++i) fds.push_back(connect_raw(socket_));
      char c;
      (void)!::read(held[0], &c, 1);  // until the test closes its end
      ::_exit(0);
    }
    ::close(held[0]);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  // A line that is not JSON, requests of the wrong shape, one line far over the limit: each is answered
  // or dropped, and the service goes on serving.
  for (const std::string& junk :
       {std::string("hello\n"), std::string("{\"op\":5,\"lab\":[1]}\n"),
        std::string("{\"op\":\"answer\",\"ticket\":\"../../etc\"}\n"),
        std::string("{\"op\":\"answer\",\"ticket\":\"ab\",\"ranks\":\"x\"}\n"), std::string(200000, 'x')}) {
    const std::string reply = raw_exchange(socket_, junk);
    if (junk.front() == '{') {
      EXPECT_TRUE(contains(reply, "\"status\":2")) << junk.substr(0, 60) << " -> " << reply;
    }
  }
  const std::string ws = dir_.path + "/ws";
  const auto r = start(ws);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  if (stranger > 0) {
    ::close(held[1]);
    EXPECT_NE(wait_pid(stranger, 10), -1);
  }
  // A service that is not there is a harness error (3) that says so, and leaves no workspace behind.
  const auto gone =
      run_cli({"lab", "start", "tiny", "--server", dir_.path + "/none.sock", "--dir", dir_.path + "/y"});
  EXPECT_EQ(gone.exit_code, 3) << gone.err;
  EXPECT_TRUE(contains(gone.err, "cannot reach the lab service")) << gone.err;
  EXPECT_FALSE(fs::exists(dir_.path + "/y"));
}

// A /proc file whole ("" when it cannot be read: another account's environment).
std::string proc_file(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return text;
}

// What one scan of /proc finds: the job's processes (by their command line), and which of them show
// the plan in their environment or command line.
struct ProcScan {
  int job_processes = 0;
  int environ_read = 0;       // job processes whose environment could be read
  int environ_with_plan = 0;  // ... and held NCCLFI_PLAN
  std::vector<std::string> cmdline_leaks;
};

ProcScan scan_proc(const std::string& job_marker) {
  ProcScan scan;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmdline = proc_file(e.path() / "cmdline");
    if (cmdline.find(job_marker) == std::string::npos) continue;
    ++scan.job_processes;
    if (cmdline.find("plan") != std::string::npos || cmdline.find("kill") != std::string::npos)
      scan.cmdline_leaks.push_back(pid + ": " + cmdline);
    const std::string env_text = proc_file(e.path() / "environ");
    if (env_text.empty()) continue;
    ++scan.environ_read;
    if (env_text.find("NCCLFI_PLAN=") != std::string::npos) ++scan.environ_with_plan;
  }
  return scan;
}

TEST_F(LabServe, ASecondAccountCannotReadTheRunningJob) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root, to look at the job as a second account (nobody)";
  // A job that runs for a while with a fault in its plan (rank 1 is killed), so its ranks carry NCCLFI_PLAN.
  json lab = tiny_lab();
  json scenario =
      shell_scenario("lab-job", 2, "sleep 4; echo ncclfi-scan-marker-done", {{"outcome", "detected"}}, 30);
  scenario["faults"] = {{{"id", "crash"},
                         {"layer", "proc"},
                         {"kind", "kill"},
                         {"params", {{"signal", "SIGKILL"}}},
                         {"target", {{"ranks", {1}}}},
                         {"trigger", {{"after_ms", 3000}}}}};
  scenario["expect"] = {{"outcome", "detected"}};
  lab["jobs"][0]["scenario"] = scenario;
  write_lab(lab);
  serve();
  // The student is nobody: their own copy of the ncclfi binary (the build tree may be closed to them), a
  // home of their own, and the socket, reachable through the test's directory (0711).
  constexpr uid_t kNobody = 65534;
  fs::permissions(dir_.path, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  const std::string home = dir_.path + "/home", bin = dir_.path + "/bin/ncclfi";
  fs::create_directories(dir_.path + "/bin");
  fs::copy_file(NCCLFI_CLI, bin);
  fs::create_directories(home);
  ASSERT_EQ(::chown(home.c_str(), kNobody, kNobody), 0);
  const pid_t client = ::fork();
  if (client == 0) {
    if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0 || ::chdir(home.c_str()) != 0) ::_exit(120);
    const int log = ::open("start.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(log, 1);
    ::dup2(log, 2);
    ::execl(bin.c_str(), "ncclfi", "lab", "start", "tiny", "--server", socket_.c_str(), "--dir", "ws",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ASSERT_GT(client, 0);
  // The student's account scans /proc while the job runs; so does the service's own (root): it can read
  // the plan there, which shows that the account is what keeps the student out.
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  const pid_t student = ::fork();
  if (student == 0) {
    ::close(pipefd[0]);
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    ProcScan seen;
    for (int i = 0; i < 800 && seen.job_processes == 0; ++i) {
      seen = scan_proc("sleep 4; echo ncclfi-scan-marker");
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    std::string report = std::to_string(seen.job_processes) + " " + std::to_string(seen.environ_read);
    for (const auto& l : seen.cmdline_leaks) report += "\n" + l;
    (void)!::write(pipefd[1], report.data(), report.size());
    ::_exit(0);
  }
  ::close(pipefd[1]);
  ProcScan grader;
  for (int i = 0; i < 800 && grader.environ_read == 0; ++i) {
    grader = scan_proc("sleep 4; echo ncclfi-scan-marker");
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) > 0;) report.append(buf, static_cast<size_t>(n));
  ::close(pipefd[0]);
  int st = 0;
  ::waitpid(student, &st, 0);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "the student's scan could not run as nobody";
  EXPECT_GT(grader.environ_read, 0) << "the job was never seen running";
  EXPECT_GT(grader.environ_with_plan, 0) << "the job's ranks carry no plan: this test would prove nothing";
  EXPECT_TRUE(grader.cmdline_leaks.empty()) << grader.cmdline_leaks.front();
  std::istringstream in(report);
  int seen = 0, environ_read = 0;
  in >> seen >> environ_read;
  EXPECT_GT(seen, 0) << "the student's scan never saw the job: " << report;
  EXPECT_EQ(environ_read, 0) << report;
  EXPECT_EQ(report.find('\n'), std::string::npos) << "the student found: " << report;
  const int cst = wait_pid(client, 60);
  ASSERT_TRUE(cst != -1 && WIFEXITED(cst) && WEXITSTATUS(cst) == 0) << read_text(home + "/start.log");
  // The workspace is nobody's, as nobody wrote it, and the service's ticket names nobody as the student.
  struct stat st_ws {};
  ASSERT_EQ(::stat((home + "/ws/lab.json").c_str(), &st_ws), 0);
  EXPECT_EQ(st_ws.st_uid, kNobody);
  EXPECT_EQ(read_json(home + "/ws/lab.json").at("student"), "nobody");
}

}  // namespace
}  // namespace ncclfi::e2e
