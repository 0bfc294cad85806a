#include "distributed/collective_errors.h"

#include <gtest/gtest.h>

namespace gpubench {
namespace {

TEST(CollectiveErrors, APeerThatStoppedAnsweringIsSaidWithTheTimeItWaited) {
  EXPECT_EQ(described_collective_error("[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:"
                                       "81] Timed out waiting 5000ms for recv operation to "
                                       "complete"),
            "no answer from a peer rank for 5.0 s (the recv of a collective, --timeout): a rank "
            "stopped, hung or died");
  EXPECT_EQ(described_collective_error("[Rank 0] Watchdog caught collective operation timeout: "
                                       "WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=10) ran for "
                                       "600012 milliseconds before timing out. Timeout(ms)=600000"),
            "no answer from a peer rank for 600.0 s (NCCL's watchdog, --timeout): a rank "
            "stopped, hung or died");
  EXPECT_EQ(described_collective_error("[../gloo/transport/tcp/pair.cc:598] Connection closed by "
                                       "peer [127.0.0.1]:1234"),
            "a peer rank closed its connection during a collective: it died or was ended");
  EXPECT_EQ(described_collective_error("CUDA out of memory"), "");
}

}  // namespace
}  // namespace gpubench
