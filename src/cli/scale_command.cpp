// gpubench scale: predicted data-parallel scaling from one device's training result and a
// fabric (docs/scaling.md). Reads files only; never runs a benchmark.
#include "commands.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "datasheets/datasheet_database.h"
#include "features/parallelism/scaling/scaling_prediction.h"
#include "features/parallelism/scaling/sharded_prediction.h"
#include "features/parallelism/scaling/tensor_parallel_prediction.h"
#include "reporting/markdown_text.h"
#include "results/result.h"
#include "terminal_width.h"

namespace gpubench::cli {
namespace {

constexpr int kMaxWorldSize = 1 << 20;

// The result's own accelerator: its datasheet entry's link inside a node.
Fabric fabric_of_result(const Result& result, const DatasheetDatabase& database) {
  if (!result.datasheet.matched) {
    throw UsageError("'" + echoed(result.loaded_from) + "' ran on " +
                     (result.system.gpu_names.empty() ? std::string("the CPU")
                                                      : echoed(result.system.gpu_names.front())) +
                     ", which no datasheet entry matches: name the fabric with --fabric (an "
                     "accelerator such as A100-80GB-SXM, intra=...,inter=..., or an allreduce "
                     "file)");
  }
  return parse_fabric(result.datasheet.entry, database);
}

struct ScaleOptions {
  std::string result;
  std::vector<std::string> fabrics;
  bool compare_fabrics = false;
  std::string gpus = "2,4,8,16,64,1024";
  std::string tensor_parallel;
  std::string expert_parallel;
  std::string shard;
  int gpus_per_node = 8;
  double throughput = 0;
  int64_t batch_size = 0;
  int64_t seq_len = 0;
  bool no_overlap = false;
  std::string format;  // reading_output
  std::string output;
};

void run_scale(const ScaleOptions& o) {
  const std::vector<int> gpus = integer_list(o.gpus, "--gpus", 1, kMaxWorldSize, "8,64");
  const Result result = read_result_file(o.result);
  // A generation's decode step splits over tensor- or expert-parallel ranks; training's step
  // otherwise.
  const bool model_parallel = !o.tensor_parallel.empty() || !o.expert_parallel.empty();
  const bool decode = result.benchmark.task == Task::kInfer && model_parallel;
  if (!o.shard.empty() + !o.tensor_parallel.empty() + !o.expert_parallel.empty() > 1) {
    throw UsageError(
        "--shard, --tensor-parallel and --expert-parallel predict one parallelism each; give one");
  }
  if (decode && (o.throughput > 0 || o.batch_size > 0 || o.seq_len > 0)) {
    throw UsageError(
        "--throughput, --batch-size and --seq-len rescale a training result's step; "
        "a generation's decode step is predicted as measured");
  }
  ScaleInput input =
      decode ? decode_input_from(result)
             : scale_input_from(
                   result, o.throughput > 0 ? std::optional<double>(o.throughput) : std::nullopt,
                   o.batch_size > 0 ? std::optional<int64_t>(o.batch_size) : std::nullopt,
                   o.seq_len > 0 ? std::optional<int64_t>(o.seq_len) : std::nullopt);
  input.overlap = !o.no_overlap;
  const DatasheetDatabase& database = datasheets();
  std::vector<Fabric> fabrics;
  for (const std::string& spec : o.fabrics) fabrics.push_back(parse_fabric(spec, database));
  if (o.compare_fabrics) {
    for (const std::string& spec : comparison_fabric_specs()) {
      fabrics.push_back(parse_fabric(spec, database));
    }
  }
  if (fabrics.empty()) fabrics.push_back(fabric_of_result(result, database));
  // The table format is the Markdown laid out for the terminal (reporting/markdown_text.h).
  const ReadingOutput out = reading_output(o.format, o.output);
  const std::string rendered_as = out.format == "table" ? "markdown" : out.format;
  const auto emit = [&](const std::string& text) {
    write_output(o.output, out.format == "table" ? markdown_as_text(text, out.table_width) : text);
  };
  if (!o.shard.empty()) {
    emit(render_sharded(predict_sharded(input, o.shard, fabrics, gpus, o.gpus_per_node),
                        rendered_as));
    return;
  }
  if (!o.tensor_parallel.empty()) {
    const std::vector<int> ranks =
        integer_list(o.tensor_parallel, "--tensor-parallel", 1, 1024, "1,2,4,8");
    emit(render_tensor_parallel(predict_tensor_parallel(input, fabrics, ranks, o.gpus_per_node),
                                rendered_as));
    return;
  }
  if (!o.expert_parallel.empty()) {
    const std::vector<int> ranks =
        integer_list(o.expert_parallel, "--expert-parallel", 1, kMaxWorldSize, "1,2,4,8");
    emit(render_tensor_parallel(predict_expert_parallel(input, fabrics, ranks, o.gpus_per_node),
                                rendered_as));
    return;
  }
  const ScalePrediction prediction = predict_scaling(input, fabrics, gpus, o.gpus_per_node);
  emit(render_scaling(prediction, rendered_as));
}

}  // namespace

void add_scale_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ScaleOptions>();
  CLI::App* cmd = app.add_subcommand(
      "scale", "Predict data-parallel scaling from one device's training result and a fabric");
  cmd->add_option("result", o->result, "A single-device training result with a timeline")
      ->required();
  cmd->add_option("--fabric", o->fabrics,
                  "An accelerator (its datasheet's NVLink or PCIe), intra=LINK[,inter=LINK[xNICS]]"
                  " with links from data/datasheets.json or GB/s, or a gpubench allreduce file; "
                  "repeat to compare. Default: the result's own GPU");
  cmd->add_flag("--compare-fabrics", o->compare_fabrics,
                "Add PCIe Gen4, NVLink 3 and NVLink 4 nodes with their DGX's InfiniBand");
  cmd->add_option(
         "--gpus", o->gpus,
         "World sizes to predict, comma-separated, each from 1 to " + std::to_string(kMaxWorldSize))
      ->capture_default_str();
  cmd->add_option("--tensor-parallel", o->tensor_parallel,
                  "Predict one replica split over these tensor-parallel ranks instead "
                  "(comma-separated, e.g. 1,2,4,8; at most --gpus-per-node), from a Llama's "
                  "result")
      ->check(not_empty("give ranks such as 2,4,8, or leave the option out"));
  cmd->add_option("--expert-parallel", o->expert_parallel,
                  "Predict a mixture of experts' experts split over these ranks instead, each "
                  "rank with its own batch (comma-separated, e.g. 2,4,8), from gpt-oss's result")
      ->check(not_empty("give ranks such as 2,4,8, or leave the option out"));
  cmd->add_option("--shard", o->shard,
                  "Predict sharded data parallelism instead, full or grads (train --shard), "
                  "over the --gpus world sizes, from a result of a model with blocks")
      ->check(not_empty("give full or grads, or leave the option out"));
  cmd->add_option("--gpus-per-node", o->gpus_per_node, "GPUs a node")
      ->check(number_in_range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--throughput", o->throughput,
                  "Scale the measured times so that one device gives this throughput (e.g. a "
                  "published figure), keeping the timeline's shape")
      ->check(number_in_range(1e-6, 1e12, false));
  cmd->add_option("--batch-size", o->batch_size,
                  "With --throughput: the per-GPU batch of that figure, compute taken as "
                  "proportional to the batch")
      ->check(number_in_range(1, 1 << 24));
  cmd->add_option("--seq-len", o->seq_len,
                  "With --throughput, for a fine-tuning model's result: the figure's tokens a "
                  "sequence, compute taken as proportional to the tokens a step")
      ->check(number_in_range(1, 1 << 24));
  cmd->add_flag("--no-overlap", o->no_overlap,
                "The all-reduces take the device's compute for their whole time instead of "
                "overlapping backward (CPU ranks of one core each)");
  cmd->add_option("--format,-f", o->format, kReadingFormatHelp);
  cmd->add_option("--output,-o", o->output, "Write here instead of standard output");
  cmd->callback([o, &exit_code] {
    run_scale(*o);
    exit_code = kExitOk;
  });
}

}  // namespace gpubench::cli
