// ncclfi-cpu-ring's end-of-run line of where its ring steps waited, one per rank:
//   ncclfi-cpu-ring: rank 2/4: waited 1.353 s on its sends to rank 3 and 0.000 s on its receives from
//   rank 1, each after the other side of its ring step was done
// (`cpu-ring:` under NCCLFI_QUIET). A slow ring paces every rank alike; these two figures say which rank
// was held back on its own sends.
#pragma once

#include <optional>
#include <string_view>

namespace ncclfi::diagnose {

struct RingWaitsLine {
  int rank = -1;
  double send_s = 0, recv_s = 0;
};

// The line's figures, or nullopt for any other line.
std::optional<RingWaitsLine> parse_ring_waits(std::string_view line);

}  // namespace ncclfi::diagnose
