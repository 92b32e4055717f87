// Thread-local "recent error message" (aclGetRecentErrMsg, hostrt::set_error).
#include <cstdarg>
#include <cstdio>
#include <string>

#include "runtime/internal.h"

namespace hostrt {
namespace {

struct ErrorSlot {
  std::string msg;
  bool set = false;
};

ErrorSlot &slot() {
  thread_local ErrorSlot s;
  return s;
}

void vset(const char *fmt, va_list ap) {
  char buf[1024];
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  ErrorSlot &s = slot();
  if (n < 0) {
    s.msg = "(error message could not be formatted)";
  } else {
    s.msg.assign(buf, static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1);
  }
  s.set = true;
}

}  // namespace

void set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vset(fmt, ap);
  va_end(ap);
}

const char *last_error() {
  ErrorSlot &s = slot();
  return s.set ? s.msg.c_str() : "";
}

aclError fail(aclError code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vset(fmt, ap);
  va_end(ap);
  return code;
}

void clear_error() {
  ErrorSlot &s = slot();
  s.set = false;
  s.msg.clear();
}

bool has_error() { return slot().set; }

}  // namespace hostrt

extern "C" ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void) {
  return hostrt::has_error() ? hostrt::last_error() : nullptr;
}
