// Any other NCCL WARN line: evidence for the timeline, never a detection, because NCCL warns about
// many things that are not failures. The last family: every more specific line is tried first.
#include "signature_family.h"

namespace ncclfi::harness {

extern const SignatureFamily kNcclWarnFamily{
    .name = "nccl_warn",
    .title = "Any other NCCL warning",
    .software = "NCCL (NCCL_DEBUG=WARN or INFO)",
    .lines = {{.id = "nccl.warn",
               .regex = R"(NCCL WARN)",
               .must_contain = "NCCL WARN",
               .shown = "`<host>:<pid>:<tid> [<device>] NCCL WARN <message>`",
               .example = "host1:1234:1300 [0] NCCL WARN Cuda failure 2 'out of memory'",
               .role = SignatureRole::kEvidence,
               .implies = "nccl_warn",
               .format = "%s:%d:%d [%d] NCCL WARN ",
               .versions = "NCCL 2.x",
               .cited = "NVIDIA/nccl src/debug.cc (ncclDebugLog)",
               .meaning = "NCCL warned; the message says about what",
               .printed_by = "the rank whose NCCL warned"}},
};

}  // namespace ncclfi::harness
