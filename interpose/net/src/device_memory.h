// `corrupt` on a receive buffer in GPU memory (wrap mode over a GPUDirect plugin): the received bytes are
// copied to the host, the bits flip there (the same seeded choice as for host memory), and the bytes go back,
// through the CUDA driver with unified addressing. The driver is loaded at run time, as the preload does
// (NCCLFI_CUDA_DRIVER_LIB, default libcuda.so.1): the shim links no CUDA. NCCL's proxy thread, which posts
// and tests the receive, has the communicator's device context current; the copies run on a non-blocking
// stream of that context, so they never wait for a kernel on a legacy-synchronising stream (the NCCL
// kernel that waits for this very receive could be one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ncclfi::net {

// Whether this thread can reach device bytes: the driver and its copy functions loaded, and a CUDA
// context current. Else false with `why`.
bool device_memory_reachable(std::string* why);

// Flips exactly min(nbits, 8*bytes) bits of the device buffer [data, data+bytes) chosen from `seed`.
// False (with `why`) when the driver cannot be reached or a copy fails.
bool flip_device_bits(void* data, size_t bytes, uint64_t nbits, uint64_t seed, std::string* why);

}  // namespace ncclfi::net
