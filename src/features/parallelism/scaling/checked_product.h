// The products (and sums) `scale` forms from a result's figures (tokens x width x bytes, parameters
// x bytes), checked: figures the result reader accepts, each within its own bound, can multiply
// past 2^63, which printed negative byte counts with exit 0.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "common/errors.h"

namespace gpubench {

// The product of `factors`; throws UsageError naming `what` where it would pass 2^63 - 1.
inline int64_t checked_product(std::initializer_list<int64_t> factors, const std::string& what) {
  int64_t product = 1;
  for (const int64_t factor : factors) {
    if (__builtin_mul_overflow(product, factor, &product)) {
      throw UsageError("the result's figures overflow " + what +
                       " (over 2^63): no run records such sizes");
    }
  }
  return product;
}

// a + b; throws UsageError naming `what` where it would pass 2^63 - 1.
inline int64_t checked_sum(int64_t a, int64_t b, const std::string& what) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    throw UsageError("the result's figures overflow " + what +
                     " (over 2^63): no run records such sizes");
  }
  return sum;
}

}  // namespace gpubench
