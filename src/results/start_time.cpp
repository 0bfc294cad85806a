#include "results/start_time.h"

#include <cctype>
#include <mutex>
#include <set>
#include <utility>

#include "common/log.h"
#include "results/result.h"

namespace gpubench {
namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int days_in_month(int year, int month) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// `count` digits at text[at...]; -1 when they are not all digits.
int digits(const std::string& text, size_t at, size_t count) {
  if (at + count > text.size()) return -1;
  int value = 0;
  for (size_t i = at; i < at + count; ++i) {
    if (std::isdigit(static_cast<unsigned char>(text[i])) == 0) return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

int64_t instant_or_earliest(const Result& r) {
  return parse_rfc3339_us(r.started_at).value_or(INT64_MIN);
}

}  // namespace

std::optional<int64_t> parse_rfc3339_us(const std::string& text) {
  // YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' || text[13] != ':' || text[16] != ':') {
    return std::nullopt;
  }
  if (text[10] != 'T' && text[10] != 't' && text[10] != ' ') return std::nullopt;
  const int year = digits(text, 0, 4), month = digits(text, 5, 2), day = digits(text, 8, 2);
  const int hour = digits(text, 11, 2), minute = digits(text, 14, 2), second = digits(text, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 60) {
    return std::nullopt;
  }
  if (day > days_in_month(year, month)) return std::nullopt;
  size_t at = 19;
  int64_t micros = 0;
  if (text[at] == '.') {
    ++at;
    int64_t scale = 100000;
    const size_t first = at;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])) != 0) {
      micros += (text[at] - '0') * scale;
      scale /= 10;
      ++at;
    }
    if (at == first) return std::nullopt;
  }
  int64_t offset_minutes = 0;
  if (at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
    ++at;
  } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    const int oh = digits(text, at + 1, 2), om = digits(text, at + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59 || at + 3 >= text.size() || text[at + 3] != ':') {
      return std::nullopt;
    }
    offset_minutes = (text[at] == '-' ? -1 : 1) * (oh * 60 + om);
    at += 6;
  } else {
    return std::nullopt;
  }
  if (at != text.size()) return std::nullopt;
  // A leap second (:60) is the instant after :59.
  const int64_t seconds = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 +
                          second - offset_minutes * 60;
  return seconds * 1000000 + micros;
}

bool started_together(const Result& a, const Result& b) {
  return instant_or_earliest(a) == instant_or_earliest(b);
}

void warn_if_tied(const Result& a, const Result& b) {
  if (a.started_at.empty() || b.started_at.empty() || !started_together(a, b)) return;
  static std::mutex mutex;
  static std::set<std::pair<std::string, std::string>> warned;
  const auto pair = std::minmax(a.loaded_from, b.loaded_from);
  const std::lock_guard<std::mutex> lock(mutex);
  if (!warned.insert({pair.first, pair.second}).second) return;
  log::warn(
      "'{}' and '{}' are runs of one benchmark started at the same instant ({}): the later "
      "in the history is the one whose JSON text sorts last",
      pair.first, pair.second, a.started_at);
}

bool started_before(const Result& a, const Result& b) {
  const int64_t ta = instant_or_earliest(a), tb = instant_or_earliest(b);
  if (ta != tb) return ta < tb;
  return result_to_json(a).dump() < result_to_json(b).dump();
}

}  // namespace gpubench
