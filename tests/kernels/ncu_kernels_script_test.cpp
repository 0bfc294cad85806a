// scripts/ncu_kernels.py: the GPU check's Nsight Compute readings of the own kernels, parsed on
// the CPU machine into a table. A CSV as ncu writes it (its own "==PROF==" lines among the rows,
// numbers with thousands separators, a metric a row), and what it refuses.
#include <gtest/gtest.h>

#include <fstream>

#include "test_helpers.h"

namespace gpubench {
namespace {

using testing::run_command;
using testing::ScratchDirectory;

const char* const kHeader =
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
    "\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\","
    "\"Metric Unit\",\"Metric Value\"\n";

std::string row(int id, const std::string& kernel, const std::string& grid,
                const std::string& metric, const std::string& unit, const std::string& value) {
  return "\"" + std::to_string(id) + "\",\"1\",\"gpubench_tests\",\"host\",\"" + kernel +
         "\",\"1\",\"7\",\"(256, 1, 1)\",\"" + grid + "\",\"0\",\"9.0\",\"Command line profiler " +
         "metrics\",\"" + metric + "\",\"" + unit + "\",\"" + value + "\"\n";
}

std::string script() {
  return "python3 " + std::string(GPUBENCH_SOURCE_DIR) + "/scripts/ncu_kernels.py ";
}

TEST(NcuKernels, TablesEachKernelsMedianReadings) {
  ScratchDirectory dir("ncu-kernels");
  const std::string csv = dir.file("kernels.csv");
  {
    std::ofstream out(csv);
    out << "==PROF== Connected to process 1 (gpubench_tests)\n" << kHeader;
    // Three launches of one shape: 10, 12 and 30 microseconds, 24 MB read each.
    const double durations[] = {10000, 12000, 30000};
    for (int id = 0; id < 3; ++id) {
      out << row(id, "fp8_weight_rows", "(768, 1, 1)", "gpu__time_duration.sum", "nsecond",
                 std::to_string(static_cast<int>(durations[id])))
          << row(id, "fp8_weight_rows", "(768, 1, 1)", "dram__bytes_read.sum", "byte", "24,000,000")
          << row(id, "fp8_weight_rows", "(768, 1, 1)", "dram__bytes_write.sum", "Kbyte", "12");
    }
    out << row(3, "join_splits", "(32, 1, 1)", "gpu__time_duration.sum", "usecond", "2.5")
        << row(3, "join_splits", "(32, 1, 1)", "dram__bytes_read.sum", "Mbyte", "0.5")
        << row(3, "join_splits", "(32, 1, 1)", "dram__bytes_write.sum", "byte", "8,192")
        << "==PROF== Disconnected from process 1\n";
  }
  const auto run = run_command(script() + csv + " --bandwidth-gbs 4800");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  // The median launch: 12 us for 24 MB, 2,000 GB/s, 42 % of 4,800.
  EXPECT_NE(run.output.find("| fp8_weight_rows | (768, 1, 1) | (256, 1, 1) | 3 | 12.0 | 24.00 | "
                            "0.01 | 2000 | 42 % |"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("| join_splits | (32, 1, 1) | (256, 1, 1) | 1 | 2.5 | 0.50 | 0.01 | "
                            "200 | 4 % |"),
            std::string::npos)
      << run.output;
}

TEST(NcuKernels, WhatIsNotNcusCsvIsOneLineAndExit2) {
  ScratchDirectory dir("ncu-kernels-bad");
  const std::string not_csv = dir.file("not.csv"), bad_unit = dir.file("unit.csv");
  std::ofstream(not_csv) << "{\"traceEvents\": []}\n";
  std::ofstream(bad_unit) << kHeader
                          << row(0, "k", "(1, 1, 1)", "gpu__time_duration.sum", "cycle", "5");
  for (const auto& [file, says] :
       std::vector<std::pair<std::string, std::string>>{{not_csv, "no ncu --csv rows"},
                                                        {bad_unit, "unit 'cycle'"},
                                                        {dir.file("absent.csv"), "absent.csv"}}) {
    const auto run = run_command(script() + file);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find(says), std::string::npos) << run.output;
    EXPECT_EQ(run.output.find("Traceback"), std::string::npos) << run.output;
  }
}

}  // namespace
}  // namespace gpubench
