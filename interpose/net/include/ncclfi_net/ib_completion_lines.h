// What NCCL's own IB transport prints when a work request completes with an error (the lines of
// transport/net_ib.cc, transport/net_ib/p2p.cc from 2.29), release by release, so that a net fault in the
// IB persona leaves the very lines an operator would find after a real InfiniBand failure. Pure: no NCCL,
// no verbs, no I/O; the shim logs the lines through NCCL's logger, which adds NCCL's own prefix
// ("host:pid:tid [dev] file:line NCCL WARN ").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ncclfi::net {

// An NCCL release. ncclGetVersion() codes: major*10000 + minor*100 + patch from 2.9, major*1000 +
// minor*100 + patch before.
struct NcclVersion {
  int major = 2;
  int minor = 0;
  int patch = 0;
  static NcclVersion from_code(int code);
  // "2.28.7" (also "2.28.7-1", "2.28.7+cuda12.4"); nullopt-like: {0,0,0} when unreadable.
  static NcclVersion parse(const std::string& text);
  int order() const { return major * 10000 + minor * 100 + patch; }
  bool before(int maj, int min, int pat) const { return order() < maj * 10000 + min * 100 + pat; }
  bool known() const { return major > 0; }
};

// The newest release whose lines this file knows (used when neither the loaded NCCL nor the
// environment names one).
inline constexpr NcclVersion kNewestKnownNccl{2, 30, 7};

// One failed work completion, as the IB transport sees it.
struct IbCompletionFailure {
  std::string peer;           // the comm's socket address as NCCL writes it: "10.0.0.2<48123>"
  int status = 12;            // ibv_wc_status (12: IBV_WC_RETRY_EXC_ERR)
  unsigned vendor_err = 129;  // what mlx5 reports with a retry-exceeded completion (0x81)
  bool send = true;           // the request's type (Send or Recv)
  size_t bytes = 0;           // the send's size (2.28.7 to 2.28.9 print it as reqSize)
  std::string hca = "mlx5_0";
  const void* request = nullptr;  // pointers and ids the 2.29.7+ "Got CQE with error" line shows
  const void* comm = nullptr;
  uint64_t wr_id = 0;
  uint32_t qp_num = 0;
};

// A line as NCCL's logger is called with it.
struct NcclLogLine {
  bool warn = true;  // WARN (file and line shown) or INFO
  std::string file;  // NCCL's __FILE__: "transport/net_ib.cc"
  int line = 0;      // NCCL's __LINE__ at the call in that release
  std::string text;
  // An INFO of NCCL_INIT|NCCL_NET, which the default NCCL_DEBUG_SUBSYS (INIT,BOOTSTRAP,ENV) lets through;
  // other INFO lines are NCCL_NET's alone.
  bool init = false;
};

// The lines `version` prints for `failure`, in order: the completion-error WARN (with, from 2.29.7, the
// "Got CQE with error" WARN before it and, from 2.30.7, the HINT lines after it).
std::vector<NcclLogLine> ib_completion_error_lines(NcclVersion version, const IbCompletionFailure& failure);

// What NCCL's IB async-event thread (ncclIbAsyncThreadMain) prints when the port under `hca` goes down:
// the HCA raises IBV_EVENT_PORT_ERR (ibv_event_type_str: "port error") in every process that has it open,
// at once, long before any request runs out of retries. Only the host of the failed NIC prints it, which
// is what tells a dead NIC from a peer that merely lost it. One WARN, in the release's wording:
// "NET/IB : Got async event : port error" (to 2.19), with "<hca>:<port> " from 2.20.3, "Got async error
// event: " from 2.23.4, "Got non-fatal async event: port error(10)" from 2.28.7.
std::vector<NcclLogLine> ib_port_error_lines(NcclVersion version, const std::string& hca, int port);

// The line NCCL's IB transport prints once its devices are open (ncclIbInit, INFO under INIT|NET), in the
// same words from 2.12 to 2.30.7: "NET/IB : Using [0]mlx5_1:1/IB [RO]; OOB eth0:10.0.0.2<0>": the HCA and
// port it uses, relaxed ordering, and the interface and address its out-of-band connections use, with
// the port 0 of an interface address. What tells an operator which address is which node's.
NcclLogLine ib_init_line(const std::string& hca, int port, const std::string& ifname,
                         const std::string& numeric_host);

// What ncclIbTest returns after that line: ncclSystemError before 2.13.4, ncclRemoteError since.
bool ib_completion_error_is_remote(NcclVersion version);

// "10.0.0.2<48123>" ("[fe80::1]<48123>" is not NCCL's way: IPv6 prints bare, "fe80::1<48123>").
std::string nccl_socket_string(const std::string& numeric_host, int port);

}  // namespace ncclfi::net
