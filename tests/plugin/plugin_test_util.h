// Helpers for the `plugin` tests: the shim driven like NCCL's proxy drives it, in separate processes,
// over real loopback sockets. Each endpoint runs in a forked child that sets its environment (plan,
// rank, inner plugin) *before* loading the plugin, so the parent never holds plugin state.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ncclfi_net/plugin_loader.h"

namespace ncclfi::plugin_test {

using Env = std::map<std::string, std::string>;

// Directory of the built plugins (build/lib).
std::string lib_dir();
std::string shim_path();                  // libnccl-net-ncclfi.so
std::string inner_path(int max_version);  // test-only transport copies (11 or 8)
std::string bin_dir();

// Inside a child: a failed check prints where and exits 1.
#define CHILD_CHECK(cond, ...)                                                      \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                            \
      std::fprintf(stderr, "\n");                                                   \
      std::fflush(stderr);                                                          \
      _exit(1);                                                                     \
    }                                                                               \
  } while (0)

// One side of an established connection, inside its child process.
struct Endpoint {
  net::LoadedNetPlugin* plugin = nullptr;
  void* ctx = nullptr;
  void* comm = nullptr;  // sendComm for the sender, recvComm for the receiver
  int to_peer = -1;      // pipe to the other child
  int from_peer = -1;
  // A tiny side channel between the two children (values, "go" signals).
  void send_value(int64_t v) const;
  int64_t recv_value() const;
};

struct PairOptions {
  Env sender_env;      // NCCLFI_RANK=0 is added unless given
  Env receiver_env;    // NCCLFI_RANK=1 is added unless given
  std::string plugin;  // default: shim_path()
  // Loaded (RTLD_GLOBAL) in each child before the plugin: a libcuda.so.1 stand-in that a plugin linked to
  // libcuda.so.1 then binds to (the children are forked, not exec'd: LD_LIBRARY_PATH would come too late).
  std::string preload_library;
  int timeout_s = 30;
  // When set, each child's stdout and stderr go to <output_prefix>sender.log / receiver.log.
  std::string output_prefix;
};

// Runs receiver (listen + accept) and sender (connect) in two children, then the two bodies; each body
// returns the child's exit code. Returns the children's exit codes {sender, receiver}; a child that
// overruns the timeout is killed and reported as 124.
std::pair<int, int> run_pair(const PairOptions& options, const std::function<int(Endpoint&)>& sender,
                             const std::function<int(Endpoint&)>& receiver);

// Runs `body` in one child with `env` set; returns its exit code (124 on timeout).
int run_child(const Env& env, const std::function<int()>& body, int timeout_s = 30);

// Loads `path` in this (child) process and initialises it; exits the child on failure.
std::unique_ptr<net::LoadedNetPlugin> load_and_init(const std::string& path, void** ctx);

// Polls test() until done or `timeout`; returns the ncclResult_t of the last call, done in *done.
ncclResult_t wait_request(net::LoadedNetPlugin& plugin, void* request, int* done, int* size,
                          std::chrono::milliseconds timeout);

// Posts until the plugin accepts the request (it may ask to retry with a NULL request).
void* post_send(net::LoadedNetPlugin& plugin, void* comm, void* data, size_t size, int tag,
                ncclResult_t* result);
void* post_recv(net::LoadedNetPlugin& plugin, void* comm, void* data, size_t size, int tag,
                ncclResult_t* result);

double now_ms();

// A message's bytes, the same for a given size on both ends: what the receiver compares against.
std::vector<char> byte_pattern(size_t size);
// How many bits of `a` differ from the same bytes of `b` (b at least as long as a).
int bits_differing(const std::vector<char>& a, const std::vector<char>& b);

// A temporary file with `text`; removed at process exit of the parent test.
std::string write_temp_file(const std::string& name, const std::string& text);
std::string read_file(const std::string& path);

}  // namespace ncclfi::plugin_test
