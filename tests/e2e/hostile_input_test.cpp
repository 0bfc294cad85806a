// The hostile-input corpus: input that is wrong by accident or on purpose, and faults, run through
// the real binary. Each case expects its exit code (2: bad input or an output error; 1: a
// benchmark ran and failed) and its one line, and afterwards no process it started may be alive
// and no temporary folder left in its TMPDIR.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_helpers.h"

namespace gpubench {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::ScratchDirectory;

// The pids of live processes whose environment holds GPUBENCH_TEST_MARKER=<marker>.
std::vector<int> processes_marked(const std::string& marker) {
  std::vector<int> pids;
  const std::string needle = "GPUBENCH_TEST_MARKER=" + marker;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "environ", std::ios::binary);
    const std::string environment((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    if (environment.find(needle) != std::string::npos) pids.push_back(std::stoi(name));
  }
  return pids;
}

// One hostile case: a scratch folder with its own TMPDIR, and a marker in the environment of
// everything the command starts.
class HostileCase {
 public:
  explicit HostileCase(const std::string& name)
      : dir_("hostile-" + name), marker_(name + "-" + std::to_string(::getpid())) {
    fs::create_directories(tmp());
  }
  ~HostileCase() { fs::permissions(dir_.path(), fs::perms::owner_all, ignored_); }

  std::string path(const std::string& name) const { return dir_.file(name); }
  std::string tmp() const { return dir_.file("tmp"); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
  }

  // `arguments` after the binary, run by bash; `prefix` goes before it (variables, ulimit).
  CommandResult run(const std::string& arguments, const std::string& prefix = "") const {
    const std::string command = "cd " + dir_.path() + " && " + prefix + " env TMPDIR=" + tmp() +
                                " GPUBENCH_TEST_MARKER=" + marker_ + " " +
                                std::string(GPUBENCH_BINARY) + " " + arguments;
    return testing::run_command("bash -c '" + escaped(command) + "'");
  }

  // No process of this case alive (every process it started is the test's descendant, adopted
  // when its parent dies) and nothing left in its TMPDIR.
  void expect_nothing_left() const {
    EXPECT_EQ(testing::processes_left(), std::vector<std::string>{});
    EXPECT_EQ(processes_marked(marker_), std::vector<int>{});
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(tmp(), ignored_)) {
      left.push_back(entry.path().string());
    }
    EXPECT_TRUE(left.empty()) << "left in TMPDIR: " << left.front();
  }

  const std::string& marker() const { return marker_; }

 private:
  static std::string escaped(const std::string& text) {
    std::string out;
    for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out;
  }

  ScratchDirectory dir_;
  std::string marker_;
  mutable std::error_code ignored_;
};

// Exit code `code`, `message` in the output, the usual one-line shape for exit code 2, and none
// of what a crash or a raw library message looks like.
void expect_refused(const CommandResult& result, int code, const std::string& message,
                    const std::string& what) {
  EXPECT_EQ(result.exit_code, code) << what << "\n" << result.output;
  EXPECT_NE(result.output.find(message), std::string::npos) << what << "\n" << result.output;
  for (const char* crash : {"terminate called", "Segmentation", "Aborted", "[json.exception",
                            "filesystem error", "yaml-cpp", "Exception raised from"}) {
    EXPECT_EQ(result.output.find(crash), std::string::npos) << what << "\n" << result.output;
  }
  if (code == 2) {
    const size_t at = result.output.find("gpubench: error: ");
    ASSERT_NE(at, std::string::npos) << what << "\n" << result.output;
    const size_t end = result.output.find('\n', at);
    // The longest allowed list, the selector keys (every identity setting), is about 300.
    EXPECT_LE(end - at, 480u) << what << ": the error line runs on";
  }
}

using Files = std::vector<std::pair<std::string, std::string>>;  // written into the case's folder

struct Case {
  Case(std::string name, Files files, std::string arguments, int exit_code, std::string message,
       std::string prefix = "")
      : name(std::move(name)),
        files(std::move(files)),
        arguments(std::move(arguments)),
        exit_code(exit_code),
        message(std::move(message)),
        prefix(std::move(prefix)) {}

  std::string name;
  Files files;
  std::string arguments;
  int exit_code;
  std::string message;
  std::string prefix;  // before the binary: variables, ulimit
};

void run_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const HostileCase hostile(c.name);
    for (const auto& [name, text] : c.files) hostile.write(name, text);
    expect_refused(hostile.run(c.arguments, c.prefix), c.exit_code, c.message, c.name);
    hostile.expect_nothing_left();
  }
}

std::string nested(const std::string& open, const std::string& close, int depth) {
  std::string text;
  for (int i = 0; i < depth; ++i) text += open;
  for (int i = 0; i < depth; ++i) text += close;
  return text;
}

// A result file the tests corrupt one field at a time.
nlohmann::json valid_result() {
  return {{"schema", "gpubench.result/1"},
          {"status", "ok"},
          {"benchmark",
           {{"model", "resnet50"},
            {"precision", "fp16"},
            {"device", "cuda"},
            {"gpus", 1},
            {"batch_size_per_device", 64}}},
          {"metrics", {{"throughput", 1000.0}, {"trials", {990.0, 1000.0, 1010.0}}}},
          {"system", {{"gpu_name", "NVIDIA A40"}}},
          {"started_at", "2026-12-01T00:00:00Z"}};
}

std::string with(const std::string& pointer, const nlohmann::json& value) {
  nlohmann::json result = valid_result();
  result[nlohmann::json::json_pointer(pointer)] = value;
  return result.dump();
}

// 1. No input can crash or exhaust the process.
TEST(HostileInput, NothingCrashesOrExhaustsTheProcess) {
  const std::string cross =
      "benchmarks:\n  - model: [resnet50, resnet101, resnet152, vgg16, googlenet]\n"
      "    batch_size: [1,2,3,4,5,6,7,8,9,10]\n    seed: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,"
      "17,18,19,20]\n    steps: [1,2,3,4,5,6,7,8,9,10]\n";
  const std::string bomb =
      "defaults:\n  seed: &a [1,2,3,4,5,6,7,8,9]\nbenchmarks:\n  - model: resnet50\n"
      "    steps: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n    warmup_steps: [*b,*b,*b,*b,*b,*b,*b,*b]\n";
  run_cases({
      {"deep-json-suite",
       {{"s.json", nested("[", "]", 100000)}},
       "run s.json",
       2,
       "s.json: nested more than 64 levels deep"},
      {"deep-json-object-suite",
       {{"s.json", nested("{\"a\":", "}", 100000)}},
       "run s.json",
       2,
       "nested more than 64 levels deep"},
      {"deep-json-result",
       {{"r.json", nested("[", "]", 100000)}},
       "report r.json",
       2,
       "r.json: nested more than 64 levels deep"},
      {"deep-yaml-suite",
       {{"s.yaml", "benchmarks:\n  - model: " + nested("[", "]", 100000) + "\n"}},
       "run s.yaml",
       2,
       "levels deep"},
      {"yaml-alias-bomb",
       {{"s.yaml", bomb}},
       "run s.yaml",
       2,
       "a list in a benchmark field may hold values only"},
      {"cross-product",
       {{"s.yaml", cross}},
       "run s.yaml",
       2,
       "the suite expands to more than 1000 benchmarks (lists multiply); split it, or raise the "
       "limit with --max-benchmarks"},
      {"cross-product-under-a-lower-limit",
       {{"s.yaml", "benchmarks:\n  - {model: resnet50, seed: [1, 2, 3]}\n"}},
       "run s.yaml --max-benchmarks 2",
       2,
       "more than 2 benchmarks"},
  });
}

// 1b. ... nor a file, a byte count or a value too large.
TEST(HostileInput, NoFileOrValueTooLargeExhaustsTheProcess) {
  run_cases({
      {"endless-device", {}, "run /dev/zero", 2, "suite file '/dev/zero' is not a regular file"},
      {"endless-pipe", {}, "run <(yes benchmarks:)", 2, "is larger than 16 MiB"},
      {"huge-file",
       {{"s.yaml", std::string(17 << 20, '#')}},
       "run s.yaml",
       2,
       "suite file 's.yaml' is larger than 16 MiB"},
      {"huge-result",
       {{"r.json", std::string(17 << 20, ' ')}},
       "report r.json",
       2,
       "result file 'r.json' is larger than 16 MiB"},
      {"directory-as-suite", {}, "run .", 2, "suite file '.' is a directory"},
      {"sweep-overflow",
       {},
       "allreduce --device cpu --factor 2147483647 --max-bytes 1000G",
       2,
       "--factor: must be an integer from 2 to 1024"},
      {"byte-size-overflow",
       {},
       "allreduce --device cpu --max-bytes 99999999999999999999G",
       2,
       "--max-bytes '99999999999999999999G' is not a byte count"},
      {"long-value-is-cut",
       {},
       "train --model " + std::string(5000, 'x'),
       2,
       "unknown model '" + std::string(80, 'x') + "...'"},
      {"long-output-path-is-cut",
       {},
       "train --model test-tiny-cnn --device cpu --output " + std::string(5000, 'o'),
       2,
       "cannot create output directory '" + std::string(80, 'o') + "...'"},
      {"long-selector-is-cut",
       {{"r.json", valid_result().dump()}},
       "compare " + std::string(3000, 'k') + "=1 " + std::string(3000, 'k') + "=1 --results r.json",
       2,
       "unknown selector key '" + std::string(80, 'k') + "...'"},
  });
}

// Beyond the issue's classes: input that would hang or be silently misread.
TEST(HostileInput, NoHangOnSpecialFilesAndNoSilentlyDroppedKeys) {
  run_cases({
      {"fifo-without-writer",
       {},
       "report r.json",
       2,
       "r.json:1: malformed JSON: syntax error while parsing value - unexpected end of input",
       "mkfifo r.json;"},
      {"link-to-an-endless-device",
       {},
       "report r.json",
       2,
       "result file 'r.json' is not a regular file",
       "ln -s /dev/zero r.json;"},
      {"terminal-device", {}, "run /dev/tty", 2, "suite file '/dev/tty'"},
      {"duplicate-yaml-key",
       {{"s.yaml", "benchmarks:\n  - model: resnet50\n    model: vgg16\n"}},
       "run s.yaml",
       2,
       "s.yaml:3: key 'model' is given twice in one mapping"},
      {"duplicate-key-in-two-spellings",
       {{"s.yaml", "benchmarks:\n  - {batch_size: 2, batch-size: 4}\n"}},
       "run s.yaml",
       2,
       "key 'batch_size' is given twice in one mapping"},
      {"duplicate-json-key",
       {{"r.json", R"({"schema": "gpubench.result/1", "status": "ok", "status": "failed"})"}},
       "report r.json",
       2,
       "r.json: key 'status' is given twice in one object"},
  });
}

// 2. Every number is range-checked where it enters: flags, suite files, the environment.
TEST(HostileInput, EveryNumberIsRangeCheckedWhereItEnters) {
  run_cases({
      {"negative-seed", {}, "train --seed -5", 2, "seed must be zero or more, got -5"},
      {"huge-seed",
       {},
       "train --seed 123456789012345678901",
       2,
       "seed must be zero or more, got '123456789012345678901'"},
      {"huge-batch",
       {},
       "train --batch-size 12345678901234567890",
       2,
       "--batch-size must be an integer from 1 to 1048576, or max, got '12345678901234567890'"},
      {"million-ranks",
       {},
       "train --device cpu --gpus 1000000",
       2,
       "gpus must be an integer from 1 to 4096, got 1000000"},
      {"more-cpu-ranks-than-the-machine",
       {},
       "train --device cpu --gpus 4096",
       2,
       "CPU ranks: this machine has"},
      {"more-threads-than-the-machine",
       {},
       "train --device cpu --threads 4096",
       2,
       "threads 4096: this machine has"},
      {"allreduce-million-ranks",
       {},
       "allreduce --device cpu --gpus 1000000",
       2,
       "--gpus: must be an integer from 1 to 4096, got '1000000'"},
      {"allreduce-cpu-ranks", {}, "allreduce --device cpu --gpus 4096", 2, "CPU ranks"},
      {"allreduce-nan-timeout",
       {},
       "allreduce --device cpu --timeout nan",
       2,
       "--timeout: must be an integer from 1 to 604800, got 'nan'"},
      {"nan-alpha",
       {},
       "regress --baseline a --current b --alpha nan",
       2,
       "--alpha: must be a finite number from 1e-09 to 0.5, got 'nan'"},
      {"inf-threshold",
       {},
       "regress --baseline a --current b --threshold inf",
       2,
       "--threshold: must be a finite number from 0 to 1, got 'inf'"},
      {"negative-threshold",
       {},
       "regress --baseline a --current b --threshold=-0.5",
       2,
       "--threshold: must be a finite number from 0 to 1"},
  });
}

// 2b. ... in trend's options, suite files and the environment.
// One rule for every list option (no empty entry, none twice) and one for every integer option
// (plain decimal, said as every other option says it: not CLI11's "Could not convert"; "010" is
// ten, never octal eight); options that say nothing alone are refused, naming themselves.
TEST(HostileInput, ListsAndIntegersFollowOneRule) {
  const std::string timeline = std::string(GPUBENCH_SOURCE_DIR) +
                               "/results/cpu/scaling/llama-3-8b_full-sgd_bf16_2-of-32-blocks.json";
  const std::string scale = "scale " + timeline + " --fabric H100-SXM --gpus ";
  run_cases({
      {"scale-gpus-exponent", {}, scale + "1e3", 2, "an entry must be an integer from 1 to"},
      {"scale-gpus-empty-inside", {}, scale + "8,,8", 2, "has an empty entry"},
      {"scale-gpus-empty-last", {}, scale + "8,", 2, "has an empty entry"},
      {"scale-gpus-empty-first", {}, scale + ",8", 2, "has an empty entry"},
      {"scale-gpus-twice", {}, scale + "8,8,8", 2, "gives '8' twice"},
      {"scale-gpus-twice-padded", {}, scale + "8,08", 2, "gives 8 twice"},
      {"report-predict-gpus-exponent",
       {},
       "report " + timeline + " --predict-gpus 1e3",
       2,
       "--predict-gpus: must be an integer from 2 to"},
      {"run-max-benchmarks-exponent",
       {},
       "run s.yaml --max-benchmarks 1e3",
       2,
       "--max-benchmarks: must be an integer from 1 to"},
      {"report-across-empty", {}, "report " + timeline + " --across ,", 2, "has an empty entry"},
      {"fit-memory-twice",
       {},
       "fit --model resnet50 --device cpu --memory 48GB,48GB",
       2,
       "gives '48GB' twice"},
      {"infer-batch-twice",
       {},
       "infer --model resnet50 --device cpu --batch-size 1,1",
       2,
       "gives '1' twice"},
      {"predict-fabric-empty",
       {},
       "report " + timeline + " --predict-gpus 8 --predict-fabric ''",
       2,
       "--predict-fabric: must not be empty"},
      {"predict-fabric-alone",
       {},
       "report " + timeline + " --predict-fabric H100-SXM",
       2,
       "--predict-fabric requires --predict-gpus"},
      {"predict-fabric-named",
       {},
       "report " + timeline + " --predict-gpus 8 --predict-fabric H900",
       2,
       "--predict-fabric 'H900'"},
  });
  // Values echoed in a message: control characters shown, not sent; a long one cut.
  const std::string escape = "\"$(printf '\\033[2J')\"";
  const std::string two_lines = "\"$(printf 'adamw\\nx')\"";
  const std::string long_value = "\"$(head -c 100000 /dev/zero | tr '\\0' a)\"";
  run_cases({
      {"optimizer-escape", {}, "train --optimizer " + escape, 2, "unknown optimizer '?[2J'"},
      {"optimizer-two-lines", {}, "train --optimizer " + two_lines, 2, "optimizer 'adamw?x'"},
      {"optimizer-long", {}, "train --optimizer " + long_value, 2, "optimizer 'aaaa"},
      {"fit-probe-escape", {}, "fit --probe " + escape, 2, "--probe '?[2J'"},
      {"fit-format-long", {}, "fit --format " + long_value, 2, "--format 'aaaa"},
      {"fit-memory-empty", {}, "fit --memory ''", 2, "--memory: must not be empty"},
      {"benchmark-file-empty",
       {},
       "train --benchmark-file ''",
       2,
       "--benchmark-file: must not be empty"},
  });
  const auto padded = testing::run_gpubench(scale + "010");
  EXPECT_EQ(padded.exit_code, 0) << padded.output;
  EXPECT_NE(padded.output.find("10 GPUs"), std::string::npos) << padded.output;
}

TEST(HostileInput, NumbersOfTrendSuitesAndTheEnvironmentAreRangeChecked) {
  run_cases({
      {"trend-nan-change-alpha",
       {},
       "trend r.json --change-alpha nan",
       2,
       "--change-alpha: must be a finite number from 1e-09 to 0.5, got 'nan'"},
      {"trend-one-run-a-side",
       {},
       "trend r.json --min-runs 1",
       2,
       "--min-runs: must be an integer from 2 to 1000, got '1'"},
      {"trend-negative-min-change",
       {},
       "trend r.json --min-change=-0.1",
       2,
       "--min-change: must be a finite number from 0 to 1"},
      {"trend-unknown-format",
       {{"r.json", valid_result().dump()}},
       "trend r.json --format pdf",
       2,
       "unknown format 'pdf'; allowed: table, markdown, csv, json, html"},
      {"trend-missing-baseline",
       {{"r.json", valid_result().dump()}},
       "trend r.json --baseline nowhere",
       2,
       "nowhere"},
      {"nan-suite-timeout",
       {},
       "run s.yaml --timeout nan",
       2,
       "--timeout: must be a finite number from 0 to 604800, got 'nan'"},
      {"suite-seed-as-float",
       {{"s.yaml", "benchmarks:\n  - {model: resnet50, seed: 1e30}\n"}},
       "run s.yaml",
       2,
       "s.yaml:2: seed must be zero or more, got 1e+30"},
      {"suite-nan",
       {{"s.yaml", "benchmarks:\n  - {model: resnet50, steps: nan}\n"}},
       "run s.yaml",
       2,
       "s.yaml:2: steps must be an integer from 1 to 10000000, got \"nan\""},
      {"suite-huge-mem-len",
       {{"s.json", R"({"benchmarks": [{"model": "transformerxl-base", "mem_len": 99999999999}]})"}},
       "run s.json",
       2,
       "mem_len must be an integer from 0 to 1048576, got 99999999999"},
      {"suite-20-digit-batch",
       {{"s.json", R"({"benchmarks": [{"batch_size": 123456789012345678901234}]})"}},
       "run s.json",
       2,
       "batch_size must be an integer from 1 to 1048576, or max, got 1.23456789"},
      {"environment-rank-overflows",
       {},
       "train --device cpu",
       2,
       "environment variable RANK='99999999999' is not an integer from 0 to 1048576",
       "RANK=99999999999 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500"},
      {"environment-world-size-huge",
       {},
       "train --device cpu",
       2,
       "WORLD_SIZE='5000000' is not an integer",
       "RANK=0 WORLD_SIZE=5000000 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500"},
  });
}

// A NaN significance level used to switch the gate off: a 50 % slowdown passed.
TEST(HostileInput, TheRegressionGateCannotBeSwitchedOffWithNaN) {
  const HostileCase hostile("nan-gate");
  fs::create_directories(hostile.path("base"));
  fs::create_directories(hostile.path("now"));
  hostile.write("base/r.json", valid_result().dump());
  nlohmann::json slower = valid_result();
  slower["metrics"] = {{"throughput", 500.0}, {"trials", {495.0, 500.0, 505.0}}};
  hostile.write("now/r.json", slower.dump());
  expect_refused(hostile.run("regress --baseline base --current now"), 1, "REGRESSION", "gate");
  expect_refused(hostile.run("regress --baseline base --current now --alpha nan"), 2,
                 "--alpha: must be a finite number", "nan");
  hostile.expect_nothing_left();
}

// 3. Result files are validated like user input, and no output shows nan or inf.
TEST(HostileInput, ResultFilesAreValidatedLikeUserInput) {
  run_cases({
      {"gpus-negative",
       {{"r.json", with("/benchmark/gpus", -4)}},
       "report r.json",
       2,
       "'r.json': gpus must be an integer from 1 to 4096, got -4"},
      {"gpus-zero",
       {{"r.json", with("/benchmark/gpus", 0)}},
       "report r.json",
       2,
       "gpus must be an integer from 1 to 4096, got 0"},
      {"throughput-zero",
       {{"r.json", with("/metrics/throughput", 0)}},
       "report r.json",
       2,
       "'r.json': metrics.throughput must be above 0 in a result with status 'ok', got 0"},
      {"throughput-negative",
       {{"r.json", with("/metrics/throughput", -5)}},
       "report r.json",
       2,
       "metrics.throughput must be a finite number from 0 to 1000000000000000, got -5"},
      {"throughput-overflowing",
       {{"r.json", with("/metrics/throughput", 1e300)}},
       "report r.json",
       2,
       "metrics.throughput must be a finite number from 0 to 1000000000000000, got 1e+300"},
      {"throughput-not-the-median-trial",
       {{"r.json", with("/metrics/trials", {1.0, 1.0, 1.0})}},
       "report r.json",
       2,
       "is not the median of metrics.trials (1): the figures of this result do not hold together"},
      {"ok-without-trials",
       {{"r.json", with("/metrics/trials", nlohmann::json::array())}},
       "report r.json",
       2,
       "metrics.trials is empty in a result with status 'ok'"},
      {"started-at-impossible",
       {{"r.json", with("/started_at", "2026-13-45T99:99:99Z")}},
       "report r.json",
       2,
       "started_at '2026-13-45T99:99:99Z' is not an RFC 3339 date-time"},
      {"throughput-text",
       {{"r.json", with("/metrics/throughput", "fast")}},
       "report r.json",
       2,
       "metrics.throughput must be a finite number from 0 to 1000000000000000, got \"fast\""},
      {"throughput-overflows",
       {{"r.json", R"({"schema": "gpubench.result/1", "metrics": {"throughput": 1e400}})"}},
       "report r.json",
       2,
       "r.json: malformed JSON: number overflow parsing '1e400'"},
      {"params-overflow",
       {{"r.json", with("/benchmark/params", 1e30)}},
       "report r.json",
       2,
       "benchmark.params must be an integer from 0, got 1e+30"},
  });
}

// 3b. ... their texts, kinds and shapes too.
TEST(HostileInput, ResultFilesTextsAndShapesAreValidated) {
  run_cases({
      {"trial-text",
       {{"r.json", with("/metrics/trials", {1.0, "a"})}},
       "report r.json",
       2,
       "metrics.trials must be a finite number from 0 to 1000000000000000, got \"a\""},
      {"status-number",
       {{"r.json", with("/status", 5)}},
       "report r.json",
       2,
       "status must be a string, got 5"},
      {"schema-number",
       {{"r.json", with("/schema", 5)}},
       "report r.json",
       2,
       "schema must be a string, got 5"},
      {"system-wrong-type",
       {{"r.json", with("/system/cpu_logical_cores", "many")}},
       "report r.json",
       2,
       "system.cpu_logical_cores must be an integer from 0 to 1048576, got \"many\""},
      {"system-not-an-object",
       {{"r.json", with("/system", 7)}},
       "report r.json",
       2,
       "system must be a JSON object, got 7"},
      {"links-wrong-type",
       {{"r.json", with("/system/gpu_interconnect/links", "x")}},
       "report r.json",
       2,
       "system.gpu_interconnect.links must be a list, got \"x\""},
      {"compare-refuses-too",
       {{"a.json", valid_result().dump()}, {"b.json", with("/benchmark/gpus", -4)}},
       "compare a.json b.json",
       2,
       "'b.json': gpus must be"},
      {"regress-refuses-too",
       {{"a.json", valid_result().dump()}, {"b.json", with("/metrics/throughput", -1)}},
       "regress --baseline a.json --current b.json",
       2,
       "'b.json': metrics.throughput"},
  });
}

TEST(HostileInput, NoReportCompareOrRegressOutputShowsNanOrInf) {
  const HostileCase hostile("finite-output");
  // Zero spread used to give "±-nan%" cells; the extremes a result may carry, in both
  // directions (beyond 1e15 samples/sec a result is refused when read).
  nlohmann::json flat = valid_result();
  flat["metrics"]["throughput"] = 1e-300;
  flat["metrics"]["trials"] = {1e-300, 1e-300};
  hostile.write("zero-trials.json", flat.dump());
  nlohmann::json tiny = valid_result();
  tiny["metrics"]["throughput"] = 1e-300;
  tiny["metrics"]["trials"] = {1e-300};
  tiny["started_at"] = "2026-11-02T00:00:00Z";
  hostile.write("tiny.json", tiny.dump());
  nlohmann::json huge = valid_result();
  huge["metrics"]["throughput"] = 1e15;
  huge["metrics"]["trials"] = {1e15};
  huge["system"]["gpu_name"] = "NVIDIA L40S";
  hostile.write("huge.json", huge.dump());
  for (const std::string& command :
       {std::string("report zero-trials.json tiny.json huge.json"),
        std::string("report zero-trials.json huge.json --format csv"),
        std::string("report zero-trials.json huge.json --format json"),
        std::string("report tiny.json huge.json --normalize-to 'gpu=\"NVIDIA A40\"'"),
        std::string("compare tiny.json huge.json"),
        std::string("regress --baseline tiny.json --current huge.json"),
        std::string("trend zero-trials.json tiny.json huge.json"),
        std::string("trend zero-trials.json tiny.json huge.json --format json"),
        std::string("trend zero-trials.json tiny.json huge.json --format csv"),
        std::string("trend zero-trials.json huge.json --baseline tiny.json --format html")}) {
    const auto result = hostile.run(command);
    EXPECT_NE(result.exit_code, 2) << command << "\n" << result.output;
    for (const char* bad : {"nan", "inf", "NaN", "Inf"}) {
      EXPECT_EQ(result.output.find(bad), std::string::npos) << command << "\n" << result.output;
    }
  }
  hostile.expect_nothing_left();
}

// 4. Library messages never reach the user raw.
TEST(HostileInput, LibraryErrorsBecomeOneLineNamingTheFile) {
  run_cases({
      {"yaml-mapping-as-key",
       {{"s.yaml", "benchmarks:\n  - {model: resnet50}\n? {a: 1}\n: x\n"}},
       "run s.yaml",
       2,
       "s.yaml:3: a key must be a plain name, not a list or mapping"},
      {"yaml-list-as-field-key",
       {{"s.yaml", "benchmarks:\n  - {[model]: resnet50}\n"}},
       "run s.yaml",
       2,
       "a key must be a plain name"},
      {"json-benchmarks-not-a-list",
       {{"s.json", R"({"benchmarks": 5})"}},
       "run s.json",
       2,
       "'benchmarks' must be a list"},
      {"json-syntax",
       {{"s.json", "{\"benchmarks\": [\n{\"model\": resnet50}]}"}},
       "run s.json",
       2,
       "s.json:2: malformed JSON: syntax error"},
      {"benchmark-file-wrong-type",
       {{"b.json", R"({"schema": 1})"}},
       "train --benchmark-file b.json",
       2,
       "'b.json' is not a gpubench.benchmark/1 document"},
  });
  {
    const HostileCase tmpdir("unusable-tmpdir");
    tmpdir.write("s.yaml", "benchmarks:\n  - {model: test-tiny-cnn, device: cpu}\n");
    const auto result = testing::run_command("cd " + tmpdir.path("") + " && TMPDIR=/nonexistent " +
                                             std::string(GPUBENCH_BINARY) + " run s.yaml");
    expect_refused(result, 2,
                   "TMPDIR '/nonexistent' is not a usable temporary directory (No such file or "
                   "directory); set TMPDIR to a writable directory",
                   "tmpdir");
  }
  // An unreadable folder under a results directory, where the test can drop root to see it.
  if (::geteuid() == 0 && testing::run_command("command -v setpriv").exit_code == 0) {
    const HostileCase locked("unreadable-folder");
    fs::create_directories(locked.path("results/locked"));
    locked.write("results/ok.json", valid_result().dump());
    fs::permissions(locked.path("results/locked"), fs::perms::none);
    expect_refused(
        locked.run("report results", "setpriv --reuid=65534 --regid=65534 --clear-groups"), 2,
        "cannot read 'results/locked': Permission denied", "unreadable folder");
    fs::permissions(locked.path("results/locked"), fs::perms::owner_all);
    locked.expect_nothing_left();
  }
  // A results folder with a link loop and a dangling link: named, exit 2.
  const HostileCase loop("link-loop");
  fs::create_directories(loop.path("results"));
  loop.write("results/ok.json", valid_result().dump());
  fs::create_symlink("b.json", loop.path("results/a.json"));
  fs::create_symlink("a.json", loop.path("results/b.json"));
  expect_refused(loop.run("report results"), 2,
                 "results/a.json': Too many levels of symbolic links", "loop");
  loop.expect_nothing_left();
}

// A log line is one line whatever it quotes: a result path holding an escape sequence and a
// newline (any bytes Linux allows) is shown with '?' in the "result:" line, never sent raw to the
// terminal (hostile input, round 4, cause 4: MASTER_ADDR's "x\e[2J" reached an error line).
TEST(HostileInput, NoLogLineSendsAControlCharacterToTheTerminal) {
  const HostileCase hostile("control-in-log");
  const CommandResult result = hostile.run(
      "train --model test-tiny-cnn --device cpu --batch-size 1 --warmup-steps 1 "
      "--steps 2 --repeat 1 --output $'r\\e[2J\\nx.json'");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("result: r?[2J?x.json"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find('\x1b'), std::string::npos) << result.output;
  EXPECT_TRUE(fs::exists(hostile.path("r\x1b[2J\nx.json")));
  hostile.expect_nothing_left();
}

// The variables a launcher sets are parsed strictly: a malformed node list is an error up front,
// not a host name to wait on for the whole timeout.
TEST(HostileInput, LauncherEnvironmentIsParsedStrictly) {
  const std::string slurm = "SLURM_PROCID=0 SLURM_STEP_NUM_TASKS=2 SLURM_STEP_NODELIST=";
  run_cases({
      {"unclosed-bracket",
       {},
       "train --device cpu",
       2,
       "slurm environment: SLURM_STEP_NODELIST='node[' is not a Slurm node list",
       slurm + "'node['"},
      {"empty-entry", {}, "train --device cpu", 2, "an empty entry", slurm + "'a,,b'"},
      {"backwards-range",
       {},
       "train --device cpu",
       2,
       "a range that runs backwards",
       slurm + "'n[9-1]'"},
      {"port-out-of-range",
       {},
       "train --device cpu",
       2,
       "MASTER_PORT 70000 is not a TCP port",
       "RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=70000"},
      // The fault named is the rank, not the absent MASTER_ADDR (round 4, cause 11).
      {"open-mpi-rank-past-the-world",
       {},
       "train --device cpu",
       2,
       "mpi environment: rank 5 of 2 (local 0 of 2) is out of range",
       "OMPI_COMM_WORLD_RANK=5 OMPI_COMM_WORLD_SIZE=2"},
      {"master-address-with-an-escape",
       {},
       "train --device cpu",
       2,
       "MASTER_ADDR",
       "RANK=1 WORLD_SIZE=2 MASTER_ADDR=$'x\\e[2J' MASTER_PORT=29500"},
  });
}

// 6. Write failures have one meaning: exit code 2, never 0 or 1.
TEST(HostileInput, WriteFailuresAreOutputErrorsWithExitCodeTwo) {
  run_cases({
      {"models-to-full-disk",
       {},
       "models test-tiny-cnn > /dev/full",
       2,
       "cannot write to standard output: No space left on device"},
      {"report-to-full-disk",
       {{"r.json", valid_result().dump()}},
       "report r.json > /dev/full",
       2,
       "cannot write to standard output"},
      {"regress-to-full-disk",
       {{"r.json", valid_result().dump()}},
       "regress --baseline r.json --current r.json > /dev/full",
       2,
       "cannot write to standard output"},
      {"env-to-full-disk", {}, "env > /dev/full", 2, "cannot write to standard output"},
      {"allreduce-ranks-to-full-disk",
       {},
       "allreduce --device cpu --gpus 2 --max-bytes 1K --iters 2 --warmup-iters 1 > /dev/full",
       2,
       "cannot write to standard output"},
      {"closed-output", {}, "models test-tiny-cnn >&-", 2, "standard output is closed"},
      {"report-file-too-large",
       {{"r.json", valid_result().dump()}},
       "report r.json -o out.md",
       2,
       "cannot write 'out.md': File too large",
       "trap \"\" XFSZ; ulimit -f 0;"},
      {"junit-unwritable",
       {{"r.json", valid_result().dump()}},
       "regress --baseline r.json --current r.json --junit /proc/junit.xml",
       2,
       "cannot write '/proc/junit.xml'"},
  });
  // A result file that cannot be written after the run: exit 2, and the figures still printed.
  const HostileCase after("result-unwritable");
  const auto result = after.run(
      "train --model test-tiny-cnn --device cpu --batch-size 1 --warmup-steps 1 --steps 2 "
      "--repeat 1 --output out",
      "trap \"\" XFSZ; ulimit -f 0;");
  expect_refused(result, 2, "File too large", "after the run");
  EXPECT_NE(result.output.find("images/sec"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find(" ok"), std::string::npos) << result.output;
  after.expect_nothing_left();
}

// 5. No orphans, no leftovers: children die with their parent, even one killed by SIGKILL, and
// the run's temporary folder goes on every exit that can run code.
// `processes`: how many the command has once it runs (the parent, what it starts, the ranks).
void kill_while_running(const std::string& name, const std::string& arguments, int processes,
                        int signal_number, bool folder_removed) {
  SCOPED_TRACE(name);
  const HostileCase hostile(name);
  hostile.write("s.yaml",
                "benchmarks:\n  - {model: test-tiny-cnn, device: cpu, gpus: 2, batch_size: 1}\n");
  const std::string signal = std::to_string(signal_number);
  // Waits until every process of the run is up (the hung ranks too), then signals the parent.
  const auto result =
      hostile.run(arguments +
                      " & parent=$!; for i in $(seq 600); do "
                      "[ $(grep -la GPUBENCH_TEST_MARKER=" +
                      hostile.marker() + " /proc/[0-9]*/environ 2>/dev/null | wc -l) -ge " +
                      std::to_string(processes) + " ] && break; sleep 0.1; done; kill -" + signal +
                      " $parent; wait $parent; echo exit=$?",
                  "export GPUBENCH_FAULT_INJECTION=hang;");
  EXPECT_NE(result.output.find("exit=" + std::to_string(128 + signal_number)), std::string::npos)
      << result.output;
  EXPECT_EQ(testing::processes_left(), std::vector<std::string>{}) << "outlived their parent";
  if (folder_removed) hostile.expect_nothing_left();
}

TEST(HostileInput, RanksDieWithAParentKilledBySigkill) {
  kill_while_running("sigkill-train",
                     "train --model test-tiny-cnn --device cpu --gpus 2 --batch-size 1 -o out", 3,
                     SIGKILL, false);
}

TEST(HostileInput, ASuitesBenchmarkAndItsRanksDieWithAParentKilledBySigkill) {
  kill_while_running("sigkill-suite", "run s.yaml -o out", 3, SIGKILL, false);
}

TEST(HostileInput, SigtermAndSigintRemoveTheRunsTemporaryFolders) {
  kill_while_running("sigterm-train",
                     "train --model test-tiny-cnn --device cpu --gpus 2 --batch-size 1 -o out", 3,
                     SIGTERM, true);
  kill_while_running("sigterm-suite", "run s.yaml -o out", 3, SIGTERM, true);
  kill_while_running("sigint-suite", "run s.yaml -o out", 3, SIGINT, true);
}

}  // namespace
}  // namespace gpubench
