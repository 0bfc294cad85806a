// Result files from code (docs/api.md, schemas/result.schema.json): read one or a folder of
// them, select among them, and write one whole or not at all.
#pragma once

#include <string>

#include "common/atomic_file.h"
#include "results/result.h"
#include "results/result_set.h"

namespace gpubench {

// Writes `result` to `path`, replacing it atomically (a reader never sees half a file).
inline void write_result_file(const std::string& path, const Result& result) {
  write_json_atomically(path, result_to_json(result));
}

}  // namespace gpubench
