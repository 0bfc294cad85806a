// The renderings of a scaling prediction (scaling_prediction.h).
#include <cmath>
#include <iterator>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "charts/line_chart.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_text.h"
#include "common/text_table.h"
#include "features/parallelism/scaling/scale_input_json.h"
#include "features/parallelism/scaling/scaling_prediction.h"

namespace gpubench {
namespace {

constexpr const char* kPredictedNote =
    "Predicted, not measured: the single-device step and its backward timeline, with each "
    "gradient bucket's all-reduce on the fabric by the alpha-beta model (docs/scaling.md). It "
    "leaves out what one device cannot show: stragglers, the input pipeline, clocks under a "
    "full node's power and heat, NCCL's kernels slowing compute they overlap.";

std::string fixed(double value, int decimals) {
  return format_fixed(value, decimals);
}

std::string title_of(const ScalePrediction& p) {
  return "Predicted data-parallel scaling: " + p.input.model + " " + p.input.precision +
         ", batch " + std::to_string(p.input.batch_size) +
         (p.input.seq_len > 0 ? " of " + std::to_string(p.input.seq_len) + " tokens" : "") +
         " per GPU";
}

std::vector<std::string> measured_lines(const ScalePrediction& p) {
  const ScaleInput& in = p.input;
  const StepTimelineInfo& t = in.timeline;
  const int64_t bytes = t.gradient_bytes();
  std::vector<std::string> lines = {
      "From: " + in.source + " (" + in.device + ")",
      "One device: " + fixed(in.throughput, 1) + " " + in.unit + ", step " + fixed(in.step_ms, 2) +
          " ms (forward " + fixed(t.forward_ms, 2) + ", backward " + fixed(t.backward_ms, 2) +
          ", optimiser " + fixed(t.optimizer_ms, 2) + ")",
      "Gradients: " + std::to_string(t.bucket_bytes.size()) + " buckets, " +
          fixed(static_cast<double>(bytes) / 1e6, 1) + " MB a step; timeline by " + t.clock +
          " over " + std::to_string(t.steps) + " " + t.measured_over,
      "Nodes of " + std::to_string(p.gpus_per_node) + " GPUs"};
  if (!in.extended.empty()) lines.push_back("Extended: " + in.extended);
  if (!in.rescaled.empty()) lines.push_back("Rescaled: " + in.rescaled);
  if (!in.overlap) {
    lines.push_back(
        "Communication: not overlapped (--no-overlap): every all-reduce adds to the step");
  }
  lines.push_back(kPredictedNote);
  return lines;
}

const std::vector<std::string> kColumns = {
    "GPUs",          "nodes",      "step ms",      "throughput", "efficiency", "exposed ms",
    "all-reduce ms", "latency ms", "bandwidth ms", "algorithm",  "bottleneck"};

std::vector<std::string> cells_of(const ScalePoint& s) {
  return {std::to_string(s.gpus),
          std::to_string(s.nodes),
          fixed(s.step_ms, 2),
          fixed(s.throughput, 1),
          fixed(100 * s.efficiency, 1) + " %",
          fixed(s.exposed_ms, 2),
          fixed(s.communication_ms, 2),
          fixed(s.latency_ms, 3),
          fixed(s.bandwidth_ms, 3),
          s.algorithm.empty() ? "-" : s.algorithm,
          s.bottleneck};
}

std::string left_out(const ScaleLine& line) {
  if (line.beyond_one_node.empty()) return "";
  std::vector<std::string> sizes;
  for (int n : line.beyond_one_node) sizes.push_back(std::to_string(n));
  return "Left out " + join(sizes, ", ") +
         " GPUs: beyond one node, and this fabric names no network (add inter=..., e.g. "
         "--fabric 'intra=" +
         line.fabric.intra.name + ",inter=ib400x8').";
}

std::string render_markdown(const ScalePrediction& p) {
  std::ostringstream out;
  out << "# " << markdown_cell(title_of(p)) << "\n\n";
  for (const std::string& line : measured_lines(p)) out << markdown_cell(line) << "\n\n";
  for (const ScaleLine& line : p.lines) {
    out << "## " << markdown_cell(line.fabric.label) << " (predicted)\n\n"
        << markdown_cell(fabric_source(line.fabric)) << "\n\n";
    std::vector<std::string> header = kColumns;
    header[3] = "predicted " + p.input.unit;
    out << markdown_row(header) << markdown_row(std::vector<std::string>(header.size(), "---"));
    for (const ScalePoint& s : line.points) out << markdown_row(cells_of(s));
    out << "\n";
    if (!left_out(line).empty()) out << markdown_cell(left_out(line)) << "\n\n";
  }
  return out.str();
}

std::string render_csv(const ScalePrediction& p) {
  std::ostringstream out;
  out << "fabric,gpus,nodes,step_ms,throughput,unit,efficiency,exposed_ms,allreduce_ms,"
         "latency_ms,bandwidth_ms,algorithm,bottleneck,basis\n";
  for (const ScaleLine& line : p.lines) {
    for (const ScalePoint& s : line.points) {
      out << csv_field(line.fabric.label) << "," << s.gpus << "," << s.nodes << ","
          << fixed(s.step_ms, 4) << "," << fixed(s.throughput, 2) << "," << csv_field(p.input.unit)
          << "," << fixed(s.efficiency, 5) << "," << fixed(s.exposed_ms, 4) << ","
          << fixed(s.communication_ms, 4) << "," << fixed(s.latency_ms, 4) << ","
          << fixed(s.bandwidth_ms, 4) << "," << csv_field(s.algorithm) << ","
          << csv_field(s.bottleneck) << ",predicted\n";
    }
  }
  return out.str();
}

nlohmann::json render_json_document(const ScalePrediction& p) {
  const ScaleInput& in = p.input;
  nlohmann::json input = scale_input_json(in);
  input["gradient_buckets"] = in.timeline.bucket_bytes.size();
  input["gradient_bytes"] = in.timeline.gradient_bytes();
  input["overlap"] = in.overlap;
  nlohmann::json lines = nlohmann::json::array();
  for (const ScaleLine& line : p.lines) {
    nlohmann::json points = nlohmann::json::array();
    for (const ScalePoint& s : line.points) {
      points.push_back({{"gpus", s.gpus},
                        {"nodes", s.nodes},
                        {"step_ms", s.step_ms},
                        {"throughput", s.throughput},
                        {"efficiency", s.efficiency},
                        {"exposed_communication_ms", s.exposed_ms},
                        {"allreduce_ms", s.communication_ms},
                        {"latency_ms", s.latency_ms},
                        {"bandwidth_ms", s.bandwidth_ms},
                        {"algorithm", s.algorithm},
                        {"bottleneck", s.bottleneck}});
    }
    lines.push_back({{"fabric", line.fabric.label},
                     {"source", fabric_source(line.fabric)},
                     {"points", points},
                     {"left_out_gpus", line.beyond_one_node}});
  }
  return {{"schema", "gpubench.scale/1"},     {"basis", "predicted"},
          {"note", kPredictedNote},           {"input", input},
          {"gpus_per_node", p.gpus_per_node}, {"fabrics", lines}};
}

// Efficiency against GPUs, a category per count (doubling, so a log2 axis), a line per fabric.
std::string svg_efficiency_chart(const ScalePrediction& p) {
  charts::LineChart chart;
  chart.title = "predicted scaling efficiency against GPUs";
  chart.y_label = "efficiency, % (predicted)";
  chart.x_label = "GPUs (predicted)";
  std::set<int> counts;
  for (const ScaleLine& line : p.lines) {
    for (const ScalePoint& s : line.points) counts.insert(s.gpus);
  }
  for (int gpus : counts) chart.categories.push_back(std::to_string(gpus));
  for (const ScaleLine& line : p.lines) {
    charts::LineSeries series{line.fabric.label, line.fabric.label, {}};
    series.values.assign(counts.size(), std::nullopt);
    for (const ScalePoint& s : line.points) {
      series.values[static_cast<size_t>(std::distance(counts.begin(), counts.find(s.gpus)))] =
          100 * s.efficiency;
    }
    chart.series.push_back(std::move(series));
  }
  return charts::render_line_chart(chart);
}

std::string render_html(const ScalePrediction& p) {
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
       << escape_markup(title_of(p))
       << "</title>\n<style>body{font-family:sans-serif;margin:2em}table{border-collapse:"
          "collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}"
          "</style></head><body>\n<h1>"
       << escape_markup(title_of(p)) << "</h1>\n";
  for (const std::string& line : measured_lines(p))
    html << "<p>" << escape_markup(line) << "</p>\n";
  html << "<h2>Scaling efficiency (predicted)</h2>\n" << svg_efficiency_chart(p);
  for (const ScaleLine& line : p.lines) {
    html << "<h2>" << escape_markup(line.fabric.label) << " (predicted)</h2>\n<p>"
         << escape_markup(fabric_source(line.fabric)) << "</p>\n<table><tr>";
    for (const std::string& h : kColumns) html << "<th>" << escape_markup(h) << "</th>";
    html << "</tr>\n";
    for (const ScalePoint& s : line.points) {
      html << "<tr>";
      for (const std::string& cell : cells_of(s)) html << "<td>" << escape_markup(cell) << "</td>";
      html << "</tr>\n";
    }
    html << "</table>\n";
    if (!left_out(line).empty()) html << "<p>" << escape_markup(left_out(line)) << "</p>\n";
  }
  html << "</body></html>\n";
  return html.str();
}

}  // namespace

std::string render_scaling(const ScalePrediction& prediction, const std::string& format) {
  if (format == "markdown") return render_markdown(prediction);
  if (format == "csv") return render_csv(prediction);
  if (format == "json") return json_text(render_json_document(prediction)) + "\n";
  if (format == "html") return render_html(prediction);
  throw UsageError("--format '" + echoed(format) + "' is not one of markdown, csv, json, html");
}

}  // namespace gpubench
