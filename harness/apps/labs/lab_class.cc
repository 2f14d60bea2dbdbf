#include "lab_class.h"

#include <sys/stat.h>

#include <ctime>
#include <filesystem>
#include <stdexcept>

#include <re2/re2.h>

#include "lab_workspace.h"  // write_file_atomically
#include "ncclfi/bounded_input.h"
#include "scenario_yaml.h"

namespace ncclfi::cli::lab {
namespace fs = std::filesystem;

int64_t parse_iso8601(const std::string& text) {
  static const RE2 kFormat(R"((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:\d{2}))");
  int year = 0, month = 0, day = 0, hour = 0, minute = 0;
  std::string second, zone;
  const char* expected =
      "expected an ISO 8601 time with its zone, e.g. 2026-12-04T17:00:00Z or 2026-12-04T17:00+01:00";
  if (!RE2::FullMatch(text, kFormat, &year, &month, &day, &hour, &minute, &second, &zone))
    throw std::runtime_error(std::string(expected) + ", got \"" + text + "\"");
  const int sec = second.empty() ? 0 : std::stoi(second);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 59)
    throw std::runtime_error(std::string(expected) + ", got \"" + text + "\" (a field out of range)");
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = sec;
  const std::tm asked = tm;
  int64_t seconds = ::timegm(&tm);
  if (tm.tm_mday != asked.tm_mday)  // timegm normalised a day the month does not have (Feb 30)
    throw std::runtime_error(std::string(expected) + ", got \"" + text + "\" (no such day)");
  if (zone != "Z") {
    const int offset = (std::stoi(zone.substr(1, 2)) * 60 + std::stoi(zone.substr(4, 2))) * 60;
    seconds -= zone[0] == '+' ? offset : -offset;  // 17:00+01:00 is 16:00Z
  }
  return seconds * 1000000000LL;
}

ClassSettings class_settings_from_json(const nlohmann::json& doc, const std::string& file) {
  auto fail = [&](const std::string& field, const std::string& expected) {
    throw std::runtime_error(file + ": " + field + ": expected " + expected);
  };
  if (!doc.is_object()) fail("/", "an object with attempts, deadline, wrong_penalty");
  ClassSettings s;
  for (const auto& [key, value] : doc.items()) {
    if (key == "attempts") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1 ||
          value.get<int64_t>() > static_cast<int64_t>(kMaxAttempts))
        fail("/attempts",
             "a whole number from 1 to " + std::to_string(kMaxAttempts) + ", got " + value.dump());
      s.attempts = value.get<size_t>();
    } else if (key == "wrong_penalty") {
      if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > 100)
        fail("/wrong_penalty", "points from 0 to 100 per wrong attempt, got " + value.dump());
      s.wrong_penalty = value.get<int>();
    } else if (key == "deadline") {
      if (value.is_null()) continue;
      if (!value.is_string()) fail("/deadline", "an ISO 8601 time as a string, got " + value.dump());
      try {
        s.deadline_ns = parse_iso8601(value.get<std::string>());
      } catch (const std::exception& e) {
        fail("/deadline", std::string(e.what()).substr(9));  // "expected " is said once
      }
      s.deadline = value.get<std::string>();
    } else {
      fail("/" + key, "no such setting (attempts, deadline, wrong_penalty)");
    }
  }
  return s;
}

nlohmann::json to_json(const ClassSettings& s) {
  return {{"attempts", s.attempts},
          {"wrong_penalty", s.wrong_penalty},
          {"deadline", s.deadline_ns ? nlohmann::json(s.deadline) : nlohmann::json(nullptr)}};
}

namespace {

ClassSettings parse_class_text(const std::string& path, const std::string& text, bool yaml) {
  nlohmann::json doc;
  try {
    if (yaml) {
      LineMap lines;
      doc = yaml_to_json(text, lines);
    } else {
      doc = parse_json_input(text);
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": not valid " + (yaml ? "YAML" : "JSON") + ": " + e.what());
  }
  return class_settings_from_json(doc, path);
}

}  // namespace

ClassSettings read_class_file(const std::string& path) {
  std::string text;
  if (const std::string error = read_regular_file(path, 1 << 20, text); !error.empty())
    throw std::runtime_error(path + ": " + error);
  return parse_class_text(path, text, is_yaml_path(path));
}

ClassSettings read_class_settings(const std::string& key_dir) {
  const std::string path = (fs::path(key_dir) / kClassFile).string();
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return {};
  return read_class_file(path);
}

void write_class_settings(const std::string& key_dir, const ClassSettings& settings) {
  const std::string path = (fs::path(key_dir) / kClassFile).string();
  write_file_atomically(path, to_json(settings).dump(2) + "\n");
  ::chmod(path.c_str(), 0600);
}

std::string past_deadline(const ClassSettings& settings, int64_t now_ns) {
  if (!settings.deadline_ns || now_ns < *settings.deadline_ns) return "";
  return "the deadline (" + settings.deadline + ") has passed: nothing was recorded";
}

}  // namespace ncclfi::cli::lab
