#include "ncclfi/shared_gpu.h"

#include <cstdlib>
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

}  // namespace ncclfi
