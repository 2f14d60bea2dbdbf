// NCCL's IB transport: a work request completed with an error status. NCCL then fails the request, and
// the communicator reports ncclRemoteError (ncclSystemError before 2.13) through ncclCommGetAsyncError:
// the line is the moment NCCL noticed, so it is an async_error detection. Its wording changed five
// times; each release's format is its own line. Status 12 (IBV_WC_RETRY_EXC_ERR) is the common one: the
// queue pair retried for NCCL_IB_TIMEOUT x (NCCL_IB_RETRY_CNT + 1) and gave up, so the NIC, the link or
// the peer's whole host stopped answering. Either end of the connection may print it. Examples are the
// lines users pasted where one was found (the reports cited), else built from the release's format.
//
// From NCCL 2.29.7, NCCL_IB_RESILIENCY_PORT_FAILOVER=1 lets a connection over a virtual NIC of two or more
// ports (a dual-port HCA, or HCAs merged by NCCL_NET_FORCE_MERGE) outlive one port: a completion that
// comes back IBV_WC_RETRY_EXC_ERR or IBV_WC_WR_FLUSH_ERR marks that port's device failed, its queue pairs
// are replaced by ones on a working port, and the failed requests are replayed there
// (src/transport/net_ib/p2p_resiliency.cc). Those lines are evidence of a recovery (`ib_port_failover`),
// not a failure; the lines of a failover that could not happen are detections. Their examples are built
// from the release's format (no public report quotes them yet).
#include "signature_family.h"

namespace ncclfi::harness {

extern const SignatureFamily kNcclIbFamily{
    .name = "nccl_ib",
    .title = "NCCL's IB transport: completion errors",
    .software = "NCCL's IB transport (also external IB net plugins that copied its wording)",
    .lines =
        {{.id = "nccl.ib_completion_named",
          .regex = R"(NET/IB: Got completion from peer \S+ with status=IBV_WC_\w+\(\d+\))",
          .must_contain = "Got completion from peer",
          .shown = "`NET/IB: Got completion from peer <ip><port> with status=IBV_WC_RETRY_EXC_ERR(12) ...`",
          .example =
              R"(node1:2201:2290 [0] transport/net_ib.cc:2094 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<53142> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RDMA_WRITE(1) reqSize=1048576 vendor_err=129 req_type=Send hca mlx5_0)",
          .implies = "async_error",
          .format =
              "NET/IB: Got completion from peer %s with status=%s(%d) opcode=%s(%d) reqSize=%d vendor_err=%u "
              "req_type=%s%s%s%s%s hca %s",
          .versions = "NCCL 2.28.7 to 2.28.9; from 2.29.2 without reqSize and req_type (net_ib/p2p.cc)",
          .cited = "NVIDIA/nccl src/transport/net_ib.cc (v2.28.7-1), src/transport/net_ib/p2p.cc "
                   "(ncclIbLogCompletionWithError, v2.29.2-1)",
          .meaning = "an RDMA work request failed; the status name says how (RETRY_EXC_ERR: retries ran out)",
          .site = "nic,degraded_link",
          .printed_by = "either end of the failed connection; `hca` is the local HCA"},
         {.id = "nccl.ib_completion_status",
          .regex = R"(NET/IB(?:/GIN)? ?: Got completion from peer \S+ with status=\d+ opcode=)",
          .must_contain = "Got completion from peer",
          .shown = "`NET/IB: Got completion from peer <ip><port> with status=12 opcode=0 len=0 vendor err "
                   "129 (Recv) ...`",
          .example =
              R"(kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid fd00:1148:9000:5000:4:200:3:ff22 remoteGidsfd00:1148:9000:5000:4:200:3:ff1f)",
          .implies = "async_error",
          .format = "NET/IB: Got completion from peer %s with status=%d opcode=%d len=%u vendor err %u "
                    "(%s)%s%s%s%s hca %s",
          .versions =
              "NCCL 2.20.3 to 2.28.3 (`NET/IB : ` and no `hca` before 2.22.3); `NET/IB/GIN:` (GPU-initiated "
              "networking) from 2.28.7",
          .cited = "NVIDIA/nccl src/transport/net_ib.cc (v2.20.3-1 to v2.28.3-1)",
          .reported = "NVIDIA/nccl#1405, #1814 (from an external IB plugin with the same wording)",
          .meaning = "an RDMA work request failed with verbs status N (12: the transport's retries ran out)",
          .site = "nic,degraded_link",
          .printed_by = "either end of the failed connection"},
         {.id = "nccl.ib_completion_error_from_peer",
          .regex = R"(NET/IB ?: Got completion from peer \S+ with error \d+, opcode)",
          .must_contain = "Got completion from peer",
          .shown =
              "`NET/IB : Got completion from peer <ip><port> with error 12, opcode 0, len 0, vendor err 129`",
          .example =
              R"(kolyoz2:25146:25854 [0] ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer 10.0.35.1<49189> with error 4, opcode 5327, len 5327, vendor err 81 (Send))",
          .implies = "async_error",
          .format = "NET/IB : Got completion from peer %s with error %d, opcode %d, len %d, vendor err %d "
                    "(%s)%s%s%s%s",
          .versions = "NCCL 2.10.3 to 2.19.4 (the request type and GIDs from 2.18.1)",
          .cited = "NVIDIA/nccl src/transport/net_ib.cc (v2.10.3-1 to v2.19.4-1)",
          .reported = "NVIDIA/nccl-tests#252 (from an external IB plugin with the same wording)",
          .meaning = "an RDMA work request failed with verbs status N (12: the transport's retries ran out)",
          .site = "nic,degraded_link",
          .printed_by = "either end of the failed connection"},
         {.id = "nccl.ib_completion_error",
          .regex = R"(NET/IB : Got completion with error \d+, opcode)",
          .must_contain = "Got completion with error",
          .shown = "`NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129`",
          .example = R"(NCCL WARN NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129)",
          .implies = "async_error",
          .format = "NET/IB : Got completion with error %d, opcode %d, len %d, vendor err %d",
          .versions = "NCCL 2.3.5 to 2.9.9",
          .cited = "NVIDIA/nccl src/transport/net_ib.cc (net_ib.cu before 2.4)",
          .reported = "NVIDIA/nccl#902, #214",
          .meaning = "an RDMA work request failed with verbs status N; no peer address yet in this release",
          .site = "nic,degraded_link",
          .printed_by = "either end of the failed connection"},
         {.id = "nccl.ib_port_failover_fatal",
          .regex = R"(NET/IB: (?:\w+: )?(?:The error is fatal \(|Fatal error\. Detected \d+ failed devices))",
          .must_contain = "atal",
          .shown = "`NET/IB: The error is fatal (No functional devices left). Cannot continue.` (also `Fatal "
                   "error. Detected <n> failed devices out of <m> devices ...`)",
          .example =
              R"(node1:2201:2290 [0] transport/net_ib/p2p_resiliency.cc:64 (ncclIbResiliencyCheckErrorNotFatal) NCCL WARN NET/IB: The error is fatal (No functional devices left). Cannot continue.)",
          .implies = "async_error",
          .format = "NET/IB: The error is fatal (%s). Cannot continue.",
          .versions =
              "NCCL 2.30.7 and later; 2.29.7 to 2.30.4 with `ncclIbResiliencyCheckErrorNotFatal: ` after "
              "`NET/IB: ` (`Fatal error. Detected ...` from 2.30.3)",
          .cited = "NVIDIA/nccl src/transport/net_ib/p2p_resiliency.cc (ncclIbResiliencyCheckErrorNotFatal, "
                   "v2.29.7-1 to v2.30.7-1)",
          .meaning = "port failover is on but could not save the connection: no working port left in the "
                     "virtual NIC (it has one port, or the other failed too), a second failed port, or a "
                     "status other than RETRY_EXC_ERR or WR_FLUSH_ERR",
          .site = "nic",
          .printed_by = "either end of the failed connection"},
         {.id = "nccl.ib_port_failover_device_failed",
          .regex = R"(NET/IB: (?:\w+: )?Device \d+ marked as failed\.)",
          .must_contain = "marked as failed.",
          .shown = "`NET/IB: Device <n> marked as failed. Initiating recovery? No (send comm=<ptr>, "
                   "outstandingRecovery=0)`",
          .example =
              R"(node1:2201:2290 [0] transport/net_ib/p2p_resiliency.cc:376 (ncclIbResiliencyHandleDeviceFailure) NCCL WARN NET/IB: Device 0 marked as failed. Initiating recovery? No (send comm=0x7f3a2c001e80, outstandingRecovery=0))",
          .role = SignatureRole::kEvidence,
          .implies = "ib_port_failover",
          .format = "NET/IB: Device %d marked as failed. Initiating recovery? %s (%s comm=%p, "
                    "outstandingRecovery=%d)",
          .versions = "NCCL 2.30.7 and later; 2.30.3 and 2.30.4 with `ncclIbResiliencyHandleDeviceFailure: ` "
                      "after `NET/IB: `; 2.29.7 `NET/IB: %s: Device %d marked as failed. (%s comm=%p)`",
          .cited = "NVIDIA/nccl src/transport/net_ib/p2p_resiliency.cc (ncclIbResiliencyHandleDeviceFailure, "
                   "v2.29.7-1 to v2.30.7-1)",
          .meaning =
              "port failover began: the device (its index in the virtual NIC) of a failed completion is "
              "out, and its queue pairs move to a working port (a recovery, not a failure; a WARN all "
              "the same)",
          .site = "nic",
          .printed_by = "either end of the connection whose port failed"},
         {.id = "nccl.ib_port_failover_qp_replaced",
          .regex = R"(NET/IB: \w+: Replacing QP: qpIndex=\d+)",
          .must_contain = "Replacing QP: ",
          .shown = "`NET/IB: ncclIbResiliencyReplaceQps: Replacing QP: qpIndex=0 (qp_num=..., devIndex=0) to "
                   "qpIndex=1 (qp_num=..., devIndex=1) on send communicator (comm=<ptr>)` (INFO, NET)",
          .example =
              R"(node1:2201:2290 [0] NCCL INFO NET/IB: ncclIbResiliencyReplaceQps: Replacing QP: qpIndex=0 (qp_num=4711, devIndex=0) to qpIndex=1 (qp_num=4712, devIndex=1) on send communicator (comm=0x7f3a2c001e80))",
          .role = SignatureRole::kEvidence,
          .implies = "ib_port_failover",
          .format = "NET/IB: %s: Replacing QP: qpIndex=%d (qp_num=%u, devIndex=%d) to qpIndex=%d (qp_num=%u, "
                    "devIndex=%d) on %s communicator (comm=%p)",
          .versions = "NCCL 2.29.7 and later (NCCL_DEBUG=INFO with NET in NCCL_DEBUG_SUBSYS)",
          .cited = "NVIDIA/nccl src/transport/net_ib/p2p_resiliency.cc (ncclIbResiliencyReplaceQps, "
                   "v2.29.7-1 to v2.30.7-1)",
          .meaning = "port failover moved a queue pair of the failed device to one on a working device: the "
                     "connection carries on there",
          .site = "nic",
          .printed_by = "either end of the connection whose port failed"},
         {.id = "nccl.ib_async_fatal",
          .regex = R"(NET/IB : \S+:\d+ async fatal event)",
          .must_contain = "async fatal event",
          .shown =
              "`NET/IB : <hca>:<port> async fatal event: <event>` (also `on CQ (<ptr>)`, `on QP (<ptr>)`)",
          .example =
              R"(node1:2201:2250 [0] transport/net_ib.cc:123 NCCL WARN NET/IB : mlx5_0:1 async fatal event: local catastrophic error)",
          .role = SignatureRole::kEvidence,
          .implies = "ib_fatal_event",
          .format = "NET/IB : %s:%d async fatal event: %s",
          .versions = "NCCL 2.23.4 to 2.30.7 (before 2.23.4 every event reads `Got async event : `)",
          .cited =
              "NVIDIA/nccl src/transport/net_ib.cc (ncclIbAsyncThreadMain); net_ib/common.cc from 2.29.2",
          .meaning = "the local HCA raised a fatal asynchronous event: the device, a CQ or a QP is unusable",
          .site = "nic",
          .printed_by = "every rank on the host of the failed HCA"},
         {.id = "nccl.ib_async_event",
          .regex =
              R"(NET/IB : (?:\S+:\d+ )?Got (?:async event : |async error event: |non-fatal async event: ))",
          .must_contain = "async ",
          .shown =
              "`NET/IB : <hca>:<port> Got non-fatal async event: port error(10)` (`Got async error event: "
              "port error` before 2.28.7, `Got async event : port error` before 2.23.4)",
          .example =
              R"(node1:2201:2250 [0] transport/net_ib.cc:253 NCCL WARN NET/IB : mlx5_0:1 Got non-fatal async event: port error(10))",
          .role = SignatureRole::kEvidence,
          .implies = "ib_port_event",
          .format = "NET/IB : %s:%d Got non-fatal async event: %s(%d)",
          .versions = "NCCL 2.28.7 to 2.30.7; `%s:%d Got async error event: %s` 2.23.4 to 2.28.3; `%s:%d Got "
                      "async event : %s` 2.20.3 to 2.22.3; `Got async event : %s` before",
          .cited =
              "NVIDIA/nccl src/transport/net_ib.cc (ncclIbAsyncThreadMain), net_ib/common.cc from 2.29.2; "
              "the event's name from rdma-core's ibv_event_type_str",
          .reported = "open-mpi/ompi#180 (a port losing its link raises IBV_EVENT_PORT_ERR)",
          .meaning = "the local HCA raised an asynchronous event; `port error` is the port's link going down "
                     "under this host (`port active`: it came back)",
          .site = "nic",
          .printed_by = "every rank on the host of the failed HCA"}},
};

}  // namespace ncclfi::harness
