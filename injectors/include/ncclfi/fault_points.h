// The fault points: the one spelling of each place a fault can fire. The kinds name the points they fire
// at from here (kinds/kind_support.h), each front end declares its FaultPoints with these names, and the
// inject events carry them (`point`). A point is "<layer's prefix>/<group>/<op>" or "<prefix>/<op>";
// its last segment is the op a target's `ops` names, except the group end and comm creation
// (fault_kinds.cc, op_of_point).
#pragma once

namespace ncclfi::points {

// api layer (the preload): the collectives, point-to-point, the outermost ncclGroupEnd, comm creation and
// ncclCommAbort.
inline constexpr char kAllreduce[] = "nccl/coll/allreduce";
inline constexpr char kAllgather[] = "nccl/coll/allgather";
inline constexpr char kReduceScatter[] = "nccl/coll/reducescatter";
inline constexpr char kReduce[] = "nccl/coll/reduce";
inline constexpr char kBroadcast[] = "nccl/coll/broadcast";
inline constexpr char kAlltoall[] = "nccl/coll/alltoall";
inline constexpr char kGather[] = "nccl/coll/gather";
inline constexpr char kScatter[] = "nccl/coll/scatter";
inline constexpr char kSend[] = "nccl/p2p/send";
inline constexpr char kRecv[] = "nccl/p2p/recv";
inline constexpr char kGroupEnd[] = "nccl/group/end";
inline constexpr char kCommInit[] = "nccl/comm/init";
inline constexpr char kCommAbort[] = "nccl/comm/abort";
// libc's connect() to the job's bootstrap: NCCL's bootstrap root (the address in the unique id a rank
// creates its communicator with, or NCCL_COMM_ID), and the job's own rendezvous (MASTER_ADDR:MASTER_PORT:
// torchrun's store, ncclfi's workloads' rendezvous, which ncclfi-cpu-ring's NCCL stand-in bootstraps by).
inline constexpr char kBootstrapRoot[] = "nccl/bootstrap/root";
inline constexpr char kBootstrapRendezvous[] = "nccl/bootstrap/rendezvous";

// net layer (the net-plugin shim).
inline constexpr char kNetConnect[] = "net/connect";
inline constexpr char kNetAccept[] = "net/accept";
inline constexpr char kNetIsend[] = "net/isend";
inline constexpr char kNetIrecv[] = "net/irecv";
inline constexpr char kNetTest[] = "net/test";

// verbs layer (libncclfi-ibverbs.so): where ibv_poll_cq reports completions, the posts, ibv_query_port.
inline constexpr char kVerbsPollCq[] = "verbs/poll_cq";
inline constexpr char kVerbsPostSend[] = "verbs/post_send";
inline constexpr char kVerbsPostRecv[] = "verbs/post_recv";
inline constexpr char kVerbsQueryPort[] = "verbs/query_port";

// proc layer (the harness's own schedule).
inline constexpr char kProcStop[] = "proc/stop";
inline constexpr char kProcKill[] = "proc/kill";

// link layer (the node agents' qdiscs).
inline constexpr char kLinkRate[] = "link/rate";
inline constexpr char kLinkDelay[] = "link/delay";
inline constexpr char kLinkLoss[] = "link/loss";
inline constexpr char kLinkCorrupt[] = "link/corrupt";

}  // namespace ncclfi::points
