// The renderings of a sharded-data-parallel prediction (sharded_prediction.h).
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_text.h"
#include "common/text_table.h"
#include "features/parallelism/scaling/scale_input_json.h"
#include "features/parallelism/scaling/sharded_prediction.h"

namespace gpubench {
namespace {

constexpr const char* kPredictedNote =
    "Predicted, not measured: the single-device step's forward and backward split over the blocks "
    "by their weights, with each block's all-gathers and reduce-scatters on one channel in the "
    "order the run issues them (prefetched one block ahead), each half of a ring all-reduce by "
    "the alpha-beta model (docs/scaling.md). It leaves out the ranks' waiting for each other and "
    "the gathers' and frees' own cost.";

std::string title_of(const ShardedPrediction& p) {
  const ScaleInput& in = p.input;
  return "Predicted sharded data parallelism (--shard " + p.mode + "): " + in.model + " " +
         in.precision + ", batch " + std::to_string(in.batch_size) +
         (in.seq_len > 0 ? " of " + std::to_string(in.seq_len) + " tokens" : "") + " per GPU";
}

std::vector<std::string> input_lines(const ShardedPrediction& p) {
  const ScaleInput& in = p.input;
  std::vector<std::string> lines = {
      "From: " + in.source + " (" + in.device + "), one device: " + format_fixed(in.throughput, 1) +
          " " + in.unit + ", step " + format_fixed(in.step_ms, 2) + " ms",
      "Units: " + std::to_string(in.blocks) + " blocks of " + std::to_string(in.block_params) +
          " parameters and the rest (" + std::to_string(in.root_params) + "), gathered in " +
          std::to_string(in.activation_bytes) +
          "-byte elements (on a measured Gloo curve 4), gradients reduce-scattered in float32 "
          "(on a Gloo curve all-reduced)"};
  if (!in.extended.empty()) lines.push_back("Extended: " + in.extended);
  if (!in.rescaled.empty()) lines.push_back("Rescaled: " + in.rescaled);
  lines.push_back(kPredictedNote);
  return lines;
}

std::vector<std::string> cells_of(const ShardedPoint& s) {
  return {std::to_string(s.gpus),
          format_fixed(s.step_ms, 2),
          format_fixed(s.exposed_ms, 2),
          format_fixed(s.gather_ms, 2),
          format_fixed(s.reduce_scatter_ms, 2),
          format_fixed(static_cast<double>(s.sent_bytes) / 1e6, 1),
          format_fixed(static_cast<double>(s.ddp_sent_bytes) / 1e6, 1),
          format_fixed(s.throughput, 1),
          format_fixed(100 * s.efficiency, 1) + " %",
          s.bottleneck};
}

std::string left_out(const ShardedLine& line, int gpus_per_node) {
  if (line.beyond_one_node.empty()) return "";
  std::vector<std::string> sizes;
  for (int n : line.beyond_one_node) sizes.push_back(std::to_string(n));
  return "Left out " + join(sizes, ", ") + " GPUs: more than a node's " +
         std::to_string(gpus_per_node) + ", and the fabric names no network.";
}

std::string render_markdown(const ShardedPrediction& p) {
  std::ostringstream out;
  out << "# " << markdown_cell(title_of(p)) << "\n\n";
  for (const std::string& line : input_lines(p)) out << markdown_cell(line) << "\n\n";
  const std::vector<std::string> header = {
      "GPUs",    "step ms",       "exposed ms", "gathers ms", "reduce-scatters ms",
      "MB sent", "DDP's MB sent", "throughput", "efficiency", "bottleneck"};
  for (const ShardedLine& line : p.lines) {
    out << "## " << markdown_cell(line.fabric.label) << " (predicted)\n\n"
        << markdown_cell(fabric_source(line.fabric)) << "\n\n"
        << markdown_row(header) << markdown_row(std::vector<std::string>(header.size(), "---"));
    for (const ShardedPoint& s : line.points) out << markdown_row(cells_of(s));
    out << "\n";
    if (!left_out(line, p.gpus_per_node).empty()) {
      out << markdown_cell(left_out(line, p.gpus_per_node)) << "\n\n";
    }
  }
  return out.str();
}

std::string render_csv(const ShardedPrediction& p) {
  std::ostringstream out;
  out << "fabric,shard,gpus,step_ms,exposed_ms,gather_ms,reduce_scatter_ms,latency_ms,"
         "bandwidth_ms,sent_bytes,ddp_sent_bytes,throughput,unit,efficiency,bottleneck,basis\n";
  for (const ShardedLine& line : p.lines) {
    for (const ShardedPoint& s : line.points) {
      out << csv_field(line.fabric.label) << "," << p.mode << "," << s.gpus << ","
          << format_fixed(s.step_ms, 4) << "," << format_fixed(s.exposed_ms, 4) << ","
          << format_fixed(s.gather_ms, 4) << "," << format_fixed(s.reduce_scatter_ms, 4) << ","
          << format_fixed(s.latency_ms, 4) << "," << format_fixed(s.bandwidth_ms, 4) << ","
          << s.sent_bytes << "," << s.ddp_sent_bytes << "," << format_fixed(s.throughput, 2) << ","
          << csv_field(p.input.unit) << "," << format_fixed(s.efficiency, 5) << ","
          << csv_field(s.bottleneck) << ",predicted\n";
    }
  }
  return out.str();
}

nlohmann::json render_json_document(const ShardedPrediction& p) {
  const ScaleInput& in = p.input;
  nlohmann::json input = scale_input_json(in);
  input["blocks"] = in.blocks;
  input["block_params"] = in.block_params;
  input["root_params"] = in.root_params;
  nlohmann::json lines = nlohmann::json::array();
  for (const ShardedLine& line : p.lines) {
    nlohmann::json points = nlohmann::json::array();
    for (const ShardedPoint& s : line.points) {
      points.push_back({{"gpus", s.gpus},
                        {"step_ms", s.step_ms},
                        {"exposed_ms", s.exposed_ms},
                        {"gather_ms", s.gather_ms},
                        {"reduce_scatter_ms", s.reduce_scatter_ms},
                        {"latency_ms", s.latency_ms},
                        {"bandwidth_ms", s.bandwidth_ms},
                        {"sent_bytes", s.sent_bytes},
                        {"ddp_sent_bytes", s.ddp_sent_bytes},
                        {"throughput", s.throughput},
                        {"efficiency", s.efficiency},
                        {"bottleneck", s.bottleneck}});
    }
    lines.push_back({{"fabric", line.fabric.label},
                     {"source", fabric_source(line.fabric)},
                     {"points", points},
                     {"left_out_gpus", line.beyond_one_node}});
  }
  return {{"schema", "gpubench.scale-shard/1"},
          {"basis", "predicted"},
          {"note", kPredictedNote},
          {"shard", p.mode},
          {"input", input},
          {"gpus_per_node", p.gpus_per_node},
          {"fabrics", lines}};
}

}  // namespace

std::string render_sharded(const ShardedPrediction& prediction, const std::string& format) {
  if (format == "markdown") return render_markdown(prediction);
  if (format == "csv") return render_csv(prediction);
  if (format == "json") return json_text(render_json_document(prediction)) + "\n";
  throw UsageError("--format '" + echoed(format) +
                   "' with --shard is not one of markdown, csv, json");
}

}  // namespace gpubench
