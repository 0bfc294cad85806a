// Standard output is where results are printed, so a failure to write it is an output error
// like an unwritable result file (exit code 2), never a silent success: `gpubench models >
// /dev/full` must not exit 0. A closed standard output is refused up front, before any file
// could be opened as descriptor 1 and receive what was meant for the terminal.
#pragma once

#include <string>

namespace gpubench {

// Puts /dev/null on a closed standard input or standard error (nothing to report to), and
// throws UsageError when standard output is closed.
void guard_standard_streams();

// Writes `text` to standard output and flushes it; throws UsageError "cannot write to standard
// output: <reason>" when that fails.
void write_standard_output(const std::string& text);

// Flushes standard output; the reason it cannot be written, or empty when all went out.
std::string standard_output_failure();

}  // namespace gpubench
