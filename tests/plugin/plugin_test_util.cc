#include "plugin_test_util.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace ncclfi::plugin_test {

std::string lib_dir() {
  // A copy of the build elsewhere (a GPU machine gets build-gpu/lib) says where its libraries are.
  if (const char* dir = std::getenv("NCCLFI_TEST_LIB_DIR"); dir != nullptr && *dir != '\0') return dir;
  return NCCLFI_TEST_LIB_DIR;
}
std::string bin_dir() {
  return NCCLFI_TEST_BIN_DIR;
}
std::string shim_path() {
  return lib_dir() + "/libnccl-net-ncclfi.so";
}
std::string inner_path(int max_version) {
  return lib_dir() + "/libnccl-net-ncclfi-test-inner-v" + std::to_string(max_version) + ".so";
}

std::vector<char> byte_pattern(size_t size) {
  std::vector<char> v(size);
  for (size_t i = 0; i < size; ++i) v[i] = static_cast<char>((i * 29 + i / 251) & 0xff);
  return v;
}

int bits_differing(const std::vector<char>& a, const std::vector<char>& b) {
  int n = 0;
  for (size_t k = 0; k < a.size(); ++k) n += __builtin_popcount(static_cast<unsigned char>(a[k] ^ b[k]));
  return n;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Endpoint::send_value(int64_t v) const {
  if (write(to_peer, &v, sizeof(v)) != sizeof(v)) _exit(90);
}

int64_t Endpoint::recv_value() const {
  int64_t v = 0;
  size_t got = 0;
  while (got < sizeof(v)) {
    const ssize_t n = read(from_peer, reinterpret_cast<char*>(&v) + got, sizeof(v) - got);
    if (n <= 0) _exit(91);
    got += static_cast<size_t>(n);
  }
  return v;
}

namespace {

void apply_env(const Env& env) {
  for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  // Timing tests measure the shim, not the scheduler: on a loaded CI host, ask for a better nice level
  // (best effort; threads created later inherit it). Without privilege this silently does nothing.
  errno = 0;
  if (setpriority(PRIO_PROCESS, 0, -10) != 0) errno = 0;
}

void redirect_output(const std::string& prefix, const char* who) {
  if (prefix.empty()) return;
  const std::string path = prefix + who + ".log";
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) _exit(94);
  dup2(fileno(f), STDOUT_FILENO);
  dup2(fileno(f), STDERR_FILENO);
  std::fclose(f);
}

int wait_child(pid_t pid, double deadline_ms) {
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      return 128 + WTERMSIG(status);
    }
    if (now_ms() > deadline_ms) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return 124;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void write_all(int fd, const void* data, size_t size) {
  if (write(fd, data, size) != static_cast<ssize_t>(size)) _exit(92);
}

void read_all(int fd, void* data, size_t size) {
  size_t got = 0;
  while (got < size) {
    const ssize_t n = read(fd, static_cast<char*>(data) + got, size - got);
    if (n <= 0) _exit(93);
    got += static_cast<size_t>(n);
  }
}

}  // namespace

std::unique_ptr<net::LoadedNetPlugin> load_and_init(const std::string& path, void** ctx) {
  std::string error;
  auto plugin = net::LoadedNetPlugin::open(path, &error);
  CHILD_CHECK(plugin != nullptr, "%s", error.c_str());
  ncclNetCommConfig_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
  const ncclResult_t r = plugin->init(ctx, 1, &config, nullptr);
  CHILD_CHECK(r == ncclSuccess, "init returned %d", static_cast<int>(r));
  int ndev = 0;
  CHILD_CHECK(plugin->devices(&ndev) == ncclSuccess && ndev >= 1, "devices: %d", ndev);
  return plugin;
}

ncclResult_t wait_request(net::LoadedNetPlugin& plugin, void* request, int* done, int* size,
                          std::chrono::milliseconds timeout) {
  const double deadline = now_ms() + static_cast<double>(timeout.count());
  *done = 0;
  for (;;) {
    const ncclResult_t r = plugin.test(request, done, size);
    if (r != ncclSuccess || *done) return r;
    if (now_ms() > deadline) return ncclSuccess;
    std::this_thread::yield();
  }
}

void* post_send(net::LoadedNetPlugin& plugin, void* comm, void* data, size_t size, int tag,
                ncclResult_t* result) {
  void* request = nullptr;
  for (int attempt = 0; attempt < 1000000 && !request; ++attempt) {
    *result = plugin.isend(comm, data, size, tag, nullptr, nullptr, &request);
    if (*result != ncclSuccess) return nullptr;
  }
  return request;
}

void* post_recv(net::LoadedNetPlugin& plugin, void* comm, void* data, size_t size, int tag,
                ncclResult_t* result) {
  void* request = nullptr;
  for (int attempt = 0; attempt < 1000000 && !request; ++attempt) {
    *result = plugin.irecv(comm, 1, &data, &size, &tag, nullptr, nullptr, &request);
    if (*result != ncclSuccess) return nullptr;
  }
  return request;
}

int run_child(const Env& env, const std::function<int()>& body, int timeout_s) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    apply_env(env);
    const int code = body();
    std::fflush(nullptr);
    _exit(code);
  }
  return wait_child(pid, now_ms() + timeout_s * 1000.0);
}

static void preload(const std::string& library) {
  if (library.empty()) return;
  CHILD_CHECK(dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL) != nullptr, "%s", dlerror());
}

std::pair<int, int> run_pair(const PairOptions& options, const std::function<int(Endpoint&)>& sender,
                             const std::function<int(Endpoint&)>& receiver) {
  const std::string plugin_path = options.plugin.empty() ? shim_path() : options.plugin;
  int r2s[2], s2r[2];
  if (pipe(r2s) != 0 || pipe(s2r) != 0) return {99, 99};
  std::fflush(nullptr);
  const pid_t receiver_pid = fork();
  if (receiver_pid == 0) {
    Env env = options.receiver_env;
    env.emplace("NCCLFI_RANK", "1");
    apply_env(env);
    redirect_output(options.output_prefix, "receiver");
    close(r2s[0]);
    close(s2r[1]);
    Endpoint ep;
    preload(options.preload_library);
    auto plugin = load_and_init(plugin_path, &ep.ctx);
    ep.plugin = plugin.get();
    char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
    void* listen_comm = nullptr;
    const ncclResult_t lr = plugin->listen(ep.ctx, 0, handle, &listen_comm);
    CHILD_CHECK(lr == ncclSuccess && listen_comm, "listen: %d", static_cast<int>(lr));
    write_all(r2s[1], handle, sizeof(handle));
    const double deadline = now_ms() + 10000;
    while (!ep.comm) {
      const ncclResult_t ar = plugin->accept(listen_comm, &ep.comm);
      CHILD_CHECK(ar == ncclSuccess, "accept: %d", static_cast<int>(ar));
      CHILD_CHECK(now_ms() < deadline, "accept did not complete in 10 s");
      if (!ep.comm) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    plugin->close_listen(listen_comm);
    ep.to_peer = r2s[1];
    ep.from_peer = s2r[0];
    const int code = receiver(ep);
    std::fflush(nullptr);
    _exit(code);
  }
  const pid_t sender_pid = fork();
  if (sender_pid == 0) {
    Env env = options.sender_env;
    env.emplace("NCCLFI_RANK", "0");
    apply_env(env);
    redirect_output(options.output_prefix, "sender");
    close(r2s[1]);
    close(s2r[0]);
    Endpoint ep;
    preload(options.preload_library);
    auto plugin = load_and_init(plugin_path, &ep.ctx);
    ep.plugin = plugin.get();
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    read_all(r2s[0], handle, sizeof(handle));
    const double deadline = now_ms() + 10000;
    while (!ep.comm) {
      const ncclResult_t cr = plugin->connect(ep.ctx, 0, handle, &ep.comm);
      CHILD_CHECK(cr == ncclSuccess, "connect: %d", static_cast<int>(cr));
      CHILD_CHECK(now_ms() < deadline, "connect did not complete in 10 s");
      if (!ep.comm) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    ep.to_peer = s2r[1];
    ep.from_peer = r2s[0];
    const int code = sender(ep);
    std::fflush(nullptr);
    _exit(code);
  }
  close(r2s[0]);
  close(r2s[1]);
  close(s2r[0]);
  close(s2r[1]);
  const double deadline = now_ms() + options.timeout_s * 1000.0;
  const int sender_code = wait_child(sender_pid, deadline);
  const int receiver_code = wait_child(receiver_pid, deadline);
  return {sender_code, receiver_code};
}

std::string write_temp_file(const std::string& name, const std::string& text) {
  char dir_template[] = "/tmp/ncclfi-plugin-test-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  const std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ncclfi::plugin_test
