// `ncclfi lab serve` (lab_service.h: why a class runs its labs through it), and the students' side:
// start, hint, answer and debrief sent to the service instead of run here.
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>
#include <type_traits>
#include <vector>

#include "cmd_lab.h"
#include "commands.h"
#include "lab_key_dir.h"
#include "lab_roster.h"
#include "lab_service.h"
#include "lab_workspace.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;
using namespace ncclfi::cli::lab;

namespace {

struct ServeConfig {
  std::string key_dir, catalogue, socket;
};

// Runs one lab command with std::cout and std::cerr caught (a request's process has one thread), and
// sends what it printed. An error is printed as the command would print it here.
int run_captured(LineChannel& channel, const std::function<int()>& body) {
  std::ostringstream out, err;
  std::streambuf* const old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* const old_err = std::cerr.rdbuf(err.rdbuf());
  int status = kBadInput;
  try {
    status = body();
  } catch (const LabJobError& e) {
    err << "ncclfi lab: " << e.what() << "\n";
    status = kHarnessError;
  } catch (const std::exception& e) {
    err << "ncclfi lab: " << e.what() << "\n";
    status = kBadInput;
  }
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  send_output(channel, 2, err.str());
  send_output(channel, 1, out.str());
  return status;
}

// The ticket of `student` for `lab` in the key directory, or "" when there is none.
std::string ticket_of(const std::string& key_dir, const std::string& lab, const std::string& student) {
  for (const auto& entry : fs::directory_iterator(key_dir)) {
    std::error_code ec;
    if (!entry.is_directory(ec) || entry.is_symlink(ec) || !fs::exists(entry.path() / "key.json", ec))
      continue;
    try {
      const nlohmann::json key = read_key(entry.path().string());
      if (key.value("lab", "") == lab && key.value("student", "") == student) return entry.path().string();
    } catch (const std::exception&) {
      // A key that cannot be read is the instructor's to look at (the gradebook reports it).
    }
  }
  return "";
}

// The shown path of the student's workspace is only text in BRIEFING.md: bounded and printable.
std::string shown_dir(const nlohmann::json& request, const std::string& fallback) {
  std::string dir = text_field(request, "dir");
  const bool printable = std::all_of(dir.begin(), dir.end(), [](char c) { return c >= 0x20 && c != 0x7f; });
  return dir.empty() || dir.size() > 1024 || !printable ? fallback : dir;
}

int serve_start(LineChannel& channel, const nlohmann::json& request, const LabPeer& peer,
                const ServeConfig& config) {
  const std::string lab = text_field(request, "lab");
  // One start at a time per student: two at once would draw two tickets for the same lab.
  const std::string lock_path = config.key_dir + "/start-" + peer.user + ".lock";
  const int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock < 0 || ::flock(lock, LOCK_EX | LOCK_NB) != 0)
    throw std::runtime_error("a start of yours is still running; wait for it");
  std::string ticket_dir = ticket_of(config.key_dir, lab, peer.user);
  int status = kAllPassed;
  if (!ticket_dir.empty()) {
    // Again: the same workspace, never a new draw (a student could start until an easy cause came up).
    if (read_key(ticket_dir).value("workspace", "") != lab_service_workspace(ticket_dir))
      throw std::runtime_error("your instructor started " + lab +
                               " for you already, outside this service: work in that workspace");
    send_output(channel, 1,
                "You started " + lab +
                    " already: here is its workspace again (the same fault; the attempts " +
                    "and hints you used still count).\n");
  } else {
    LabStart start;
    start.catalogue = config.catalogue;
    start.lab = lab;
    start.student = peer.user;
    start.key_dir = config.key_dir;
    start.server = config.socket;
    start.shown_dir = shown_dir(request, "lab-" + lab + "-" + peer.user);
    status = run_captured(channel, [&] { return lab_start(start); });
    if (status != kAllPassed) return status;
    ticket_dir = ticket_of(config.key_dir, lab, peer.user);
  }
  if (!send_workspace(channel, lab_service_workspace(ticket_dir)))
    return kHarnessError;  // the client is gone
  return status;
}

// hint, answer, debrief: on the ticket the request names, which must be the asking student's.
int serve_ticket(LineChannel& channel, const std::string& op, const nlohmann::json& request,
                 const LabPeer& peer, const ServeConfig& config) {
  const std::string id = text_field(request, "ticket");
  if (id.empty() || id.size() > 64 || id.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw std::runtime_error("the request names no ticket");
  const std::string ticket_dir = config.key_dir + "/" + id;
  std::error_code ec;
  if (!fs::exists(ticket_dir + "/key.json", ec))
    throw std::runtime_error("no ticket " + id + " in this class");
  const nlohmann::json key = read_key(ticket_dir);
  if (key.value("student", "") != peer.user) throw std::runtime_error("ticket " + id + " is not yours");
  const std::string workspace = lab_service_workspace(ticket_dir);
  if (op == "hint") return run_captured(channel, [&] { return lab_hint(workspace, config.key_dir); });
  if (op == "debrief") return run_captured(channel, [&] { return cmd_student_debrief(workspace); });
  std::vector<int> ranks;
  std::vector<std::string> details;
  const auto array_of = [&](const char* field, auto& into) {
    const auto it = request.find(field);
    if (it == request.end()) return;
    if (!it->is_array()) throw std::runtime_error(std::string("\"") + field + "\" must be an array");
    for (const auto& v : *it) into.push_back(v.get<typename std::decay_t<decltype(into)>::value_type>());
  };
  try {
    array_of("ranks", ranks);
    array_of("details", details);
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error("\"ranks\" holds whole numbers and \"details\" text");
  }
  return run_captured(channel, [&] {
    return lab_answer(workspace, ranks, text_field(request, "cause"), details, config.key_dir);
  });
}

int serve_request(LineChannel& channel, const nlohmann::json& request, const LabPeer& peer,
                  const ServeConfig& config) {
  // The account name becomes part of paths (lab_roster.h).
  if (const std::string why = student_name_problem(peer.user); !why.empty())
    throw std::runtime_error("the account " + peer.user + " cannot be a student: " + why);
  const std::string op = text_field(request, "op");
  if (op == "start") return serve_start(channel, request, peer, config);
  if (op == "hint" || op == "answer" || op == "debrief")
    return serve_ticket(channel, op, request, peer, config);
  throw std::runtime_error("the lab service does not know the request '" + op + "'");
}

std::string own_account() {
  const passwd* pw = ::getpwuid(::getuid());
  if (!pw) throw std::runtime_error("this process's account has no name");
  return pw->pw_name;
}

int print_reply(const LabReply& reply) {
  std::cerr << reply.err;
  std::cout << reply.out;
  return reply.status;
}

}  // namespace

std::string service_of_workspace(const LabArgs& args) {
  if (!args.key_dir.empty()) return "";
  if (!args.server.empty()) return args.server;
  return read_ticket(args.workspace).server;
}

int start_from_service(const LabArgs& args, const std::string& server) {
  const std::string dir = args.dir.empty() ? "lab-" + args.lab + "-" + own_account() : args.dir;
  try {
    // A failed start leaves no workspace behind (call_lab_service), so the next one finds the way clear.
    const int status = print_reply(
        call_lab_service(server, {{"op", "start"}, {"lab", args.lab}, {"dir", dir}}, dir, kLabStartReplyMs));
    if (status == kAllPassed) std::cout << "workspace: " << dir << "\n";
    return status;
  } catch (const LabServiceError& e) {
    std::cerr << "ncclfi lab: " << e.what() << "\n";
    return kHarnessError;
  }
}

int ask_service_about_ticket(const LabArgs& args, const std::string& server, const std::string& op) {
  const Ticket ticket = read_ticket(args.workspace);
  nlohmann::json request = {{"op", op}, {"ticket", ticket.ticket_id}};
  if (op == "answer") {
    request["ranks"] = args.ranks;
    request["cause"] = args.cause;
    request["details"] = args.details;
  }
  try {
    return print_reply(call_lab_service(server, request));
  } catch (const LabServiceError& e) {
    std::cerr << "ncclfi lab: " << e.what() << "\n";
    return kHarnessError;
  }
}

void add_serve_command(CLI::App& lab, const std::shared_ptr<LabArgs>& args, int& status) {
  auto* serve = lab.add_subcommand(
      "serve",
      "Instructor: the class's grading service; students' start, hint, answer and debrief go to it.");
  serve->add_option(
      "--key-dir", args->start_key_dir,
      "the key directory, only this account may read it (default $NCCLFI_LAB_KEY_DIR or lab-keys)");
  serve->add_option("--socket", args->server,
                    std::string("where students reach it (default ") + kDefaultLabSocket + ")");
  serve->add_option("--class", args->class_file, "the class's settings (as lab start --class)");
  serve->add_option("--catalogue", args->catalogue, "the lab directory")->capture_default_str();
  serve->footer(
      "Run it under a grader account of its own; students run `ncclfi lab start LAB` as themselves.\n"
      "It stops on SIGINT or SIGTERM, ending the starts still running.");
  describe_values(*serve, {{"--key-dir", ValueKind::kDirectory, "DIR"},
                           {"--socket", ValueKind::kFile, "SOCKET"},
                           {"--class", ValueKind::kFile, "FILE"},
                           {"--catalogue", ValueKind::kDirectory, "DIR"}});
  serve->callback([args, &status] {
    guarded(status, [&] {
      ServeConfig config;
      config.key_dir = fs::absolute(args->start_key_dir).lexically_normal().string();
      config.catalogue = fs::absolute(args->catalogue).lexically_normal().string();
      config.socket = fs::absolute(args->server.empty() ? std::string(kDefaultLabSocket) : args->server)
                          .lexically_normal()
                          .string();
      make_private_directory(config.key_dir);
      make_or_read_secret(config.key_dir);
      if (!args->class_file.empty()) install_class_file(config.key_dir, args->class_file);
      return serve_lab_requests(
          config.socket,
          [&config](LineChannel& channel, const nlohmann::json& request, const LabPeer& peer) {
            return serve_request(channel, request, peer, config);
          },
          std::cerr);
    });
  });
}

}  // namespace ncclfi::cli
