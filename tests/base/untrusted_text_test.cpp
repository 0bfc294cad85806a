// Result files come from many machines and people: a field's text must never change the
// structure of an output. Every injection case against every format: Markdown, CSV, JSON, HTML,
// JUnit and the terminal's tables.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/text_table.h"
#include "reporting/regression.h"
#include "reporting/report.h"
#include "reporting/results_table.h"
#include "reporting/trend.h"
#include "results/statistics.h"

namespace gpubench {
namespace {

const std::vector<std::string> kInjections = {
    "resnet50 | 1 | 999999 | forged |",
    "two\nlines | forged",
    "carriage\rreturn",
    "\x1b]0;owned\x07title",
    "\x1b[31mred\x1b[0m",
    "csi\xc2\x9b"
    "31mC1",
    "ctl\x01\x02\x1b",
    "=HYPERLINK(\"http://x\",\"y\")",
    "@SUM(1+1)",
    "+1+1",
    "-2+3",
    "\tTAB",
    "<script>alert(1)</script>",
    "\" onmouseover=\"alert(1)",
    "back\\slash|pipe",
};

LoadedResult with_text(const std::string& text, int night, double throughput) {
  LoadedResult l;
  Result& r = l.result;
  r.benchmark.model = text;
  r.benchmark.precision = Precision::kFp16;
  r.benchmark.device = DeviceKind::kCuda;
  r.benchmark.gpus = 1;
  r.benchmark.tensor_parallel = 1;
  r.benchmark.expert_parallel = 1;
  r.benchmark.batch_size = 64;
  r.benchmark.bucket_mb = 25;
  r.system.gpu_name = text;
  r.metrics.trials = {throughput, throughput * 1.001, throughput * 0.999};
  r.metrics.throughput = median(r.metrics.trials);
  r.metrics.throughput_unit = "images/sec";
  r.started_at =
      "2026-11-" + std::string(night < 10 ? "0" : "") + std::to_string(night) + "T00:00:00Z";
  l.path = "r" + std::to_string(night) + ".json";
  return l;
}

// Markdown: every table line has as many unescaped cell separators as its header.
void expect_markdown_rows_intact(const std::string& markdown, const std::string& what) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end; (end = markdown.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(markdown.substr(start, end - start));
  }
  size_t header_pipes = 0;
  for (const std::string& line : lines) {
    if (line.rfind("|", 0) != 0) {
      header_pipes = 0;
      continue;
    }
    size_t pipes = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\') {
        ++i;
      } else if (line[i] == '|') {
        ++pipes;
      }
    }
    if (header_pipes == 0) header_pipes = pipes;
    EXPECT_EQ(pipes, header_pipes) << what << ": " << line;
  }
  EXPECT_EQ(markdown.find('\x1b'), std::string::npos) << what;
  EXPECT_EQ(markdown.find('\r'), std::string::npos) << what;
}

// CSV: every record of a table has as many fields as its header, and no text cell starts
// with what a spreadsheet reads as a formula.
void expect_csv_intact(const std::string& csv, const std::string& what) {
  std::vector<std::vector<std::string>> records(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < csv.size(); ++i) {
    const char c = csv[i];
    if (quoted) {
      if (c == '"' && i + 1 < csv.size() && csv[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      records.back().push_back(field);
      field.clear();
    } else if (c == '\n') {
      records.back().push_back(field);
      field.clear();
      records.emplace_back();
    } else {
      field += c;
    }
  }
  size_t width = 0;
  for (const auto& record : records) {
    if (record.empty() || record.size() == 1 || record.front().rfind("# ", 0) == 0) {  // titles
      width = 0;
      continue;
    }
    if (width == 0) width = record.size();
    EXPECT_EQ(record.size(), width) << what;
    for (const std::string& cell : record) {
      if (cell.size() < 2 || std::string("=+-@\t\r").find(cell.front()) == std::string::npos) {
        continue;
      }
      char* end = nullptr;
      std::strtod(cell.c_str(), &end);
      EXPECT_EQ(end, cell.c_str() + cell.size()) << what << ": formula cell " << cell;
    }
  }
}

void expect_xml_well_formed_characters(const std::string& xml, const std::string& what) {
  for (char c : xml) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_FALSE(u < 0x20 && c != '\t' && c != '\n' && c != '\r')
        << what << ": character " << int(u);
  }
  EXPECT_EQ(xml.find("<script>"), std::string::npos) << what;
  EXPECT_EQ(xml.find("\" onmouseover"), std::string::npos) << what;
}

void expect_terminal_safe(const std::string& text, const std::string& what) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_FALSE((u < 0x20 && c != '\n') || u == 0x7f) << what << ": character " << int(u);
  }
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << what;
}

TEST(UntrustedText, NoFieldChangesTheStructureOfAnyOutput) {
  for (const std::string& injection : kInjections) {
    SCOPED_TRACE(testing::PrintToString(injection));
    std::vector<LoadedResult> history;
    for (int night = 1; night <= 6; ++night) {
      history.push_back(with_text(injection, night, night <= 3 ? 1000 : 800));
    }
    const Report report = build_report(history, {});
    expect_markdown_rows_intact(render_markdown(report), "report markdown");
    expect_csv_intact(render_csv(report), "report csv");
    expect_xml_well_formed_characters(render_html(report), "report html");
    const nlohmann::json json = nlohmann::json::parse(render_json(report));
    EXPECT_NE(json.dump().find(nlohmann::json(injection).dump()), std::string::npos)
        << "JSON keeps the text exactly";

    const Trend trend = build_trend(history, {}, {});
    expect_markdown_rows_intact(render_trend(trend, "markdown"), "trend markdown");
    expect_csv_intact(render_trend(trend, "csv"), "trend csv");
    expect_xml_well_formed_characters(render_trend(trend, "html"), "trend html");
    EXPECT_NE(render_trend(trend, "json").find(nlohmann::json(injection).dump()), std::string::npos)
        << "trend's JSON keeps the text exactly";

    const RegressionReport regress = check_regressions({history.front()}, {history.back()}, {});
    expect_xml_well_formed_characters(render_junit(regress), "junit");
    expect_terminal_safe(render_regression_table(regress), "regress table");
    expect_terminal_safe(render_results_table({history.back().result}), "results table");
  }
}

TEST(UntrustedText, EachEscapeOnItsOwn) {
  EXPECT_EQ(markdown_cell("a|b\\c\nd"), "a\\|b\\\\c\\\\x0ad");  // shows a|b\c\x0ad
  EXPECT_EQ(terminal_safe("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(terminal_safe("csi\xc2\x9b"), "csi\\u009b");
  EXPECT_EQ(terminal_safe("caf\xc3\xa9"), "caf\xc3\xa9") << "other UTF-8 passes";
  EXPECT_EQ(csv_field("=1+1"), "'=1+1");
  EXPECT_EQ(csv_field("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(csv_field("-3.5"), "-3.5") << "numbers stay numbers";
  EXPECT_EQ(csv_field("+12"), "+12");
  EXPECT_EQ(csv_field("-x"), "'-x");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(escape_markup("a\x01<b>"), "a\\x01&lt;b&gt;");
}

}  // namespace
}  // namespace gpubench
