// A call-recording test double of libnccl.so.2, compiled against the real nccl.h so every signature
// is NCCL's own. Like NCCL it defines each public name weak with a strong pnccl* alias, and calls its
// own public names through the PLT (ncclBcast -> ncclBroadcast, ncclCommInitAll -> ncclGetUniqueId,
// ncclCommUserRank -> ncclCommGetAsyncError), so the preload meets the same nesting as with NCCL.
//
// Environment: NCCL_DOUBLE_LOG=<file> appends one line per call (call_format.h); NCCL_DOUBLE_FILL=1
// makes ops write a byte pattern into their receive buffer (at the outermost ncclGroupEnd when called
// inside a group, as NCCL launches there). Built with NCCL_DOUBLE_OLD it lacks the 2.27+/2.28 symbols
// (ncclCommShrink, ncclAlltoAll, ncclGather, ncclScatter), like an older NCCL.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "call_format.h"

using namespace ncclfi_double;

#define NCCL_API(ret, func, ...)                                                                            \
  extern "C" __attribute__((visibility("default"))) __attribute__((alias(#func))) ret p##func(__VA_ARGS__); \
  extern "C" __attribute__((visibility("default"))) __attribute__((weak)) ret func(__VA_ARGS__)

namespace {

std::atomic<int> g_next_comm{0};
thread_local int t_device = 0;
thread_local int t_group_depth = 0;
thread_local bool t_in_query = false;  // polls made by the queries below are NCCL-internal: not recorded
thread_local std::vector<std::function<void()>> t_group_work;

int log_fd() {
  static int fd = [] {
    const char* path = std::getenv("NCCL_DOUBLE_LOG");
    return path != nullptr ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
  }();
  return fd;
}

void write_line(const std::string& line) {
  std::string out = line + "\n";
  if (write(log_fd(), out.data(), out.size()) < 0) std::abort();
}

// Formats the line only when logging: with no log the double costs a few ns per call (the preload
// benchmark measures against it).
#define record(...)                             \
  do {                                          \
    if (log_fd() >= 0) write_line(__VA_ARGS__); \
  } while (0)

bool fill_enabled() {
  static bool on = [] {
    const char* v = std::getenv("NCCL_DOUBLE_FILL");
    return v != nullptr && *v == '1';
  }();
  return on;
}

DoubleComm* as_comm(ncclComm_t comm) {
  return reinterpret_cast<DoubleComm*>(comm);
}

ncclComm_t new_comm(int rank, int nranks, int device) {
  auto* c = new DoubleComm{kCommMagic, g_next_comm.fetch_add(1), rank, nranks, device, 0, 0};
  return reinterpret_cast<ncclComm_t>(c);
}

size_t type_size(ncclDataType_t t) {
  switch (static_cast<int>(t)) {
    case ncclInt8:
    case ncclUint8:
    case 10:
    case 11:
      return 1;
    case ncclFloat16:
    case 9:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    default:
      return 8;
  }
}

// The "kernel": writes the fill pattern (byte j = j*31+7) into the result buffer.
void run_op(void* recvbuff, size_t elements, ncclDataType_t t) {
  if (!fill_enabled() || recvbuff == nullptr) return;
  auto* b = static_cast<unsigned char*>(recvbuff);
  const size_t n = elements * type_size(t);
  auto work = [b, n] {
    for (size_t j = 0; j < n; ++j) b[j] = static_cast<unsigned char>(j * 31 + 7);
  };
  if (t_group_depth > 0) {
    t_group_work.emplace_back(work);
  } else {
    work();
  }
}

// Non-blocking comms: work queued until a poll of ncclCommGetAsyncError answers ncclSuccess.
std::mutex g_nb_mu;
std::map<int, std::vector<std::function<void()>>> g_nb_work;

int nranks_of(ncclComm_t comm) {
  return comm != nullptr ? as_comm(comm)->nranks : 1;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void ncclfiDoubleSetDevice(int device) {
  t_device = device;
}

NCCL_API(ncclResult_t, ncclGetVersion, int* version) {
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

NCCL_API(const char*, ncclGetErrorString, ncclResult_t result) {
  static const char* names[] = {"success",          "unhandled cuda error", "system error", "internal error",
                                "invalid argument", "invalid usage",        "remote error", "in progress"};
  int r = static_cast<int>(result);
  return r >= 0 && r < 8 ? names[r] : "unknown";
}

NCCL_API(const char*, ncclGetLastError, ncclComm_t comm) {
  (void)comm;
  return "";
}

NCCL_API(ncclResult_t, ncclGetUniqueId, ncclUniqueId* uniqueId) {
  record(call_line("ncclGetUniqueId", arg("uniqueId", uniqueId)));
  std::memset(uniqueId, 0, sizeof *uniqueId);
  std::memcpy(uniqueId->internal, "double-id", 9);
  return ncclSuccess;
}

// ---- communicators

// What NCCL reads from its environment at communicator creation, as far as the topology faults change it:
// the double records the variables it would obey and writes a topology where NCCL would dump one.
void imitate_init_environment(int device) {
  for (const char* name : {"NCCL_P2P_DISABLE", "NCCL_TOPO_FILE"}) {
    if (const char* v = std::getenv(name)) record(std::string("env ") + name + "=" + v);
  }
  if (const char* dump = std::getenv("NCCL_TOPO_DUMP_FILE")) {
    std::FILE* f = std::fopen(dump, "w");
    if (f == nullptr) return;
    // The shape of NCCL's dump: the GPU's PCI node with its link, under a switch, under the CPU.
    std::fprintf(f,
                 "<system version=\"1\">\n"
                 "  <cpu host_hash=\"0x1\" numaid=\"0\" affinity=\"ff\" arch=\"x86_64\">\n"
                 "    <pci busid=\"0000:17:00.0\" class=\"0x060400\" link_speed=\"32.0 GT/s PCIe\" "
                 "link_width=\"16\">\n"
                 "      <pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" "
                 "link_width=\"16\">\n"
                 "        <gpu dev=\"%d\" sm=\"90\" rank=\"0\" gdr=\"1\"/>\n"
                 "      </pci>\n"
                 "    </pci>\n"
                 "  </cpu>\n"
                 "</system>\n",
                 device);
    std::fclose(f);
  }
}

NCCL_API(ncclResult_t, ncclCommInitRank, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  record(call_line("ncclCommInitRank", arg("comm", comm), arg("nranks", nranks),
                   arg("commId", id_str(commId)), arg("rank", rank)));
  imitate_init_environment(t_device);
  *comm = new_comm(rank, nranks, t_device);
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommInitRankConfig, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
         ncclConfig_t* config) {
  record(call_line("ncclCommInitRankConfig", arg("comm", comm), arg("nranks", nranks),
                   arg("commId", id_str(commId)), arg("rank", rank), arg("config", config_str(config))));
  imitate_init_environment(t_device);
  *comm = new_comm(rank, nranks, t_device);
  if (config != nullptr && config->blocking == 0) {
    as_comm(*comm)->nonblocking = 1;
    as_comm(*comm)->pending = 2;
    return ncclInProgress;
  }
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommInitAll, ncclComm_t* comm, int ndev, const int* devlist) {
  record(call_line("ncclCommInitAll", arg("comm", comm), arg("ndev", ndev), arg("devlist", devlist)));
  ncclUniqueId id;
  ncclResult_t rc = ncclGetUniqueId(&id);  // through the PLT, as NCCL does
  if (rc != ncclSuccess) return rc;
  imitate_init_environment(devlist != nullptr && ndev > 0 ? devlist[0] : 0);
  for (int i = 0; i < ndev; ++i) comm[i] = new_comm(i, ndev, devlist != nullptr ? devlist[i] : i);
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommInitRankScalable, ncclComm_t* newcomm, int nranks, int myrank, int nId,
         ncclUniqueId* commIds, ncclConfig_t* config) {
  record(call_line("ncclCommInitRankScalable", arg("newcomm", newcomm), arg("nranks", nranks),
                   arg("myrank", myrank), arg("nId", nId), arg("commIds", commIds),
                   arg("commId0", id_str(commIds[0])), arg("config", config_str(config))));
  *newcomm = new_comm(myrank, nranks, t_device);
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommSplit, ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
         ncclConfig_t* config) {
  record(call_line("ncclCommSplit", arg("comm", comm_str(comm)), arg("color", color), arg("key", key),
                   arg("newcomm", newcomm), arg("config", config_str(config))));
  // Every rank with the same color joins; the double keeps the parent's rank and size, and key
  // becomes the new rank when non-negative (enough for the tests).
  DoubleComm* parent = as_comm(comm);
  *newcomm = color == NCCL_SPLIT_NOCOLOR
                 ? nullptr
                 : new_comm(key >= 0 ? key : parent->rank, parent->nranks, parent->device);
  return ncclSuccess;
}

#ifndef NCCL_DOUBLE_OLD
NCCL_API(ncclResult_t, ncclCommShrink, ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
         ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  record(call_line("ncclCommShrink", arg("comm", comm_str(comm)), arg("excludeRanksList", excludeRanksList),
                   arg("excludeRanksCount", excludeRanksCount), arg("newcomm", newcomm),
                   arg("config", config_str(config)), arg("shrinkFlags", shrinkFlags)));
  DoubleComm* parent = as_comm(comm);
  *newcomm = new_comm(parent->rank, parent->nranks - excludeRanksCount, parent->device);
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommRevoke, ncclComm_t comm, int revokeFlags) {
  record(call_line("ncclCommRevoke", arg("comm", comm_str(comm)), arg("revokeFlags", revokeFlags)));
  return ncclSuccess;
}
#endif

NCCL_API(ncclResult_t, ncclCommFinalize, ncclComm_t comm) {
  record(call_line("ncclCommFinalize", arg("comm", comm_str(comm))));
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommDestroy, ncclComm_t comm) {
  record(call_line("ncclCommDestroy", arg("comm", comm_str(comm))));
  return ncclSuccess;  // never freed: comm ids must stay readable for the logs
}

NCCL_API(ncclResult_t, ncclCommAbort, ncclComm_t comm) {
  record(call_line("ncclCommAbort", arg("comm", comm_str(comm))));
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommGetAsyncError, ncclComm_t comm, ncclResult_t* asyncError) {
  DoubleComm* c = as_comm(comm);
  if (t_in_query) {  // NCCL's own readiness check: no side effect
    *asyncError = c->pending > 0 ? ncclInProgress : ncclSuccess;
    return ncclSuccess;
  }
  record(call_line("ncclCommGetAsyncError", arg("comm", comm_str(comm)), arg("asyncError", asyncError)));
  if (c->pending > 0) {
    --c->pending;
    *asyncError = ncclInProgress;
    return ncclSuccess;
  }
  std::vector<std::function<void()>> work;
  {
    std::lock_guard lock(g_nb_mu);
    work.swap(g_nb_work[c->id]);
  }
  for (auto& w : work) w();  // the queued ops "launch" now, before the caller hears ncclSuccess
  *asyncError = ncclSuccess;
  return ncclSuccess;
}

// The queries check readiness the way NCCL's ncclCommEnsureReady does: through the public poll.
static ncclResult_t ensure_ready(ncclComm_t comm) {
  ncclResult_t state = ncclSuccess;
  t_in_query = true;
  ncclResult_t rc = ncclCommGetAsyncError(comm, &state);
  t_in_query = false;
  // init.cc's ncclCommEnsureReady warns each time it refuses (NCCL_DEBUG=WARN prints it).
  if (rc == ncclSuccess && state == ncclInProgress)
    record("WARN Attempt to use communicator before the previous operation returned ncclSuccess");
  return rc != ncclSuccess ? rc : (state == ncclInProgress ? ncclInvalidArgument : ncclSuccess);
}

NCCL_API(ncclResult_t, ncclCommCount, const ncclComm_t comm, int* count) {
  if (ensure_ready(comm) != ncclSuccess) return ncclInvalidArgument;
  *count = as_comm(comm)->nranks;
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommCuDevice, const ncclComm_t comm, int* device) {
  if (ensure_ready(comm) != ncclSuccess) return ncclInvalidArgument;
  *device = as_comm(comm)->device;
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommUserRank, const ncclComm_t comm, int* rank) {
  if (ensure_ready(comm) != ncclSuccess) return ncclInvalidArgument;
  *rank = as_comm(comm)->rank;
  return ncclSuccess;
}

// ---- registration, memory, reduction ops

NCCL_API(ncclResult_t, ncclMemAlloc, void** ptr, size_t size) {
  record(call_line("ncclMemAlloc", arg("ptr", ptr), arg("size", static_cast<long long>(size))));
  *ptr = reinterpret_cast<void*>(0x7000);
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclMemFree, void* ptr) {
  record(call_line("ncclMemFree", arg("ptr", ptr)));
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommRegister, const ncclComm_t comm, void* buff, size_t size, void** handle) {
  record(call_line("ncclCommRegister", arg("comm", comm_str(comm)), arg("buff", buff),
                   arg("size", static_cast<long long>(size)), arg("handle", handle)));
  *handle = reinterpret_cast<void*>(0x7100);
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommDeregister, const ncclComm_t comm, void* handle) {
  record(call_line("ncclCommDeregister", arg("comm", comm_str(comm)), arg("handle", handle)));
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommWindowRegister, ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
         int winFlags) {
  record(call_line("ncclCommWindowRegister", arg("comm", comm_str(comm)), arg("buff", buff),
                   arg("size", static_cast<long long>(size)), arg("win", win), arg("winFlags", winFlags)));
  *win = reinterpret_cast<ncclWindow_t>(0x7200);
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommWindowDeregister, ncclComm_t comm, ncclWindow_t win) {
  record(call_line("ncclCommWindowDeregister", arg("comm", comm_str(comm)), arg("win", win)));
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclRedOpCreatePreMulSum, ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
         ncclScalarResidence_t residence, ncclComm_t comm) {
  record(call_line("ncclRedOpCreatePreMulSum", arg("op", op), arg("scalar", scalar),
                   arg("datatype", datatype), arg("residence", residence), arg("comm", comm_str(comm))));
  *op = static_cast<ncclRedOp_t>(ncclNumOps + 1);
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclRedOpDestroy, ncclRedOp_t op, ncclComm_t comm) {
  record(call_line("ncclRedOpDestroy", arg("op", op), arg("comm", comm_str(comm))));
  return ncclSuccess;
}

// ---- collectives and point-to-point

NCCL_API(ncclResult_t, ncclAllReduce, const void* sendbuff, void* recvbuff, size_t count,
         ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  record(call_line("ncclAllReduce", arg("sendbuff", sendbuff), arg("recvbuff", recvbuff),
                   arg("count", static_cast<long long>(count)), arg("datatype", datatype), arg("op", op),
                   arg("comm", comm_str(comm)), arg("stream", stream)));
  if (comm != nullptr && as_comm(comm)->nonblocking != 0 && t_group_depth == 0) {
    std::lock_guard lock(g_nb_mu);
    g_nb_work[as_comm(comm)->id].emplace_back([=] { run_op(recvbuff, count, datatype); });
    as_comm(comm)->pending = 1;
    return ncclInProgress;
  }
  run_op(recvbuff, count, datatype);
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclAllGather, const void* sendbuff, void* recvbuff, size_t sendcount,
         ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  record(call_line("ncclAllGather", arg("sendbuff", sendbuff), arg("recvbuff", recvbuff),
                   arg("sendcount", static_cast<long long>(sendcount)), arg("datatype", datatype),
                   arg("comm", comm_str(comm)), arg("stream", stream)));
  run_op(recvbuff, sendcount * static_cast<size_t>(nranks_of(comm)), datatype);
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclReduceScatter, const void* sendbuff, void* recvbuff, size_t recvcount,
         ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  record(call_line("ncclReduceScatter", arg("sendbuff", sendbuff), arg("recvbuff", recvbuff),
                   arg("recvcount", static_cast<long long>(recvcount)), arg("datatype", datatype),
                   arg("op", op), arg("comm", comm_str(comm)), arg("stream", stream)));
  run_op(recvbuff, recvcount, datatype);
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclReduce, const void* sendbuff, void* recvbuff, size_t count,
         ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  record(call_line("ncclReduce", arg("sendbuff", sendbuff), arg("recvbuff", recvbuff),
                   arg("count", static_cast<long long>(count)), arg("datatype", datatype), arg("op", op),
                   arg("root", root), arg("comm", comm_str(comm)), arg("stream", stream)));
  if (comm != nullptr && as_comm(comm)->rank == root) run_op(recvbuff, count, datatype);
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclBroadcast, const void* sendbuff, void* recvbuff, size_t count,
         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  record(call_line("ncclBroadcast", arg("sendbuff", sendbuff), arg("recvbuff", recvbuff),
                   arg("count", static_cast<long long>(count)), arg("datatype", datatype), arg("root", root),
                   arg("comm", comm_str(comm)), arg("stream", stream)));
  run_op(recvbuff, count, datatype);
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclBcast, void* buff, size_t count, ncclDataType_t datatype, int root,
         ncclComm_t comm, cudaStream_t stream) {
  record(call_line("ncclBcast", arg("buff", buff), arg("count", static_cast<long long>(count)),
                   arg("datatype", datatype), arg("root", root), arg("comm", comm_str(comm)),
                   arg("stream", stream)));
  return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);  // through the PLT, as NCCL does
}

#ifndef NCCL_DOUBLE_OLD
NCCL_API(ncclResult_t, ncclAlltoAll, const void* sendbuff, void* recvbuff, size_t count,
         ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  record(call_line("ncclAlltoAll", arg("sendbuff", sendbuff), arg("recvbuff", recvbuff),
                   arg("count", static_cast<long long>(count)), arg("datatype", datatype),
                   arg("comm", comm_str(comm)), arg("stream", stream)));
  run_op(recvbuff, count * static_cast<size_t>(nranks_of(comm)), datatype);
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclGather, const void* sendbuff, void* recvbuff, size_t count,
         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  record(call_line("ncclGather", arg("sendbuff", sendbuff), arg("recvbuff", recvbuff),
                   arg("count", static_cast<long long>(count)), arg("datatype", datatype), arg("root", root),
                   arg("comm", comm_str(comm)), arg("stream", stream)));
  if (comm != nullptr && as_comm(comm)->rank == root) {
    run_op(recvbuff, count * static_cast<size_t>(nranks_of(comm)), datatype);
  }
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclScatter, const void* sendbuff, void* recvbuff, size_t count,
         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  record(call_line("ncclScatter", arg("sendbuff", sendbuff), arg("recvbuff", recvbuff),
                   arg("count", static_cast<long long>(count)), arg("datatype", datatype), arg("root", root),
                   arg("comm", comm_str(comm)), arg("stream", stream)));
  run_op(recvbuff, count, datatype);
  return ncclSuccess;
}
#endif

NCCL_API(ncclResult_t, ncclSend, const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
         ncclComm_t comm, cudaStream_t stream) {
  record(call_line("ncclSend", arg("sendbuff", sendbuff), arg("count", static_cast<long long>(count)),
                   arg("datatype", datatype), arg("peer", peer), arg("comm", comm_str(comm)),
                   arg("stream", stream)));
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclRecv, void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
         ncclComm_t comm, cudaStream_t stream) {
  record(call_line("ncclRecv", arg("recvbuff", recvbuff), arg("count", static_cast<long long>(count)),
                   arg("datatype", datatype), arg("peer", peer), arg("comm", comm_str(comm)),
                   arg("stream", stream)));
  run_op(recvbuff, count, datatype);
  return ncclSuccess;
}

// ---- groups

NCCL_API(ncclResult_t, ncclGroupStart) {
  record("ncclGroupStart");
  ++t_group_depth;
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclGroupEnd) {
  record("ncclGroupEnd");
  if (t_group_depth == 0) return ncclInvalidUsage;
  if (--t_group_depth == 0) {
    auto work = std::move(t_group_work);
    t_group_work.clear();
    for (auto& w : work) w();
  }
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclGroupSimulateEnd, ncclSimInfo_t* simInfo) {
  record(call_line("ncclGroupSimulateEnd", arg("simInfo", simInfo)));
  if (t_group_depth == 0) return ncclInvalidUsage;
  if (--t_group_depth == 0) t_group_work.clear();
  simInfo->estimatedTime = 1.5f;
  return ncclSuccess;
}
