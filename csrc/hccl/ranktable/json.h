// A small JSON reader (RFC 8259) for rank table files: objects keep their
// members in file order, numbers keep their text, and every value remembers
// the line and column it started at, so errors can point into the file.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hccl {
namespace json {

struct Value {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = kNull;
  bool boolean = false;
  std::string text;  // kString: the decoded string; kNumber: the number as written
  std::vector<Value> items;                            // kArray
  std::vector<std::pair<std::string, Value>> members;  // kObject, in file order
  int line = 0, column = 0;

  // The member named `key` (the first, if repeated), or null.
  const Value *get(const std::string &key) const;
  const char *kind_name() const;
};

// Parses a whole document; false with *error ("line L, column C: ...").
bool parse(const std::string &doc, Value *out, std::string *error);

}  // namespace json
}  // namespace hccl
