// The `corrupt` fault: alter `count` elements of an op's receive buffer on the op's stream, after the
// op, so the next kernel on that stream (or the host after a sync) sees the bad values.
//
// Which elements: `count` of them (at most the buffer's), evenly spaced `stride` apart from `first`
// (first < stride, drawn from the fault's seed), so a check that counts wrong elements finds exactly
// `count`. What happens to each:
//   bitflip  flips bit (8*size - 2) of the element: the top exponent bit of a float type, the
//            second-highest bit of an integer; always a large change (1.0f becomes +inf, 2.0f 0.0...).
//   nan      a quiet NaN of the element's type; integer types (no NaN) get all bits set (-1 / max).
//   zero     all bits cleared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <nccl.h>

#include "ncclfi/fault_action.h"

namespace ncclfi::preload {

// CorruptMode (ncclfi/fault_action.h) comes from the core, where the `corrupt` kind resolves `mode`.

struct CorruptionSpan {
  size_t first = 0;   // index of the first altered element
  size_t stride = 1;  // distance between altered elements
  size_t count = 0;   // elements altered (0: nothing to do)
};

// Chooses the elements: `count` (clamped to `elements`) evenly spaced, starting at
// floor(draw * stride) for draw in [0,1). The stride is capped so one pitch stays below 1 GiB.
CorruptionSpan plan_corruption(size_t elements, size_t element_size, size_t count, double draw);

// Alters `n` contiguous elements of `datatype` in host memory, as `mode` says.
void corrupt_host_elements(void* data, size_t n, ncclDataType_t datatype, CorruptMode mode);

// Enqueues the alteration of `span` in device buffer `recvbuff` on `stream` (whose context is used;
// for the NULL stream the primary context of `device`), through the CUDA driver. Returns "" when
// enqueued, else why not. Never blocks on the stream.
std::string enqueue_corruption(void* recvbuff, ncclDataType_t datatype, const CorruptionSpan& span,
                               CorruptMode mode, cudaStream_t stream, int device);

}  // namespace ncclfi::preload
