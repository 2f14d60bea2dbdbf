// Counting this host's GPUs (visible_gpus.h).
#include "visible_gpus.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "scenario.h"

namespace ncclfi::cli {

int count_visible_gpus() {
  if (const char* forced = std::getenv("NCCLFI_VISIBLE_GPUS")) return std::atoi(forced);
  if (!command_on_path("nvidia-smi")) return 0;
  FILE* pipe = popen("nvidia-smi -L 2>/dev/null", "r");
  if (pipe == nullptr) return 0;
  int gpus = 0;
  char line[512];
  while (fgets(line, sizeof line, pipe) != nullptr) {
    if (std::string(line).rfind("GPU ", 0) == 0) ++gpus;
  }
  pclose(pipe);
  return gpus;
}

}  // namespace ncclfi::cli
