// TESSERA_CHECK: an invariant that stays checked in release builds (the
// consensus core and storage keep their assertions on in production, as a
// broken invariant there means lost or corrupted data).
#pragma once

#include <cstdio>
#include <cstdlib>

#define TESSERA_CHECK(cond)                                                     \
  do {                                                                          \
    if (!(cond)) {                                                              \
      std::fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, \
                   #cond);                                                      \
      std::abort();                                                             \
    }                                                                           \
  } while (0)
