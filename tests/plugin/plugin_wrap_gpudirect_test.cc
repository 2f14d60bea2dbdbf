// Wrap mode keeps the wrapped plugin's data path. NO GPU IS USED: the inner plugin is a test-only copy of our
// transport that advertises CUDA pointers and DMA-BUF (NCCLFI_NET_TEST_CUDA_PTRS) while moving host memory,
// What is checked: the shim passes the inner plugin's pointer support through (and our own transport stays
// host-only).
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "plugin_test_util.h"

namespace ncclfi::plugin_test {
namespace {

using namespace std::chrono_literals;

const std::string kCudaInner = lib_dir() + "/libnccl-net-ncclfi-test-inner-cuda.so";

int ptr_support_through(const Env& env) {
  const std::string out = write_temp_file("ptr-support.txt", "");
  const int code = run_child(env, [&] {
    void* ctx = nullptr;
    auto plugin = load_and_init(shim_path(), &ctx);
    ncclNetProperties_v11_t props{};
    CHILD_CHECK(plugin->get_properties(0, &props) == ncclSuccess, "getProperties");
    FILE* f = std::fopen(out.c_str(), "w");
    std::fprintf(f, "%d", props.ptrSupport);
    std::fclose(f);
    return 0;
  });
  EXPECT_EQ(code, 0);
  return std::stoi("0" + read_file(out));
}

TEST(NetWrapGpuDirect, TheInnerPluginsPointerSupportPassesThrough) {
  EXPECT_EQ(ptr_support_through({{"NCCLFI_NET_INNER", kCudaInner}}),
            NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF);
  EXPECT_EQ(ptr_support_through({{"NCCLFI_NET_INNER", inner_path(11)}}), NCCL_PTR_HOST)
      << "a host-only inner";
  EXPECT_EQ(ptr_support_through({}), NCCL_PTR_HOST) << "our own transport";
}

}  // namespace
}  // namespace ncclfi::plugin_test
