// Reads ncclfi-cpu-ring's line of where its ring steps waited (ring_waits.h).
#include "ring_waits.h"

#include <re2/re2.h>

namespace ncclfi::diagnose {

std::optional<RingWaitsLine> parse_ring_waits(std::string_view line) {
  static const re2::RE2 waits(
      R"(cpu-ring: rank (\d+)/\d+: waited ([\d.]+) s on its sends to rank \d+ and ([\d.]+) s on its receives)");
  RingWaitsLine w;
  if (!re2::RE2::PartialMatch(line, waits, &w.rank, &w.send_s, &w.recv_s)) return std::nullopt;
  return w;
}

}  // namespace ncclfi::diagnose
