// The signature catalogue: every line that NCCL, its net plugins, PyTorch, torchrun, Open MPI, Slurm, the
// kernel and NCCL's RAS print when something fails, with where each format comes from, the releases that
// print it, what it means and the fault site it points to. The detection mechanisms' own lines
// (mechanisms/) come first; the families of this folder follow, one file per family, listed in
// signature_list.h. The log classifier, `ncclfi doc-table signatures` and the docs are made from it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mechanism_spec.h"

namespace ncclfi::harness {

struct SignatureFamily {
  std::string_view name{};      // "nccl_ib"
  std::string_view title{};     // the docs' heading: "NCCL's IB transport"
  std::string_view software{};  // whose output it is: "NCCL (net_ib)"
  std::vector<SignatureLine> lines{};
  // A node's own record of its hardware (the kernel's log, the operator's tools), not a job's output:
  // each of its lines says that a part of that node is broken, whatever the job did.
  bool hardware_record = false;
};

// One line of the catalogue, as the classifier tries it.
struct CatalogueEntry {
  const SignatureLine* line = nullptr;
  std::string_view family{};  // a mechanism's name or a family's
  SignatureRole role = SignatureRole::kDetection;
  std::string_view label{};  // the mechanism a detection means, an evidence's label; "" for a restart
};

// The families of this folder, in signature_list.h's order.
const std::vector<const SignatureFamily*>& signature_families();
// The whole catalogue in the order lines are tried (the first match decides): every mechanism's lines,
// in mechanism_list.h's order, then every family's.
const std::vector<CatalogueEntry>& signature_catalogue();
// Whether the catalogue line `id` is of a family that is a node's record of its hardware.
bool is_hardware_record(std::string_view id);
// The fault sites a line may point to (SignatureLine::site).
const std::vector<std::string_view>& signature_sites();
// docs/failure-signatures.md's catalogue (`ncclfi doc-table signatures`): a table per family.
std::string signature_catalogue_markdown();

}  // namespace ncclfi::harness
