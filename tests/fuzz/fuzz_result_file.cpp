// Result files, as report, compare and regress read them, and what they make of an accepted one:
// its identity, a report in every text format and a regression check against itself, none of
// which may show "nan" or "inf".
#include <algorithm>
#include <cctype>

#include "common/input_limits.h"
#include "fuzz_contract.h"
#include "reporting/regression.h"
#include "reporting/report.h"
#include "results/result.h"
#include "results/result_set.h"

namespace {

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool mentions_non_finite(const std::string& text) {
  const std::string lower = lowercase(text);
  return lower.find("nan") != std::string::npos || lower.find("inf") != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpubench;
  const std::string text(reinterpret_cast<const char*>(data), size);
  // An input whose own strings say "nan" or "inf" (a model "inference") may show them; for any
  // other, such a word in the output can only be a number gone wrong.
  const bool check_output = !mentions_non_finite(text);
  fuzz::expect_contract([&] {
    const Result result = result_from_json(parse_json_input(text, "fuzz.json"));
    const std::vector<LoadedResult> loaded = {{result, "fuzz.json"}};
    (void)identity_key(result);
    const Report report = build_report(loaded, {});
    std::string output;
    for (const char* format : {"markdown", "csv", "json", "html"}) {
      output += render_report(report, format);
    }
    output += render_regression_table(check_regressions(loaded, loaded, {}));
    if (check_output && mentions_non_finite(output)) {
      fuzz::broken("a non-finite number in the output", output);
    }
  });
  return 0;
}
