// A collective backend's own words for a peer that stopped answering, said as gpubench says it.
#pragma once

#include <string>

namespace gpubench {

// Gloo's "[...unbound_buffer.cc:81] Timed out waiting 5000ms for recv operation to complete",
// its "Connection closed by peer" and NCCL's watchdog timeout, as one line that says what
// happened and after how long; "" for any other text.
std::string described_collective_error(const std::string& what);

}  // namespace gpubench
