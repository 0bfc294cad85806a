// The CI templates in ci/ (GitHub Actions, GitLab CI, Slurm): their YAML parses and has the
// steps a nightly job needs, and their commands, run as written but for scripts/setup.sh (which
// CI has just run) and with the CPU suite, run a night end to end: suite, regress with JUnit,
// trend and report, and exit 1 on a regression.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "test_helpers.h"

namespace gpubench {
namespace {

using testing::read_json;
using testing::run_command;
using testing::ScratchDirectory;

const std::string kSource = GPUBENCH_SOURCE_DIR;
const std::string kGithub = kSource + "/ci/github-actions/gpubench-nightly.yml";
const std::string kGitlab = kSource + "/ci/gitlab/gpubench-nightly.gitlab-ci.yml";
const std::string kSlurm = kSource + "/ci/slurm/gpubench-nightly.sbatch";
const std::string kSetup = "bash scripts/setup.sh";

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A template's commands and the environment it sets.
struct Job {
  std::map<std::string, std::string> environment;
  std::vector<std::string> commands;
};

Job github_job() {
  const YAML::Node job = YAML::LoadFile(kGithub)["jobs"]["nightly"];
  Job out;
  for (const auto& entry : job["env"]) {
    out.environment[entry.first.as<std::string>()] = entry.second.as<std::string>();
  }
  for (const YAML::Node& step : job["steps"]) {
    if (step["run"]) out.commands.push_back(step["run"].as<std::string>());
  }
  return out;
}

Job gitlab_job() {
  const YAML::Node job = YAML::LoadFile(kGitlab)["gpubench-nightly"];
  Job out;
  for (const auto& entry : job["variables"]) {
    out.environment[entry.first.as<std::string>()] = entry.second.as<std::string>();
  }
  for (const YAML::Node& line : job["script"]) out.commands.push_back(line.as<std::string>());
  return out;
}

TEST(CiTemplates, GithubWorkflowIsValidAndHasTheNightlySteps) {
  const YAML::Node workflow = YAML::LoadFile(kGithub);
  ASSERT_TRUE(workflow["on"]["schedule"]) << "a nightly trigger";
  const YAML::Node job = workflow["jobs"]["nightly"];
  ASSERT_TRUE(job.IsMap());
  bool self_hosted = false;
  for (const YAML::Node& label : job["runs-on"])
    self_hosted |= label.as<std::string>() == "self-hosted";
  EXPECT_TRUE(self_hosted);
  std::vector<std::string> uses;
  bool junit_always = false, upload_always = false;
  for (const YAML::Node& step : job["steps"]) {
    ASSERT_TRUE(step.IsMap());
    EXPECT_TRUE(step["run"] || step["uses"]) << "a step runs or uses something";
    if (!step["uses"]) continue;
    const std::string action = step["uses"].as<std::string>();
    uses.push_back(action);
    const bool always = step["if"] && step["if"].as<std::string>() == "always()";
    if (action.rfind("mikepenz/action-junit-report@", 0) == 0) {
      junit_always = always;
      EXPECT_EQ(step["with"]["report_paths"].as<std::string>(),
                job["env"]["GPUBENCH_NIGHTLY_OUT"].as<std::string>() + "/junit.xml");
    }
    if (action.rfind("actions/upload-artifact@", 0) == 0) {
      upload_always = always;
      EXPECT_EQ(step["with"]["path"].as<std::string>(),
                job["env"]["GPUBENCH_NIGHTLY_OUT"].as<std::string>() + "/");
    }
  }
  ASSERT_FALSE(uses.empty());
  EXPECT_EQ(uses.front().rfind("actions/checkout@", 0), 0u);
  EXPECT_TRUE(junit_always) << "the JUnit report is published even when the gate fails";
  EXPECT_TRUE(upload_always) << "trend and report are uploaded even when the gate fails";
  const Job commands = github_job();
  EXPECT_EQ(commands.commands, (std::vector<std::string>{kSetup, "bash scripts/nightly.sh"}));
}

TEST(CiTemplates, GitlabJobIsValidAndPublishesJunitAndArtifacts) {
  const YAML::Node job = YAML::LoadFile(kGitlab)["gpubench-nightly"];
  ASSERT_TRUE(job.IsMap());
  EXPECT_EQ(job["artifacts"]["when"].as<std::string>(), "always");
  EXPECT_EQ(job["artifacts"]["reports"]["junit"].as<std::string>(),
            job["variables"]["GPUBENCH_NIGHTLY_OUT"].as<std::string>() + "/junit.xml");
  EXPECT_TRUE(job["tags"].IsSequence());
  EXPECT_EQ(gitlab_job().commands, (std::vector<std::string>{kSetup, "bash scripts/nightly.sh"}));
}

TEST(CiTemplates, SlurmScriptAsksForAGpuAndIsValidBash) {
  const std::string script = text_of(kSlurm);
  EXPECT_NE(script.find("#SBATCH --gres=gpu:"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --exclusive"), std::string::npos);
  EXPECT_NE(script.find(kSetup + "\n"), std::string::npos);
  const auto syntax = run_command("bash -n " + kSlurm);
  EXPECT_EQ(syntax.exit_code, 0) << syntax.output;
}

// A baseline from one night of the CPU suite, every trial set to one value (no spread): a thousand
// times that run's fastest trial makes tonight a regression, a thousandth of its slowest makes
// tonight clean. On a loaded machine the tiny models' trials spread twentyfold (0.5 ms steps):
// a baseline ten times that run's median was once slower than tonight, so the margins are wide.
void write_baseline(const std::string& from, const std::string& to, bool regression) {
  std::filesystem::create_directories(to);
  for (const auto& entry : std::filesystem::directory_iterator(from)) {
    if (entry.path().extension() != ".json") continue;
    nlohmann::json doc = read_json(entry.path().string());
    const std::vector<double> trials = doc["metrics"]["trials"];
    const double throughput = regression ? 1000 * *std::max_element(trials.begin(), trials.end())
                                         : *std::min_element(trials.begin(), trials.end()) / 1000;
    doc["metrics"]["throughput"] = throughput;
    for (auto& trial : doc["metrics"]["trials"]) trial = throughput;
    std::ofstream(to + "/" + entry.path().filename().string()) << doc.dump(2);
  }
}

class NightOnTheCpu : public ::testing::Test {
 protected:
  NightOnTheCpu() : dir_("ci-templates") {}

  // Runs the commands as CI would (in order, stopping at the first that fails), from the
  // repository root, with the template's environment and then the test's on top.
  testing::CommandResult run_job(const Job& job, const std::string& night,
                                 const std::string& baseline) {
    std::map<std::string, std::string> environment = job.environment;
    environment["GPUBENCH_NIGHTLY_SUITE"] = "configs/nightly-cpu.yaml";
    environment["GPUBENCH_HISTORY"] = dir_.file("history");
    environment["GPUBENCH_BASELINE"] = baseline;
    environment["GPUBENCH_NIGHTLY_OUT"] = out();
    environment["GPUBENCH_NIGHT"] = night;
    environment["GPUBENCH"] = GPUBENCH_BINARY;
    environment["SLURM_SUBMIT_DIR"] = kSource;
    std::string script = "set -e\ncd " + quoted(kSource) + "\n";
    for (const auto& [key, value] : environment)
      script += "export " + key + "=" + quoted(value) + "\n";
    bool skipped_setup = false;
    for (const std::string& command : job.commands) {
      if (command == kSetup) {
        skipped_setup = true;
        continue;
      }
      script += command + "\n";
    }
    EXPECT_TRUE(skipped_setup) << "every template sets up first";
    std::ofstream(dir_.file("job.sh")) << script;
    return run_command("bash " + dir_.file("job.sh"));
  }

  std::string out() const { return dir_.file("out"); }
  ScratchDirectory dir_;
};

TEST_F(NightOnTheCpu, EveryTemplateRunsANightAndFailsOnARegression) {
  // Slurm, with no baseline yet: the night runs, regress is skipped and says how to start one.
  // Its lines are its commands (the script has no multi-line construct).
  Job slurm;
  std::istringstream lines(text_of(kSlurm));
  for (std::string line; std::getline(lines, line);) slurm.commands.push_back(line);
  const auto sbatch = run_job(slurm, "2026-12-01", dir_.file("no-baseline"));
  ASSERT_EQ(sbatch.exit_code, 0) << sbatch.output;
  EXPECT_NE(sbatch.output.find("no baseline results"), std::string::npos) << sbatch.output;
  EXPECT_FALSE(std::filesystem::exists(out() + "/junit.xml"));
  // The baselines of the nights below, from that night's results.
  write_baseline(dir_.file("history/2026-12-01"), dir_.file("baseline-slower"), false);
  write_baseline(dir_.file("history/2026-12-01"), dir_.file("baseline-faster"), true);

  // GitHub Actions: a clean night.
  const auto github = run_job(github_job(), "2026-12-02", dir_.file("baseline-slower"));
  EXPECT_EQ(github.exit_code, 0) << github.output;
  const std::string junit = text_of(out() + "/junit.xml");
  EXPECT_NE(junit.find("tests=\"2\" failures=\"0\""), std::string::npos) << junit;
  for (const char* artifact : {"trend.html", "trend.json", "report.html", "regress.txt"}) {
    EXPECT_TRUE(std::filesystem::exists(out() + "/" + artifact)) << artifact;
  }
  EXPECT_TRUE(std::filesystem::exists(dir_.file("history/2026-12-02")));

  // GitLab CI: tonight is a thousandth of the baseline's speed: regress fails the job, and still
  // publishes.
  const auto gitlab = run_job(gitlab_job(), "2026-12-03", dir_.file("baseline-faster"));
  EXPECT_EQ(gitlab.exit_code, 1) << gitlab.output;
  EXPECT_NE(gitlab.output.find("REGRESSION"), std::string::npos) << gitlab.output;
  const std::string gitlab_junit = text_of(out() + "/junit.xml");
  EXPECT_NE(gitlab_junit.find("failures=\"2\""), std::string::npos) << gitlab_junit << "\n"
                                                                    << gitlab.output;
  EXPECT_TRUE(std::filesystem::exists(out() + "/trend.html"));

  // Three nights of history, two benchmarks: trend has them all.
  const nlohmann::json trend = read_json(out() + "/trend.json");
  ASSERT_EQ(trend["benchmarks"].size(), 2u);
  for (const auto& b : trend["benchmarks"]) EXPECT_EQ(b["points"].size(), 3u) << b["benchmark"];
  EXPECT_NE(text_of(out() + "/report.html").find("<h2>History</h2>"), std::string::npos);
  // What the job publishes, read whole: tonight's results, and the trend JSON passed over.
  for (const char* command : {"report ", "trend "}) {
    const auto published = testing::run_gpubench(command + quoted(out()));
    EXPECT_EQ(published.exit_code, 0) << command << published.output;
    EXPECT_NE(published.output.find("skipped 1 trend(s) in the folders given"), std::string::npos)
        << command << published.output;
  }

  // A night is run once.
  const auto again = run_job(github_job(), "2026-12-02", dir_.file("baseline-slower"));
  EXPECT_EQ(again.exit_code, 2) << again.output;
}

// The output folder is emptied of last night's files: one whose contents matter is refused
// before anything is deleted. Each case runs on a scratch copy of the repository with a history
// and reference results, and checks that they are all still there.
TEST(NightlyOutput, DangerousOutputFoldersAreRefusedAndNothingIsDeleted) {
  ScratchDirectory dir("nightly-out");
  const std::string repo = dir.file("repo");
  for (const char* folder :
       {"scripts", "configs", "results/reference", "results/nightly/2026-11-01", "results/baseline",
        "home", "old-out/2026-10-31"}) {
    std::filesystem::create_directories(repo + "/" + folder);
  }
  std::filesystem::copy_file(kSource + "/scripts/nightly.sh", repo + "/scripts/nightly.sh");
  std::filesystem::copy_file(kSource + "/configs/nightly-cpu.yaml",
                             repo + "/configs/nightly-cpu.yaml");
  const std::vector<std::string> kept = {
      "results/reference/a.json", "results/nightly/2026-11-01/b.json", "results/baseline/c.json",
      "home/d.json", "old-out/2026-10-31/e.json"};
  for (const std::string& file : kept) std::ofstream(repo + "/" + file) << "{}";
  const std::string environment =
      "cd " + quoted(repo) + " && HOME=" + quoted(repo + "/home") +
      " GPUBENCH=" + quoted(GPUBENCH_BINARY) +
      " GPUBENCH_NIGHTLY_SUITE=configs/nightly-cpu.yaml GPUBENCH_HISTORY=results/nightly "
      "GPUBENCH_BASELINE=results/baseline GPUBENCH_NIGHT=2026-12-01 GPUBENCH_NIGHTLY_OUT=";
  for (const auto& [out, why] : std::vector<std::pair<std::string, std::string>>{
           {".", "is " + repo},
           {"/", "is /"},
           {repo + "/home", "is " + repo + "/home"},
           {"results", "holds results/nightly"},
           {"results/nightly", "holds results/nightly"},
           {"results/nightly/2026-11-01", "is inside results/nightly"},
           {"results/baseline", "holds results/baseline"},
           {"old-out", "holds earlier nights"},
           {"results/reference/..", "holds results/nightly"}}) {
    const auto run = run_command(environment + quoted(out) + " bash scripts/nightly.sh");
    EXPECT_EQ(run.exit_code, 2) << out << ": " << run.output;
    EXPECT_NE(run.output.find("GPUBENCH_NIGHTLY_OUT=" + out + " " + why), std::string::npos)
        << out << ": " << run.output;
    for (const std::string& file : kept) {
      EXPECT_TRUE(std::filesystem::exists(repo + "/" + file)) << out << " deleted " << file;
    }
    EXPECT_FALSE(std::filesystem::exists(repo + "/results/nightly/2026-12-01")) << out;
  }
  // A results folder the job did not make is not deleted either.
  std::filesystem::create_directories(repo + "/mine/results");
  std::ofstream(repo + "/mine/results/f.json") << "{}";
  const auto foreign = run_command(environment + "mine bash scripts/nightly.sh");
  EXPECT_EQ(foreign.exit_code, 2) << foreign.output;
  EXPECT_TRUE(std::filesystem::exists(repo + "/mine/results/f.json"));
}

}  // namespace
}  // namespace gpubench
