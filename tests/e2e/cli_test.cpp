// The gpubench binary as a user meets it: exit codes, one-line errors, result files.
#include <signal.h>

#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/benchmark_options.h"
#include "cli/help_formatter.h"
#include "cli/progress_printer.h"
#include "cli/terminal_width.h"
#include "common/log.h"
#include "common/phase_progress.h"
#include "common/stderr_capture.h"
#include "forked_cli.h"
#include "gpubench/build_info.h"
#include "launcher/child_process.h"
#include "modeling/model_registry.h"
#include "results/result.h"
#include "settings/benchmark_fields.h"
#include "test_helpers.h"
#include "torch_support/compat.h"

namespace gpubench {
namespace {

using testing::run_gpubench;
using testing::ScratchDirectory;

const char* kTinyCpuRun = "--device cpu --batch-size 1 --warmup-steps 1 --steps 2 --repeat 2";

using testing::expect_refused;
using testing::expect_usage_error;
using testing::read_json;

// Through the binary: the refusals gpubench makes itself, and three that need LibTorch (the
// model registry, the devices) after the exec; the rest of what needs LibTorch through
// gpubench-train's main in a forked copy of this process (tests/forked_cli.h).
// The rules name a setting by its suite key; on a command line the message names the option
// typed (hostile input, round 4, cause 15: --memory-limit 2K was refused as memory_limit).
TEST(Cli, RefusalsNameTheOptionNotTheSuiteKey) {
  EXPECT_EQ(cli::with_option_names("memory_limit 2048 bytes is under 1 MiB, the least a batch "
                                   "search (batch_size max) takes"),
            "--memory-limit 2048 bytes is under 1 MiB, the least a batch search (--batch-size "
            "max) takes");
  // A one-word key is an option where it opens the message; elsewhere it is English.
  EXPECT_EQ(cli::with_option_names("weights 'int4' holds the weights of the model"),
            "--weights 'int4' holds the weights of the model");
  // Neither a longer word, an option already written, nor a setting that is no option.
  EXPECT_EQ(cli::with_option_names("batch_size_per_device and --gen-len, task infer"),
            "batch_size_per_device and --gen-len, task infer");
  EXPECT_EQ(cli::with_option_names("task must be one of train, infer"),
            "task must be one of train, infer");
  expect_usage_error("train --memory-limit 2K --batch-size max --device cpu",
                     "--memory-limit 2048 bytes is under 1 MiB");
  // A suite file names the key, as its author wrote it.
  ScratchDirectory dir("cli-suite-key");
  std::ofstream(dir.file("s.yaml")) << "benchmarks:\n  - {model: resnet50, steps: 0}\n";
  expect_usage_error("run " + dir.file("s.yaml"), "steps must be an integer");
  EXPECT_EQ(run_gpubench("run " + dir.file("s.yaml")).output.find("--steps"), std::string::npos);
}

TEST(Cli, BadInputExitsWithCodeTwoAndOneClearLine) {
  ScratchDirectory dir("cli-bad");
  const std::string out = " --output " + dir.path();
  expect_usage_error("train --model resnet5" + out,
                     "unknown model 'resnet5'; did you mean 'resnet50'? known: " +
                         ModelRegistry::instance().names().front());
  expect_usage_error("train --precision fp64" + out,
                     "--precision must be one of fp32, tf32, fp16, bf16, fp8, got 'fp64'");
  expect_usage_error("train --device tpu" + out,
                     "--device must be one of auto, cuda, cpu, got 'tpu'");
  expect_usage_error("train --batch-size 0" + out,
                     "--batch-size must be an integer from 1 to 1048576, or max, got 0");
  expect_usage_error("train --batch-size -3" + out,
                     "--batch-size must be an integer from 1 to 1048576, or max, got -3");
  expect_usage_error("train --steps 0" + out,
                     "--steps must be an integer from 1 to 10000000, got 0");
  expect_usage_error("train --repeat -1" + out,
                     "--repeat must be an integer from 1 to 1000, got -1");
  expect_usage_error("train --batch-size lots" + out,
                     "--batch-size must be an integer from 1 to 1048576, or max, got 'lots'");
  expect_usage_error("train --threads 0" + out,
                     "--threads must be an integer from 1 to 4096, got 0");
  expect_usage_error("train --device cpu --precision fp16" + out,
                     "--precision 'fp16' needs a CUDA device");
  expect_refused("train --device cpu --precision tf32" + out,
                 "--precision 'tf32' needs a CUDA device");
  expect_usage_error("train --device cuda" + out, "no CUDA device is available");
  expect_usage_error("train --gpus 0" + out, "--gpus must be an integer from 1 to 4096, got 0");
  expect_usage_error("train --mode warp" + out, "--mode must be one of eager, graph, got 'warp'");
  expect_refused("train --device cpu --mode graph" + out, "graph mode needs a CUDA device");
  expect_refused("train --benchmark-file " + dir.file("none.json") + out,
                 "cannot read benchmark file");
  std::ofstream(dir.file("b.json")) << R"({"schema": "gpubench.benchmark/1", "benchmark": {}})";
  expect_refused("train --benchmark-file " + dir.file("b.json") + " --steps 3" + out,
                 "--benchmark-file holds every setting; give no other benchmark options");
  expect_usage_error("train --no-such-flag",
                     "unknown option '--no-such-flag' for gpubench train; see gpubench train "
                     "--help");
  // Did you mean: an option, a model, a subcommand.
  expect_usage_error("train --batch 16",
                     "unknown option '--batch' for gpubench train; did you "
                     "mean '--batch-size'? see gpubench train --help");
  expect_usage_error("train --model resnet-50" + out,
                     "unknown model 'resnet-50'; did you mean 'resnet50'? known: ");
  expect_usage_error("trian", "unknown subcommand 'trian'; did you mean 'train'? known: ");
  expect_usage_error("frobnicate", "unknown subcommand 'frobnicate'; known: train, infer, run");
  expect_usage_error("run " + dir.file("missing.yaml"), "cannot read suite file");
  std::ofstream(dir.file("s.yaml")) << "benchmarks:\n  - {model: resnet50}\n";
  expect_usage_error("run " + dir.file("s.yaml") + " --set devise=cpu",
                     "--set 'devise=cpu': unknown key 'devise'; known: ");
  expect_usage_error("run " + dir.file("s.yaml") + " --set batch_size=0", "--set 'batch_size=0': ");
}

// run --set: a suite's settings over every entry from the command line (a suite for the GPU run
// on the CPU, as a lab tries it first).
TEST(Cli, RunSetOverridesEveryEntryOfTheSuite) {
  ScratchDirectory dir("cli-run-set");
  std::ofstream(dir.file("s.yaml")) << "defaults: {device: cuda, steps: 20, repeat: "
                                       "3}\nbenchmarks:\n  - {model: test-tiny-cnn}\n";
  const auto run =
      run_gpubench("--log-level warn run " + dir.file("s.yaml") +
                   " --set device=cpu --set steps=2 --set warmup_steps=1 --set repeat=1 "
                   "--set batch_size=2 --output " +
                   dir.file("out"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  size_t results = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("out"))) {
    const nlohmann::json result = read_json(entry.path().string());
    EXPECT_EQ(result["benchmark"]["device"], "cpu");
    EXPECT_EQ(result["benchmark"]["steps"], 2);
    EXPECT_EQ(result["benchmark"]["repeat"], 1);
    ++results;
  }
  EXPECT_EQ(results, 1u);
}

// gpubench checks the values of train, infer, fit and allreduce, and run's suite, itself, in
// gpubench-train's words, before it becomes gpubench-train: a copy of gpubench alone, with no
// gpubench-train beside it, refuses them, and hands over what needs LibTorch (a model's name),
// which then fails for want of gpubench-train.
TEST(Cli, BadValuesAreRefusedBeforeLibTorchStarts) {
  ScratchDirectory dir("cli-front");
  std::filesystem::copy_file(GPUBENCH_BINARY, dir.file("gpubench"));
  std::filesystem::permissions(dir.file("gpubench"), std::filesystem::perms::owner_all);
  const std::string alone = dir.file("gpubench");
  const auto steps = testing::run_command(alone + " train --steps 0");
  EXPECT_EQ(steps.exit_code, 2) << steps.output;
  EXPECT_EQ(steps.output,
            "gpubench: error: --steps must be an integer from 1 to 10000000, got 0\n");
  const auto batches = testing::run_command(alone + " infer --batch-size 1,0");
  EXPECT_EQ(batches.exit_code, 2) << batches.output;
  EXPECT_NE(batches.output.find("got 0"), std::string::npos) << batches.output;
  for (const char* target : {"0", "-40", "nan", "inf", "40ms", "0x10"}) {
    const auto tpot = testing::run_command(alone + " infer --tpot-target-ms " + target);
    EXPECT_EQ(tpot.exit_code, 2) << tpot.output;
    EXPECT_EQ(tpot.output,
              "gpubench: error: --tpot-target-ms: must be a finite number from 0.001 "
              "to 10000000, got '" +
                  std::string(target) + "' (see --help)\n");
  }
  const auto weights = testing::run_command(alone + " infer --weights int3");
  EXPECT_EQ(weights.exit_code, 2) << weights.output;
  EXPECT_NE(weights.output.find("int3"), std::string::npos) << weights.output;
  const auto format = testing::run_command(alone + " fit --format pdf");
  EXPECT_EQ(format.output,
            "gpubench: error: --format 'pdf' is not one of table, markdown, csv, json\n");
  const auto task = testing::run_command(alone + " fit --task serve");
  EXPECT_EQ(task.output, "gpubench: error: --task 'serve' is not one of train, infer\n");
  const auto flag = testing::run_command(alone + " train --no-such-flag");
  EXPECT_EQ(flag.exit_code, 2) << flag.output;
  EXPECT_NE(flag.output.find("--no-such-flag"), std::string::npos) << flag.output;
  const auto model = testing::run_command(alone + " train --model resnet5 --steps 2");
  EXPECT_EQ(model.exit_code, 1) << model.output;
  EXPECT_NE(model.output.find("cannot run '" + dir.file("gpubench-train") + "'"), std::string::npos)
      << model.output;
  EXPECT_EQ(testing::run_command(alone + " train --help").exit_code, 1)
      << "help is gpubench-train's";
  const auto sweep = testing::run_command(alone + " allreduce --min-bytes 1M --max-bytes 1K");
  EXPECT_EQ(sweep.output, "gpubench: error: --max-bytes 1024 is below --min-bytes 1048576\n");
  // run: the suite file, read and checked; one that can be read once only (a pipe) and a good
  // one are handed over.
  std::ofstream(dir.file("bad.yaml")) << "benchmarks:\n  - model: resnet50\n    stepz: 3\n";
  const auto suite = testing::run_command(alone + " run " + dir.file("bad.yaml"));
  EXPECT_EQ(suite.exit_code, 2) << suite.output;
  EXPECT_EQ(
      suite.output.rfind("gpubench: error: " + dir.file("bad.yaml") + ":3: unknown key 'stepz'", 0),
      0u)
      << suite.output;
  const auto timeout =
      testing::run_command(alone + " run " + dir.file("bad.yaml") + " --timeout nan");
  EXPECT_EQ(timeout.exit_code, 2) << timeout.output;
  std::ofstream(dir.file("good.yaml")) << "benchmarks:\n  - model: resnet50\n";
  for (const std::string& given :
       {dir.file("good.yaml"), std::string("<(printf 'benchmarks:\\n  - stepz: 3\\n')")}) {
    const auto handed = testing::run_command("bash -c \"" + alone + " run " + given + "\"");
    EXPECT_EQ(handed.exit_code, 1) << given << ": " << handed.output;
    EXPECT_NE(handed.output.find("cannot run '" + dir.file("gpubench-train") + "'"),
              std::string::npos)
        << handed.output;
  }
}

// gpubench answers report, compare, regress, --version and --help itself and hands the
// training subcommands to gpubench-train in the same process.
// Each command's help lists the settings it uses, grouped by section and typed; the others are
// still taken, and resolve says why they do not apply.
// Progress estimates the time its timed steps have left from their pace so far: nothing until two
// moments are known, then the steps left at that pace.
TEST(Cli, ProgressEstimatesTheTimeLeft) {
  TimeLeft left;
  EXPECT_FALSE(left.at(10.0, 1, 24));          // the first timed step: no pace yet
  const auto estimate = left.at(12.0, 3, 24);  // 2 steps in 2 s: 21 steps left
  ASSERT_TRUE(estimate);
  EXPECT_DOUBLE_EQ(*estimate, 21.0);
  EXPECT_DOUBLE_EQ(*left.at(16.0, 7, 24), 17.0);
  EXPECT_FALSE(left.at(16.0, 7, 24) == std::nullopt);
  EXPECT_DOUBLE_EQ(*left.at(40.0, 24, 24), 0.0);
  EXPECT_EQ(time_left_text(0.2), "under 1 s left");
  EXPECT_EQ(time_left_text(44.6), "about 45 s left");
  EXPECT_EQ(time_left_text(200), "about 3 min 20 s left");
  EXPECT_EQ(time_left_text(180), "about 3 min left");
  EXPECT_EQ(time_left_text(3900), "about 1 h 5 min left");
}

// Long work before the timed steps says its phase: a counted one with its count and, from the
// second item on, the time left at the pace so far; a phase's line is cleared when the printer
// ends, the run's last step line stays and ends before the table; at --log-level warn
// (--quiet) nothing.
TEST(Cli, ProgressShowsPhasesWithTheirCountAndTimeLeft) {
  double now = 100;
  const auto shown = [&](bool terminal, const std::function<void(ProgressPrinter&)>& events) {
    StderrCapture capture;
    {
      ProgressPrinter printer(
          "fit llama-3.2-1b", "", [&] { return now; }, terminal);
      events(printer);
    }
    return capture.release();
  };
  const std::string probes = shown(true, [&](ProgressPrinter&) {
    report_phase({"building the model", "1.24 billion parameters", 0, 0});
    for (int probe = 1; probe <= 4; ++probe, now += 5) {
      report_phase({"probing", "batch " + std::to_string(probe), probe, 4});
    }
  });
  EXPECT_NE(probes.find("\r\033[Kfit llama-3.2-1b  building the model: 1.24 billion parameters"),
            std::string::npos);
  EXPECT_NE(probes.find("\r\033[Kfit llama-3.2-1b  probing 1/4: batch 1\r"), std::string::npos);
  EXPECT_NE(probes.find("probing 2/4: batch 2  about 15 s left"), std::string::npos);  // 5 s each
  EXPECT_NE(probes.find("probing 4/4: batch 4  about 5 s left"), std::string::npos);
  EXPECT_EQ(probes.substr(probes.size() - 4), "\r\033[K");  // cleared: the report follows
  report_phase({"probing", "after the printer", 1, 1});     // nobody listens now
  const std::string steps = shown(true, [&](ProgressPrinter& printer) {
    printer({false, 1, 1, 1, 2, 10.0});
    printer({false, 1, 1, 2, 2, 12.5});
  });
  EXPECT_EQ(steps.substr(steps.size() - 1), "\n");
  EXPECT_NE(steps.find("trial 1/1  step 2/2  12.5 "), std::string::npos);
  // Off a terminal nothing: a script reading fit --format json 2>&1 gets the JSON alone.
  const std::string logged = shown(false, [&](ProgressPrinter&) {
    for (int probe = 1; probe <= 3; ++probe) report_phase({"probing", "b", probe, 3});
  });
  EXPECT_EQ(logged, "");
  log::configure("warn");
  const std::string quiet = shown(true, [&](ProgressPrinter& printer) {
    report_phase({"probing", "b", 1, 3});
    printer({false, 1, 1, 1, 1, 10.0});
  });
  log::configure("info");
  EXPECT_EQ(quiet, "");
}

// --quiet: a run prints its table and result line, no progress and no info lines.
TEST(Cli, QuietLeavesTheTableAndWarningsOnly) {
  const auto run = run_gpubench("--quiet fit --model resnet50 --batch-size 2 --device cpu");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output.find("[info]"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("probing"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("Predicted peak per device"), std::string::npos);
  const auto told = run_gpubench("fit --model resnet50 --batch-size 2 --device cpu -f json");
  EXPECT_NO_THROW(nlohmann::json::parse(told.output)) << told.output;  // no progress off a terminal
}

// Help fits the width: the terminal's, else $COLUMNS, else 100 (the tests' output is a pipe);
// tables fit 100 columns on a terminal.
TEST(Cli, HelpAndTablesFitTheWidth) {
  EXPECT_EQ(cli::wrapped("a bb ccc dddddd e", 4), "a bb\nccc\ndddddd\ne");
  EXPECT_EQ(cli::wrapped("one two\nthree", 20), "one two\nthree");
  // Tables: 100 columns on a terminal (a narrower one's width), any width with --wide or off one.
  EXPECT_EQ(cli::table_width(false, 200), 100u);
  EXPECT_EQ(cli::table_width(false, 80), 80u);
  EXPECT_EQ(cli::table_width(true, 80), 0u);
  EXPECT_EQ(cli::table_width(false, std::nullopt), 0u);
  const auto longest_line = [](const std::string& text) {
    size_t longest = 0;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) longest = std::max(longest, line.size());
    return longest;
  };
  for (const auto& [columns, width] :
       std::vector<std::pair<std::string, size_t>>{{"env -u COLUMNS ", 100}, {"COLUMNS=80 ", 80}}) {
    for (const char* command : {"train", "infer", "fit", "report", "scale"}) {
      const auto help =
          testing::run_command(columns + std::string(GPUBENCH_BINARY) + " " + command + " --help");
      ASSERT_EQ(help.exit_code, 0) << help.output;
      EXPECT_LE(longest_line(help.output), width) << columns << command << "\n" << help.output;
    }
  }
}

TEST(Cli, EachCommandsHelpListsItsOwnOptionsGroupedAndTyped) {
  const auto help = [](const std::string& command) {
    const auto run = testing::run_gpubench(command + " --help");
    EXPECT_EQ(run.exit_code, 0) << run.output;
    return run.output;
  };
  const auto lists = [](const std::string& text, const std::string& option) {
    return text.find("  " + option + " ") != std::string::npos ||
           text.find("," + option + " ") != std::string::npos;
  };
  const std::string train = help("train"), infer = help("infer"), fit = help("fit");
  for (const char* own : {"--optimizer", "--shard", "--tuning", "--steps", "--profile"}) {
    EXPECT_TRUE(lists(train, own)) << own << "\n" << train;
  }
  for (const char* other : {"--kv-cache", "--weights", "--prompt-len", "--gen-len"}) {
    EXPECT_FALSE(lists(train, other)) << other << "\n" << train;
  }
  for (const char* own : {"--kv-cache", "--weights", "--prompt-len", "--steps", "--gpus"}) {
    EXPECT_TRUE(lists(infer, own)) << own << "\n" << infer;
  }
  for (const char* other : {"--shard", "--optimizer", "--tuning", "--timeline", "--bucket-mb"}) {
    EXPECT_FALSE(lists(infer, other)) << other << "\n" << infer;
  }
  for (const char* own : {"--tuning", "--kv-cache", "--shard", "--memory"}) {
    EXPECT_TRUE(lists(fit, own)) << own << "\n" << fit;
  }
  for (const char* other : {"--steps", "--warmup-steps", "--profile", "--repeat"}) {
    EXPECT_FALSE(lists(fit, other)) << other << "\n" << fit;
  }
  EXPECT_NE(train.find("Fine-tuning options:"), std::string::npos) << train;
  EXPECT_NE(train.find("--steps INT "), std::string::npos) << train;
  EXPECT_NE(train.find("--mode {eager,graph}"), std::string::npos) << train;
  const auto refused = testing::run_gpubench("infer --model resnet50 --optimizer sgd --device cpu");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("--optimizer is a training setting, not infer's"),
            std::string::npos)
      << refused.output;
}

TEST(Cli, OneCommandLineForBothExecutables) {
  const auto version = run_gpubench("--version");
  EXPECT_EQ(version.exit_code, 0) << version.output;
  const auto help = run_gpubench("--help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
  for (const char* name :
       {"train", "run", "allreduce", "models", "env", "report", "compare", "regress", "trend"}) {
    EXPECT_NE(help.output.find(name), std::string::npos) << name;
  }
  const auto train_help = run_gpubench("train --help");
  EXPECT_EQ(train_help.exit_code, 0) << train_help.output;
  EXPECT_NE(train_help.output.find("--batch-size"), std::string::npos) << train_help.output;
  EXPECT_NE(train_help.output.find("(default: the model's)"), std::string::npos);
}

TEST(Cli, UnwritableOutputIsAUsageError) {
  ScratchDirectory dir("cli-unwritable");
  std::ofstream(dir.file("file")) << "x";
  expect_refused("train --device cpu --output " + dir.file("file") + "/sub",
                 "cannot create output directory");
}

TEST(Cli, MalformedSuiteNamesFileAndLine) {
  ScratchDirectory dir("cli-suite");
  std::ofstream(dir.file("bad.yaml")) << "benchmarks:\n  - model: resnet50\n    stepz: 3\n";
  expect_refused("run " + dir.file("bad.yaml") + " --output " + dir.path(),
                 dir.file("bad.yaml") + ":3: unknown key 'stepz'");
  // Every entry is resolved before the first runs; a refusal names the entry's line.
  std::ofstream(dir.file("graph.yaml"))
      << "benchmarks:\n  - {model: test-tiny-cnn, device: cpu}\n  - {model: test-tiny-cnn, "
         "device: cpu, mode: graph}\n";
  expect_refused("run " + dir.file("graph.yaml") + " --output " + dir.path(),
                 dir.file("graph.yaml") + ":3: graph mode needs a CUDA device");
  EXPECT_TRUE(dir.files_with_extension(".json").empty());  // nothing ran
}

// train --format for a script: standard output is report's rendering of the run (JSON, tidy
// CSV), the "result:" line goes to standard error; the result file is written as ever.
TEST(Cli, TrainPrintsReportsRenderingForAScript) {
  ScratchDirectory dir("cli-train-format");
  const std::string train = std::string(GPUBENCH_BINARY) +
                            " train --model test-tiny-cnn --device cpu --batch-size 2 "
                            "--warmup-steps 0 --steps 1 --repeat 2 --output " +
                            dir.path();
  const auto json = testing::run_command("bash -c '" + train + " -f json 2>/dev/null'");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const nlohmann::json document = nlohmann::json::parse(json.output);
  EXPECT_EQ(document["schema"], "gpubench.report/1");
  EXPECT_EQ(document["tables"][0]["id"], "throughput");
  EXPECT_EQ(document["tables"][0]["rows"][0]["labels"][0], "test-tiny-cnn");
  const auto csv = testing::run_command("bash -c '" + train + " -f csv 2>/dev/null'");
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_EQ(csv.output.rfind("table,model,precision,setup,unit,column,value,spread_pct,text\n", 0),
            0u)
      << csv.output;
  EXPECT_NE(csv.output.find("throughput,test-tiny-cnn,fp32,batch 2 "), std::string::npos)
      << csv.output;
  const auto both = run_gpubench(
      "train --model test-tiny-cnn --device cpu --batch-size 2 --warmup-steps 0 --steps 1 "
      "--repeat 1 -f markdown --output " +
      dir.path());
  EXPECT_NE(both.output.find("result: " + dir.path()), std::string::npos) << both.output;
  EXPECT_NE(both.output.find("| test-tiny-cnn | fp32 |"), std::string::npos) << both.output;
  EXPECT_EQ(dir.files_with_extension(".json").size(), 3u);
}

TEST(Cli, ModelsListsResNetFiftyWithCountedFigures) {
  // Counting builds each model; two are enough to show the listing.
  const auto result = run_gpubench("models resnet50 googlenet --format json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto models = nlohmann::json::parse(result.output);
  ASSERT_EQ(models.size(), 2u);
  expect_refused("models resnet5", "unknown model 'resnet5'");
  // The same listing as CSV and Markdown, for a spreadsheet or a page.
  const auto csv = run_gpubench("models test-tiny-cnn --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_EQ(csv.output.rfind("name,family,task,input,params,active params,forward GFLOPs/sample,"
                             "default batch,reference\ntest-tiny-cnn,",
                             0),
            0u)
      << csv.output;
  const auto markdown = run_gpubench("models test-tiny-cnn --format markdown");
  EXPECT_EQ(markdown.output.rfind("| name | family | task |", 0), 0u) << markdown.output;
  expect_refused("models --format yaml", "--format: yaml not in {table,markdown,csv,json}");
  // In the order asked; the counts are torchvision's parameters and the counted forward FLOPs.
  EXPECT_EQ(models[0]["name"], "resnet50");
  EXPECT_EQ(models[0]["task"], "image-classification");
  EXPECT_EQ(models[0]["input_shape"], nlohmann::json({3, 224, 224}));
  EXPECT_EQ(models[0]["params"], 25557032);
  EXPECT_EQ(models[0]["forward_flops"], 8178368512);
  EXPECT_EQ(models[1]["name"], "googlenet");
  EXPECT_EQ(models[1]["input_shape"], nlohmann::json({3, 224, 224}));
  EXPECT_EQ(models[1]["params"], 13004888);
}

// What the system block says of this machine and this build, each checkable here.
void expect_this_system(const nlohmann::json& system) {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  EXPECT_EQ(system["hostname"], host);
  EXPECT_EQ(system["gpu_count"], torch::cuda::device_count());
  EXPECT_EQ(system["cpu_logical_cores"], static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_EQ(system["libtorch"], compat::libtorch_version());
  EXPECT_EQ(system["gpubench_version"], GPUBENCH_VERSION);
  EXPECT_EQ(system["git_commit"], GPUBENCH_GIT_COMMIT);
  EXPECT_FALSE(system["cpu"].get<std::string>().empty());
}

TEST(Cli, EnvPrintsTheSystemBlock) {
  const auto result = run_gpubench("env --format json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  expect_this_system(nlohmann::json::parse(result.output));
}

// Its first lines: the LibTorch in use (its version, whether it has CUDA, the folder it was
// loaded from) and the GPUs it sees, or why none can be used; then the same system block, its
// tf32 and cuDNN flags said to be the process's defaults (a CPU run records tf32_cudnn false
// where env shows LibTorch's true).
TEST(Cli, EnvFirstSaysTheLibTorchAndTheGpus) {
  const auto result = run_gpubench("env");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::istringstream lines(result.output);
  std::string libtorch, gpus;
  std::getline(lines, libtorch);
  std::getline(lines, gpus);
  EXPECT_EQ(libtorch.rfind("libtorch: " + compat::libtorch_version() +
                               (GPUBENCH_WITH_CUDA ? ", with CUDA " : ", CPU only"),
                           0),
            0u)
      << libtorch;
  EXPECT_NE(libtorch.find(", from /"), std::string::npos) << libtorch;
  if (!torch::cuda::is_available()) {
    const std::string expected = GPUBENCH_WITH_CUDA ? "gpus: none usable: "
                                                    : "gpus: none usable: this LibTorch was "
                                                      "built without CUDA";
    EXPECT_EQ(gpus.rfind(expected, 0), 0u) << gpus;
  } else {
    EXPECT_EQ(gpus.rfind("gpus: " + std::to_string(torch::cuda::device_count()) + " ", 0), 0u)
        << gpus;
  }
  const std::string heading =
      "system block, as a result records it (its tf32_* and cudnn_* flags are LibTorch's "
      "defaults here; each run sets them for its precision and records its own):\n";
  const auto block = result.output.find(heading);
  ASSERT_NE(block, std::string::npos) << result.output;
  expect_this_system(nlohmann::json::parse(result.output.substr(block + heading.size())));
  EXPECT_EQ(run_gpubench("env --format yaml").exit_code, 2);
}

TEST(Cli, TrainOnTheCpuWritesACompleteResult) {
  ScratchDirectory dir("cli-train");
  const std::string path = dir.file("r.json");
  const auto result = run_gpubench(std::string("train --model resnet50 ") + kTinyCpuRun +
                                   " --threads 1 --output " + path);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("images/sec"), std::string::npos);
  const auto r = read_json(path);
  EXPECT_EQ(r["schema"], "gpubench.result/1");
  EXPECT_EQ(r["status"], "ok");
  const auto& b = r["benchmark"];
  EXPECT_EQ(b["model"], "resnet50");
  EXPECT_EQ(b["precision"], "fp32");
  EXPECT_EQ(b["device"], "cpu");
  EXPECT_EQ(b["gpus"], 1);
  EXPECT_EQ(b["batch_size_per_device"], 1);
  EXPECT_EQ(b["global_batch_size"], 1);
  EXPECT_EQ(b["warmup_steps"], 1);
  EXPECT_EQ(b["steps"], 2);
  EXPECT_EQ(b["repeat"], 2);
  EXPECT_EQ(b["threads"], 1);
  EXPECT_EQ(b["optimizer_impl"], "foreach");  // fused needs CUDA
  EXPECT_EQ(b["data"], "synthetic, generated once on the device; no input pipeline is measured");
  const auto& m = r["metrics"];
  EXPECT_GT(m["throughput"].get<double>(), 0);
  EXPECT_EQ(m["throughput_unit"], "images/sec");
  EXPECT_EQ(m["trials"].size(), 2u);
  EXPECT_EQ(m["throughput"], m["per_device_throughput"]);
  // Four timed steps: ordered percentiles, a mean between the extremes, and a spread that two
  // steps of different length make positive and the range bounds.
  const auto step = [&](const char* key) { return m["step_time_ms"][key].get<double>(); };
  EXPECT_GT(step("min"), 0);
  EXPECT_LE(step("min"), step("p5"));
  EXPECT_LE(step("p5"), step("median"));
  EXPECT_LE(step("median"), step("p95"));
  EXPECT_LE(step("p95"), step("max"));
  EXPECT_GE(step("mean"), step("min"));
  EXPECT_LE(step("mean"), step("max"));
  if (step("max") > step("min")) {
    EXPECT_GT(step("stdev"), 0);
  }
  EXPECT_LE(step("stdev"), step("max") - step("min"));
  EXPECT_GT(m["peak_memory_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(m["forward_flops_per_sample"], 8178368512);
  EXPECT_NEAR(m["achieved_tflops"].get<double>(),
              3.0 * 8178368512.0 * m["throughput"].get<double>() / 1e12, 1e-9);
  const auto& s = r["system"];
  expect_this_system(s);
  EXPECT_EQ(s["tf32_matmul"], false);
  EXPECT_EQ(s["tf32_cudnn"], false);
  EXPECT_FALSE(r["started_at"].get<std::string>().empty());
  EXPECT_GT(r["duration_s"].get<double>(), 0);
}

TEST(Cli, FailingTrainRecordsAFailedResultAndExitsOne) {
  ScratchDirectory dir("cli-fail");
  const auto result = testing::run_command(
      "GPUBENCH_FAULT_INJECTION=oom " + std::string(GPUBENCH_BINARY) +
      " train --model test-tiny-cnn " + kTinyCpuRun + " --output " + dir.file("r.json"));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  const auto r = read_json(dir.file("r.json"));
  EXPECT_EQ(r["status"], "oom");
  EXPECT_NE(r["error"].get<std::string>().find("out of memory"), std::string::npos);
}

// The hidden child subcommand runs a resolved benchmark file through the launcher's one entry point
// and writes the result where --output says; it refuses to run without that file, and under
// another launcher (a torchrun rank runs `gpubench train`, which resolves).
TEST(Cli, TheChildRunsItsBenchmarkFileAndWritesItsResult) {
  ScratchDirectory dir("cli-child");
  const auto first = run_gpubench("train --model test-tiny-cnn " + std::string(kTinyCpuRun) +
                                  " --output " + dir.file("first.json"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const ResolvedBenchmark benchmark = read_result_file(dir.file("first.json")).benchmark;
  write_benchmark_file(dir.file("b.json"), benchmark);
  // gpubench-train, beside gpubench: what parents start their children with.
  const std::string train_binary =
      (std::filesystem::path(GPUBENCH_BINARY).parent_path() / "gpubench-train").string();
  const std::string child = train_binary + " run-benchmark " + dir.file("b.json");

  const auto ran = testing::run_command(child + " --output " + dir.file("child.json"));
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  const auto result = read_json(dir.file("child.json"));
  EXPECT_EQ(result["status"], "ok");
  EXPECT_EQ(read_result_file(dir.file("child.json")).benchmark, benchmark);

  expect_refused(child.substr(child.find(' ') + 1), "--output names the child's result file");
  const auto under_torchrun = testing::run_command(
      "RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 "
      "MASTER_PORT=29999 " +
      child + " --output " + dir.file("rank.json"));
  testing::expect_refusal(under_torchrun, "run-benchmark under torchrun",
                          "run-benchmark is what gpubench starts its children with; under "
                          "torchrun run `gpubench train` or `gpubench infer`");
  EXPECT_FALSE(std::filesystem::exists(dir.file("rank.json")));
}

TEST(Cli, SuiteKeepsGoingPastFailuresAndRecordsEachOne) {
  ScratchDirectory dir("cli-run");
  std::ofstream(dir.file("suite.yaml"))
      << "defaults: {device: cpu, batch_size: 1, warmup_steps: 0, steps: 1, repeat: 1}\n"
         "benchmarks:\n  - model: test-tiny-cnn\n    precision: [fp32, bf16]\n";
  // The fault hits only bf16 runs: one benchmark crashes (abort), the other succeeds.
  const auto result =
      testing::run_command("GPUBENCH_FAULT_INJECTION=abort:bf16 " + std::string(GPUBENCH_BINARY) +
                           " run " + dir.file("suite.yaml") + " --output " + dir.file("out"));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("2 benchmark(s), 1 failed"), std::string::npos) << result.output;
  int ok = 0, failed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("out"))) {
    ASSERT_EQ(entry.path().extension(), ".json") << entry.path();  // no temporary files left
    const auto r = read_json(entry.path().string());
    if (r["status"] == "ok") {
      ++ok;
      EXPECT_EQ(r["benchmark"]["precision"], "fp32");
    } else {
      ++failed;
      EXPECT_EQ(r["status"], "failed");
      EXPECT_EQ(r["benchmark"]["precision"], "bf16");
      EXPECT_NE(r["error"].get<std::string>().find("signal 6"), std::string::npos) << r["error"];
    }
  }
  EXPECT_EQ(ok, 1);
  EXPECT_EQ(failed, 1);
}

TEST(Cli, SuiteKillsAHungBenchmarkAtTheTimeout) {
  ScratchDirectory dir("cli-hang");
  std::ofstream(dir.file("suite.json"))
      << R"({"benchmarks": [{"model": "test-tiny-cnn", "device": "cpu", "batch_size": 1,
             "warmup_steps": 0, "steps": 1, "repeat": 1}]})";
  const auto result = testing::run_command(
      "GPUBENCH_FAULT_INJECTION=hang " + std::string(GPUBENCH_BINARY) + " run " +
      dir.file("suite.json") + " --timeout 1 --output " + dir.file("out"));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("out"))) {
    files.push_back(entry.path().string());
  }
  ASSERT_EQ(files.size(), 1u);
  const auto r = read_json(files[0]);
  EXPECT_EQ(r["status"], "failed");
  EXPECT_NE(r["error"].get<std::string>().find("timed out and was killed after 1 s"),
            std::string::npos)
      << r["error"];
  EXPECT_EQ(testing::processes_left(), std::vector<std::string>{});
}

TEST(Cli, TerminatingASuiteEndsItsRunningBenchmark) {
  ScratchDirectory dir("cli-sigterm");
  std::ofstream(dir.file("suite.yaml"))
      << "benchmarks:\n  - {model: test-tiny-cnn, device: cpu, batch_size: 1, warmup_steps: 0, "
         "steps: 1, repeat: 1}\n";
  ChildProcess suite({GPUBENCH_BINARY, "run", dir.file("suite.yaml"), "--output", dir.file("out")},
                     {{"GPUBENCH_FAULT_INJECTION", "hang"}}, false);
  ASSERT_TRUE(testing::wait_for_children(suite.pid(), 1)) << "the benchmark never started";
  ::kill(suite.pid(), SIGTERM);
  const ProcessOutcome outcome = suite.wait();
  EXPECT_EQ(outcome.signal, SIGTERM) << outcome.describe();
  EXPECT_EQ(testing::processes_left(), std::vector<std::string>{});
}

// Every precision the CPU runs, in both memory formats, through `run`: one process each, each
// given its resolved benchmark as a file. (That every convnet of the zoo trains is Zoo/*'s.)
// An entry this machine cannot run (no CUDA device here) stops a suite at once, naming the entry;
// with --skip-unavailable it is a skipped result whose requirement field says what is missing,
// and the suite runs the rest and passes.
TEST(Cli, ASuiteSkipsWhatThisMachineLacksOnlyWhenAsked) {
  ScratchDirectory dir("cli-skip");
  std::ofstream(dir.file("suite.yaml"))
      << "defaults: {model: test-tiny-cnn, batch_size: 2, warmup_steps: 3, steps: 1, repeat: 1}\n"
         "benchmarks:\n  - {device: cpu}\n  - {device: cpu, mode: graph}\n"
         "  - {device: cpu, precision: fp16}\n";
  const auto refused = run_gpubench("--log-level warn run " + dir.file("suite.yaml") +
                                    " --output " + dir.file("refused"));
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("suite.yaml:4: graph mode needs a CUDA device"), std::string::npos)
      << refused.output;
  const auto run = run_gpubench("--log-level warn run " + dir.file("suite.yaml") +
                                " --skip-unavailable --output " + dir.file("out"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("3 benchmark(s), 0 failed, 2 skipped"), std::string::npos)
      << run.output;
  std::multiset<std::string> statuses;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("out"))) {
    const auto r = read_json(entry.path().string());
    statuses.insert(r["status"].get<std::string>());
    if (r["status"] != "skipped") continue;
    EXPECT_EQ(r["requirement"], "cuda") << entry.path();
    EXPECT_NE(r["error"].get<std::string>().find("needs a CUDA device"), std::string::npos);
  }
  EXPECT_EQ(statuses, (std::multiset<std::string>{"ok", "skipped", "skipped"}));
  // A report reads the skipped results as what they are.
  const auto report = run_gpubench("report " + dir.file("out"));
  EXPECT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("skipped: "), std::string::npos) << report.output;
}

TEST(Cli, ASuiteRunsEveryEntryWithTheSettingsItResolved) {
  ScratchDirectory dir("cli-smoke");
  std::ofstream(dir.file("suite.yaml"))
      << "defaults: {model: test-tiny-cnn, device: cpu, batch_size: 2, warmup_steps: 1, steps: 2, "
         "repeat: 2, threads: 1, timeout: 7}\nbenchmarks:\n  - precision: [fp32, bf16]\n"
         "    channels_last: [true, false]\n";
  const auto result = run_gpubench("--log-level warn run " + dir.file("suite.yaml") + " --output " +
                                   dir.file("out"));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("4 benchmark(s), 0 failed"), std::string::npos) << result.output;
  // Children were told their device: none of them warns that it found no CUDA device, and their
  // own tables (with a result: line for a private file) are not printed: the suite's table is.
  EXPECT_EQ(result.output.find("no CUDA device found"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("result: "), std::string::npos) << result.output;
  std::set<std::string> runs;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("out"))) {
    const auto r = read_json(entry.path().string());
    EXPECT_EQ(r["status"], "ok") << entry.path();
    EXPECT_GT(r["metrics"]["throughput"].get<double>(), 0);
    EXPECT_GT(r["metrics"]["achieved_tflops"].get<double>(), 0);
    EXPECT_EQ(r["benchmark"]["timeout"], 7);  // a suite sets train's timeout too
    EXPECT_EQ(r["benchmark"]["threads"], 1);
    runs.insert(r["benchmark"]["precision"].get<std::string>() +
                (r["benchmark"]["channels_last"].get<bool>() ? " nhwc" : " nchw"));
  }
  EXPECT_EQ(runs, (std::set<std::string>{"fp32 nhwc", "fp32 nchw", "bf16 nhwc", "bf16 nchw"}));
}

const std::string kReportFixtures = std::string(GPUBENCH_SOURCE_DIR) + "/tests/fixtures/reports";

TEST(Cli, ReportCompareAndRegressBadInputExitTwo) {
  ScratchDirectory dir("cli-report");
  std::ofstream(dir.file("broken.json")) << "{\"schema\": \"gpubench.result/1\",";
  expect_refused("report", "results is required");
  expect_refused("report " + dir.file("nothing-here"), "no result file or directory");
  expect_refused("report " + dir.file("broken.json"),
                 "broken.json:1: malformed JSON: syntax error while parsing object key - "
                 "unexpected end of input; expected string literal");
  expect_refused("report " + kReportFixtures + " --normalize-to colour=red",
                 "unknown selector key 'colour'; known: gpu, hostname, model, precision");
  expect_refused("report " + kReportFixtures + " --format pdf", "unknown format 'pdf'");
  expect_refused("compare 'gpu=\"NVIDIA H100\"' 'gpu=\"NVIDIA A40\"' --results " + kReportFixtures,
                 "matches no result");
  expect_refused("regress --baseline " + kReportFixtures, "--current is required");
  expect_refused("regress --baseline " + dir.file("broken.json") + " --current " + kReportFixtures,
                 "broken.json:1: malformed JSON");
}

TEST(Cli, ReportWritesEveryFormat) {
  ScratchDirectory dir("cli-formats");
  for (const char* format : {"markdown", "csv", "json", "html"}) {
    const std::string out = dir.file(std::string("report.") + format);
    const auto result =
        run_gpubench("report " + kReportFixtures + " --format " + format + " --output " + out);
    ASSERT_EQ(result.exit_code, 0) << result.output;
    std::ifstream in(out);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("NVIDIA L40S x1"), std::string::npos) << format;
  }
}

TEST(Cli, CompareSelectorsOverAResultPool) {
  const auto result = run_gpubench("compare 'gpu=\"NVIDIA A40\"' 'gpu=\"NVIDIA L40S\"' --results " +
                                   kReportFixtures);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("| vgg16 | fp16 | 1 | batch 64 | 450.0 | 1350.0 | 3.000 |"),
            std::string::npos)
      << result.output;
}

TEST(Cli, RegressExitsOneOnARegressionAndWritesJUnit) {
  ScratchDirectory dir("cli-regress");
  std::filesystem::create_directories(dir.file("current"));
  // The current run: the A40 ResNet-50 fixture 10 % slower with tight trials.
  auto document = read_json(kReportFixtures + "/a40_resnet50_fp16_x1.json");
  document["metrics"]["trials"] = {1125, 1136, 1147};
  document["metrics"]["throughput"] = 1136;
  std::ofstream(dir.file("current/r.json")) << document.dump();
  const auto slower = run_gpubench("regress --baseline " + kReportFixtures +
                                   "/a40_resnet50_fp16_x1.json --current " + dir.file("current") +
                                   " --junit " + dir.file("junit.xml"));
  EXPECT_EQ(slower.exit_code, 1) << slower.output;
  EXPECT_NE(slower.output.find("REGRESSION"), std::string::npos) << slower.output;
  std::ifstream junit(dir.file("junit.xml"));
  const std::string xml((std::istreambuf_iterator<char>(junit)), std::istreambuf_iterator<char>());
  EXPECT_NE(xml.find("<failure"), std::string::npos) << xml;
  const auto same =
      run_gpubench("regress --baseline " + kReportFixtures + " --current " + kReportFixtures);
  EXPECT_EQ(same.exit_code, 0) << same.output;
}

// The language-model path end to end (the full-size models' counts are TransformerXL.*'s).
TEST(Cli, ALanguageModelReportsTokensAndItsSequenceLengths) {
  ScratchDirectory dir("cli-txl");
  const auto result = run_gpubench(
      "--log-level warn train --model test-tiny-transformerxl --device cpu --batch-size 2 "
      "--warmup-steps 4 --steps 2 --repeat 2 --mem-len 16 --output " +
      dir.file("r.json"));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto r = read_json(dir.file("r.json"));
  EXPECT_EQ(r["status"], "ok");
  EXPECT_EQ(r["metrics"]["throughput_unit"], "tokens/sec");
  EXPECT_EQ(r["benchmark"]["tgt_len"], 8);   // the model's
  EXPECT_EQ(r["benchmark"]["mem_len"], 16);  // asked for
  // tokens/sec = sequences/sec x tgt_len
  EXPECT_NEAR(r["metrics"]["throughput"].get<double>(),
              8 * r["metrics"]["sequences_per_second"].get<double>(), 1e-6);
  EXPECT_GT(r["metrics"]["forward_flops_per_sample"].get<int64_t>(), 0);
  // Achieved TFLOP/s = 3 x forward FLOPs per token x tokens/sec.
  EXPECT_NEAR(r["metrics"]["achieved_tflops"].get<double>(),
              3.0 * r["metrics"]["forward_flops_per_sample"].get<double>() *
                  r["metrics"]["throughput"].get<double>() / 1e12,
              1e-9);
  // mem_len 16 / tgt_len 8 + 2 = 4 warm-up steps at least: the model's own rule.
  testing::expect_refused(
      "train --model test-tiny-transformerxl --device cpu --warmup-steps 3 --mem-len 16 --output " +
          dir.path(),
      "--warmup-steps 3 are too few for test-tiny-transformerxl: it needs at least 4");
}

// Runs and suites writing into one folder at once each keep their result: names are taken with
// link(), which fails rather than replaces, and a suite's child writes into its private folder.
TEST(Cli, ConcurrentRunsAndSuitesIntoOneFolderKeepEveryResult) {
  ScratchDirectory dir("cli-concurrent");
  const std::string out = dir.file("results");
  std::ofstream(dir.file("suite.yaml"))
      << "defaults: {device: cpu, model: test-tiny-cnn, batch_size: 1, warmup_steps: 0, steps: 1, "
         "repeat: 1, threads: 1, telemetry_interval_ms: 0}\nbenchmarks:\n  - seed: 1\n  - seed: "
         "2\n";
  std::vector<ChildProcess> writers;
  for (int i = 0; i < 4; ++i) {
    writers.emplace_back(std::vector<std::string>{GPUBENCH_BINARY,
                                                  "--log-level",
                                                  "error",
                                                  "train",
                                                  "--model",
                                                  "test-tiny-cnn",
                                                  "--device",
                                                  "cpu",
                                                  "--batch-size",
                                                  "1",
                                                  "--warmup-steps",
                                                  "0",
                                                  "--steps",
                                                  "1",
                                                  "--repeat",
                                                  "1",
                                                  "--threads",
                                                  "1",
                                                  "--telemetry-interval-ms",
                                                  "0",
                                                  "--output",
                                                  out},
                         EnvironmentOverrides{}, false, true);
  }
  for (int i = 0; i < 2; ++i) {
    writers.emplace_back(std::vector<std::string>{GPUBENCH_BINARY, "--log-level", "error", "run",
                                                  dir.file("suite.yaml"), "--output", out},
                         EnvironmentOverrides{}, false, true);
  }
  for (auto& writer : writers) EXPECT_TRUE(writer.wait().succeeded());
  std::set<std::string> names;
  size_t whole = 0;
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    names.insert(entry.path().filename().string());
    whole += read_json(entry.path().string())["status"] == "ok" ? 1 : 0;
  }
  EXPECT_EQ(names.size(), 8u) << "4 runs and 2 suites of 2";
  EXPECT_EQ(whole, 8u);
}

// The test-only code the shipped binary carries answers only behind its one switch,
// GPUBENCH_TEST_HOOKS=1 (src/testing/test_hooks.h): without it a test model is refused, naming
// the switch (the CPU nightly's documented command once failed on "unknown model"), and a fault
// is not injected.
TEST(Cli, TestModelsAndFaultInjectionNeedTheTestHooks) {
  const std::string binary = GPUBENCH_BINARY;
  const std::string hooks_off = "env -u GPUBENCH_TEST_HOOKS ";
  auto run = testing::run_command(hooks_off + binary +
                                  " train --model test-tiny-cnn --device cpu --steps 1 "
                                  "--warmup-steps 0 --repeat 1 --output /dev/null");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("model 'test-tiny-cnn' is one of gpubench's test models, found only "
                            "where GPUBENCH_TEST_HOOKS=1 is set"),
            std::string::npos)
      << run.output;

  ScratchDirectory scratch("test-hooks-off");
  const std::string out = scratch.path() + "/r.json";
  run = testing::run_command(hooks_off + "GPUBENCH_FAULT_INJECTION=throw " + binary +
                             " train --model googlenet --batch-size 1 --device cpu "
                             "--steps 1 --warmup-steps 0 --repeat 1 --output " +
                             out);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("GPUBENCH_FAULT_INJECTION is ignored"), std::string::npos)
      << run.output;
  EXPECT_EQ(testing::read_json(out)["status"], "ok");
}

// The one-entry setting added last: --optimizer trains the model with another registered
// optimiser, and the result says so in its benchmark block and its optimizer description.
TEST(Cli, OptimizerOptionTrainsWithTheNamedOptimiser) {
  ScratchDirectory scratch("optimizer");
  const std::string out = scratch.path() + "/adamw.json";
  const auto run = run_gpubench("train --model test-tiny-cnn --optimizer adamw " +
                                std::string(kTinyCpuRun) + " --output " + out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json result = read_json(out);
  EXPECT_EQ(result["benchmark"]["optimizer_name"], "adamw");
  EXPECT_EQ(result["benchmark"]["optimizer"].get<std::string>().rfind("AdamW", 0), 0u)
      << result["benchmark"];
  expect_refused("train --model test-tiny-cnn --optimizer lamb " + std::string(kTinyCpuRun),
                 "unknown optimizer 'lamb'; known: ");
}

// --select keeps only the results a selector matches, on any identity setting: in report, on
// both sides of regress, and in trend.
TEST(Cli, SelectNarrowsReportRegressAndTrend) {
  const std::string history = std::string(GPUBENCH_SOURCE_DIR) + "/tests/fixtures/history";
  auto trend = run_gpubench("trend " + history + " --select model=vgg16,mode=eager");
  ASSERT_EQ(trend.exit_code, 0) << trend.output;
  EXPECT_NE(trend.output.find("vgg16 fp16 x1"), std::string::npos) << trend.output;
  EXPECT_EQ(trend.output.find("resnet50"), std::string::npos) << trend.output;
  auto regress = run_gpubench("regress --baseline " + history + "/2026-11-01 --current " + history +
                              "/2026-11-16 --select model=vgg16");
  EXPECT_EQ(regress.exit_code, 0) << regress.output;  // resnet50's slowdown is left out
  EXPECT_EQ(regress.output.find("resnet50"), std::string::npos) << regress.output;
  auto report = run_gpubench("report " + kReportFixtures + " --select gpu=\"NVIDIA L40S\"");
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_EQ(report.output.find("NVIDIA A40"), std::string::npos) << report.output;
  expect_refused("report " + kReportFixtures + " --select lora_rank=8",
                 "--select 'lora_rank=8' matches no result");
}

}  // namespace
}  // namespace gpubench
