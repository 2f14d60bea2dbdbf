// Stands for libtorch_cuda.so in the local-scope test: a library that links libnccl.so.2 and calls it.
#include <nccl.h>

namespace {
ncclComm_t g_comm = nullptr;
float g_buf[16];
}  // namespace

extern "C" __attribute__((visibility("default"))) int fake_torch_init() {
  ncclUniqueId id{};
  ncclGetUniqueId(&id);
  return static_cast<int>(ncclCommInitRank(&g_comm, 2, id, 1));
}

extern "C" __attribute__((visibility("default"))) int fake_torch_allreduce() {
  return static_cast<int>(ncclAllReduce(g_buf, g_buf, 16, ncclFloat, ncclSum, g_comm, nullptr));
}
