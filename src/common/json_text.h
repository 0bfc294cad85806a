// JSON as the text gpubench writes (result files, reports, predictions, traces).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gpubench {

// `document` dumped with `indent` (-1: one line). A string that is not UTF-8 (a file name on Linux
// may be any bytes) is written with U+FFFD for each bad byte, where nlohmann's default throws
// type_error.316 and a run that measured would end without its output.
std::string json_text(const nlohmann::json& document, int indent = 2);

// A value as a person writes it: a string without its quotes, anything else as compact JSON
// ("fp16", 256, true).
std::string plain_text(const nlohmann::json& value);

}  // namespace gpubench
