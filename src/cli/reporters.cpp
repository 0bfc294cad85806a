#include "reporters.h"
#include "terminal_width.h"

#include <cstdio>
#include <optional>

#include "commands.h"
#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_text.h"
#include "common/log.h"
#include "reporting/report.h"
#include "reporting/results_table.h"

namespace gpubench::cli {

namespace {
std::string results_format = "table";
}  // namespace

void set_results_format(const std::string& format) {
  results_format = format;
}

std::string render_results(const std::vector<Result>& results) {
  if (results_format == "table") return render_results_table(results, table_width());
  std::vector<LoadedResult> loaded;
  for (const Result& result : results) loaded.push_back({result, ""});
  ReportOptions options;
  options.history = false;
  return render_report(build_report(loaded, options), results_format);
}

std::string save_result(const Result& result, const std::string& path, bool new_name) {
  const std::string text = json_text(result_to_json(result)) + "\n";
  if (new_name) return write_new_file(path, text);
  write_text_atomically(path, text);
  return path;
}

void print_result(const Result& result, bool with_table) {
  if (results_format != "table") {  // report's rendering, of a sweep's results after them
    if (with_table) std::fputs(render_results({result}).c_str(), stdout);
    return;
  }
  std::fputs(render_batch_search(result.batch_search).c_str(), stdout);
  if (with_table) std::fputs(render_results({result}).c_str(), stdout);
  if (result.status != RunStatus::kOk) return;
  std::fputs(render_noise_line(result).c_str(), stdout);
  std::fputs(render_inference_lines(result).c_str(), stdout);
  std::fputs(render_fp8_line(result).c_str(), stdout);
  std::fputs(render_efficiency_lines(result).c_str(), stdout);
}

int exit_code_of(const Result& result) {
  return result.status == RunStatus::kOk ? kExitOk : kExitBenchmarkFailed;
}

int report_result(const Result& result, const std::string& path, bool new_name, bool with_table) {
  std::optional<UsageError> unwritten;
  std::string written;
  try {
    written = save_result(result, path, new_name);
  } catch (const UsageError& error) {
    unwritten = error;
  }
  print_result(result, with_table);
  if (unwritten) throw *unwritten;
  std::fprintf(results_format == "table" ? stdout : stderr, "result: %s\n", shown(written).c_str());
  if (result.status != RunStatus::kOk) {
    log::error("benchmark {}: {}", to_string(result.status), result.error);
  }
  return exit_code_of(result);
}

}  // namespace gpubench::cli
