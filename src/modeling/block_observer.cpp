#include "modeling/block_observer.h"

namespace gpubench {
namespace {

thread_local BlockObserver* installed = nullptr;

}  // namespace

BlockObserverScope::BlockObserverScope(BlockObserver* observer) : previous_(installed) {
  installed = observer;
}

BlockObserverScope::~BlockObserverScope() {
  installed = previous_;
}

BlockObserver* current_block_observer() {
  return installed;
}

}  // namespace gpubench
