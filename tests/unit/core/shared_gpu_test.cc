// Shared-GPU mode's MPS generations: which daemon a process of a restarted generation goes to.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "ncclfi/shared_gpu.h"

namespace ncclfi {
namespace {

EnvLookup env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(MpsGenerations, TheRestartCountIsTorchrunsElseSlurmsElseZero) {
  EXPECT_EQ(launcher_restart_count(env_of({})), 0);
  EXPECT_EQ(launcher_restart_count(env_of({{"TORCHELASTIC_RESTART_COUNT", "2"}})), 2);
  EXPECT_EQ(launcher_restart_count(env_of({{"SLURM_RESTART_COUNT", "1"}})), 1);
  EXPECT_EQ(
      launcher_restart_count(env_of({{"TORCHELASTIC_RESTART_COUNT", "0"}, {"SLURM_RESTART_COUNT", "3"}})),
      0);  // a torchrun worker inside a requeued Slurm job: torchrun's generation decides
}

TEST(MpsGenerations, ACountThatIsNoCountIsZero) {
  for (const char* bad : {"", "-1", "1x", " 1", "abc", "99999999999999999999"}) {
    EXPECT_EQ(launcher_restart_count(env_of({{"TORCHELASTIC_RESTART_COUNT", bad}})), 0) << bad;
  }
}

TEST(MpsGenerations, EachGenerationHasItsDaemonAndThoseBeyondRunWithoutMps) {
  EXPECT_EQ(mps_pipe_dir("/tmp/m", 0, 3), "/tmp/m/g0");
  EXPECT_EQ(mps_pipe_dir("/tmp/m", 2, 3), "/tmp/m/g2");
  EXPECT_EQ(mps_pipe_dir("/tmp/m", 3, 3), "/tmp/m/time-sliced");
  EXPECT_EQ(mps_pipe_dir("/tmp/m", -1, 3), "/tmp/m/time-sliced");
}

TEST(MpsGenerations, TheProcessGoesToItsGenerationsDaemon) {
  unsetenv("CUDA_MPS_PIPE_DIRECTORY");
  unsetenv(kMpsPipeBaseVar);
  EXPECT_FALSE(apply_mps_generation_from_environment());  // not shared-GPU mode: nothing changes
  EXPECT_EQ(std::getenv("CUDA_MPS_PIPE_DIRECTORY"), nullptr);
  setenv(kMpsPipeBaseVar, "/tmp/ncclfi-mps-1-1", 1);
  setenv(kMpsGenerationsVar, "2", 1);
  setenv("CUDA_MPS_PIPE_DIRECTORY", "/tmp/ncclfi-mps-1-1/g0", 1);  // inherited from torchrun
  setenv("TORCHELASTIC_RESTART_COUNT", "1", 1);
  EXPECT_TRUE(apply_mps_generation_from_environment());
  EXPECT_STREQ(std::getenv("CUDA_MPS_PIPE_DIRECTORY"), "/tmp/ncclfi-mps-1-1/g1");
  setenv("TORCHELASTIC_RESTART_COUNT", "2", 1);
  EXPECT_TRUE(apply_mps_generation_from_environment());
  EXPECT_STREQ(std::getenv("CUDA_MPS_PIPE_DIRECTORY"), "/tmp/ncclfi-mps-1-1/time-sliced");
  for (const char* name :
       {"CUDA_MPS_PIPE_DIRECTORY", kMpsPipeBaseVar, kMpsGenerationsVar, "TORCHELASTIC_RESTART_COUNT"}) {
    unsetenv(name);
  }
}

}  // namespace
}  // namespace ncclfi
