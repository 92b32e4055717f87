#include "hccl/ranktable/json.h"

#include <cstdint>
#include <cstring>

namespace hccl {
namespace json {
namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(const std::string &doc) : s_(doc) {}

  bool document(Value *out) {
    skip_space();
    if (!value(out, 0)) return false;
    skip_space();
    if (pos_ != s_.size()) return fail("unexpected text after the document");
    return true;
  }
  const std::string &error() const { return error_; }

 private:
  bool fail(const std::string &what) {
    if (error_.empty())
      error_ = "line " + std::to_string(line_) + ", column " + std::to_string(col()) + ": " + what;
    return false;
  }
  int col() const { return static_cast<int>(pos_ - line_start_) + 1; }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }
  void advance() {
    if (s_[pos_] == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
    ++pos_;
  }
  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) advance();
  }
  bool literal(const char *word) {
    size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) != 0) return fail("invalid value");
    for (size_t i = 0; i < n; ++i) advance();
    return true;
  }

  bool value(Value *v, int depth) {
    if (depth > kMaxDepth) return fail("nested deeper than 64 levels");
    v->line = line_;
    v->column = col();
    switch (peek()) {
      case '{': return object(v, depth);
      case '[': return array(v, depth);
      case '"': v->kind = Value::kString; return string(&v->text);
      case 't': v->kind = Value::kBool; v->boolean = true; return literal("true");
      case 'f': v->kind = Value::kBool; return literal("false");
      case 'n': v->kind = Value::kNull; return literal("null");
      case '\0':
        if (at_end()) return fail("unexpected end of file");
        return fail("invalid character");
      default: return number(v);
    }
  }

  bool object(Value *v, int depth) {
    v->kind = Value::kObject;
    advance();  // {
    skip_space();
    if (peek() == '}') {
      advance();
      return true;
    }
    for (;;) {
      skip_space();
      if (peek() != '"') return fail("expected a member name in double quotes");
      std::string key;
      if (!string(&key)) return false;
      skip_space();
      if (peek() != ':') return fail("expected ':' after member name \"" + key + "\"");
      advance();
      skip_space();
      v->members.emplace_back(std::move(key), Value());
      if (!value(&v->members.back().second, depth + 1)) return false;
      skip_space();
      if (peek() == ',') {
        advance();
        continue;
      }
      if (peek() == '}') {
        advance();
        return true;
      }
      return fail("expected ',' or '}' in an object");
    }
  }

  bool array(Value *v, int depth) {
    v->kind = Value::kArray;
    advance();  // [
    skip_space();
    if (peek() == ']') {
      advance();
      return true;
    }
    for (;;) {
      skip_space();
      v->items.emplace_back();
      if (!value(&v->items.back(), depth + 1)) return false;
      skip_space();
      if (peek() == ',') {
        advance();
        continue;
      }
      if (peek() == ']') {
        advance();
        return true;
      }
      return fail("expected ',' or ']' in an array");
    }
  }

  static void put_utf8(uint32_t cp, std::string *out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }

  bool hex4(uint32_t *cp) {
    *cp = 0;
    for (int i = 0; i < 4; ++i) {
      char c = peek();
      uint32_t d;
      if (c >= '0' && c <= '9') d = static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') d = static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') d = static_cast<uint32_t>(c - 'A' + 10);
      else return fail("invalid \\u escape");
      *cp = *cp * 16 + d;
      advance();
    }
    return true;
  }

  bool string(std::string *out) {
    advance();  // "
    for (;;) {
      if (at_end()) return fail("unterminated string");
      char c = peek();
      if (c == '"') {
        advance();
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in a string");
      if (c != '\\') {
        out->push_back(c);
        advance();
        continue;
      }
      advance();
      char e = peek();
      if (at_end()) return fail("unterminated string");
      advance();
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          uint32_t cp;
          if (!hex4(&cp)) return false;
          if (cp >= 0xd800 && cp < 0xdc00) {  // a surrogate pair
            uint32_t lo;
            if (peek() != '\\' || (advance(), peek() != 'u')) return fail("unpaired surrogate in \\u escape");
            advance();
            if (!hex4(&lo) || lo < 0xdc00 || lo >= 0xe000) return fail("unpaired surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          } else if (cp >= 0xdc00 && cp < 0xe000) {
            return fail("unpaired surrogate in \\u escape");
          }
          put_utf8(cp, out);
          break;
        }
        default: return fail("invalid escape in a string");
      }
    }
  }

  bool number(Value *v) {
    v->kind = Value::kNumber;
    size_t start = pos_;
    if (peek() == '-') advance();
    if (peek() == '0') {
      advance();
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9') advance();
    } else {
      return fail("invalid value");
    }
    if (peek() == '.') {
      advance();
      if (!(peek() >= '0' && peek() <= '9')) return fail("invalid number");
      while (peek() >= '0' && peek() <= '9') advance();
    }
    if (peek() == 'e' || peek() == 'E') {
      advance();
      if (peek() == '+' || peek() == '-') advance();
      if (!(peek() >= '0' && peek() <= '9')) return fail("invalid number");
      while (peek() >= '0' && peek() <= '9') advance();
    }
    v->text = s_.substr(start, pos_ - start);
    return true;
  }

  const std::string &s_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
  std::string error_;
};

}  // namespace

const Value *Value::get(const std::string &key) const {
  for (const auto &m : members)
    if (m.first == key) return &m.second;
  return nullptr;
}

const char *Value::kind_name() const {
  switch (kind) {
    case kNull: return "null";
    case kBool: return "a boolean";
    case kNumber: return "a number";
    case kString: return "a string";
    case kArray: return "an array";
    case kObject: return "an object";
  }
  return "?";
}

bool parse(const std::string &doc, Value *out, std::string *error) {
  Parser p(doc);
  *out = Value();
  if (p.document(out)) return true;
  *error = p.error();
  return false;
}

}  // namespace json
}  // namespace hccl
