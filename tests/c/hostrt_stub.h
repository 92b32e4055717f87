// Stand-in for libascendcl's error slot (hostrt::set_error / last_error), for
// unit checks that link parts of libhccl without the runtime. Include it in one
// source file of a check (it defines functions).
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

#include "runtime/hostrt.h"

namespace hostrt {
static thread_local std::string t_error;
void set_error(const char *fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  t_error = buf;
}
const char *last_error() { return t_error.c_str(); }
}  // namespace hostrt
