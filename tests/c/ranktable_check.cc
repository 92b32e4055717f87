// The rank table's JSON reader on its own (csrc/hccl/ranktable/json.cc) on
// what a rank table file may hold and on broken input (with the line and
// column it reports); its SHA-256 is checked by crypto_check.cc. Prints
// "ranktable ok".
//
//   g++ -std=c++17 -Iinclude -Icsrc tests/c/ranktable_check.cc
//       csrc/hccl/ranktable/json.cc
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "hccl/ranktable/json.h"

#include "unit_check.h"

namespace {

void check_json() {
  using hccl::json::Value;
  Value v;
  std::string err;
  const char *doc =
      "{\n"
      "  \"status\": \"completed\", \"n\": -12.5e+3, \"t\": true, \"f\": false, \"z\": null,\n"
      "  \"list\": [ {\"a\": \"x\\\"y\\\\z\\/\\n\\t\\u00e9\\ud83d\\ude00\"}, [], {} ],\n"
      "  \"status\": \"second\"\n"
      "}";
  EXPECT(hccl::json::parse(doc, &v, &err), "valid document refused: %s", err.c_str());
  EXPECT(v.kind == Value::kObject && v.members.size() == 7, "top-level object");
  const Value *status = v.get("status");
  EXPECT(status && status->text == "completed" && status->line == 2 && status->column == 13,
         "first of repeated members, at line 2 column 13 (got %d:%d)", status ? status->line : 0,
         status ? status->column : 0);
  EXPECT(v.get("n") && v.get("n")->kind == Value::kNumber && v.get("n")->text == "-12.5e+3",
         "numbers keep their text");
  EXPECT(v.get("t")->boolean && !v.get("f")->boolean && v.get("z")->kind == Value::kNull,
         "literals");
  const Value *list = v.get("list");
  EXPECT(list && list->items.size() == 3 && list->items[1].kind == Value::kArray &&
             list->items[2].kind == Value::kObject, "array of three");
  const Value *a = list->items[0].get("a");
  EXPECT(a && a->text == "x\"y\\z/\n\t\xc3\xa9\xf0\x9f\x98\x80", "escapes and UTF-8 (%s)",
         a ? a->text.c_str() : "");
  EXPECT(v.get("missing") == nullptr, "absent member");

  struct {
    const char *doc;
    const char *want;
  } bad[] = {
      {"", "line 1, column 1: unexpected end of file"},
      {"{\"a\": 1,}", "line 1, column 9: expected a member name"},
      {"{\"a\" 1}", "expected ':' after member name \"a\""},
      {"[1 2]", "line 1, column 4: expected ',' or ']'"},
      {"{\n  \"a\": tru}", "line 2, column 8: invalid value"},
      {"\"abc", "unterminated string"},
      {"\"a\\qb\"", "invalid escape"},
      {"\"\\u12g4\"", "invalid \\u escape"},
      {"\"\\udc00\"", "unpaired surrogate"},
      {"01", "unexpected text after the document"},
      {"1.", "invalid number"},
      {"-", "invalid value"},
      {"{} {}", "line 1, column 4: unexpected text"},
      {"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]", "nested deeper"},
  };
  for (const auto &b : bad) {
    err.clear();
    bool ok = hccl::json::parse(b.doc, &v, &err);
    EXPECT(!ok && err.find(b.want) != std::string::npos, "\"%s\": %s, want \"%s\"", b.doc,
           ok ? "accepted" : err.c_str(), b.want);
  }
}

}  // namespace

int main() {
  check_json();
  if (g_fail != 0) {
    std::fprintf(stderr, "%d checks failed\n", g_fail.load());
    return 1;
  }
  std::printf("ranktable ok\n");
  return 0;
}
