// Reading `nvidia-smi topo -m`: which GPU pairs share NVLink, and which only PCIe.
#include <gtest/gtest.h>

#include "system/gpu_topology.h"

namespace gpubench {
namespace {

// As printed on an 8-GPU NVSwitch box (trimmed to 4 GPUs) and on a 4-GPU PCIe workstation.
const char* kNvlinkBox =
    "\t\x1b[4mGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
    "GPU0\t X \tNV18\tNV18\tNV18\tPXB\t0-55,112-167\t0\t\tN/A\n"
    "GPU1\tNV18\t X \tNV18\tNV18\tPXB\t0-55,112-167\t0\t\tN/A\n"
    "GPU2\tNV18\tNV18\t X \tNV18\tSYS\t0-55,112-167\t0\t\tN/A\n"
    "GPU3\tNV18\tNV18\tNV18\t X \tSYS\t0-55,112-167\t0\t\tN/A\n"
    "NIC0\tPXB\tPXB\tSYS\tSYS\t X \n"
    "\n"
    "Legend:\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n";

const char* kPcieBox =
    "        GPU0    GPU1    GPU2    GPU3    CPU Affinity    NUMA Affinity\n"
    "GPU0     X      PIX     SYS     SYS     0-31            0\n"
    "GPU1    PIX      X      SYS     SYS     0-31            0\n"
    "GPU2    SYS     SYS      X      PHB     32-63           1\n"
    "GPU3    SYS     SYS     PHB      X      32-63           1\n";

TEST(GpuTopology, ParsesNvlinkPairs) {
  const auto links = parse_nvidia_smi_topology(kNvlinkBox);
  ASSERT_EQ(links.size(), 6u);  // 4 choose 2; the NIC is not a GPU
  for (const auto& link : links) {
    EXPECT_LT(link.first, link.second);
    EXPECT_EQ(link.code, "NV18");
    EXPECT_EQ(link.description, "NVLink x18");
  }
  EXPECT_EQ(links.front().first, 0);
  EXPECT_EQ(links.front().second, 1);
  EXPECT_EQ(links.back().first, 2);
  EXPECT_EQ(links.back().second, 3);
}

TEST(GpuTopology, ParsesPciePairs) {
  const auto links = parse_nvidia_smi_topology(kPcieBox);
  ASSERT_EQ(links.size(), 6u);
  EXPECT_EQ(links[0].code, "PIX");  // 0-1
  EXPECT_EQ(links[1].code, "SYS");  // 0-2
  EXPECT_EQ(links[5].code, "PHB");  // 2-3
  EXPECT_EQ(links[5].description, "PCIe through a host bridge");
}

TEST(GpuTopology, NoOutputNoLinks) {
  EXPECT_TRUE(parse_nvidia_smi_topology("").empty());
  EXPECT_TRUE(
      parse_nvidia_smi_topology("NVIDIA-SMI has failed because it couldn't communicate").empty());
}

TEST(GpuTopology, SurvivesAJsonRoundTrip) {
  GpuInterconnect interconnect;
  interconnect.links = parse_nvidia_smi_topology(kPcieBox);
  interconnect.links[0].peer_known = true;
  interconnect.links[0].peer_access = true;
  interconnect.source = "nvidia-smi topo -m";
  const nlohmann::json document = interconnect;
  const auto back = document.get<GpuInterconnect>();
  ASSERT_EQ(back.links.size(), 6u);
  EXPECT_EQ(back.links[0].code, "PIX");
  EXPECT_TRUE(back.links[0].peer_access);
  EXPECT_FALSE(back.links[1].peer_known);
  EXPECT_EQ(back.source, "nvidia-smi topo -m");
}

}  // namespace
}  // namespace gpubench
