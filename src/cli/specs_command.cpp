// gpubench specs: the datasheet database side by side (no LibTorch, no GPU needed).
#include "commands.h"
#include "datasheets/datasheet_database.h"
#include "reporting/fp8_speedup.h"
#include "reporting/report.h"
#include "reporting/specs_table.h"
#include "terminal_width.h"

namespace gpubench::cli {

void add_specs_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::vector<std::string> names;
    std::string format;  // reading_output
    std::string output;
    std::vector<std::string> results;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "specs", "Datasheet figures side by side, with like-for-like ratios and sources");
  cmd->add_option("names", o->names,
                  "Accelerators (none: list them all); NAME:PRECISION pins one peak rate, e.g. "
                  "L40S:bf16 trainium-trn1:bf16 or H100-SXM:fp8-sparse");
  cmd->add_option("--format,-f", o->format, kReadingFormatHelp);
  cmd->add_option("--output,-o", o->output, "Write here instead of standard output");
  cmd->add_option("--results", o->results,
                  "Result files or directories: adds each card's measured FP8/BF16 speed-up of "
                  "the benchmarks run in both");
  cmd->callback([o, &exit_code] {
    const ReadingOutput out = reading_output(o->format, o->output);
    o->format = out.format;
    check_report_format(o->format);
    Report report = build_specs_report(datasheets(), o->names);
    if (!o->results.empty()) {
      report.tables.insert(report.tables.end() - 1,
                           fp8_speedup_table(load_results(o->results), datasheets()));
    }
    write_output(o->output, render_report(report, o->format, out.table_width));
    exit_code = kExitOk;
  });
}

}  // namespace gpubench::cli
