#include "injection_relay.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "agent_protocol.h"

namespace ncclfi::cli {
namespace {

// In the spool, a link to the channel's own file: {"NCCLFI_INJECT_SOCKET": ..., "NCCLFI_INJECT_KEY": ...}.
constexpr const char* kHandoffFile = "inject-channel.json";
constexpr const char* kChannelFile = "channel.json";  // beside the socket, in the channel's 0700 directory
// A count a peer states is clamped: a relay never reports more datagrams than a socket can hold.
constexpr int64_t kMaxRejectedPerMessage = int64_t{1} << 20;

// Writes `text` to `path` as a new file of mode 0600 (through a temporary name, so that a wrapper never
// reads half of it).
void write_private_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".new";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    throw std::runtime_error("injection relay: cannot create " + temporary + ": " + std::strerror(errno));
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written || ::rename(temporary.c_str(), path.c_str()) != 0) {
    ::unlink(temporary.c_str());
    throw std::runtime_error("injection relay: cannot write " + path);
  }
}

}  // namespace

// The key lives in the channel's own directory, which goes with the channel however the agent ends (one
// killed by SIGKILL: the next channel opened on the host removes it); the spool holds only a link to it.
NodeInjectionRelay::NodeInjectionRelay(const std::string& spool_dir)
    : handoff_path_(spool_dir + "/" + kHandoffFile) {
  const auto env = receiver_.env();
  const std::string socket = env.at(kInjectSocketVar);
  channel_path_ = socket.substr(0, socket.rfind('/') + 1) + kChannelFile;
  write_private_file(channel_path_, nlohmann::json(env).dump());
  ::unlink(handoff_path_.c_str());  // one left by an agent of an earlier attempt with the same spool
  if (::symlink(channel_path_.c_str(), handoff_path_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(channel_path_.c_str());
    throw std::runtime_error("injection relay: cannot link " + handoff_path_ + ": " + why);
  }
}

// Before the receiver's destructor, which removes the (then empty) directory.
NodeInjectionRelay::~NodeInjectionRelay() {
  ::unlink(handoff_path_.c_str());
  ::unlink(channel_path_.c_str());
}

void NodeInjectionRelay::relay(const std::function<bool(const nlohmann::json&)>& send) {
  size_t rejected = 0;
  receiver_.drain({[&](const InjectionDatagram& d) {
                     if (d.record.size() > kMaxRelayedRecordBytes) {
                       ++rejected;  // too long for the wire: its line will stand alone (forged)
                       return;
                     }
                     send({{"t", kRelayedRecord}, {kRecordSeqField, d.seq}, {"record", d.record}});
                   },
                   [&](size_t n) { rejected += n; }});
  if (rejected > 0) send({{"t", kRelayedRejections}, {"n", rejected}});
}

std::map<std::string, std::string> node_injection_env(const std::string& spool_dir) {
  std::ifstream in(spool_dir + "/" + kHandoffFile);
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  const auto doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  const std::string socket = text_field(doc, kInjectSocketVar);
  const std::string key = text_field(doc, kInjectKeyVar);
  if (socket.empty() || key.empty()) return {};
  return {{kInjectSocketVar, socket}, {kInjectKeyVar, key}};
}

RelayedInjections read_relayed(const nlohmann::json& message, const std::string& host) {
  RelayedInjections out;
  const std::string t = text_field(message, "t");
  if (t == kRelayedRejections) {
    const int64_t n = int_field(message, "n", 1);  // a count of the wrong type still says one was refused
    out.rejected = static_cast<size_t>(std::clamp<int64_t>(n, 1, kMaxRejectedPerMessage));
    return out;
  }
  const int64_t seq = int_field(message, kRecordSeqField, 0);
  const auto record = message.find("record");
  if (seq < 1 || record == message.end() || !record->is_string() ||
      text_field(nlohmann::json::parse(record->get_ref<const std::string&>(), nullptr, false), "host") !=
          host) {
    out.rejected = 1;
    return out;
  }
  out.record = InjectionDatagram{static_cast<uint64_t>(seq), record->get<std::string>()};
  return out;
}

}  // namespace ncclfi::cli
