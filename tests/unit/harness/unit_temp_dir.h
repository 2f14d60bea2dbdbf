// A fresh directory for one test, under the system's temporary directory, removed with all it holds
// when the test is done.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace ncclfi::test_support {

struct TempDir {
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ncclfi-unit-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // Writes `text` to `name` under the directory (making its folders); returns the file's path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string file = path + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(file).parent_path());
    std::ofstream(file) << text;
    return file;
  }
  std::string path;
};

}  // namespace ncclfi::test_support
