// Files that are either whole or absent: written to a temporary file created exclusively in the
// destination's folder, flushed, then renamed over the target (or linked to a new name), so a
// reader never sees a half-written one and no planted file or link is ever opened.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gpubench {

// Replaces `path` atomically. A link is followed and its target replaced, in the target's folder;
// an existing file keeps its mode (and, for root, its owner); a device, FIFO or socket is written
// into, as a shell redirection would, not replaced. Throws UsageError "cannot write '<path>':
// <reason>" whatever step failed (an output that cannot be written is exit code 2).
void write_text_atomically(const std::string& path, const std::string& text);
void write_json_atomically(const std::string& path, const nlohmann::json& document);

// Writes a new file at `path`, or, where a file of that name exists (another run's), at the first
// free name of `stem-2.ext`, `stem-3.ext`, ...: never over an existing file, even with other
// writers racing for the name. A device, FIFO or socket at `path` is written into, and nothing
// is created beside it. Returns the path written. Throws as write_text_atomically.
std::string write_new_file(const std::string& path, const std::string& text);
// Room write_new_file may need beyond the name it is given: "-99999".
inline constexpr size_t kNewFileSuffixRoom = 6;

// Whether `path` is a device, FIFO or socket: an output written into, not replaced.
bool is_special_file(const std::string& path);

// Throws UsageError "<what> '<path>': its file name is N characters, more than the 255 a file
// name may have" (or the path over PATH_MAX) for a file about to be written, keeping
// `suffix_room` characters for a suffix its name may take: found before a run, not after it.
void check_path_limits(const std::string& path, const std::string& what, size_t suffix_room = 0);

// The folder a file at `path` goes in: its parent, or "." for a bare name.
std::string folder_of(const std::string& path);

// Why a file cannot be created in `directory` (tried with an exclusively created, removed
// probe file), or empty when it can.
std::string why_not_writable(const std::string& directory);

}  // namespace gpubench
