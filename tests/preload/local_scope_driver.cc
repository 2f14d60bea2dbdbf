// The PyTorch loading pattern: the program does not link NCCL; it dlopen's a library (here
// libncclfi-fake-torch.so, standing for libtorch_cuda.so) with RTLD_LOCAL, and that library links
// libnccl.so.2. NCCL then sits in a local scope, out of RTLD_NEXT's reach, while the library's NCCL
// calls still reach the preload through the global scope.
//   local-scope-driver FAKE_TORCH_LIB N   -> prints "call I rc=RC" for N allreduces
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 3) return 64;
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 6;
  }
  using Fn = int (*)();
  auto init = reinterpret_cast<Fn>(dlsym(lib, "fake_torch_init"));
  auto step = reinterpret_cast<Fn>(dlsym(lib, "fake_torch_allreduce"));
  if (init == nullptr || step == nullptr) return 6;
  std::printf("init rc=%d\n", init());
  for (int i = 1; i <= std::atoi(argv[2]); ++i) std::printf("call %d rc=%d\n", i, step());
  return 0;
}
