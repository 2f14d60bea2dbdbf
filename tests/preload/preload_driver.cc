// The program the preload tests run under LD_PRELOAD, linked against the NCCL test double. Modes:
//   forward-all EXPECT       call every wrapped function once with distinctive arguments; write the
//                            lines the double must record to EXPECT ("k=*" where only NCCL knows it)
//   ops OP N [opts]          make a comm, call OP N times; after each, poll ncclCommGetAsyncError
//   init API [opts]          one communicator constructor (initrank, initrankconfig, initall, split,
//                            shrink, scalable), timed
//   initall N                one process, two devices (ncclCommInitAll): N grouped allreduces
//   old-nccl                 an allreduce, then ncclCommShrink (absent from the "old" double)
// opts: --rank R --nranks K --count C --dtype T --dump FILE --group (ops inside GroupStart/End)
//       --nonblocking (config.blocking = 0; after each op, poll until not ncclInProgress)
//       --linger-ms MS (after the ops, stay alive this long: time for a gpu_hang release to show)
// Each call prints "call I OP rc=RC ms=MS" (flushed), so a hang shows as a missing line.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nccl.h>

#include "call_format.h"

using namespace ncclfi_double;

extern "C" void ncclfiDoubleSetDevice(int device);

namespace {

struct Options {
  int rank = 0;
  int nranks = 2;
  size_t count = 64;
  ncclDataType_t dtype = ncclFloat32;
  std::string dump;
  bool group = false;
  bool nonblocking = false;
  int linger_ms = 0;
  bool abort = false;  // tear the comm down with ncclCommAbort instead of ncclCommDestroy
};

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

template <class T>
T* fake(uintptr_t v) {
  return reinterpret_cast<T*>(v);
}

cudaStream_t kStream = fake<CUstream_st>(0x5151);

int forward_all(const char* expect_path) {
  std::vector<std::string> expect;
  int failures = 0;
  auto check = [&](const char* name, ncclResult_t rc) {
    say(std::string("rc ") + name + " " + std::to_string(rc));
    if (rc != ncclSuccess) ++failures;
  };
  ncclUniqueId id{};
  expect.push_back(call_line("ncclGetUniqueId", arg("uniqueId", &id)));
  check("ncclGetUniqueId", ncclGetUniqueId(&id));

  ncclComm_t c0 = nullptr, c1 = nullptr, all[2] = {nullptr, nullptr}, c4 = nullptr, c5 = nullptr,
             c6 = nullptr;
  ncclfiDoubleSetDevice(3);
  expect.push_back(call_line("ncclCommInitRank", arg("comm", &c0), arg("nranks", 4),
                             arg("commId", id_str(id)), arg("rank", 2)));
  check("ncclCommInitRank", ncclCommInitRank(&c0, 4, id, 2));

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
  config.netName = "double-net";
  config.commName = "forward-all";
  expect.push_back(call_line("ncclCommInitRankConfig", arg("comm", &c1), arg("nranks", 4),
                             arg("commId", id_str(id)), arg("rank", 3), arg("config", config_str(&config))));
  check("ncclCommInitRankConfig", ncclCommInitRankConfig(&c1, 4, id, 3, &config));

  const int devlist[2] = {5, 6};
  expect.push_back(call_line("ncclCommInitAll", arg("comm", all), arg("ndev", 2), arg("devlist", devlist)));
  expect.push_back("ncclGetUniqueId uniqueId=*");  // nested: NCCL's own call
  check("ncclCommInitAll", ncclCommInitAll(all, 2, devlist));

  expect.push_back(call_line("ncclCommSplit", arg("comm", "comm#0"), arg("color", 7), arg("key", 1),
                             arg("newcomm", &c4), arg("config", config_str(&config))));
  check("ncclCommSplit", ncclCommSplit(c0, 7, 1, &c4, &config));

  ncclUniqueId ids[2] = {id, id};
  ids[1].internal[0] = 'z';
  expect.push_back(call_line("ncclCommInitRankScalable", arg("newcomm", &c5), arg("nranks", 4),
                             arg("myrank", 1), arg("nId", 2), arg("commIds", ids),
                             arg("commId0", id_str(ids[0])), arg("config", config_str(&config))));
  check("ncclCommInitRankScalable", ncclCommInitRankScalable(&c5, 4, 1, 2, ids, &config));

  int exclude[1] = {1};
  expect.push_back(call_line("ncclCommShrink", arg("comm", "comm#0"), arg("excludeRanksList", exclude),
                             arg("excludeRanksCount", 1), arg("newcomm", &c6),
                             arg("config", config_str(&config)), arg("shrinkFlags", NCCL_SHRINK_ABORT)));
  check("ncclCommShrink", ncclCommShrink(c0, exclude, 1, &c6, &config, NCCL_SHRINK_ABORT));

  const void* sb = fake<void>(0x1001);
  void* rb = fake<void>(0x2001);
  const std::string cs = "comm#0";
  auto n = [](long long v) { return v; };
  expect.push_back(call_line("ncclAllReduce", arg("sendbuff", sb), arg("recvbuff", rb),
                             arg("count", n(1000003)), arg("datatype", ncclFloat64), arg("op", ncclMax),
                             arg("comm", cs), arg("stream", kStream)));
  check("ncclAllReduce", ncclAllReduce(sb, rb, 1000003, ncclFloat64, ncclMax, c0, kStream));
  expect.push_back(call_line("ncclAllGather", arg("sendbuff", sb), arg("recvbuff", rb),
                             arg("sendcount", n(77)), arg("datatype", ncclBfloat16), arg("comm", cs),
                             arg("stream", kStream)));
  check("ncclAllGather", ncclAllGather(sb, rb, 77, ncclBfloat16, c0, kStream));
  expect.push_back(call_line("ncclReduceScatter", arg("sendbuff", sb), arg("recvbuff", rb),
                             arg("recvcount", n(99)), arg("datatype", ncclInt64), arg("op", ncclProd),
                             arg("comm", cs), arg("stream", kStream)));
  check("ncclReduceScatter", ncclReduceScatter(sb, rb, 99, ncclInt64, ncclProd, c0, kStream));
  expect.push_back(call_line("ncclReduce", arg("sendbuff", sb), arg("recvbuff", rb), arg("count", n(5)),
                             arg("datatype", ncclUint8), arg("op", ncclMin), arg("root", 3), arg("comm", cs),
                             arg("stream", kStream)));
  check("ncclReduce", ncclReduce(sb, rb, 5, ncclUint8, ncclMin, 3, c0, kStream));
  expect.push_back(call_line("ncclBroadcast", arg("sendbuff", sb), arg("recvbuff", rb), arg("count", n(6)),
                             arg("datatype", ncclHalf), arg("root", 1), arg("comm", cs),
                             arg("stream", kStream)));
  check("ncclBroadcast", ncclBroadcast(sb, rb, 6, ncclHalf, 1, c0, kStream));
  expect.push_back(call_line("ncclBcast", arg("buff", rb), arg("count", n(8)), arg("datatype", ncclInt32),
                             arg("root", 2), arg("comm", cs), arg("stream", kStream)));
  expect.push_back(call_line("ncclBroadcast", arg("sendbuff", rb), arg("recvbuff", rb), arg("count", n(8)),
                             arg("datatype", ncclInt32), arg("root", 2), arg("comm", cs),
                             arg("stream", kStream)));
  check("ncclBcast", ncclBcast(rb, 8, ncclInt32, 2, c0, kStream));
  expect.push_back(call_line("ncclAlltoAll", arg("sendbuff", sb), arg("recvbuff", rb), arg("count", n(9)),
                             arg("datatype", ncclUint32), arg("comm", cs), arg("stream", kStream)));
  check("ncclAlltoAll", ncclAlltoAll(sb, rb, 9, ncclUint32, c0, kStream));
  expect.push_back(call_line("ncclGather", arg("sendbuff", sb), arg("recvbuff", rb), arg("count", n(10)),
                             arg("datatype", ncclFloat16), arg("root", 1), arg("comm", cs),
                             arg("stream", kStream)));
  check("ncclGather", ncclGather(sb, rb, 10, ncclFloat16, 1, c0, kStream));
  expect.push_back(call_line("ncclScatter", arg("sendbuff", sb), arg("recvbuff", rb), arg("count", n(11)),
                             arg("datatype", ncclInt8), arg("root", 0), arg("comm", cs),
                             arg("stream", kStream)));
  check("ncclScatter", ncclScatter(sb, rb, 11, ncclInt8, 0, c0, kStream));

  expect.push_back("ncclGroupStart");
  check("ncclGroupStart", ncclGroupStart());
  expect.push_back(call_line("ncclSend", arg("sendbuff", sb), arg("count", n(12)), arg("datatype", ncclFloat),
                             arg("peer", 3), arg("comm", cs), arg("stream", kStream)));
  check("ncclSend", ncclSend(sb, 12, ncclFloat, 3, c0, kStream));
  expect.push_back(call_line("ncclRecv", arg("recvbuff", rb), arg("count", n(13)), arg("datatype", ncclFloat),
                             arg("peer", 1), arg("comm", cs), arg("stream", kStream)));
  check("ncclRecv", ncclRecv(rb, 13, ncclFloat, 1, c0, kStream));
  expect.push_back("ncclGroupEnd");
  check("ncclGroupEnd", ncclGroupEnd());

  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  expect.push_back("ncclGroupStart");
  check("ncclGroupStart", ncclGroupStart());
  expect.push_back(call_line("ncclAllReduce", arg("sendbuff", sb), arg("recvbuff", rb), arg("count", n(14)),
                             arg("datatype", ncclFloat), arg("op", ncclSum), arg("comm", cs),
                             arg("stream", kStream)));
  check("ncclAllReduce", ncclAllReduce(sb, rb, 14, ncclFloat, ncclSum, c0, kStream));
  expect.push_back(call_line("ncclGroupSimulateEnd", arg("simInfo", &sim)));
  check("ncclGroupSimulateEnd", ncclGroupSimulateEnd(&sim));

  ncclResult_t async = ncclInternalError;
  expect.push_back(call_line("ncclCommGetAsyncError", arg("comm", cs), arg("asyncError", &async)));
  check("ncclCommGetAsyncError", ncclCommGetAsyncError(c0, &async));
  if (async != ncclSuccess) ++failures;

  void* handle = nullptr;
  void* buff = fake<void>(0x3001);
  expect.push_back(call_line("ncclCommRegister", arg("comm", cs), arg("buff", buff), arg("size", n(4096)),
                             arg("handle", &handle)));
  check("ncclCommRegister", ncclCommRegister(c0, buff, 4096, &handle));
  expect.push_back(call_line("ncclCommDeregister", arg("comm", cs), arg("handle", fake<void>(0x7100))));
  check("ncclCommDeregister", ncclCommDeregister(c0, handle));
  ncclWindow_t win = nullptr;
  expect.push_back(call_line("ncclCommWindowRegister", arg("comm", cs), arg("buff", buff),
                             arg("size", n(8192)), arg("win", &win),
                             arg("winFlags", NCCL_WIN_COLL_SYMMETRIC)));
  check("ncclCommWindowRegister", ncclCommWindowRegister(c0, buff, 8192, &win, NCCL_WIN_COLL_SYMMETRIC));
  expect.push_back(call_line("ncclCommWindowDeregister", arg("comm", cs), arg("win", fake<void>(0x7200))));
  check("ncclCommWindowDeregister", ncclCommWindowDeregister(c0, win));
  void* mem = nullptr;
  expect.push_back(call_line("ncclMemAlloc", arg("ptr", &mem), arg("size", n(12345))));
  check("ncclMemAlloc", ncclMemAlloc(&mem, 12345));
  expect.push_back(call_line("ncclMemFree", arg("ptr", fake<void>(0x7000))));
  check("ncclMemFree", ncclMemFree(mem));
  ncclRedOp_t op = ncclSum;
  float scalar = 0.5f;
  expect.push_back(call_line("ncclRedOpCreatePreMulSum", arg("op", &op), arg("scalar", &scalar),
                             arg("datatype", ncclFloat), arg("residence", ncclScalarHostImmediate),
                             arg("comm", cs)));
  check("ncclRedOpCreatePreMulSum",
        ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat, ncclScalarHostImmediate, c0));
  expect.push_back(call_line("ncclRedOpDestroy", arg("op", ncclNumOps + 1), arg("comm", cs)));
  check("ncclRedOpDestroy", ncclRedOpDestroy(op, c0));

  expect.push_back(call_line("ncclCommRevoke", arg("comm", "comm#1"), arg("revokeFlags", 0)));
  check("ncclCommRevoke", ncclCommRevoke(c1, 0));
  expect.push_back(call_line("ncclCommFinalize", arg("comm", "comm#1")));
  check("ncclCommFinalize", ncclCommFinalize(c1));
  expect.push_back(call_line("ncclCommDestroy", arg("comm", "comm#1")));
  check("ncclCommDestroy", ncclCommDestroy(c1));
  expect.push_back(call_line("ncclCommAbort", arg("comm", "comm#0")));
  check("ncclCommAbort", ncclCommAbort(c0));
  (void)c4;
  (void)c5;
  (void)c6;

  std::ofstream out(expect_path);
  for (const auto& line : expect) out << line << "\n";
  say("failures " + std::to_string(failures));
  return failures == 0 ? 0 : 1;
}

ncclResult_t call_op(const std::string& op, ncclComm_t comm, void* send, void* recv, const Options& o) {
  const size_t c = o.count;
  if (op == "allreduce") return ncclAllReduce(send, recv, c, o.dtype, ncclSum, comm, kStream);
  if (op == "allgather") return ncclAllGather(send, recv, c, o.dtype, comm, kStream);
  if (op == "reducescatter") return ncclReduceScatter(send, recv, c, o.dtype, ncclSum, comm, kStream);
  if (op == "reduce") return ncclReduce(send, recv, c, o.dtype, ncclSum, 0, comm, kStream);
  if (op == "broadcast") return ncclBroadcast(send, recv, c, o.dtype, 0, comm, kStream);
  if (op == "bcast") return ncclBcast(recv, c, o.dtype, 0, comm, kStream);
  if (op == "alltoall") return ncclAlltoAll(send, recv, c, o.dtype, comm, kStream);
  if (op == "gather") return ncclGather(send, recv, c, o.dtype, 0, comm, kStream);
  if (op == "scatter") return ncclScatter(send, recv, c, o.dtype, 0, comm, kStream);
  if (op == "send") return ncclSend(send, c, o.dtype, (o.rank + 1) % o.nranks, comm, kStream);
  if (op == "recv") return ncclRecv(recv, c, o.dtype, (o.rank + o.nranks - 1) % o.nranks, comm, kStream);
  std::fprintf(stderr, "unknown op %s\n", op.c_str());
  std::exit(64);
}

int ops(const std::string& op, int n, const Options& o) {
  ncclUniqueId id{};
  ncclGetUniqueId(&id);
  ncclComm_t comm = nullptr;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = o.nonblocking ? 0 : 1;
  ncclResult_t rc = ncclCommInitRankConfig(&comm, o.nranks, id, o.rank, &config);
  say("init rc=" + std::to_string(rc));
  // A non-blocking comm is ready once the poll stops answering ncclInProgress.
  auto settle = [&] {
    ncclResult_t state = ncclInProgress;
    for (int poll = 0; poll < 100 && state == ncclInProgress; ++poll) ncclCommGetAsyncError(comm, &state);
    return state;
  };
  if (rc == ncclInProgress) rc = settle();
  if (rc != ncclSuccess) return 6;
  const size_t bytes = o.count * 8 * static_cast<size_t>(o.nranks);
  std::vector<unsigned char> send(bytes, 1), recv(bytes, 0);
  for (int i = 1; i <= n; ++i) {
    say("call " + std::to_string(i) + " " + op + " start");
    double t0 = now_ms();
    ncclResult_t group_rc = ncclSuccess;
    if (o.group) ncclGroupStart();
    rc = call_op(op, comm, send.data(), recv.data(), o);
    if (o.group) group_rc = ncclGroupEnd();
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.3f", now_ms() - t0);
    say("call " + std::to_string(i) + " " + op + " rc=" + std::to_string(rc) +
        (o.group ? " end=" + std::to_string(group_rc) : std::string()) + " ms=" + ms);
    ncclResult_t async = ncclSuccess;
    if (o.nonblocking) {
      async = settle();
    } else {
      ncclCommGetAsyncError(comm, &async);
    }
    say("async " + std::to_string(i) + " " + std::to_string(async));
  }
  if (!o.dump.empty()) {
    std::ofstream(o.dump, std::ios::binary)
        .write(reinterpret_cast<const char*>(recv.data()), static_cast<std::streamsize>(recv.size()));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(o.linger_ms));
  if (o.abort) {
    say("abort start");
    say("abort rc=" + std::to_string(ncclCommAbort(comm)));
  } else {
    ncclCommDestroy(comm);
  }
  say("done");
  return 0;
}

int init(const std::string& api, const Options& o) {
  ncclUniqueId id{};
  ncclGetUniqueId(&id);
  ncclComm_t parent = nullptr;
  if (api == "split" || api == "shrink") {
    ncclCommInitRank(&parent, o.nranks, id, o.rank);
    say("parent ready");
  }
  ncclComm_t comm[2] = {nullptr, nullptr};
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  int exclude[1] = {o.nranks - 1};
  double t0 = now_ms();
  say("init start");
  ncclResult_t rc = ncclInvalidArgument;
  if (api == "initrank") rc = ncclCommInitRank(&comm[0], o.nranks, id, o.rank);
  if (api == "initrankconfig") rc = ncclCommInitRankConfig(&comm[0], o.nranks, id, o.rank, &config);
  if (api == "initall") rc = ncclCommInitAll(comm, 2, nullptr);
  if (api == "split") rc = ncclCommSplit(parent, 0, o.rank, &comm[0], nullptr);
  if (api == "shrink") rc = ncclCommShrink(parent, exclude, 1, &comm[0], nullptr, NCCL_SHRINK_DEFAULT);
  if (api == "scalable") rc = ncclCommInitRankScalable(&comm[0], o.nranks, o.rank, 1, &id, &config);
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.3f", now_ms() - t0);
  say("init rc=" + std::to_string(rc) + " ms=" + ms + " comm=" + comm_str(comm[0]));
  return 0;
}

int initall(int n) {
  ncclComm_t comms[2] = {nullptr, nullptr};
  const int devs[2] = {0, 1};
  ncclResult_t rc = ncclCommInitAll(comms, 2, devs);
  say("init rc=" + std::to_string(rc));
  std::vector<float> buf(64);
  for (int i = 1; i <= n; ++i) {
    ncclGroupStart();
    ncclResult_t r0 = ncclAllReduce(buf.data(), buf.data(), 64, ncclFloat, ncclSum, comms[0], kStream);
    ncclResult_t r1 = ncclAllReduce(buf.data(), buf.data(), 64, ncclFloat, ncclSum, comms[1], kStream);
    ncclResult_t end = ncclGroupEnd();
    say("call " + std::to_string(i) + " rank0=" + std::to_string(r0) + " rank1=" + std::to_string(r1) +
        " end=" + std::to_string(end));
  }
  say("done");
  return 0;
}

int old_nccl() {
  ncclUniqueId id{};
  ncclGetUniqueId(&id);
  ncclComm_t comm = nullptr, small = nullptr;
  say("init rc=" + std::to_string(ncclCommInitRank(&comm, 2, id, 0)));
  float buf[4] = {};
  say("allreduce rc=" + std::to_string(ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, kStream)));
  int exclude[1] = {1};
  say("shrink rc=" + std::to_string(ncclCommShrink(comm, exclude, 1, &small, nullptr, 0)));
  say("done");
  return 0;
}

// Connects to 127.0.0.1:PORT for each port, after creating a communicator whose unique id names
// 127.0.0.1:ROOT_PORT as NCCL's bootstrap root (a magic, then the root's sockaddr: ncclBootstrapHandle);
// says "connect PORT ok" or "connect PORT errno NAME" for each.
int connect_ports(int root_port, const std::vector<int>& ports) {
  ncclUniqueId id{};
  sockaddr_in root{};
  root.sin_family = AF_INET;
  root.sin_port = htons(static_cast<uint16_t>(root_port));
  root.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const uint64_t magic = 0x1234;
  std::memcpy(id.internal, &magic, sizeof magic);
  std::memcpy(id.internal + sizeof magic, &root, sizeof root);
  ncclComm_t comm = nullptr;
  say("init rc=" + std::to_string(ncclCommInitRank(&comm, 2, id, 0)));
  for (int port : ports) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to);
    say("connect " + std::to_string(port) +
        (rc == 0 ? " ok" : std::string(" errno ") + strerrorname_np(errno)));
    ::close(fd);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 64;
  std::string mode = argv[1];
  Options o;
  std::vector<std::string> pos;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--rank")
      o.rank = std::atoi(next().c_str());
    else if (a == "--nranks")
      o.nranks = std::atoi(next().c_str());
    else if (a == "--count")
      o.count = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--dtype")
      o.dtype = static_cast<ncclDataType_t>(std::atoi(next().c_str()));
    else if (a == "--dump")
      o.dump = next();
    else if (a == "--group")
      o.group = true;
    else if (a == "--nonblocking")
      o.nonblocking = true;
    else if (a == "--linger-ms")
      o.linger_ms = std::atoi(next().c_str());
    else if (a == "--abort")
      o.abort = true;
    else
      pos.push_back(a);
  }
  if (mode == "forward-all" && pos.size() == 1) return forward_all(pos[0].c_str());
  if (mode == "ops" && pos.size() == 2) return ops(pos[0], std::atoi(pos[1].c_str()), o);
  if (mode == "init" && pos.size() == 1) return init(pos[0], o);
  if (mode == "initall" && pos.size() == 1) return initall(std::atoi(pos[0].c_str()));
  if (mode == "old-nccl") return old_nccl();
  if (mode == "connect" && pos.size() >= 2) {  // ROOT_PORT PORT...
    std::vector<int> ports;
    for (size_t i = 1; i < pos.size(); ++i) ports.push_back(std::atoi(pos[i].c_str()));
    return connect_ports(std::atoi(pos[0].c_str()), ports);
  }
  if (mode == "getenv" && pos.size() == 1) {  // the program's own lookup, not NCCL's
    const char* value = std::getenv(pos[0].c_str());
    say("getenv " + pos[0] + "=" + (value != nullptr ? value : "(unset)"));
    return 0;
  }
  return 64;
}
