// A class roster for `ncclfi lab start --roster FILE`: one student's name a line, or CSV whose header has
// a `student` column. Every name is checked as `--student` checks one (it becomes a directory name)
// before any student is started.
#pragma once

#include <string>
#include <vector>

namespace ncclfi::cli::lab {

// Why `name` cannot be a student's name ("" when it can): 1-64 letters, digits, '.', '_' or '-', not
// starting with '.' or '-' (a name with '/' or ".." would reach outside the workspace's directory, one
// starting with '-' would read as an option).
std::string student_name_problem(const std::string& name);

// The names of the roster `path`, in order. Blank lines and lines starting with '#' are skipped. Throws,
// naming the file and the line, for a bad name, a duplicate, a CSV row without the column, or a file
// without any name.
std::vector<std::string> read_roster(const std::string& path);

// One CSV record's fields (RFC 4180: quoted fields, "" for a quote inside them).
std::vector<std::string> split_csv_record(const std::string& line);

}  // namespace ncclfi::cli::lab
