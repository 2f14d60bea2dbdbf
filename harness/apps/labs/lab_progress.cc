#include "lab_progress.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "agent_protocol.h"  // agent_mac, macs_equal: the project's HMAC-SHA256
#include "lab_workspace.h"   // write_file_atomically
#include "ncclfi/bounded_input.h"

namespace ncclfi::cli::lab {
namespace fs = std::filesystem;

namespace {

// What a progress MAC is bound to, beside the ticket: no other MAC of the project (the agents' "agent",
// "harness", "session" and directions) can stand for one.
constexpr const char* kProgressPurpose = "lab-progress";

std::string progress_path(const std::string& ticket_dir) {
  return (fs::path(ticket_dir) / "progress.json").string();
}

// A string field of a document someone may have edited: "?" when it is missing or not a string.
std::string text_field(const nlohmann::json& doc, const char* key) {
  return doc.contains(key) && doc[key].is_string() ? doc[key].get<std::string>() : std::string("?");
}

// The signed text: the document without its "mac", keys in order, on one line (as nlohmann writes an
// object: sorted), so that the text re-read from the file is the text that was signed.
std::string progress_mac(const std::string& secret, const nlohmann::json& doc) {
  nlohmann::json body = doc;
  body.erase("mac");
  const std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return agent_mac(secret, kProgressPurpose, text_field(doc, "ticket"), text);
}

// Why a signed document is not `owner`'s progress ("" when it is).
std::string not_owners_progress(const nlohmann::json& doc, const ProgressOwner& owner) {
  if (text_field(doc, "lab") != owner.lab || text_field(doc, "student") != owner.student ||
      text_field(doc, "ticket") != owner.ticket_id) {
    return "it is the progress of " + text_field(doc, "student") + " in " + text_field(doc, "lab") +
           " (ticket " + text_field(doc, "ticket") + "), not of " + owner.student + " in " + owner.lab +
           " (ticket " + owner.ticket_id + "): copied from another ticket";
  }
  const auto& hints = doc.contains("hints_used") ? doc["hints_used"] : nlohmann::json();
  if (!hints.is_number_integer() || hints.get<int64_t>() < 0) return "hints_used is not a count";
  if (!doc.contains("attempts") || !doc["attempts"].is_array()) return "attempts is not a list";
  if (doc["attempts"].size() > kMaxAttempts) return "more than " + std::to_string(kMaxAttempts) + " attempts";
  for (const auto& a : doc["attempts"]) {
    if (!a.is_object() || !a.contains("grade") || !a["grade"].is_object() ||
        !a["grade"].value("right", nlohmann::json()).is_boolean() ||
        !a["grade"].value("score", nlohmann::json()).is_number_integer()) {
      return "an attempt without a grade";
    }
  }
  return "";
}

ProgressRead refused(ProgressRead read, ProgressState state, const std::string& why) {
  read.state = state;
  read.problem = read.path + ": " + why;
  return read;
}

}  // namespace

nlohmann::json new_progress(const ProgressOwner& owner) {
  return {{"lab", owner.lab},
          {"student", owner.student},
          {"ticket", owner.ticket_id},
          {"hints_used", 0},
          {"attempts", nlohmann::json::array()}};
}

const char* state_word(ProgressState state) {
  switch (state) {
    case ProgressState::kVerified:
      return "ok";
    case ProgressState::kMissing:
      return "missing";
    case ProgressState::kTooLarge:
      return "too-large";
    case ProgressState::kTampered:
      return "tampered";
  }
  return "tampered";
}

ProgressRead read_progress(const std::string& ticket_dir, const ProgressOwner& owner,
                           const std::string& secret) {
  ProgressRead read;
  read.path = progress_path(ticket_dir);
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(read.path, ec)))
    return refused(read, ProgressState::kMissing, "no progress file (deleted?)");
  std::string text;
  if (const std::string error = read_regular_file(read.path, kMaxProgressBytes, text); !error.empty()) {
    return refused(read,
                   error.rfind("larger than", 0) == 0 ? ProgressState::kTooLarge : ProgressState::kTampered,
                   error);
  }
  nlohmann::json doc;
  try {
    doc = parse_json_input(text);
  } catch (const std::exception& e) {
    return refused(read, ProgressState::kTampered, std::string("not a progress file lab wrote: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("mac") || !doc["mac"].is_string())
    return refused(read, ProgressState::kTampered, "not signed (no \"mac\")");
  if (!macs_equal(doc["mac"].get<std::string>(), progress_mac(secret, doc)))
    return refused(read, ProgressState::kTampered,
                   "the signature does not match its content (edited by hand?)");
  if (const std::string why = not_owners_progress(doc, owner); !why.empty())
    return refused(read, ProgressState::kTampered, why);
  read.state = ProgressState::kVerified;
  read.doc = std::move(doc);
  return read;
}

nlohmann::json read_verified_progress(const std::string& ticket_dir, const ProgressOwner& owner,
                                      const std::string& secret) {
  ProgressRead read = read_progress(ticket_dir, owner, secret);
  if (!read.verified()) {
    throw std::runtime_error(read.problem + "; refused (" + state_word(read.state) +
                             "), nothing changed: ask your instructor");
  }
  return std::move(read.doc);
}

ProgressLock::ProgressLock(const std::string& ticket_dir) {
  const std::string path = (fs::path(ticket_dir) / "progress.lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd_ < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    ::close(fd_);
    throw std::runtime_error("cannot lock " + path + ": " + std::strerror(error));
  }
}

ProgressLock::~ProgressLock() {
  ::close(fd_);  // releases the flock
}

void write_progress(const std::string& ticket_dir, const ProgressOwner& owner, nlohmann::json doc,
                    const std::string& secret) {
  const std::string path = progress_path(ticket_dir);
  if (doc.value("attempts", nlohmann::json::array()).size() > kMaxAttempts)
    throw std::runtime_error(path + ": no more than " + std::to_string(kMaxAttempts) + " attempts are kept");
  doc["lab"] = owner.lab;
  doc["student"] = owner.student;
  doc["ticket"] = owner.ticket_id;
  doc["mac"] = progress_mac(secret, doc);
  const std::string text = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (text.size() > kMaxProgressBytes)
    throw std::runtime_error(path + ": would grow past " + std::to_string(kMaxProgressBytes) + " bytes");
  write_file_atomically(path, text);
}

}  // namespace ncclfi::cli::lab
