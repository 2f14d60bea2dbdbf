// The formats and line numbers below are NCCL's, read from NVIDIA/nccl at each release tag: the WARN in
// ncclIbTest (src/transport/net_ib.cc, net_ib.cu before 2.4.6) and, from 2.29.2, ncclIbLogCompletionWithError
// and its caller in src/transport/net_ib/p2p.cc. __LINE__ of a WARN spanning lines is the line of its
// closing parenthesis, as GCC expands it (a 2.18.1 user's log shows net_ib.cc:1296 for the call that
// spans 1294 to 1296).
#include "ncclfi_net/ib_completion_lines.h"

#include <algorithm>
#include <array>
#include <cstdarg>
#include <cstdio>

namespace ncclfi::net {
namespace {

// Where the completion-error WARN (and, from 2.29.7, the "Got CQE with error" WARN) and the async-event
// WARN sit in a release.
struct ReleaseLines {
  NcclVersion version;
  int warn_line;
  int cqe_line;    // 0: the release has no such line
  int async_line;  // the WARN of ncclIbAsyncThreadMain that a port error (a link going down) reaches
};

// Every release tag of NVIDIA/nccl from 2.3.7 to 2.30.7.
constexpr std::array<ReleaseLines, 60> kReleases = {{
    {{2, 3, 7}, 829, 0, 79},     {{2, 4, 2}, 788, 0, 80},     {{2, 4, 6}, 789, 0, 80},
    {{2, 4, 7}, 789, 0, 80},     {{2, 4, 8}, 789, 0, 80},     {{2, 5, 6}, 774, 0, 80},
    {{2, 5, 7}, 774, 0, 80},     {{2, 6, 4}, 816, 0, 73},     {{2, 7, 3}, 818, 0, 73},
    {{2, 7, 5}, 818, 0, 73},     {{2, 7, 6}, 818, 0, 73},     {{2, 7, 8}, 818, 0, 73},
    {{2, 8, 3}, 839, 0, 74},     {{2, 8, 4}, 839, 0, 74},     {{2, 9, 6}, 843, 0, 74},
    {{2, 9, 8}, 846, 0, 74},     {{2, 9, 9}, 846, 0, 74},     {{2, 10, 3}, 882, 0, 74},
    {{2, 11, 4}, 884, 0, 74},    {{2, 12, 7}, 1191, 0, 94},   {{2, 12, 10}, 1199, 0, 94},
    {{2, 12, 12}, 1199, 0, 94},  {{2, 13, 4}, 1239, 0, 94},   {{2, 14, 3}, 1238, 0, 93},
    {{2, 15, 1}, 1238, 0, 93},   {{2, 15, 5}, 1238, 0, 93},   {{2, 16, 2}, 1244, 0, 95},
    {{2, 16, 5}, 1253, 0, 95},   {{2, 17, 1}, 1262, 0, 95},   {{2, 18, 1}, 1296, 0, 95},
    {{2, 18, 3}, 1297, 0, 95},   {{2, 18, 5}, 1297, 0, 95},   {{2, 18, 6}, 1297, 0, 95},
    {{2, 19, 1}, 1335, 0, 95},   {{2, 19, 3}, 1335, 0, 95},   {{2, 19, 4}, 1335, 0, 95},
    {{2, 20, 3}, 1698, 0, 100},  {{2, 20, 5}, 1698, 0, 100},  {{2, 21, 5}, 1911, 0, 101},
    {{2, 22, 3}, 1986, 0, 103},  {{2, 23, 4}, 2123, 0, 171},  {{2, 24, 3}, 2246, 0, 173},
    {{2, 25, 1}, 2246, 0, 173},  {{2, 26, 2}, 2360, 0, 179},  {{2, 26, 3}, 2361, 0, 179},
    {{2, 26, 5}, 2361, 0, 179},  {{2, 26, 6}, 2361, 0, 179},  {{2, 27, 3}, 2451, 0, 199},
    {{2, 27, 5}, 2453, 0, 199},  {{2, 27, 6}, 2460, 0, 199},  {{2, 27, 7}, 2460, 0, 199},
    {{2, 28, 3}, 2472, 0, 212},  {{2, 28, 7}, 2546, 0, 253},  {{2, 28, 9}, 2546, 0, 253},
    {{2, 29, 2}, 553, 0, 88},    {{2, 29, 3}, 553, 0, 88},    {{2, 29, 7}, 654, 786, 134},
    {{2, 30, 3}, 651, 783, 159}, {{2, 30, 4}, 651, 783, 159}, {{2, 30, 7}, 690, 855, 179},
}};

// The release of the table a version prints like: the newest one not after it (a patch release between
// tags, or one newer than the table, keeps its predecessor's source lines).
const ReleaseLines& release_for(NcclVersion v) {
  const ReleaseLines* best = nullptr;
  for (const ReleaseLines& r : kReleases) {
    if (r.version.order() > v.order()) continue;
    if (best == nullptr || r.version.order() > best->version.order()) best = &r;
  }
  if (best != nullptr) return *best;
  return *std::min_element(
      kReleases.begin(), kReleases.end(),
      [](const ReleaseLines& a, const ReleaseLines& b) { return a.version.order() < b.version.order(); });
}

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char text[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  return text;
}

// NCCL's ibvWcStatusStr / ibvWcOpcodeStr (net_ib.cc from 2.28.7), for the values a failed request takes.
const char* wc_status_name(int status) {
  static constexpr std::array<const char*, 22> kNames = {
      "IBV_WC_SUCCESS",           "IBV_WC_LOC_LEN_ERR",
      "IBV_WC_LOC_QP_OP_ERR",     "IBV_WC_LOC_EEC_OP_ERR",
      "IBV_WC_LOC_PROT_ERR",      "IBV_WC_WR_FLUSH_ERR",
      "IBV_WC_MW_BIND_ERR",       "IBV_WC_BAD_RESP_ERR",
      "IBV_WC_LOC_ACCESS_ERR",    "IBV_WC_REM_INV_REQ_ERR",
      "IBV_WC_REM_ACCESS_ERR",    "IBV_WC_REM_OP_ERR",
      "IBV_WC_RETRY_EXC_ERR",     "IBV_WC_RNR_RETRY_EXC_ERR",
      "IBV_WC_LOC_RDD_VIOL_ERR",  "IBV_WC_REM_INV_RD_REQ_ERR",
      "IBV_WC_REM_ABORT_ERR",     "IBV_WC_INV_EECN_ERR",
      "IBV_WC_INV_EEC_STATE_ERR", "IBV_WC_FATAL_ERR",
      "IBV_WC_RESP_TIMEOUT_ERR",  "IBV_WC_GENERAL_ERR"};
  return status >= 0 && status < static_cast<int>(kNames.size()) ? kNames[static_cast<size_t>(status)]
                                                                 : "UNKNOWN_STATUS";
}

// The opcode a failed completion carries: NCCL posts a send as an RDMA write (IBV_WC_RDMA_WRITE, 1); a
// receive's error completion comes back as opcode 0 (IBV_WC_SEND), as the users' logs show ("opcode 0").
int wc_opcode(bool send) {
  return send ? 1 : 0;
}
const char* wc_opcode_name(int opcode) {
  return opcode == 1 ? "IBV_WC_RDMA_WRITE" : "IBV_WC_SEND";
}

const char* request_type(bool send) {
  return send ? "Send" : "Recv";
}

}  // namespace

NcclVersion NcclVersion::from_code(int code) {
  if (code <= 0) return {0, 0, 0};
  if (code < 10000) return {code / 1000, (code % 1000) / 100, code % 100};
  return {code / 10000, (code % 10000) / 100, code % 100};
}

NcclVersion NcclVersion::parse(const std::string& text) {
  NcclVersion v{0, 0, 0};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%d.%d.%d%n", &v.major, &v.minor, &v.patch, &consumed) != 3) return {0, 0, 0};
  const char next = text[static_cast<size_t>(consumed)];
  if (next != '\0' && next != '-' && next != '+') return {0, 0, 0};
  if (v.major != 2 || v.minor < 0 || v.minor > 99 || v.patch < 0 || v.patch > 99) return {0, 0, 0};
  return v;
}

std::string nccl_socket_string(const std::string& numeric_host, int port) {
  return numeric_host + "<" + std::to_string(port) + ">";
}

bool ib_completion_error_is_remote(NcclVersion version) {
  return !version.before(2, 13, 4);
}

std::vector<NcclLogLine> ib_completion_error_lines(NcclVersion v, const IbCompletionFailure& f) {
  const ReleaseLines& release = release_for(v);
  const bool p2p = !v.before(2, 29, 2);
  const std::string file =
      p2p ? "transport/net_ib/p2p.cc" : (v.before(2, 4, 6) ? "transport/net_ib.cu" : "transport/net_ib.cc");
  const int opcode = wc_opcode(f.send);
  const char* peer = f.peer.c_str();
  const char* type = request_type(f.send);
  std::vector<NcclLogLine> lines;
  if (release.cqe_line != 0) {
    // The IB link layer: no GIDs in the line (RoCE adds " localGid ... remoteGids ...").
    const std::string where = v.before(2, 30, 7) ? "ncclIbTest: " : "";
    lines.push_back(
        {true, file, release.cqe_line,
         format("NET/IB: %sGot CQE with error (devIndex=%d, req=%p, comm=%p (%s), wr_id=%lu, qp_num=%d)",
                where.c_str(), 0, f.request, f.comm, f.send ? "send" : "recv",
                static_cast<unsigned long>(f.wr_id), static_cast<int>(f.qp_num))});
  }
  std::string text;
  if (v.before(2, 10, 3)) {
    text = format("NET/IB : Got completion with error %d, opcode %d, len %d, vendor err %d", f.status, opcode,
                  0, static_cast<int>(f.vendor_err));
  } else if (v.before(2, 18, 1)) {
    text = format("NET/IB : Got completion from peer %s with error %d, opcode %d, len %d, vendor err %d",
                  peer, f.status, opcode, 0, static_cast<int>(f.vendor_err));
  } else if (v.before(2, 20, 3)) {
    text = format(
        "NET/IB : Got completion from peer %s with error %d, opcode %d, len %d, vendor err %d (%s)%s%s%s%s",
        peer, f.status, opcode, 0, static_cast<int>(f.vendor_err), type, "", "", "", "");
  } else if (v.before(2, 22, 3)) {
    text = format(
        "NET/IB : Got completion from peer %s with status=%d opcode=%d len=%d vendor err %d (%s)%s%s%s%s",
        peer, f.status, opcode, 0, static_cast<int>(f.vendor_err), type, "", "", "", "");
  } else if (v.before(2, 28, 7)) {
    text = format(
        "NET/IB: Got completion from peer %s with status=%d opcode=%d len=%u vendor err %u (%s)%s%s%s%s hca "
        "%s",
        peer, f.status, opcode, 0U, f.vendor_err, type, "", "", "", "", f.hca.c_str());
  } else if (v.before(2, 29, 2)) {
    // A send's reqSize is the request's size (the completion's byte_len is not reliable); a receive's is
    // the completion's byte_len, 0 on error.
    const int req_size = f.send ? static_cast<int>(f.bytes) : 0;
    text = format(
        "NET/IB: Got completion from peer %s with status=%s(%d) opcode=%s(%d) reqSize=%d vendor_err=%u "
        "req_type=%s%s%s%s%s hca %s",
        peer, wc_status_name(f.status), f.status, wc_opcode_name(opcode), opcode, req_size, f.vendor_err,
        type, "", "", "", "", f.hca.c_str());
  } else {
    text = format(
        "NET/IB: Got completion from peer %s with status=%s(%d) opcode=%s(%d) vendor_err=%u %s%s%s%s hca %s",
        peer, wc_status_name(f.status), f.status, wc_opcode_name(opcode), opcode, f.vendor_err, "", "", "",
        "", f.hca.c_str());
  }
  lines.push_back({true, file, release.warn_line, text});
  if (!v.before(2, 30, 7) && f.status == 12) {
    // printIbWcStatusHint (transport/net_ib/common.h) for IBV_WC_RETRY_EXC_ERR.
    const std::string hint_file = "transport/net_ib/common.h";
    for (const char* hint :
         {"HINT: In many cases this error occurs when the NCCL_IB_TIMEOUT is set too short.",
          "HINT: Default value is 20, which is ~30 seconds before error.",
          "HINT: To confirm, try increasing the value of NCCL_IB_TIMEOUT and see if the error persists.",
          "HINT: See https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-ib-timeout for "
          "more "
          "information."}) {
      lines.push_back({false, hint_file, 0, hint});
    }
  }
  return lines;
}

std::vector<NcclLogLine> ib_port_error_lines(NcclVersion v, const std::string& hca, int port) {
  const ReleaseLines& release = release_for(v);
  const std::string file = !v.before(2, 29, 2) ? "transport/net_ib/common.cc"
                           : v.before(2, 4, 6) ? "transport/net_ib.cu"
                                               : "transport/net_ib.cc";
  constexpr int kPortErr = 10;  // IBV_EVENT_PORT_ERR
  const char* what = "port error";
  std::string text;
  if (v.before(2, 20, 3)) {
    text = format("NET/IB : Got async event : %s", what);
  } else if (v.before(2, 23, 4)) {
    text = format("NET/IB : %s:%d Got async event : %s", hca.c_str(), port, what);
  } else if (v.before(2, 28, 7)) {
    text = format("NET/IB : %s:%d Got async error event: %s", hca.c_str(), port, what);
  } else {
    text = format("NET/IB : %s:%d Got non-fatal async event: %s(%d)", hca.c_str(), port, what, kPortErr);
  }
  return {{true, file, release.async_line, text}};
}

NcclLogLine ib_init_line(const std::string& hca, int port, const std::string& ifname,
                         const std::string& numeric_host) {
  NcclLogLine line;
  line.warn = false;
  line.init = true;
  line.file = "transport/net_ib.cc";
  line.text = format("NET/IB : Using [0]%s:%d/IB [RO]; OOB %s:%s", hca.c_str(), port, ifname.c_str(),
                     nccl_socket_string(numeric_host, 0).c_str());
  return line;
}

}  // namespace ncclfi::net
