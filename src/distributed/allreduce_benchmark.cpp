#include "distributed/allreduce_benchmark.h"

#include <chrono>
#include <cmath>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/text_table.h"
#include "torch_support/device_timers.h"

namespace gpubench {
std::vector<AllreduceRow> run_allreduce_sweep(Collectives& collectives,
                                              const AllreduceSweep& sweep) {
  const int ranks = collectives.world_size();
  const auto options = torch::TensorOptions().dtype(torch::kFloat32).device(collectives.device());
  std::vector<AllreduceRow> rows;
  for (const int64_t bytes : allreduce_sizes(sweep)) {
    AllreduceRow row;
    row.bytes = bytes;
    row.count = bytes / kSweepElementBytes;
    // Correctness first, as nccl-tests does: rank r contributes r + 1 everywhere.
    auto tensor = torch::full({row.count}, static_cast<float>(collectives.rank() + 1), options);
    collectives.allreduce_sum(tensor).wait();
    const float expected = static_cast<float>(ranks * (ranks + 1) / 2);
    const double wrong = tensor.ne(expected).sum().item<double>();
    row.wrong = static_cast<int64_t>(collectives.sum_over_ranks(wrong));

    tensor.zero_();  // zeros stay zeros however often they are summed
    for (int i = 0; i < sweep.warmup_iters; ++i) collectives.allreduce_sum(tensor).wait();
    collectives.barrier();
    const auto start = std::chrono::steady_clock::now();
    std::vector<PendingCollective> pending;
    for (int i = 0; i < sweep.iters; ++i) pending.push_back(collectives.allreduce_sum(tensor));
    for (auto& collective : pending) collective.wait();
    synchronize_device(collectives.device());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double slowest = collectives.max_over_ranks(seconds / sweep.iters);
    row.time_us = slowest * 1e6;
    row.algbw_gbps = static_cast<double>(bytes) / slowest / 1e9;
    row.busbw_gbps = row.algbw_gbps * allreduce_bus_factor(ranks);
    rows.push_back(row);
  }
  return rows;
}

std::string format_byte_size(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  while (unit < 3 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + units[unit];
}

std::string render_allreduce_table(const AllreduceReport& report, const std::string& format) {
  TextTable table(
      {"size", "bytes", "count", "type", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "#wrong"});
  for (const auto& row : report.rows) {
    table.add_row({format_byte_size(row.bytes), std::to_string(row.bytes),
                   std::to_string(row.count), "float32", format_fixed(row.time_us, 1),
                   format_fixed(row.algbw_gbps, 3), format_fixed(row.busbw_gbps, 3),
                   std::to_string(row.wrong)});
  }
  if (format == "csv") return table.render_csv();
  return "all-reduce (sum, in place) over " + std::to_string(report.world_size) + " " +
         report.device + " rank(s) on " + std::to_string(report.nodes) + " node(s), " +
         report.backend + ", " + std::to_string(report.sweep.iters) + " iterations per size\n" +
         (format == "markdown" ? "\n" : "") + table.render_as(format);
}

nlohmann::json allreduce_report_to_json(const AllreduceReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : report.rows) {
    rows.push_back({{"bytes", row.bytes},
                    {"count", row.count},
                    {"type", "float32"},
                    {"time_us", row.time_us},
                    {"algbw_gbps", row.algbw_gbps},
                    {"busbw_gbps", row.busbw_gbps},
                    {"wrong", row.wrong}});
  }
  return {{"schema", "gpubench.allreduce/1"},
          {"world_size", report.world_size},
          {"nodes", report.nodes},
          {"backend", report.backend},
          {"device", report.device},
          {"launcher", report.launcher},
          {"iters", report.sweep.iters},
          {"warmup_iters", report.sweep.warmup_iters},
          {"definitions",
           {{"time_us", "mean time of one in-place all-reduce, slowest rank"},
            {"algbw_gbps", "bytes / time, 1e9 bytes per GB"},
            {"busbw_gbps", "algbw x 2(n-1)/n (nccl-tests)"}}},
          {"rows", rows},
          {"system", report.system}};
}

}  // namespace gpubench
