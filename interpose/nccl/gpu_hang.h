// The `gpu_hang` fault: the op's stream waits, before the op, on a flag in host memory that nothing sets
// (for ever) or that a timer thread sets after ms. The call itself returns at once: the host goes on
// while the op's kernel never starts, and its peers wait for it inside the collective, which is how a
// lost network completion looks to a framework. Only a watchdog that watches the GPU work (PyTorch's
// ProcessGroupNCCL watchdog, ncclfi-workload's) notices.
#pragma once

#include <optional>
#include <string>

#include <nccl.h>

namespace ncclfi::preload {

// Enqueues the wait on `stream` (whose context is used; for the NULL stream the primary context of
// `device`), through the CUDA driver; with `ms`, releases it after ms. Call it before the op reaches
// NCCL. Returns "" when enqueued, else why not. Never blocks.
std::string enqueue_gpu_hang(cudaStream_t stream, int device, std::optional<double> ms);

}  // namespace ncclfi::preload
