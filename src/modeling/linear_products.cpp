#include "modeling/linear_products.h"

namespace gpubench::layers {
namespace {

thread_local const LinearProducts* active_products = nullptr;

}  // namespace

const LinearProducts* LinearProducts::active() {
  return active_products;
}

LinearProductsScope::LinearProductsScope(const LinearProducts* products)
    : previous_(active_products) {
  active_products = products;
}

LinearProductsScope::~LinearProductsScope() {
  active_products = previous_;
}

}  // namespace gpubench::layers
