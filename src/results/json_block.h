// A JSON block's keys, each once, for both directions: a function lists a struct's fields as
// io.number(key, member, min, max), io.text(key, member, fallback), ..., and runs with a
// BlockReader (each key read with its bounds, common/json_fields.h) or a BlockWriter (each key
// written; a figure or text marked kWhenPositive left out while it is 0 or empty).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_fields.h"

namespace gpubench {

constexpr int64_t kMaxInteger = std::numeric_limits<int64_t>::max();

enum class Written { kAlways, kWhenPositive };

class BlockReader {
 public:
  explicit BlockReader(JsonFields fields) : fields_(std::move(fields)) {}
  void text(const char* key, std::string& value, const char* fallback = "",
            Written = Written::kAlways) {
    value = fields_.text(key, fallback);
  }
  void flag(const char* key, bool& value) { value = fields_.flag(key); }
  void number(const char* key, double& value, double min = 0,
              double max = std::numeric_limits<double>::max(), Written = Written::kAlways) {
    value = fields_.number(key, 0, min, max);
  }
  template <typename Integer>
  void integer(const char* key, Integer& value, int64_t fallback = 0, int64_t min = 0,
               int64_t max = kMaxInteger, Written = Written::kAlways) {
    value = static_cast<Integer>(fields_.integer(key, fallback, min, max));
  }
  void numbers(const char* key, std::vector<double>& values, double max) {
    values = fields_.numbers(key, 0, max);
  }
  void texts(const char* key, std::vector<std::string>& values) { values = fields_.texts(key); }
  void integers(const char* key, std::vector<int64_t>& values, int64_t min = 0,
                int64_t max = kMaxInteger, Written = Written::kAlways) {
    values = fields_.integers(key, min, max);
  }
  // A value with a reader and a writer of its own: read(fields, key), write(value).
  template <typename T, typename Read, typename Write>
  void custom(const char* key, T& value, Read read, Write) {
    value = read(fields_, key);
  }

 private:
  JsonFields fields_;
};

class BlockWriter {
 public:
  explicit BlockWriter(nlohmann::json& block) : block_(block) {}
  void text(const char* key, const std::string& value, const char* = "",
            Written written = Written::kAlways) {
    if (written == Written::kAlways || !value.empty()) block_[key] = value;
  }
  void flag(const char* key, bool value) { block_[key] = value; }
  void number(const char* key, double value, double = 0, double = 0,
              Written written = Written::kAlways) {
    if (written == Written::kAlways || value > 0) block_[key] = value;
  }
  template <typename Integer>
  void integer(const char* key, Integer value, int64_t = 0, int64_t = 0, int64_t = 0,
               Written written = Written::kAlways) {
    if (written == Written::kAlways || value > 0) block_[key] = value;
  }
  void numbers(const char* key, const std::vector<double>& values, double) { block_[key] = values; }
  void texts(const char* key, const std::vector<std::string>& values) { block_[key] = values; }
  // kWhenPositive: only a non-empty list.
  void integers(const char* key, const std::vector<int64_t>& values, int64_t = 0, int64_t = 0,
                Written written = Written::kAlways) {
    if (written == Written::kAlways || !values.empty()) block_[key] = values;
  }
  // A writer's null is left out (a value that is absent where it does not apply).
  template <typename T, typename Read, typename Write>
  void custom(const char* key, const T& value, Read, Write write) {
    nlohmann::json written = write(value);
    if (!written.is_null()) block_[key] = std::move(written);
  }

 private:
  nlohmann::json& block_;
};

// The block `fields` lists, written from `value`.
template <typename Fields, typename T>
nlohmann::json write_block(Fields fields, const T& value) {
  nlohmann::json block = nlohmann::json::object();
  BlockWriter writer(block);
  fields(writer, value);
  return block;
}

// `value` read from the block `fields` lists.
template <typename Fields, typename T>
void read_block(JsonFields block, Fields fields, T& value) {
  BlockReader reader(std::move(block));
  fields(reader, value);
}

}  // namespace gpubench
