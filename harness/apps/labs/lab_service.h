// `ncclfi lab serve`: the grading service of a class. It runs under a grader account of its own and is the
// only one that reads the key directory; students reach it through a Unix socket. The kernel says who
// is asking (SO_PEERCRED): a student is their Unix account, so no one can start, hint, answer or debrief
// as someone else, and nothing a student names becomes a path on the grader's side. The jobs run as the
// grader too, so a student cannot read their environment (/proc/PID/environ needs the same user) or
// their run directories; the workspace comes back over the socket and the student's own `ncclfi` writes
// it, as the student.
//
// The wire: the LineChannel of the node agents (one JSON object per line, each at most
// kMaxAgentLineBytes). The client sends one request; the service answers with {"t":"out","fd":1|2,
// "data":BASE64} (what the command printed) and {"t":"file","path":REL,"data":BASE64} (a workspace, in
// chunks: one file's chunks are consecutive and the first one creates it), in any order, then
// {"t":"done","status":N}. Base64, since a job's log need not be UTF-8.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "agent_protocol.h"

namespace ncclfi::cli::lab {

// Where students' commands look for the service when none is named (--server, $NCCLFI_LAB_SERVER):
// the instructor makes the directory, owned by the grader account.
inline constexpr const char* kDefaultLabSocket = "/run/ncclfi-lab/lab.sock";
// How long the service waits for a request after a connection is made: a silent stranger holds a slot
// no longer than this.
inline constexpr int kLabRequestWaitMs = 5000;
// Requests served at once (each in a process of its own), in all and per account; more connections are
// told to retry. The account's cap keeps one student from holding every slot.
inline constexpr int kMaxLabRequestsAtOnce = 64;
inline constexpr int kMaxLabRequestsPerAccount = 4;
// How long the service waits for a client to take each message (a stopped client, a slow home directory).
inline constexpr int kLabSendBoundMs = 30'000;
// How long a client waits for the service's answer: a start runs the lab's jobs first.
inline constexpr int kLabStartReplyMs = 30 * 60 * 1000;
inline constexpr int kLabReplyMs = 2 * 60 * 1000;
// What a workspace sent back may hold, in all: a lab's workspace is a few MiB.
inline constexpr uint64_t kMaxLabWorkspaceBytes = 256ull << 20;

// The service's own copy of a ticket's workspace (KEY_DIR/TICKET/workspace): what it grades against and
// what it sends the student.
inline std::string lab_service_workspace(const std::string& ticket_dir) {
  return ticket_dir + "/workspace";
}

// Who is asking: the peer's Unix account, from the kernel.
struct LabPeer {
  uid_t uid = 0;
  std::string user;
};

// The socket path the students' commands use: `explicit_path`, else $NCCLFI_LAB_SERVER, else the
// default path when a socket is there and `may_use_default`; empty means no service (run locally).
std::string lab_server_socket(const std::string& explicit_path, bool may_use_default);

// Sends what the command printed, then the end with its exit status; false once the client is gone.
bool send_output(LineChannel& channel, int fd, const std::string& text);
bool send_done(LineChannel& channel, int status);
// Sends every regular file under `dir` (symbolic links and anything else are left out); stops at the
// first message the client does not take (false).
bool send_workspace(LineChannel& channel, const std::string& dir);

// The service could not be reached, hung up or broke the protocol: a harness error (exit 3), not the
// student's.
struct LabServiceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What a reply brought back.
struct LabReply {
  int status = 3;
  std::string out, err;
  uint64_t file_bytes = 0;
};
// Sends `request` to the service at `socket_path` and reads its reply (waiting at most `reply_ms`): files
// into `workspace` (made 0700; it must not exist or be empty; empty: the service must send none), what it
// printed into the reply. Throws LabServiceError when the service cannot be reached, breaks off or sends
// a path outside the workspace; a workspace it made is then removed again (one that was there empty is
// emptied), so a second start finds nothing in its way.
LabReply call_lab_service(const std::string& socket_path, const nlohmann::json& request,
                          const std::string& workspace = "", int reply_ms = kLabReplyMs);

// What the service does for one request, inside the request's own process (which ends after it): sends
// files and output with send_*, and returns the exit status that the `done` message carries. What it
// throws goes to the student as an error (status 2).
using LabRequestHandler =
    std::function<int(LineChannel& channel, const nlohmann::json& request, const LabPeer& peer)>;

// Listens on `socket_path` (mode 0666: every local account may ask; a stale socket there is replaced,
// anything else refuses; the socket appears there only once it listens) until SIGINT, SIGTERM or SIGHUP,
// serving each request in a forked process. On the way out it ends the requests still running (SIGTERM,
// 10 s, SIGKILL) and removes the socket. Returns the exit status; each request's process logs one line.
int serve_lab_requests(const std::string& socket_path, const LabRequestHandler& handler, std::ostream& log);

}  // namespace ncclfi::cli::lab
