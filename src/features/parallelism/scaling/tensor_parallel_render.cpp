// The renderings of a tensor- or expert-parallel prediction (tensor_parallel_prediction.h).
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_text.h"
#include "common/text_table.h"
#include "features/parallelism/scaling/scale_input_json.h"
#include "features/parallelism/scaling/tensor_parallel_prediction.h"

namespace gpubench {
namespace {

constexpr const char* kPredictedNote =
    "Predicted, not measured: the single-device step split evenly over the ranks (its matmuls "
    "split; its norms and element-wise work, a few per cent of a Llama's step, do not), with each "
    "tensor-parallel all-reduce on the node's link by the alpha-beta model, none overlapped "
    "(docs/scaling.md). It leaves out the ranks' waiting for each other and smaller matmuls' "
    "lower efficiency.";

constexpr const char* kPredictedExpertsNote =
    "Predicted, not measured: each rank keeps its own batch and the single-device step's compute "
    "(routing taken as balanced), and adds the MoE layers' all-to-all exchanges (the counts, the "
    "rows' experts, the rows out and back, and in backward their gradients), none overlapped, "
    "each by the pairwise exchange's alpha-beta cost (docs/scaling.md). It leaves out uneven "
    "routing, whose busiest rank sets the pace, the experts' larger matmuls, and the gradient "
    "all-reduce of the parameters outside the experts (data parallelism's; scale --gpus).";

std::string title_of(const TensorParallelPrediction& p) {
  const ScaleInput& in = p.input;
  const std::string kind = p.experts ? "Predicted expert parallelism: "
                                     : "Predicted tensor "
                                       "parallelism: ";
  if (in.decode) {
    return kind + in.model + " " + in.precision + ", a decode step of batch " +
           std::to_string(in.batch_size) + (p.experts ? " per rank" : "");
  }
  return kind + in.model + " " + in.precision + ", batch " + std::to_string(in.batch_size) +
         (in.seq_len > 0 ? " of " + std::to_string(in.seq_len) + " tokens" : "") +
         (p.experts ? " per rank" : " per replica");
}

std::string shape_line(const TensorParallelPrediction& p) {
  const ScaleInput& in = p.input;
  return "Shape: " + std::to_string(in.blocks) + " blocks of hidden " +
         std::to_string(in.hidden_size) + ", activations of " +
         std::to_string(in.activation_bytes) + " bytes" +
         (p.experts ? ", " + std::to_string(in.experts) + " experts a layer, top-" +
                          std::to_string(in.experts_per_token)
                    : "") +
         (in.lora_targets > 0 ? ", LoRA rank " + std::to_string(in.lora_rank) + " on " +
                                    std::to_string(in.lora_targets) + " projections a block"
                              : "");
}

std::vector<std::string> input_lines(const TensorParallelPrediction& p) {
  const ScaleInput& in = p.input;
  std::vector<std::string> lines = {
      "From: " + in.source + " (" + in.device + "), one device: " + format_fixed(in.throughput, 1) +
          " " + in.unit + ", " + (in.decode ? "time per output token (p50) " : "step ") +
          format_fixed(in.step_ms, 2) + " ms",
      shape_line(p)};
  if (!in.extended.empty()) lines.push_back("Extended: " + in.extended);
  if (!in.rescaled.empty()) lines.push_back("Rescaled: " + in.rescaled);
  lines.push_back(p.experts ? kPredictedExpertsNote : kPredictedNote);
  return lines;
}

std::vector<std::string> cells_of(const TensorParallelPoint& s) {
  return {std::to_string(s.ranks),
          format_fixed(s.step_ms, 2),
          format_fixed(s.compute_ms, 2),
          format_fixed(s.communication_ms, 2),
          std::to_string(s.collectives),
          format_fixed(static_cast<double>(s.activation_bytes) / 1e6, 3),
          format_fixed(s.latency_ms, 3),
          format_fixed(s.bandwidth_ms, 3),
          format_fixed(s.throughput, 1),
          format_fixed(100 * s.efficiency, 1) + " %",
          s.bottleneck};
}

std::string left_out(const TensorParallelPrediction& p, const TensorParallelLine& line) {
  if (line.beyond_one_node.empty()) return "";
  std::vector<std::string> sizes;
  for (int n : line.beyond_one_node) sizes.push_back(std::to_string(n));
  return "Left out " + join(sizes, ", ") + " ranks: more than a node's " +
         std::to_string(p.gpus_per_node) + " GPUs" +
         (p.experts ? ", and the fabric names no network (add inter=...)."
                    : " (tensor parallelism stays inside a node).");
}

std::string render_markdown(const TensorParallelPrediction& p) {
  std::ostringstream out;
  out << "# " << markdown_cell(title_of(p)) << "\n\n";
  for (const std::string& line : input_lines(p)) out << markdown_cell(line) << "\n\n";
  const std::vector<std::string> header = {
      "ranks",       "step ms",
      "compute ms",  p.experts ? "all-to-all ms" : "all-reduce ms",
      "collectives", p.experts ? "MB of rows each" : "MB each",
      "latency ms",  "bandwidth ms",
      "throughput",  "efficiency",
      "bottleneck"};
  for (const TensorParallelLine& line : p.lines) {
    out << "## " << markdown_cell(line.fabric.label) << " (predicted)\n\n"
        << markdown_cell(fabric_source(line.fabric)) << "\n\n"
        << markdown_row(header) << markdown_row(std::vector<std::string>(header.size(), "---"));
    for (const TensorParallelPoint& s : line.points) out << markdown_row(cells_of(s));
    out << "\n";
    if (!left_out(p, line).empty()) out << markdown_cell(left_out(p, line)) << "\n\n";
  }
  return out.str();
}

std::string render_csv(const TensorParallelPrediction& p) {
  std::ostringstream out;
  out << "fabric,ranks,step_ms,compute_ms," << (p.experts ? "alltoall_ms" : "allreduce_ms")
      << ",collectives,activation_bytes,latency_ms,bandwidth_ms,throughput,unit,efficiency,"
         "bottleneck,basis\n";
  for (const TensorParallelLine& line : p.lines) {
    for (const TensorParallelPoint& s : line.points) {
      out << csv_field(line.fabric.label) << "," << s.ranks << "," << format_fixed(s.step_ms, 4)
          << "," << format_fixed(s.compute_ms, 4) << "," << format_fixed(s.communication_ms, 4)
          << "," << s.collectives << "," << s.activation_bytes << ","
          << format_fixed(s.latency_ms, 4) << "," << format_fixed(s.bandwidth_ms, 4) << ","
          << format_fixed(s.throughput, 2) << "," << csv_field(p.input.unit) << ","
          << format_fixed(s.efficiency, 5) << "," << csv_field(s.bottleneck) << ",predicted\n";
    }
  }
  return out.str();
}

nlohmann::json render_json_document(const TensorParallelPrediction& p) {
  const ScaleInput& in = p.input;
  nlohmann::json input = scale_input_json(in);
  input["hidden_size"] = in.hidden_size;
  input["blocks"] = in.blocks;
  input["activation_bytes"] = in.activation_bytes;
  input["decode"] = in.decode;
  if (p.experts) {
    input["experts"] = in.experts;
    input["experts_per_token"] = in.experts_per_token;
  }
  nlohmann::json lines = nlohmann::json::array();
  for (const TensorParallelLine& line : p.lines) {
    nlohmann::json points = nlohmann::json::array();
    for (const TensorParallelPoint& s : line.points) {
      points.push_back({{"ranks", s.ranks},
                        {"step_ms", s.step_ms},
                        {"compute_ms", s.compute_ms},
                        {p.experts ? "alltoall_ms" : "allreduce_ms", s.communication_ms},
                        {"collectives", s.collectives},
                        {"activation_bytes", s.activation_bytes},
                        {"latency_ms", s.latency_ms},
                        {"bandwidth_ms", s.bandwidth_ms},
                        {"throughput", s.throughput},
                        {"efficiency", s.efficiency},
                        {"bottleneck", s.bottleneck}});
    }
    lines.push_back({{"fabric", line.fabric.label},
                     {"source", fabric_source(line.fabric)},
                     {"points", points},
                     {"left_out_ranks", line.beyond_one_node}});
  }
  return {{"schema", p.experts ? "gpubench.scale-ep/1" : "gpubench.scale-tp/1"},
          {"basis", "predicted"},
          {"note", p.experts ? kPredictedExpertsNote : kPredictedNote},
          {"input", input},
          {"gpus_per_node", p.gpus_per_node},
          {"fabrics", lines}};
}

}  // namespace

std::string render_tensor_parallel(const TensorParallelPrediction& prediction,
                                   const std::string& format) {
  if (format == "markdown") return render_markdown(prediction);
  if (format == "csv") return render_csv(prediction);
  if (format == "json") return json_text(render_json_document(prediction)) + "\n";
  throw UsageError("--format '" + echoed(format) + "' with " +
                   (prediction.experts ? "--expert-parallel" : "--tensor-parallel") +
                   " is not one of markdown, csv, json");
}

}  // namespace gpubench
