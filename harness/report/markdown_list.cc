#include "markdown_list.h"

#include <sstream>
#include <vector>

#include "console_text.h"

namespace ncclfi::harness {
namespace {

using Cells = std::vector<std::string>;

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// Code spans read as plain words on a terminal.
std::string plain(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch != '`') out += ch;
  }
  return out;
}

// "| a | b \| c |" -> {"a", "b | c"}.
Cells split_row(const std::string& line) {
  Cells cells;
  std::string cell;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (line[i] == '|') {
      cells.push_back(plain(trim(cell)));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

bool one_short_word(const std::string& cell) {
  return !cell.empty() && cell.size() <= 24 && cell.find(' ') == std::string::npos;
}

// The leading cells that name a row: the first, and the second too when both are single short words (a
// layer and a kind, a code and its name).
size_t name_cells(const Cells& row) {
  return row.size() > 2 && one_short_word(row[0]) && one_short_word(row[1]) ? 2 : 1;
}

// Rows after the header and its "---" line, as entries.
std::string table_as_list(const std::vector<std::string>& lines, size_t width) {
  if (lines.empty()) return "";
  const Cells header = split_row(lines[0]);
  std::string out;
  for (size_t i = 2; i < lines.size(); ++i) {
    const Cells row = split_row(lines[i]);
    if (row.empty()) continue;
    const size_t named = name_cells(row);
    std::string name = row[0];
    for (size_t c = 1; c < named; ++c) name += " " + row[c];
    out += wrap(name, width, 4, 0);
    for (size_t c = named; c < row.size(); ++c) {
      if (row[c].empty()) continue;
      const std::string label = c < header.size() && !header[c].empty() ? header[c] + ": " : "";
      out += wrap(label + row[c], width, 6, 4);
    }
  }
  return out;
}

}  // namespace

std::string markdown_as_list(const std::string& markdown, size_t width) {
  std::istringstream in(markdown);
  std::string out, line, paragraph;
  std::vector<std::string> table;
  auto end_block = [&] {
    if (!paragraph.empty()) out += wrap(plain(paragraph), width);
    paragraph.clear();
    out += table_as_list(table, width);
    table.clear();
  };
  while (std::getline(in, line)) {
    if (line.rfind("|", 0) == 0) {
      if (!paragraph.empty()) end_block();
      table.push_back(line);
      continue;
    }
    end_block();
    const std::string text = trim(line);
    if (text.empty()) {
      out += "\n";
    } else if (text[0] == '#') {
      out += wrap(plain(trim(text.substr(text.find_first_not_of('#')))), width);
    } else {
      paragraph = text;  // a paragraph runs to the next blank line, heading or table
      while (in.peek() != EOF && in.peek() != '\n' && in.peek() != '|' && in.peek() != '#' &&
             std::getline(in, line)) {
        paragraph += " " + trim(line);
      }
    }
  }
  end_block();
  return out;
}

}  // namespace ncclfi::harness
