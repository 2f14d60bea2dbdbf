// The verbs-layer faults (docs/faults.md, kinds/verbs_*.cc) at the four places NCCL's IB transport meets
// libibverbs: ibv_poll_cq and ibv_post_send/ibv_post_recv, which NCCL calls through the context's ops
// (patched here when a plan is loaded), and ibv_query_port, which it calls by symbol and through the
// verbs_context op. Without a plan nothing is patched and every call goes straight to the real library.
// Every hook and every on_* call below is an exception barrier (ncclfi/effects.h: guarded): nothing is
// thrown into NCCL.
//
//   point             kinds                                   effect
//   verbs/poll_cq     retry_exceeded, wc_error, delay, drop   the completion is rewritten, held or never
//                                                             reported; after an error the QP's later
//                                                             completions come back IBV_WC_WR_FLUSH_ERR, and
//                                                             completions of a QP leave in order
//   verbs/post_send   post_error                              returns the errno, *bad_wr = the first WR
//   verbs/post_recv   post_error                              the same for receives
//   verbs/query_port  port_down, link_degrade                 from the firing on, the port reads down or
//   slower
//
// A fault's target.device / target.port narrow it to one HCA / one port: a completion or a post matches by
// its QP's port (learned from ibv_modify_qp with IBV_QP_PORT), a port query by the port asked about.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>

namespace ncclfi::verbs {

// After the real ibv_open_device: patch the context's ops when faults are installed.
void on_open_device(ibv_context* ctx);
// Before the real ibv_close_device / ibv_destroy_cq: forget the state kept for it.
void on_close_device(ibv_context* ctx);
void on_destroy_cq(ibv_cq* cq);
// After a real ibv_modify_qp that succeeded: a mask with IBV_QP_PORT (NCCL's move to INIT) tells the QP's
// port, which a fault's target.port matches. Before the real ibv_destroy_qp: forget it.
void on_modify_qp(ibv_qp* qp, const ibv_qp_attr& attr, int mask);
void on_destroy_qp(ibv_qp* qp);
// After a real query of the port: apply the port faults (fires the query_port point).
void on_query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr);
// ibv_query_port_speed's answer (100 Mbit/s units) under a link_degrade, else `speed` unchanged.
uint64_t on_query_port_speed(ibv_context* ctx, uint8_t port, uint64_t speed, const ibv_port_attr& real_attr);

}  // namespace ncclfi::verbs
