#include "lab_roster.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "ncclfi/bounded_input.h"

namespace ncclfi::cli::lab {

namespace {

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

}  // namespace

std::string student_name_problem(const std::string& name) {
  const bool ok = !name.empty() && name.size() <= 64 && name[0] != '.' && name[0] != '-' &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
                  });
  return ok ? std::string()
            : "expected a name of 1-64 letters, digits, '.', '_' or '-' (not starting with '.' or '-'), got "
              "\"" +
                  name + "\"";
}

std::vector<std::string> split_csv_record(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  for (auto& f : fields) f = trim(f);
  return fields;
}

std::vector<std::string> read_roster(const std::string& path) {
  std::string text;
  if (const std::string error = read_regular_file(path, 1 << 20, text); !error.empty())
    throw std::runtime_error(path + ": " + error);
  std::vector<std::string> names;
  std::set<std::string> seen;
  std::istringstream lines(text);
  int number = 0;
  std::optional<size_t> column;  // the `student` column of a CSV roster
  bool first = true;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    const std::string stripped = trim(line);
    if (stripped.empty() || stripped[0] == '#') continue;
    const auto where = path + ":" + std::to_string(number) + ": ";
    if (first) {
      first = false;
      const auto header = split_csv_record(stripped);
      if (stripped.find(',') != std::string::npos || header[0] == "student") {
        const auto it = std::find(header.begin(), header.end(), "student");
        if (it == header.end())
          throw std::runtime_error(where + "a CSV roster needs a header with a \"student\" column, got \"" +
                                   stripped + "\"");
        column = static_cast<size_t>(it - header.begin());
        continue;
      }
    }
    std::string name = stripped;
    if (column) {
      const auto fields = split_csv_record(stripped);
      if (*column >= fields.size())
        throw std::runtime_error(where + "no \"student\" field (column " + std::to_string(*column + 1) + ")");
      name = fields[*column];
    }
    if (const std::string problem = student_name_problem(name); !problem.empty())
      throw std::runtime_error(where + problem);
    if (!seen.insert(name).second) throw std::runtime_error(where + name + " is on the roster twice");
    names.push_back(name);
  }
  if (names.empty()) throw std::runtime_error(path + ": no student on the roster");
  return names;
}

}  // namespace ncclfi::cli::lab
