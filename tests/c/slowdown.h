/*
 * Time bounds of the C checks (C99 and C++): written for an idle machine and
 * scaled by how loaded this one is, which the pytest driver passes as
 * PYHCCL_TEST_SLOWDOWN (tests/conftest.py: SLOWDOWN, scaled()).
 */
#ifndef PYHCCL_TESTS_C_SLOWDOWN_H_
#define PYHCCL_TESTS_C_SLOWDOWN_H_

#include <stdlib.h>

static inline double slowdown(void) {
  const char *s = getenv("PYHCCL_TEST_SLOWDOWN");
  double f = s != NULL ? atof(s) : 1.0;
  return f > 1.0 ? f : 1.0;
}

/* A generous time bound: `seconds` on an idle machine, longer on a loaded one. */
static inline double bound(double seconds) { return seconds * slowdown(); }

#endif /* PYHCCL_TESTS_C_SLOWDOWN_H_ */
