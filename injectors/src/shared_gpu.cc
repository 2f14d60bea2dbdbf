#include "ncclfi/shared_gpu.h"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "ncclfi/params.h"

namespace ncclfi {
namespace {

std::vector<std::string> split_commas(std::string_view list) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    const std::string_view item = list.substr(start, comma == std::string_view::npos ? comma : comma - start);
    if (!item.empty()) items.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

// A small non-negative integer, or nullopt (absent, empty, signed, trailing text, huge).
std::optional<int> small_count(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  int value = 0;
  const char* end = text + std::strlen(text);
  const auto [at, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || at != end || value < 0) return std::nullopt;
  return value;
}

}  // namespace

std::map<std::string, std::string> shared_gpu_rank_env(int rank, int gpus, std::string_view visible_list) {
  if (rank < 0 || gpus < 1) return {};
  const std::vector<std::string> listed = split_commas(visible_list);
  const int index = rank % gpus;
  // A list shorter than `gpus` is the harness's mistake, not the rank's: fall back to the index.
  const std::string device =
      static_cast<size_t>(index) < listed.size() ? listed[static_cast<size_t>(index)] : std::to_string(index);
  return {{"NCCL_HOSTID", "ncclfi-shared-" + std::to_string(rank)},
          {"CUDA_VISIBLE_DEVICES", device},
          {"LOCAL_RANK", "0"},
          {"LOCAL_WORLD_SIZE", "1"}};
}

int apply_shared_gpu_env_from_environment() {
  const char* gpus_text = std::getenv(kSharedGpusVar);
  if (gpus_text == nullptr || *gpus_text == '\0') return 0;
  const int gpus = std::atoi(gpus_text);
  const char* list = std::getenv(kSharedGpuListVar);
  int set = 0;
  for (const auto& [name, value] : shared_gpu_rank_env(resolve_rank_from_env(), gpus, list ? list : "")) {
    if (setenv(name.c_str(), value.c_str(), 1) == 0) ++set;
  }
  return set;
}

int launcher_restart_count(const EnvLookup& env) {
  for (const char* name : {"TORCHELASTIC_RESTART_COUNT", "SLURM_RESTART_COUNT"}) {
    if (const char* text = env(name); text != nullptr) return small_count(text).value_or(0);
  }
  return 0;
}

std::string mps_pipe_dir(std::string_view base, int generation, int generations) {
  std::string dir(base);
  if (generation >= 0 && generation < generations) return dir + "/g" + std::to_string(generation);
  return dir + "/time-sliced";
}

bool apply_mps_generation_from_environment() {
  const char* base = std::getenv(kMpsPipeBaseVar);
  if (base == nullptr || *base == '\0') return false;
  const int generations = small_count(std::getenv(kMpsGenerationsVar)).value_or(1);
  const int generation = launcher_restart_count([](const char* name) { return std::getenv(name); });
  return setenv("CUDA_MPS_PIPE_DIRECTORY", mps_pipe_dir(base, generation, generations).c_str(), 1) == 0;
}

}  // namespace ncclfi
