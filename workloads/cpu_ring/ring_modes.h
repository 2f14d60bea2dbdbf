// The three modes of ncclfi-cpu-ring, each run over the connected ring: the checked all-reduce, the
// training loop and the link test.
#pragma once

#include <cstdint>
#include <vector>

#include "ncclfi/event_log.h"
#include "rendezvous.h"
#include "ring_allreduce.h"
#include "ring_job.h"

namespace ncclfi::cpu_ring {

// warmup + iters all-reduces of deterministic data, every element of every result checked. Returns
// false when some element was wrong (with --check, the first wrong result ends the job: exit 4).
bool checked_allreduce(const RingLinks& links, std::vector<uint32_t>& data, std::vector<uint32_t>& tmp,
                       const Options& opt, OpRecorder& ops, const EventLog& events);

// A small model trained data-parallel; prints the loss per step.
void train(const RingLinks& links, std::vector<float>& grad, std::vector<float>& tmp, const Options& opt,
           OpRecorder& ops);

// Each ring link alone, one way, timed and checked. Returns false when some message arrived altered.
bool link_test(const RingLinks& links, std::vector<uint32_t>& data, std::vector<uint32_t>& tmp,
               const Options& opt, Rendezvous& rdv, OpRecorder& ops, const EventLog& events);

}  // namespace ncclfi::cpu_ring
