// ncclfi-verbs-probe: drives a libibverbs the way NCCL's IB transport does (dlopen, dlvsym at IBVERBS_1.1,
// ibv_poll_cq/ibv_post_send/ibv_post_recv through the context's ops, ibv_query_port both by symbol and
// through the verbs_context op) and prints what it saw, one fact a line, for verbs_wrapper_test.cc.
//
// usage: ncclfi-verbs-probe LIB [SENDS [POLL_MS [PORTS]]]
//   PORTS 1 (default): one loopback pair, A sends to B, both moved to INIT on port 1 (as NCCL's
//   ncclIbInitQp does, attr.port_num with IBV_QP_PORT); PORTS 2: also C sends to D, both on port 2
//   devices N                         ibv_get_device_list's count
//   patched 0|1                       whether the context's poll_cq is no longer the stand-in's own
//   port state=S phys=P speed=X width=W          the exported ibv_query_port
//   port_op state=S phys=P speed=X width=W       the verbs_context query_port op
//   port2 ... / port2_op ...          the same for port 2 (PORTS 2)
//   post_send rc=R bad_is_first=0|1   each ibv_post_send (one WR each)
//   post_recv rc=R
//   wc wr_id=I status=S qp=A|B|C|D opcode=O vendor_err=V ms=T    each completion, T ms after the first post
//   end                               the probe ran to its end (nothing was thrown into it)
#include <dlfcn.h>
#include <infiniband/verbs.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

void* sym(void* h, const char* name) {
  void* p = dlvsym(h, name, "IBVERBS_1.1");
  if (p == nullptr) {
    std::fprintf(stderr, "probe: dlvsym %s@IBVERBS_1.1: %s\n", name, dlerror());
    std::exit(2);
  }
  return p;
}

void print_port(const char* what, const ibv_port_attr& a) {
  std::printf("%s state=%d phys=%d speed=%d width=%d\n", what, a.state, a.phys_state, a.active_speed,
              a.active_width);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 64;
  const int sends = argc > 2 ? std::atoi(argv[2]) : 3;
  const int poll_ms = argc > 3 ? std::atoi(argv[3]) : 2000;
  const int nports = argc > 4 && std::atoi(argv[4]) == 2 ? 2 : 1;
  void* h = dlopen(argv[1], RTLD_NOW);
  if (h == nullptr) {
    std::fprintf(stderr, "probe: %s\n", dlerror());
    return 2;
  }
  auto get_list = reinterpret_cast<ibv_device** (*)(int*)>(sym(h, "ibv_get_device_list"));
  auto open_dev = reinterpret_cast<ibv_context* (*)(ibv_device*)>(sym(h, "ibv_open_device"));
  auto query_port =
      reinterpret_cast<int (*)(ibv_context*, uint8_t, ibv_port_attr*)>(sym(h, "ibv_query_port"));
  auto alloc_pd = reinterpret_cast<ibv_pd* (*)(ibv_context*)>(sym(h, "ibv_alloc_pd"));
  auto create_cq = reinterpret_cast<ibv_cq* (*)(ibv_context*, int, void*, ibv_comp_channel*, int)>(
      sym(h, "ibv_create_cq"));
  auto create_qp = reinterpret_cast<ibv_qp* (*)(ibv_pd*, ibv_qp_init_attr*)>(sym(h, "ibv_create_qp"));
  auto modify_qp = reinterpret_cast<int (*)(ibv_qp*, ibv_qp_attr*, int)>(sym(h, "ibv_modify_qp"));

  int n = -1;
  ibv_device** devs = get_list(&n);
  std::printf("devices %d\n", n);
  if (devs == nullptr || n <= 0) return 0;
  ibv_context* ctx = open_dev(devs[0]);
  if (ctx == nullptr) return 3;
  // The stand-in's own poll_cq (it exports it): still in the ops, or replaced by the wrapper's?
  const char* real_lib = std::getenv("NCCLFI_IBVERBS_REAL");
  void* stand_in = real_lib != nullptr ? dlopen(real_lib, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  void* own_poll = stand_in != nullptr ? dlsym(stand_in, "ncclfi_fake_poll_cq") : nullptr;
  if (own_poll == nullptr) {
    std::printf("patched unknown\n");
  } else {
    std::printf("patched %d\n", reinterpret_cast<void*>(ctx->ops.poll_cq) != own_poll ? 1 : 0);
  }

  ibv_port_attr attr{};
  for (int port = 1; port <= nports; ++port) {
    const std::string name = port == 1 ? "port" : "port" + std::to_string(port);
    if (query_port(ctx, static_cast<uint8_t>(port), &attr) == 0) print_port(name.c_str(), attr);
    verbs_context* vctx = verbs_get_ctx_op(ctx, query_port);
    if (vctx != nullptr && vctx->query_port(ctx, static_cast<uint8_t>(port), &attr, sizeof(attr)) == 0)
      print_port((name + "_op").c_str(), attr);
  }

  ibv_pd* pd = alloc_pd(ctx);
  ibv_cq* cq = create_cq(ctx, 256, nullptr, nullptr, 0);
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  // Pair p (0-based): QP 2p sends to QP 2p+1, both on port p+1; named A, B, C, D in that order.
  std::vector<ibv_qp*> qps;
  for (int p = 0; p < nports; ++p) {
    ibv_qp* s_qp = create_qp(pd, &init);
    ibv_qp* r_qp = create_qp(pd, &init);
    for (ibv_qp* q : {s_qp, r_qp}) {
      ibv_qp_attr to_init{};
      to_init.qp_state = IBV_QPS_INIT;
      to_init.port_num = static_cast<uint8_t>(p + 1);
      if (modify_qp(q, &to_init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
        return 4;
    }
    ibv_qp_attr conn{};
    conn.dest_qp_num = r_qp->qp_num;
    modify_qp(s_qp, &conn, IBV_QP_DEST_QPN);
    conn.dest_qp_num = s_qp->qp_num;
    modify_qp(r_qp, &conn, IBV_QP_DEST_QPN);
    qps.push_back(s_qp);
    qps.push_back(r_qp);
  }
  auto name_of = [&](uint32_t qp_num) {
    for (size_t i = 0; i < qps.size(); ++i) {
      if (qps[i]->qp_num == qp_num) return static_cast<char>('A' + i);
    }
    return '?';
  };

  const auto bytes = static_cast<size_t>(64 * sends * nports);
  std::vector<char> src(bytes, 'x');
  std::vector<char> dst(bytes, 0);
  for (int p = 0; p < nports; ++p) {
    ibv_qp* b = qps[static_cast<size_t>(2 * p + 1)];
    for (int i = 0; i < sends; ++i) {
      ibv_sge s{reinterpret_cast<uint64_t>(dst.data() + 64 * (p * sends + i)), 64, 0};
      ibv_recv_wr r{};
      r.wr_id = static_cast<uint64_t>(100 + i);
      r.sg_list = &s;
      r.num_sge = 1;
      ibv_recv_wr* bad = nullptr;
      std::printf("post_recv rc=%d\n", b->context->ops.post_recv(b, &r, &bad));
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  int posted = 0;
  for (int p = 0; p < nports; ++p) {
    ibv_qp* a = qps[static_cast<size_t>(2 * p)];
    for (int i = 0; i < sends; ++i) {
      ibv_sge s{reinterpret_cast<uint64_t>(src.data() + 64 * (p * sends + i)), 64, 0};
      ibv_send_wr w{};
      w.wr_id = static_cast<uint64_t>(i);
      w.sg_list = &s;
      w.num_sge = 1;
      w.opcode = IBV_WR_SEND;
      w.send_flags = IBV_SEND_SIGNALED;
      ibv_send_wr* bad = nullptr;
      const int rc = a->context->ops.post_send(a, &w, &bad);
      std::printf("post_send rc=%d bad_is_first=%d\n", rc, bad == &w ? 1 : 0);
      if (rc == 0) ++posted;
    }
  }
  std::fflush(stdout);
  int seen = 0;
  while (seen < 2 * posted && std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(poll_ms)) {
    ibv_wc wc[4];
    const int got = cq->context->ops.poll_cq(cq, 4, wc);
    for (int i = 0; i < got; ++i) {
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      std::printf("wc wr_id=%llu status=%d qp=%c opcode=%d vendor_err=%u ms=%.3f\n",
                  static_cast<unsigned long long>(wc[i].wr_id), wc[i].status, name_of(wc[i].qp_num),
                  wc[i].opcode, wc[i].vendor_err, ms);
      ++seen;
    }
    if (got == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  std::printf("end\n");
  std::fflush(stdout);
  return 0;
}
