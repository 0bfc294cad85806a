// Files that are either whole or absent: written to a temporary file in the same directory,
// flushed, then renamed over the target, so a reader never sees a half-written one.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gpubench {

// Throws UsageError "cannot write '<path>': <reason>" whatever step failed (an output that
// cannot be written is one kind of error, exit code 2).
void write_text_atomically(const std::string& path, const std::string& text);
void write_json_atomically(const std::string& path, const nlohmann::json& document);

}  // namespace gpubench
