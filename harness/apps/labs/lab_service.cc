#include "lab_service.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <vector>

#include "exit_status.h"
#include "interrupt.h"
#include "ncclfi/event_log.h"

namespace ncclfi::cli::lab {
namespace fs = std::filesystem;

namespace {

// 32 KiB of bytes is 43,692 characters of base64: a message stays well under kMaxAgentLineBytes.
constexpr size_t kChunkBytes = 32 << 10;
constexpr int kShutdownGraceS = 10;

std::string base64(const char* data, size_t n) {
  std::string out(4 * ((n + 2) / 3), '\0');
  const int len = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(data), static_cast<int>(n));
  out.resize(static_cast<size_t>(len));
  return out;
}

// Throws on text that is not base64; EVP_DecodeBlock counts the padding as zero bytes, taken off here.
std::string unbase64(const std::string& text) {
  if (text.size() % 4 != 0) throw LabServiceError("the lab service sent data that is not base64");
  std::string out(3 * text.size() / 4, '\0');
  const int len =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (len < 0) throw LabServiceError("the lab service sent data that is not base64");
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  out.resize(static_cast<size_t>(len) - padding);
  return out;
}

sockaddr_un socket_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path))
    throw std::runtime_error(path + ": a socket path must be 1 to " +
                             std::to_string(sizeof(addr.sun_path) - 1) + " bytes");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// A connection to the service, or -1 with errno. A Unix socket whose listen queue is full would block a
// plain connect() for as long as the service is busy: the attempt is non-blocking and retried for up to
// `bound_ms`, then fails with EAGAIN.
int connect_unix(const std::string& path, int bound_ms = 5000) {
  const sockaddr_un addr = socket_address(path);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  for (int waited_ms = 0;; waited_ms += 20) {
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) break;
    const int err = errno;
    if ((err != EAGAIN && err != EINTR) || waited_ms >= bound_ms) {
      ::close(fd);
      errno = err;
      return -1;
    }
    ::usleep(20 * 1000);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // the channel bounds its own waits
  return fd;
}

int listen_unix(const std::string& path) {
  socket_address(path);  // the length check
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) throw std::runtime_error(path + ": exists and is not a socket (left alone)");
    if (const int other = connect_unix(path); other >= 0) {
      ::close(other);
      throw std::runtime_error(path + ": another lab service is listening there");
    }
    ::unlink(path.c_str());  // a stale socket of a service that is gone
  }
  // Made under a name of its own and renamed into place once it listens: a client never finds the path
  // refusing connections, and a second service never takes a starting one for stale.
  const std::string temporary = path + ".new-" + std::to_string(::getpid());
  const sockaddr_un addr = socket_address(temporary);
  ::unlink(temporary.c_str());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 128) != 0 ||
      ::chmod(temporary.c_str(), 0666) != 0 || ::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    ::unlink(temporary.c_str());
    throw std::runtime_error(path + ": cannot listen there: " + why);
  }
  return fd;
}

std::optional<LabPeer> peer_of(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return std::nullopt;
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (::getpwuid_r(cred.uid, &pw, buf.data(), buf.size(), &found) != 0 || !found) return std::nullopt;
  return LabPeer{cred.uid, found->pw_name};
}

// A path the service sent, inside the workspace: relative, no "." or "..", not too deep or long.
fs::path checked_relative(const std::string& path) {
  const fs::path p(path);
  bool ok = !path.empty() && path.size() < 4096 && p.is_relative();
  size_t depth = 0;
  for (const auto& part : p) {
    ok = ok && !part.empty() && part != "." && part != ".." && ++depth <= 32;
  }
  if (!ok) throw LabServiceError("the lab service sent a file outside the workspace: " + path);
  return p;
}

// Held in the workspace while a start writes it: a second start into the same directory finds it and stops
// before it writes a file, so neither can undo the other's workspace.
constexpr const char* kStartingMarker = ".starting";

// Claims the workspace for this start: made here, or found empty; returns whether it was made here.
bool claim_workspace(const std::string& workspace) {
  std::error_code ec;
  const fs::path dir(workspace);
  if (dir.has_parent_path()) fs::create_directories(dir.parent_path());
  const bool made_here = fs::create_directory(dir);
  if (!made_here && !fs::is_empty(dir, ec))
    throw std::runtime_error(workspace + ": the workspace exists already");
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  const int fd =
      ::open((dir / kStartingMarker).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) throw std::runtime_error(workspace + ": another `lab start` is writing this workspace");
  ::close(fd);
  return made_here;
}

// Writes the files of a reply as they come: each file's chunks are consecutive.
class WorkspaceWriter {
 public:
  explicit WorkspaceWriter(std::string root) : root_(std::move(root)) {}
  void write(const std::string& rel, const std::string& bytes, uint64_t& total) {
    if (root_.empty()) throw LabServiceError("the lab service sent files where none were asked for");
    total += bytes.size();
    if (total > kMaxLabWorkspaceBytes)
      throw LabServiceError("the lab service sent more than " + std::to_string(kMaxLabWorkspaceBytes >> 20) +
                            " MiB of workspace");
    if (rel != current_) {
      const fs::path target = fs::path(root_) / checked_relative(rel);
      fs::create_directories(target.parent_path());
      finish();
      // O_EXCL: a file sent twice, or one through a link planted in the new workspace, is refused.
      const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
      if (fd < 0) throw std::runtime_error(target.string() + ": " + std::strerror(errno));
      ::close(fd);
      out_.open(target, std::ios::binary | std::ios::app);
      current_ = rel;
    }
    out_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out_) throw std::runtime_error((fs::path(root_) / rel).string() + ": cannot write");
  }
  // Closes the file being written; throws when what it held did not reach the disk (a full disk).
  void finish() {
    if (!out_.is_open()) return;
    out_.close();
    if (!out_) throw std::runtime_error((fs::path(root_) / current_).string() + ": cannot write");
  }

 private:
  std::string root_, current_;
  std::ofstream out_;
};

void serve_one(int fd, const LabRequestHandler& handler) {
  LineChannel channel(fd);
  const auto peer = peer_of(fd);
  const auto request = channel.receive(kLabRequestWaitMs);
  if (!request) return;  // silent, or not JSON: nothing to answer
  const int64_t begin_ns = Clock::mono_ns();
  int status = kHarnessError;
  try {
    if (!peer) throw LabServiceError("the service cannot tell which account is asking");
    status = handler(channel, *request, *peer);
  } catch (const LabServiceError& e) {
    send_output(channel, 2, std::string("ncclfi lab: ") + e.what() + "\n");
    status = kHarnessError;
  } catch (const std::exception& e) {
    send_output(channel, 2, std::string("ncclfi lab: ") + e.what() + "\n");
    status = kBadInput;
  }
  send_done(channel, status);
  agent_log_line("lab serve: " + (peer ? peer->user : std::string("?")) + " " +
                 text_field(*request, "op", "?") + " -> " + std::to_string(status) + " (" +
                 std::to_string((Clock::mono_ns() - begin_ns) / 1'000'000) + " ms)");
}

constexpr const char* kBusy =
    "ncclfi lab: the lab service is busy (or you have requests running already); try again in a minute\n";

void end_requests(std::map<pid_t, uid_t>& requests) {
  for (const auto& [pid, uid] : requests) ::kill(pid, SIGTERM);
  const int64_t deadline = Clock::mono_ns() + int64_t{kShutdownGraceS} * 1'000'000'000;
  while (!requests.empty() && Clock::mono_ns() < deadline) {
    const pid_t pid = ::waitpid(-1, nullptr, WNOHANG);
    if (pid > 0) {
      requests.erase(pid);
    } else {
      ::usleep(50'000);
    }
  }
  for (const auto& [pid, uid] : requests) ::kill(pid, SIGKILL);
  for (const auto& [pid, uid] : requests) ::waitpid(pid, nullptr, 0);
  requests.clear();
}

}  // namespace

std::string lab_server_socket(const std::string& explicit_path, bool may_use_default) {
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("NCCLFI_LAB_SERVER"); env && *env) return env;
  struct stat st {};
  if (may_use_default && ::stat(kDefaultLabSocket, &st) == 0 && S_ISSOCK(st.st_mode))
    return kDefaultLabSocket;
  return "";
}

bool send_output(LineChannel& channel, int fd, const std::string& text) {
  for (size_t at = 0; at < text.size(); at += kChunkBytes) {
    const size_t n = std::min(kChunkBytes, text.size() - at);
    if (!channel.send({{"t", "out"}, {"fd", fd}, {"data", base64(text.data() + at, n)}}, kLabSendBoundMs))
      return false;
  }
  return true;
}

bool send_done(LineChannel& channel, int status) {
  return channel.send({{"t", "done"}, {"status", status}}, kLabSendBoundMs);
}

bool send_workspace(LineChannel& channel, const std::string& dir) {
  std::vector<char> buf(kChunkBytes);
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.is_symlink()) continue;
    const std::string rel = fs::relative(entry.path(), dir).string();
    std::ifstream in(entry.path(), std::ios::binary);
    bool first = true;
    while (in || first) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      const auto n = static_cast<size_t>(in.gcount());
      if (n == 0 && !first) break;
      // An empty file is one chunk with no data: it still has to be created.
      if (!channel.send({{"t", "file"}, {"path", rel}, {"data", base64(buf.data(), n)}}, kLabSendBoundMs))
        return false;
      first = false;
    }
  }
  return true;
}

namespace {

LabReply read_reply(LineChannel& channel, const std::string& socket_path, WorkspaceWriter& writer,
                    int reply_ms) {
  LabReply reply;
  while (true) {
    const auto message = channel.receive(reply_ms);
    if (!message)
      throw LabServiceError("the lab service at " + socket_path +
                            (channel.open() ? " did not answer in time" : " hung up before its answer"));
    const std::string kind = text_field(*message, "t");
    if (kind == "done") {
      writer.finish();
      reply.status = static_cast<int>(int_field(*message, "status", kHarnessError));
      return reply;
    }
    const std::string data = unbase64(text_field(*message, "data"));
    if (kind == "file") {
      writer.write(text_field(*message, "path"), data, reply.file_bytes);
    } else if (kind == "out") {
      (int_field(*message, "fd", 1) == 2 ? reply.err : reply.out) += data;
    }
  }
}

// What a failed transfer left: the workspace removed when this call made it, emptied when it was there.
void undo_workspace(const std::string& workspace, bool made_here) {
  std::error_code ec;
  if (made_here) {
    fs::remove_all(workspace, ec);
    return;
  }
  for (const auto& entry : fs::directory_iterator(workspace, ec)) fs::remove_all(entry.path(), ec);
}

}  // namespace

LabReply call_lab_service(const std::string& socket_path, const nlohmann::json& request,
                          const std::string& workspace, int reply_ms) {
  const int fd = connect_unix(socket_path);
  if (fd < 0)
    throw LabServiceError("cannot reach the lab service at " + socket_path + ": " + std::strerror(errno) +
                          " (is `ncclfi lab serve` running there?)");
  LineChannel channel(fd);
  const bool made_here = !workspace.empty() && claim_workspace(workspace);
  WorkspaceWriter writer(workspace);
  try {
    if (!channel.send(request)) throw LabServiceError("the lab service at " + socket_path + " hung up");
    LabReply reply = read_reply(channel, socket_path, writer, reply_ms);
    if (reply.status != kAllPassed && !workspace.empty()) undo_workspace(workspace, made_here);
    if (reply.status == kAllPassed && !workspace.empty()) {
      std::error_code ec;
      fs::remove(fs::path(workspace) / kStartingMarker, ec);
    }
    return reply;
  } catch (const std::exception&) {
    if (!workspace.empty()) undo_workspace(workspace, made_here);
    throw;
  }
}

int serve_lab_requests(const std::string& socket_path, const LabRequestHandler& handler, std::ostream& log) {
  const int listener = listen_unix(socket_path);
  log << "lab serve: listening on " << socket_path << " (SIGINT, SIGTERM or SIGHUP to stop)" << std::endl;
  std::map<pid_t, uid_t> requests;  // the processes serving one request each, and whose
  const pid_t service = ::getpid();
  while (!interrupted()) {
    for (pid_t pid; (pid = ::waitpid(-1, nullptr, WNOHANG)) > 0;) requests.erase(pid);
    pollfd pfd{listener, POLLIN, 0};
    if (::poll(&pfd, 1, 250) <= 0) continue;
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ucred cred{};
    socklen_t len = sizeof cred;
    const bool known = ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0;
    const auto own =
        std::count_if(requests.begin(), requests.end(), [&](const auto& r) { return r.second == cred.uid; });
    if (!known || requests.size() >= static_cast<size_t>(kMaxLabRequestsAtOnce) ||
        own >= kMaxLabRequestsPerAccount) {
      // Told at once, never waiting on the client: it may be one of those holding the slots.
      LineChannel busy(fd);
      busy.send({{"t", "out"}, {"fd", 2}, {"data", base64(kBusy, std::strlen(kBusy))}}, 0);
      busy.send({{"t", "done"}, {"status", kHarnessError}}, 0);
      continue;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(listener);
      // A service killed outright takes its requests with it (their jobs' ranks have their own guard).
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != service) ::_exit(0);  // it died before the line above
      serve_one(fd, handler);
      std::cout.flush();
      ::_exit(0);
    }
    ::close(fd);
    if (pid > 0) requests.emplace(pid, cred.uid);
  }
  log << "lab serve: stopping (" << requests.size() << " request(s) still running)" << std::endl;
  end_requests(requests);
  ::close(listener);
  ::unlink(socket_path.c_str());
  return kAllPassed;
}

}  // namespace ncclfi::cli::lab
