// The first line of a small text file (a /proc or /sys entry), header-only.
#pragma once

#include <fstream>
#include <string>

namespace common {

// Without its newline; empty when the file cannot be read.
inline std::string first_line(const char *path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

}  // namespace common
