// All-reduce bandwidth over the same process groups that training uses, with nccl-tests'
// definitions (docs/parallelism.md, "gpubench allreduce"):
//   time    the mean time of one in-place all-reduce, on the slowest rank
//   algbw   bytes / time
//   busbw   algbw x 2(n-1)/n, what each rank's links carry in a ring, comparable across n
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/byte_size.h"
#include "distributed/collectives.h"
#include "results/system_info.h"
#include "settings/allreduce_sweep.h"

namespace gpubench {

struct AllreduceRow {
  int64_t bytes = 0;
  int64_t count = 0;  // float32 elements
  double time_us = 0;
  double algbw_gbps = 0;  // GB/s, 1e9 bytes
  double busbw_gbps = 0;
  int64_t wrong = 0;  // elements that differed from the expected sum, all ranks together
};

struct AllreduceReport {
  int world_size = 1;
  int nodes = 1;
  std::string backend;
  std::string device;
  std::string launcher;
  AllreduceSweep sweep;
  std::vector<AllreduceRow> rows;
  SystemInfo system;
};

// Every rank runs this; every rank gets the same rows.
std::vector<AllreduceRow> run_allreduce_sweep(Collectives& collectives,
                                              const AllreduceSweep& sweep);

std::string format_byte_size(int64_t bytes);

// The rows as a table in `format` (TextTable::render_as); the table and markdown forms under a
// line saying what was measured.
std::string render_allreduce_table(const AllreduceReport& report,
                                   const std::string& format = "table");
nlohmann::json allreduce_report_to_json(const AllreduceReport& report);

}  // namespace gpubench
