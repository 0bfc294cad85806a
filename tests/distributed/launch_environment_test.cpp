// Reading torchrun's, Slurm's and Open MPI's environments, and Slurm node lists.
#include <map>

#include <gtest/gtest.h>

#include "common/errors.h"
#include "distributed/launch_environment.h"

namespace gpubench {
namespace {

EnvironmentLookup environment(std::map<std::string, std::string> variables) {
  return [variables](const std::string& name) -> std::optional<std::string> {
    const auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

TEST(LaunchEnvironment, NoLauncherMeansNoLaunch) {
  EXPECT_FALSE(detect_launch_environment(environment({})));
  EXPECT_FALSE(detect_launch_environment(environment({{"PATH", "/usr/bin"}})));
}

TEST(LaunchEnvironment, ReadsTorchrun) {
  const auto env =
      detect_launch_environment(environment({{"RANK", "5"},
                                             {"WORLD_SIZE", "16"},
                                             {"LOCAL_RANK", "5"},
                                             {"LOCAL_WORLD_SIZE", "8"},
                                             {"MASTER_ADDR", "node0"},
                                             {"MASTER_PORT", "29400"},
                                             {"TORCHELASTIC_USE_AGENT_STORE", "True"}}));
  ASSERT_TRUE(env);
  EXPECT_EQ(env->launcher, "torchrun");
  EXPECT_EQ(env->rank, 5);
  EXPECT_EQ(env->world_size, 16);
  EXPECT_EQ(env->local_rank, 5);
  EXPECT_EQ(env->local_world_size, 8);
  EXPECT_EQ(env->master_addr, "node0");
  EXPECT_EQ(env->master_port, 29400);
  EXPECT_TRUE(env->store_hosted_by_launcher);
}

TEST(LaunchEnvironment, RankZeroHostsTheStoreWithoutAnAgentStore) {
  const auto env = detect_launch_environment(environment(
      {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1234"}}));
  ASSERT_TRUE(env);
  EXPECT_FALSE(env->store_hosted_by_launcher);
  EXPECT_EQ(env->local_world_size, 2);  // LOCAL_WORLD_SIZE missing: all on one host
}

TEST(LaunchEnvironment, GpubenchsOwnLauncherIsNamedAndHostsTheStore) {
  const auto env = detect_launch_environment(environment({{"RANK", "1"},
                                                          {"WORLD_SIZE", "2"},
                                                          {"MASTER_ADDR", "127.0.0.1"},
                                                          {"MASTER_PORT", "4000"},
                                                          {kLauncherStoreVariable, "1"}}));
  ASSERT_TRUE(env);
  EXPECT_EQ(env->launcher, "gpubench");
  EXPECT_TRUE(env->store_hosted_by_launcher);
}

TEST(LaunchEnvironment, ASingleTaskIsNoLaunchButTorchrunsWorldOfOneIsAGroup) {
  EXPECT_FALSE(detect_launch_environment(
      environment({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "1"}})));
  EXPECT_FALSE(detect_launch_environment(
      environment({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "1"}})));
  const auto torchrun = detect_launch_environment(environment(
      {{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}));
  ASSERT_TRUE(torchrun);
  EXPECT_EQ(torchrun->world_size, 1);
}

TEST(LaunchEnvironment, ReadsSlurmStepAndTakesTheFirstNodeAsMaster) {
  const auto env = detect_launch_environment(environment({{"SLURM_PROCID", "9"},
                                                          {"SLURM_STEP_NUM_TASKS", "16"},
                                                          {"SLURM_STEP_NUM_NODES", "2"},
                                                          {"SLURM_LOCALID", "1"},
                                                          {"SLURM_STEP_NODELIST", "gpu[07-08]"},
                                                          {"SLURM_JOB_ID", "123456"}}));
  ASSERT_TRUE(env);
  EXPECT_EQ(env->launcher, "slurm");
  EXPECT_EQ(env->rank, 9);
  EXPECT_EQ(env->world_size, 16);
  EXPECT_EQ(env->local_rank, 1);
  EXPECT_EQ(env->local_world_size, 8);
  EXPECT_EQ(env->master_addr, "gpu07");
  EXPECT_EQ(env->master_port, 20000 + 123456 % 20000);
  EXPECT_FALSE(env->store_hosted_by_launcher);
}

TEST(LaunchEnvironment, SlurmMasterAddrAndPortFromTheEnvironmentWin) {
  const auto env = detect_launch_environment(environment({{"SLURM_PROCID", "0"},
                                                          {"SLURM_STEP_NUM_TASKS", "2"},
                                                          {"SLURM_STEP_NODELIST", "a,b"},
                                                          {"MASTER_ADDR", "10.0.0.1"},
                                                          {"MASTER_PORT", "29500"}}));
  ASSERT_TRUE(env);
  EXPECT_EQ(env->master_addr, "10.0.0.1");
  EXPECT_EQ(env->master_port, 29500);
}

TEST(LaunchEnvironment, ASallocShellIsNotARank) {
  // salloc exports the allocation's task count, but no step runs gpubench as its tasks.
  EXPECT_FALSE(detect_launch_environment(
      environment({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "16"}, {"SLURM_JOB_NODELIST", "a"}})));
}

TEST(LaunchEnvironment, ReadsOpenMpi) {
  const auto env = detect_launch_environment(environment({{"OMPI_COMM_WORLD_RANK", "3"},
                                                          {"OMPI_COMM_WORLD_SIZE", "4"},
                                                          {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                                                          {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}));
  ASSERT_TRUE(env);
  EXPECT_EQ(env->launcher, "mpi");
  EXPECT_EQ(env->rank, 3);
  EXPECT_EQ(env->master_addr, "127.0.0.1");
  EXPECT_EQ(env->master_port, 29500);
}

TEST(LaunchEnvironment, OpenMpiAcrossNodesNeedsMasterAddr) {
  try {
    detect_launch_environment(environment({{"OMPI_COMM_WORLD_RANK", "0"},
                                           {"OMPI_COMM_WORLD_SIZE", "16"},
                                           {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                                           {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}}));
    FAIL() << "expected a UsageError";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("MASTER_ADDR"), std::string::npos);
  }
}

TEST(LaunchEnvironment, InconsistentValuesAreUsageErrors) {
  EXPECT_THROW(
      detect_launch_environment(environment(
          {{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}})),
      UsageError);
  EXPECT_THROW(
      detect_launch_environment(environment(
          {{"RANK", "zero"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}})),
      UsageError);
  EXPECT_THROW(detect_launch_environment(environment({{"RANK", "0"}, {"WORLD_SIZE", "2"}})),
               UsageError);
  EXPECT_THROW(
      detect_launch_environment(environment(
          {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}})),
      UsageError);
}

// One rule for every launcher (hostile input, round 4): a size set but empty or 0 is an error
// (OMPI_COMM_WORLD_SIZE=0 and SLURM_STEP_NUM_TASKS=0 ran as one process, WORLD_SIZE='' too,
// where MASTER_PORT='' read as port 0); a master address empty, with spaces or control
// characters is refused before c10d tries it.
TEST(LaunchEnvironment, EmptyOrZeroSizesAndUnusableAddressesAreRefused) {
  const auto refusal = [](std::map<std::string, std::string> variables) {
    try {
      detect_launch_environment(environment(std::move(variables)));
    } catch (const UsageError& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  const std::map<std::string, std::string> torchrun = {
      {"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "node0"}, {"MASTER_PORT", "29500"}};
  auto with = [](std::map<std::string, std::string> base, const std::string& key,
                 const std::string& value) {
    base[key] = value;
    return base;
  };
  EXPECT_EQ(refusal(torchrun), "accepted");
  EXPECT_EQ(refusal(with(torchrun, "WORLD_SIZE", "")),
            "environment variable WORLD_SIZE is set but empty: give an integer from 0 to 1048576, "
            "or unset it");
  EXPECT_EQ(refusal(with(torchrun, "MASTER_PORT", "")),
            "environment variable MASTER_PORT is set but empty: give an integer from 0 to "
            "1048576, or unset it");
  EXPECT_EQ(refusal(with(torchrun, "WORLD_SIZE", "0")),
            "torchrun environment: WORLD_SIZE is 0; a world has a rank");
  EXPECT_EQ(refusal({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "0"}}),
            "mpi environment: OMPI_COMM_WORLD_SIZE is 0; a world has a rank");
  EXPECT_EQ(refusal({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "0"}}),
            "slurm environment: SLURM_STEP_NUM_TASKS is 0; a world has a rank");
  EXPECT_EQ(refusal({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", ""}}),
            "environment variable SLURM_STEP_NUM_TASKS is set but empty: give an integer from 0 "
            "to 1048576, or unset it");
  for (const std::string address : {"", "no such host", "x\x1b[2J", "a\nb"}) {
    EXPECT_NE(refusal(with(torchrun, "MASTER_ADDR", address)).find("is not a host name or address"),
              std::string::npos)
        << address;
  }
  EXPECT_EQ(refusal(with(torchrun, "MASTER_ADDR", "fe80::1%eth0")), "accepted");
  EXPECT_EQ(refusal(with(torchrun, "MASTER_ADDR", "10.0.0.1")), "accepted");
}

TEST(LaunchEnvironment, FirstSlurmHost) {
  EXPECT_EQ(first_slurm_host("node1"), "node1");
  EXPECT_EQ(first_slurm_host("node[01-04,07],gpu5"), "node01");
  EXPECT_EQ(first_slurm_host("gpu-a100-[3,5]"), "gpu-a100-3");
  EXPECT_EQ(first_slurm_host("rack[1-2]-node[08-09]"), "rack1-node08");
  EXPECT_EQ(first_slurm_host("a,b,c"), "a");
  EXPECT_EQ(first_slurm_host(""), "");
}

}  // namespace
}  // namespace gpubench
