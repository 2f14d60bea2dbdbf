// The InfiniBand verbs values the verbs-layer faults name: work-completion statuses, the port's link speed
// and width codes, and the errnos a post may fail with. The core has no libibverbs dependency, so the values
// are written here once; interpose/verbs checks each against <infiniband/verbs.h> at compile time.
#pragma once

#include <array>
#include <cerrno>
#include <optional>
#include <string_view>

namespace ncclfi::ib {

struct NamedCode {
  std::string_view name;
  int value;
};

// enum ibv_wc_status, in order (verbs ABI: the values never change).
inline constexpr std::array<NamedCode, 24> kWcStatuses{{
    {"IBV_WC_SUCCESS", 0},
    {"IBV_WC_LOC_LEN_ERR", 1},
    {"IBV_WC_LOC_QP_OP_ERR", 2},
    {"IBV_WC_LOC_EEC_OP_ERR", 3},
    {"IBV_WC_LOC_PROT_ERR", 4},
    {"IBV_WC_WR_FLUSH_ERR", 5},
    {"IBV_WC_MW_BIND_ERR", 6},
    {"IBV_WC_BAD_RESP_ERR", 7},
    {"IBV_WC_LOC_ACCESS_ERR", 8},
    {"IBV_WC_REM_INV_REQ_ERR", 9},
    {"IBV_WC_REM_ACCESS_ERR", 10},
    {"IBV_WC_REM_OP_ERR", 11},
    {"IBV_WC_RETRY_EXC_ERR", 12},
    {"IBV_WC_RNR_RETRY_EXC_ERR", 13},
    {"IBV_WC_LOC_RDD_VIOL_ERR", 14},
    {"IBV_WC_REM_INV_RD_REQ_ERR", 15},
    {"IBV_WC_REM_ABORT_ERR", 16},
    {"IBV_WC_INV_EECN_ERR", 17},
    {"IBV_WC_INV_EEC_STATE_ERR", 18},
    {"IBV_WC_FATAL_ERR", 19},
    {"IBV_WC_RESP_TIMEOUT_ERR", 20},
    {"IBV_WC_GENERAL_ERR", 21},
    {"IBV_WC_TM_ERR", 22},
    {"IBV_WC_TM_RNDV_INCOMPLETE", 23},
}};
inline constexpr int kWcSuccess = 0;
inline constexpr int kWcWrFlushErr = 5;
inline constexpr int kWcRemAccessErr = 10;
inline constexpr int kWcRetryExcErr = 12;

// ibv_port_attr::state
inline constexpr int kPortDown = 1;
inline constexpr int kPortActive = 4;
// ibv_port_attr::phys_state: 3 = Disabled (the IB spec's PortPhysicalState), what a downed port reports.
inline constexpr int kPhysStateDisabled = 3;

// ibv_port_attr::active_speed codes, with the per-lane rate NCCL's net_ib init.cc assigns them (Mbit/s).
struct LinkCode {
  std::string_view name;
  int code;
  int mbps;  // speed: per lane; width: the number of lanes
};
inline constexpr std::array<LinkCode, 8> kLinkSpeeds{{
    {"SDR", 1, 2500},
    {"DDR", 2, 5000},
    {"QDR", 4, 10000},
    {"FDR10", 8, 10000},
    {"FDR", 16, 14000},
    {"EDR", 32, 25000},
    {"HDR", 64, 50000},
    {"NDR", 128, 100000},
}};
// ibv_port_attr::active_width codes; `mbps` holds the lane count.
inline constexpr std::array<LinkCode, 5> kLinkWidths{{
    {"1x", 1, 1},
    {"4x", 2, 4},
    {"8x", 4, 8},
    {"12x", 8, 12},
    {"2x", 16, 2},
}};

// The errnos a post_send/post_recv may fail with (mlx5 returns ENOMEM for a full queue, EINVAL for a bad WR).
inline constexpr std::array<NamedCode, 5> kPostErrnos{{
    {"ENOMEM", ENOMEM},
    {"EINVAL", EINVAL},
    {"EAGAIN", EAGAIN},
    {"EFAULT", EFAULT},
    {"EIO", EIO},
}};

template <class Table>
constexpr std::optional<int> code_of(const Table& table, std::string_view name) {
  for (const auto& e : table) {
    if (e.name == name) return e.value;
  }
  return std::nullopt;
}

inline constexpr std::string_view wc_status_name(int value) {
  for (const auto& e : kWcStatuses) {
    if (e.value == value) return e.name;
  }
  return "IBV_WC_?";
}

}  // namespace ncclfi::ib
