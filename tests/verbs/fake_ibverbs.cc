// libncclfi-fake-ibverbs.so: a stand-in for the real libibverbs, for the CPU tests of libncclfi-ibverbs.so.
// NO RDMA HARDWARE IS INVOLVED: one fake device ("ncclfi_fake0", two InfiniBand ports, both EDR 4x and
// Active, as a dual-port HCA) whose queue pairs are loopback pairs inside this process; ibv_modify_qp
// keeps the port a QP is moved to INIT on (attr.port_num), as a real HCA does. A send copies the bytes into
// the peer QP's posted receive (or, for an RDMA write, to the remote address, which is in this process) and
// queues the completions on the CQs, at once; ibv_poll_cq pops them. The context is a verbs_context with a
// query_port op, and poll_cq, post_send and post_recv sit in the context's ops, exactly where NCCL's IB
// transport calls them, so the wrapper's patching is exercised as NCCL would meet it.
//
// Why a stand-in library and not a provider for the real libibverbs: a provider is opened by rdma-core only
// for a device it finds in sysfs or netlink and a /dev/infiniband/uverbs* it can open, so a fake provider
// would need a fake kernel device; and the wrapper's own job ends at the libibverbs boundary, which this
// library presents as the real one does. The symbol versions of the real library are checked separately.
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#undef ibv_reg_mr
#undef ibv_query_port

namespace {

struct FakeCq {
  ibv_cq cq{};
  std::deque<ibv_wc> wcs;
};
struct FakeQp {
  ibv_qp qp{};
  uint32_t dest_qp_num = 0;
  std::deque<ibv_recv_wr> recvs;  // wr_id and the first sge (copied)
  std::deque<ibv_sge> recv_sges;
};

std::mutex g_mu;
std::map<uint32_t, FakeQp*> g_qps;
uint32_t g_next_qp = 0x100;
ibv_device g_device{};
ibv_device* g_list[2] = {&g_device, nullptr};

// NCCLFI_FAKE_IBV_THROW=<op> (poll_cq, post_send, post_recv, query_port): that context op throws, as no
// provider would, so a test can check that nothing thrown under the wrapper's hooks reaches their caller.
void throw_if_asked(const char* op) {
  const char* which = std::getenv("NCCLFI_FAKE_IBV_THROW");
  if (which != nullptr && std::strcmp(which, op) == 0)
    throw std::runtime_error(std::string("fake ") + op + " threw");
}

void push(ibv_cq* cq, const ibv_wc& wc) {
  reinterpret_cast<FakeCq*>(cq)->wcs.push_back(wc);
}

void fill_port(ibv_port_attr* attr) {
  std::memset(attr, 0, sizeof(*attr));
  attr->state = IBV_PORT_ACTIVE;
  attr->max_mtu = IBV_MTU_4096;
  attr->active_mtu = IBV_MTU_4096;
  attr->lid = 1;
  attr->active_width = 2;   // 4x
  attr->active_speed = 32;  // EDR
  attr->phys_state = 5;     // LinkUp
  attr->link_layer = IBV_LINK_LAYER_INFINIBAND;
}

constexpr uint8_t kPorts = 2;

int query_port_op(ibv_context*, uint8_t port, ibv_port_attr* attr, size_t) {
  throw_if_asked("query_port");
  if (port < 1 || port > kPorts) return EINVAL;
  fill_port(attr);
  return 0;
}

// Pops the peer's first receive and completes it with `len` bytes from `src` (nullptr: no copy).
int deliver_recv(FakeQp* peer, const void* src, uint32_t len, ibv_wc_opcode op, uint32_t imm) {
  if (peer->recvs.empty()) return ENOMEM;
  ibv_recv_wr r = peer->recvs.front();
  ibv_sge s = peer->recv_sges.front();
  peer->recvs.pop_front();
  peer->recv_sges.pop_front();
  if (src != nullptr) {
    if (len > s.length) return EINVAL;
    std::memcpy(reinterpret_cast<void*>(s.addr), src, len);
  }
  ibv_wc wc{};
  wc.wr_id = r.wr_id;
  wc.status = IBV_WC_SUCCESS;
  wc.opcode = op;
  wc.byte_len = len;
  wc.qp_num = peer->qp.qp_num;
  wc.imm_data = imm;
  wc.wc_flags = op == IBV_WC_RECV_RDMA_WITH_IMM ? IBV_WC_WITH_IMM : 0;
  push(peer->qp.recv_cq, wc);
  return 0;
}

}  // namespace

extern "C" {

// The fake's own ops, exported so a test can tell whether the wrapper patched the context.
int ncclfi_fake_poll_cq(ibv_cq* cq, int n, ibv_wc* wc) {
  throw_if_asked("poll_cq");
  std::lock_guard lock(g_mu);
  auto* f = reinterpret_cast<FakeCq*>(cq);
  int done = 0;
  while (done < n && !f->wcs.empty()) {
    wc[done++] = f->wcs.front();
    f->wcs.pop_front();
  }
  return done;
}

int ncclfi_fake_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  throw_if_asked("post_send");
  std::lock_guard lock(g_mu);
  auto* self = reinterpret_cast<FakeQp*>(qp);
  auto it = g_qps.find(self->dest_qp_num);
  for (; wr != nullptr; wr = wr->next) {
    if (it == g_qps.end()) {
      *bad = wr;
      return EINVAL;  // not connected
    }
    FakeQp* peer = it->second;
    const void* src = wr->num_sge > 0 ? reinterpret_cast<const void*>(wr->sg_list[0].addr) : nullptr;
    const uint32_t len = wr->num_sge > 0 ? wr->sg_list[0].length : 0;
    int rc = 0;
    ibv_wc_opcode done_op = IBV_WC_SEND;
    switch (wr->opcode) {
      case IBV_WR_SEND:
        rc = deliver_recv(peer, src, len, IBV_WC_RECV, 0);
        break;
      case IBV_WR_RDMA_WRITE_WITH_IMM:
        if (len > 0) std::memcpy(reinterpret_cast<void*>(wr->wr.rdma.remote_addr), src, len);
        rc = deliver_recv(peer, nullptr, len, IBV_WC_RECV_RDMA_WITH_IMM, wr->imm_data);
        done_op = IBV_WC_RDMA_WRITE;
        break;
      case IBV_WR_RDMA_WRITE:
        if (len > 0) std::memcpy(reinterpret_cast<void*>(wr->wr.rdma.remote_addr), src, len);
        done_op = IBV_WC_RDMA_WRITE;
        break;
      default:
        rc = EINVAL;
    }
    if (rc != 0) {
      *bad = wr;
      return rc;
    }
    if ((wr->send_flags & IBV_SEND_SIGNALED) != 0) {
      ibv_wc wc{};
      wc.wr_id = wr->wr_id;
      wc.status = IBV_WC_SUCCESS;
      wc.opcode = done_op;
      wc.byte_len = len;
      wc.qp_num = qp->qp_num;
      push(qp->send_cq, wc);
    }
  }
  return 0;
}

int ncclfi_fake_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  throw_if_asked("post_recv");
  std::lock_guard lock(g_mu);
  auto* self = reinterpret_cast<FakeQp*>(qp);
  for (; wr != nullptr; wr = wr->next) {
    if (wr->num_sge != 1) {
      *bad = wr;
      return EINVAL;
    }
    self->recvs.push_back(*wr);
    self->recv_sges.push_back(wr->sg_list[0]);
  }
  return 0;
}

ibv_device** ibv_get_device_list(int* num) {
  std::strcpy(g_device.name, "ncclfi_fake0");
  std::strcpy(g_device.dev_name, "uverbs_fake0");
  g_device.node_type = IBV_NODE_CA;
  g_device.transport_type = IBV_TRANSPORT_IB;
  if (num != nullptr) *num = 1;
  return g_list;
}
void ibv_free_device_list(ibv_device**) {}
const char* ibv_get_device_name(ibv_device* d) {
  return d->name;
}

ibv_context* ibv_open_device(ibv_device* dev) {
  auto* v = static_cast<verbs_context*>(std::calloc(1, sizeof(verbs_context)));
  v->sz = sizeof(verbs_context);
  v->query_port = &query_port_op;
  ibv_context* ctx = &v->context;
  ctx->device = dev;
  ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
  ctx->ops.poll_cq = &ncclfi_fake_poll_cq;
  ctx->ops.post_send = &ncclfi_fake_post_send;
  ctx->ops.post_recv = &ncclfi_fake_post_recv;
  ctx->cmd_fd = -1;
  ctx->async_fd = -1;
  return ctx;
}
int ibv_close_device(ibv_context* ctx) {
  std::free(verbs_get_ctx(ctx));
  return 0;
}
int ibv_query_device(ibv_context*, ibv_device_attr* attr) {
  std::memset(attr, 0, sizeof(*attr));
  attr->phys_port_cnt = kPorts;
  attr->max_qp_wr = 1024;
  attr->max_cqe = 4096;
  return 0;
}
// The exported call answers directly (not through the context op), as rdma-core's does.
// (verbs.h declares it with the oldest layout of the struct, _compat_ibv_port_attr, a prefix of today's.)
int ibv_query_port(ibv_context*, uint8_t port, _compat_ibv_port_attr* attr) {
  if (port < 1 || port > kPorts) return EINVAL;
  fill_port(reinterpret_cast<ibv_port_attr*>(attr));
  return 0;
}

ibv_pd* ibv_alloc_pd(ibv_context* ctx) {
  auto* pd = static_cast<ibv_pd*>(std::calloc(1, sizeof(ibv_pd)));
  pd->context = ctx;
  return pd;
}
int ibv_dealloc_pd(ibv_pd* pd) {
  std::free(pd);
  return 0;
}
ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int) {
  auto* mr = static_cast<ibv_mr*>(std::calloc(1, sizeof(ibv_mr)));
  mr->context = pd->context;
  mr->pd = pd;
  mr->addr = addr;
  mr->length = length;
  mr->lkey = mr->rkey = 0x1234;
  return mr;
}
int ibv_dereg_mr(ibv_mr* mr) {
  std::free(mr);
  return 0;
}

ibv_cq* ibv_create_cq(ibv_context* ctx, int cqe, void* cq_context, ibv_comp_channel*, int) {
  auto* f = new FakeCq();
  f->cq.context = ctx;
  f->cq.cq_context = cq_context;
  f->cq.cqe = cqe;
  return &f->cq;
}
int ibv_destroy_cq(ibv_cq* cq) {
  delete reinterpret_cast<FakeCq*>(cq);
  return 0;
}

ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  std::lock_guard lock(g_mu);
  auto* q = new FakeQp();
  q->qp.context = pd->context;
  q->qp.pd = pd;
  q->qp.send_cq = attr->send_cq;
  q->qp.recv_cq = attr->recv_cq;
  q->qp.qp_num = g_next_qp++;
  q->qp.qp_type = attr->qp_type;
  q->qp.state = IBV_QPS_RESET;
  g_qps[q->qp.qp_num] = q;
  return &q->qp;
}
int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
  std::lock_guard lock(g_mu);
  if ((mask & IBV_QP_PORT) != 0 && (attr->port_num < 1 || attr->port_num > kPorts)) return EINVAL;
  if ((mask & IBV_QP_DEST_QPN) != 0) reinterpret_cast<FakeQp*>(qp)->dest_qp_num = attr->dest_qp_num;
  if ((mask & IBV_QP_STATE) != 0) qp->state = attr->qp_state;
  return 0;
}
int ibv_destroy_qp(ibv_qp* qp) {
  std::lock_guard lock(g_mu);
  g_qps.erase(qp->qp_num);
  delete reinterpret_cast<FakeQp*>(qp);
  return 0;
}

}  // extern "C"
