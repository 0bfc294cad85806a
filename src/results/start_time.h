// When a run started, as an instant: results from many machines and time zones are ordered by
// when they ran, not by the text of their started_at (docs/results.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpubench {

struct Result;

// Microseconds since 1970-01-01T00:00:00Z of an RFC 3339 date-time ("2026-11-30T02:00:00Z",
// "2026-11-29T21:00:00.5-05:00"; 'T', 't' or a space between date and time); nullopt when the
// text is not one (a 13th month, a 30 February, hour 25, a five-digit or negative year).
std::optional<int64_t> parse_rfc3339_us(const std::string& text);

// The history's order: by start instant (a result without started_at, as published figures have,
// first); at the same instant, by content (the result's JSON text), so that renaming files
// changes nothing. Returns true when `a` comes before `b`.
bool started_before(const Result& a, const Result& b);

// Whether two results started at the same instant (a tie the order breaks by content).
bool started_together(const Result& a, const Result& b);

// Warns, once per pair, naming both files, when two runs of one benchmark are dated alike: which
// of them is "the newest" then rests on their content alone.
void warn_if_tied(const Result& a, const Result& b);

}  // namespace gpubench
