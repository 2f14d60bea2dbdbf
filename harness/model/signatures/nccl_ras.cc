// NCCL's RAS (2.24.3 and later): what the `ncclras` client prints about a job, and the RAS thread's own
// INFO line when it gives up on a peer. A job whose processes stopped answering RAS is named here before
// any collective times out: a ras detection. ncclfi also asks the RAS port itself (ras_probe.cc); these
// lines are for output that holds a report, pasted or captured.
#include "signature_family.h"

namespace ncclfi::harness {

extern const SignatureFamily kNcclRasFamily{
    .name = "nccl_ras",
    .title = "NCCL's RAS reports",
    .software = "NCCL's RAS thread and its client `ncclras` (NCCL 2.24.3 and later)",
    .lines =
        {{.id = "ras.dead_processes",
          .regex = R"(\d+ job process(?:es are| is) considered dead \(unreachable via the RAS network\))",
          .must_contain = "considered dead",
          .shown = "`<N> job process is considered dead (unreachable via the RAS network)` (under `DEAD`)",
          .example = "  1 job process is considered dead (unreachable via the RAS network)",
          .implies = "ras",
          .format = "  %d job process%s considered dead (unreachable via the RAS network)\\n",
          .versions = "NCCL 2.24.3 to 2.30",
          .cited = "NVIDIA/nccl src/ras/client_support.cc",
          .meaning = "RAS lost a process: it died, or its host is gone or frozen",
          .site = "dead_rank,host_hang",
          .printed_by = "ncclras, asked of any live rank"},
         {.id = "ras.missing_data",
          .regex = R"(Missing communicator data from \d+ (?:job process|rank))",
          .must_contain = "Missing communicator data",
          .shown = "`Missing communicator data from <N> rank(s)` (under `INCOMPLETE`)",
          .example = "  Missing communicator data from 1 rank",
          .implies = "ras",
          .format = "  Missing communicator data from %d rank%s\\n",
          .versions = "NCCL 2.24.3 to 2.30 (also `from %d job process%s`)",
          .cited = "NVIDIA/nccl src/ras/client_support.cc",
          .meaning = "some ranks did not answer the RAS query: stuck, frozen or gone",
          .site = "host_hang,dead_rank",
          .printed_by = "ncclras, asked of any live rank"},
         {.id = "ras.rank_errors",
          .regex = R"((?:Asynchronous|Initialization) errors? on \d+ ranks?)",
          .must_contain = " error",
          .shown =
              "`Asynchronous error on <N> rank(s)`, `Initialization error on <N> rank(s)` (under `ERROR`)",
          .example = "  Asynchronous error on 1 rank",
          .implies = "ras",
          .format = "  Asynchronous error%s on %d rank%s\\n",
          .versions = "NCCL 2.24.3 to 2.30",
          .cited = "NVIDIA/nccl src/ras/client_support.cc",
          .meaning = "communicators of these ranks hold an error (ncclCommGetAsyncError would return it)",
          .printed_by = "ncclras, asked of any live rank"},
         {.id = "ras.declaring_dead",
          .regex = R"(RAS declaring peer \S+ as DEAD)",
          .must_contain = "as DEAD",
          .shown = "`RAS declaring peer <host><port> as DEAD` (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=RAS)",
          .example =
              R"(node1:4242:4310 [0] NCCL INFO RAS declaring peer 10.0.0.3<28028> as DEAD; rasDeadPeersHash 0x5e1a)",
          .implies = "ras",
          .format = "RAS declaring peer %s as DEAD; rasDeadPeersHash 0x%lx",
          .versions = "NCCL 2.24.3 to 2.30",
          .cited = "NVIDIA/nccl src/ras/peers.cc",
          .meaning = "this rank's RAS thread gave up on a peer's RAS thread",
          .site = "dead_rank,host_hang",
          .printed_by = "every rank whose RAS thread talked to the lost one"}},
};

}  // namespace ncclfi::harness
