// Reading the machine: the NVIDIA driver version from its proc file.
#include <gtest/gtest.h>

#include "system/system_probe.h"

namespace gpubench {
namespace {

TEST(SystemInfo, DriverVersionOfTheProprietaryKernelModule) {
  EXPECT_EQ(parse_nvidia_driver_version(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 "
                "22:23:56 UTC 2024"),
            "550.54.15");
}

// The open kernel module's line has "for x86_64" between the words and the version (seen on an
// H200 with driver 580.159.04, where the first word after "Kernel Module" was recorded as "for").
TEST(SystemInfo, DriverVersionOfTheOpenKernelModule) {
  EXPECT_EQ(parse_nvidia_driver_version(
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release "
                "Build  (dvs-builder@U22-I3-AE18-23-3)  Thu Oct 16 00:00:00 UTC 2025"),
            "580.159.04");
}

TEST(SystemInfo, NoDriverVersionInAnUnrelatedLine) {
  EXPECT_EQ(parse_nvidia_driver_version("GCC version:  gcc version 12.2.0"), "");
  EXPECT_EQ(parse_nvidia_driver_version("NVRM version: NVIDIA UNIX Kernel Module for x86_64"), "");
}

}  // namespace
}  // namespace gpubench
