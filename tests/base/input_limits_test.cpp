// The guards where outside input enters (common/input_limits.h, common/json_fields.h), and the
// suite parser's limits that rest on them.
#include "common/input_limits.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include <sstream>

#include <gtest/gtest.h>

#include "test_helpers.h"

#include "common/byte_size.h"
#include "common/errors.h"
#include "common/json_fields.h"
#include "common/text_table.h"
#include "settings/suite_file.h"

namespace gpubench {
namespace {

using testing::usage_error_of;

TEST(InputLimits, EchoedInputIsCutWithAnEllipsisAndKeptOnOneLine) {
  EXPECT_EQ(echoed("resnet50"), "resnet50");
  EXPECT_EQ(echoed(std::string(200, 'x')), std::string(kMaxEchoedChars, 'x') + "...");
  EXPECT_EQ(echoed("a\nb\tc"), "a?b?c");
  EXPECT_EQ(echoed(nlohmann::json::parse("[1, [2], {}]")), "a list of 3 value(s)");
  EXPECT_EQ(echoed(nlohmann::json::parse(R"({"a": 1})")), "a mapping of 1 key(s)");
  EXPECT_EQ(echoed(nlohmann::json("fast")), "\"fast\"");
}

TEST(InputLimits, JsonNestingIsBoundedAndSyntaxErrorsNameTheLine) {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "[";
  EXPECT_EQ(usage_error_of([&] { parse_json_input(deep, "r.json"); }),
            "r.json: nested more than 64 levels deep");
  std::string fine;
  for (int i = 0; i < kMaxNestingDepth; ++i) fine += "[";
  for (int i = 0; i < kMaxNestingDepth; ++i) fine += "]";
  nlohmann::json innermost = parse_json_input(fine, "r.json");
  for (int depth = 1; depth < kMaxNestingDepth; ++depth) innermost = innermost.at(0);
  EXPECT_EQ(innermost, nlohmann::json::array()) << "all 64 levels read";
  EXPECT_EQ(usage_error_of([&] { parse_json_input("{\n\n  \"a\": nope}", "r.json"); }),
            "r.json:3: malformed JSON: syntax error while parsing value - invalid literal");
  EXPECT_EQ(usage_error_of([&] { parse_json_input("[1e400]", "r.json"); }),
            "r.json: malformed JSON: number overflow parsing '1e400'");
}

TEST(InputLimits, InputFilesAreRegularAndBounded) {
  const std::string folder = ::testing::TempDir() + "input-limits-" + std::to_string(::getpid());
  std::filesystem::create_directories(folder);
  const std::string big = folder + "/big.yaml";
  std::ofstream(big) << std::string(kMaxInputFileBytes + 1, '#');
  EXPECT_NE(
      usage_error_of([&] { read_input_file(big, "suite file"); }).find("is larger than 16 MiB"),
      std::string::npos);
  EXPECT_EQ(usage_error_of([&] { read_input_file(folder, "suite file"); }),
            "suite file '" + folder + "' is a directory, not a file");
  EXPECT_EQ(usage_error_of([&] { read_input_file("/dev/zero", "suite file"); }),
            "suite file '/dev/zero' is not a regular file");
  EXPECT_EQ(usage_error_of([&] { read_input_file(folder + "/none", "result file"); }),
            "cannot read result file '" + folder + "/none': No such file or directory");
  std::ofstream(folder + "/ok.json") << "{}";
  EXPECT_EQ(read_input_file(folder + "/ok.json", "result file"), "{}");
  std::filesystem::remove_all(folder);
}

TEST(InputLimits, SizeArithmeticIsChecked) {
  EXPECT_EQ(checked_multiply(1 << 20, 1 << 20, "size"), int64_t{1} << 40);
  EXPECT_EQ(usage_error_of([] { checked_multiply(int64_t{1} << 40, int64_t{1} << 30, "size"); }),
            "size overflows (1099511627776 x 1073741824)");
  EXPECT_THROW(checked_multiply(-1, 2, "size"), UsageError);
  EXPECT_EQ(parse_byte_size("1024G", "--max-bytes"), int64_t{1} << 40);
  EXPECT_THROW(parse_byte_size("1025G", "--max-bytes"), UsageError);
  EXPECT_THROW(parse_byte_size("99999999999999999999", "--max-bytes"), UsageError);
}

TEST(InputLimits, NonFiniteNumbersAreNeverPrinted) {
  EXPECT_EQ(format_fixed(std::numeric_limits<double>::quiet_NaN(), 1), "n/a");
  EXPECT_EQ(format_fixed(std::numeric_limits<double>::infinity(), 1), "n/a");
  EXPECT_EQ(format_fixed(-std::numeric_limits<double>::infinity(), 1), "n/a");
  EXPECT_EQ(format_fixed(2.5, 1), "2.5");
}

// Narrowed to a width, a table wraps its cells at spaces before it cuts a word, and no line passes
// the width; without one it keeps its natural width.
TEST(TextTable, ATableNarrowedToAWidthWrapsItsCells) {
  TextTable table({"model", "throughput", "trials"});
  table.add_row({"resnet50", "8.74 images/sec", "8.7 8.8 8.7"});
  EXPECT_EQ(table.render(),
            "model     throughput       trials\n"
            "--------  ---------------  -----------\n"
            "resnet50  8.74 images/sec  8.7 8.8 8.7\n");
  EXPECT_EQ(table.render(30),
            "model     throughput  trials\n"
            "--------  ----------  --------\n"
            "resnet50  8.74        8.7 8.8\n"
            "          images/sec  8.7\n");
  for (const size_t width : {12, 20, 25}) {
    std::istringstream lines(table.render(width));
    for (std::string line; std::getline(lines, line);) {
      EXPECT_LE(line.size(), std::max<size_t>(width, 3 * 6 + 4)) << width << ": " << line;
    }
  }
  EXPECT_EQ(table.render_markdown(),
            "| model | throughput | trials |\n| --- | --- | --- |\n"
            "| resnet50 | 8.74 images/sec | 8.7 8.8 8.7 |\n");
  EXPECT_EQ(table.render_csv(), "model,throughput,trials\nresnet50,8.74 images/sec,8.7 8.8 8.7\n");
}

TEST(TextTable, CountsReadInTheRightNumber) {
  EXPECT_EQ(counted(1, "thread"), "1 thread");
  EXPECT_EQ(counted(2, "thread"), "2 threads");
  EXPECT_EQ(counted(0, "step"), "0 steps");
  EXPECT_EQ(counted(1, "forward pass", "forward passes"), "1 forward pass");
  EXPECT_EQ(counted(3, "forward pass", "forward passes"), "3 forward passes");
}

TEST(JsonFields, EveryFieldIsCheckedForTypeFinitenessAndBounds) {
  const auto document = nlohmann::json::parse(R"({
    "n": 2.5, "neg": -1, "big": 1e300, "i": 7, "huge": 18446744073709551615, "real": 1.5,
    "s": "text", "b": true, "list": [1, 2], "bad_list": [1, "x"], "obj": {"k": 1}})");
  const JsonFields fields(document, "metrics");
  EXPECT_EQ(fields.number("n"), 2.5);
  EXPECT_EQ(fields.number("absent", 3.0), 3.0);
  EXPECT_EQ(usage_error_of([&] { fields.number("neg"); }),
            "metrics.neg must be a finite number from 0, got -1");
  EXPECT_EQ(usage_error_of([&] { fields.number("big", 0, 0, 1e6); }),
            "metrics.big must be a finite number from 0 to 1000000, got 1e+300");
  EXPECT_EQ(usage_error_of([&] { fields.number("s"); }),
            "metrics.s must be a finite number from 0, got \"text\"");
  EXPECT_EQ(fields.integer("i"), 7);
  EXPECT_EQ(usage_error_of([&] { fields.integer("huge"); }),
            "metrics.huge must be an integer from 0, got 18446744073709551615");
  EXPECT_EQ(usage_error_of([&] { fields.integer("real"); }),
            "metrics.real must be an integer from 0, got 1.5");
  EXPECT_EQ(usage_error_of([&] { fields.integer("i", 0, 0, 5); }),
            "metrics.i must be an integer from 0 to 5, got 7");
  EXPECT_EQ(usage_error_of([&] { fields.text("n"); }), "metrics.n must be a string, got 2.5");
  EXPECT_EQ(usage_error_of([&] { fields.flag("s"); }),
            "metrics.s must be true or false, got \"text\"");
  EXPECT_EQ(fields.numbers("list"), (std::vector<double>{1, 2}));
  EXPECT_EQ(usage_error_of([&] { fields.numbers("bad_list"); }),
            "metrics.bad_list must be a finite number from 0, got \"x\"");
  EXPECT_EQ(usage_error_of([&] { fields.numbers("s"); }), "metrics.s must be a list, got \"text\"");
  EXPECT_EQ(fields.object("obj").integer("k"), 1);
  EXPECT_EQ(usage_error_of([&] { fields.object("n"); }),
            "metrics.n must be a JSON object, got 2.5");
}

std::string suite_error(const std::string& text, bool is_json, int64_t limit = 1000) {
  return usage_error_of([&] { parse_suite(text, "s.yaml", is_json, limit); });
}

TEST(SuiteLimits, TheExpandedCountIsCheckedBeforeExpanding) {
  EXPECT_EQ(
      parse_suite("benchmarks:\n  - {seed: [1, 2, 3], steps: [1, 2]}\n", "s.yaml", false, 6).size(),
      6u);
  EXPECT_EQ(suite_error("benchmarks:\n  - {seed: [1, 2, 3], steps: [1, 2]}\n", false, 5),
            "s.yaml:2: the suite expands to more than 5 benchmarks (lists multiply); split it, or "
            "raise the limit with --max-benchmarks");
  // Sixty lists of ten: 10^60 benchmarks, counted without overflow and refused at once.
  std::string many = "benchmarks:\n";
  for (int i = 0; i < 60; ++i) many += "  - {seed: [1,2,3,4,5,6,7,8,9,10], steps: [1,2,3]}\n";
  EXPECT_NE(suite_error(many, false).find("more than 1000 benchmarks"), std::string::npos);
}

TEST(SuiteLimits, NestedListsAliasesAndStructuredKeysAreRefused) {
  EXPECT_EQ(suite_error("benchmarks:\n  - seed: [[1, 2], 3]\n", false),
            "s.yaml:2: a list in a benchmark field may hold values only");
  EXPECT_EQ(suite_error("a: &a [1, 2]\nbenchmarks:\n  - seed: [*a, *a]\n", false),
            "s.yaml:1: unknown top-level key 'a'; allowed: defaults, benchmarks, rehearsal, name, "
            "description");
  EXPECT_EQ(suite_error("defaults: {seed: &a [1, 2]}\nbenchmarks:\n  - steps: [*a, *a]\n", false),
            "s.yaml:1: a list in a benchmark field may hold values only");  // the anchor's line
  EXPECT_EQ(suite_error("benchmarks:\n  - {[model]: resnet50}\n", false),
            "s.yaml:2: a key must be a plain name, not a list or mapping");
  EXPECT_EQ(suite_error(R"({"benchmarks": [{"seed": [[1], 2]}]})", true),
            "s.yaml: field 'seed': a list may hold values only, got a list of 1 value(s)");
  std::string deep = "benchmarks:\n  - seed: ";
  for (int i = 0; i < 5000; ++i) deep += "[";
  EXPECT_NE(suite_error(deep, false).find("levels deep"), std::string::npos)
      << suite_error(deep, false);
}

}  // namespace
}  // namespace gpubench

namespace gpubench {
namespace {

std::string byte_size_error(const std::string& text, int64_t least = 1) {
  try {
    parse_byte_sizes(text, "--memory", least);
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

// One rule for every list and size: an empty entry anywhere is refused, 0 only where it means
// "none", terabytes are a byte count (above the limit, not malformed).
TEST(ByteSizes, ListsAndBoundsAreOneRule) {
  EXPECT_EQ(parse_byte_sizes("48GB,80GiB", "--memory"),
            (std::vector<int64_t>{48000000000, int64_t{80} << 30}));
  for (const char* empty : {"48GiB,", ",48GB", "48GB,,80GB", ""}) {
    EXPECT_NE(byte_size_error(empty).find("--memory"), std::string::npos) << empty;
  }
  EXPECT_NE(byte_size_error("1", int64_t{256} << 20).find("less than 268435456 bytes"),
            std::string::npos);
  EXPECT_EQ(parse_byte_size("0", "--reserve", 0), 0);
  EXPECT_THROW(parse_byte_size("0", "--memory-limit"), UsageError);
  EXPECT_EQ(parse_byte_size("1TiB", "x"), int64_t{1} << 40);
  try {
    parse_byte_size("2TiB", "--reserve", 0);
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("above 1 TiB"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace gpubench
