// What an operator reads on each node of a lab's job besides the ranks' logs: the output of ibstat,
// perfquery, dmesg, nvidia-smi (-q, nvlink -s/-e) and lspci -vv, in each tool's own format, consistent
// with the hidden fault of the lab (the culprit rank's GPU and HCA show its signature, every other
// device healthy output). A node of several ranks has a GPU and an HCA per rank: local rank i has GPU i
// and mlx5_i, as ncclfi-cpu-ring and the net shim's IB persona name them. The workspace writes them under
// nodes/<host>/ (lab_workspace.cc). Each writer cites where its format comes from, in lab_artefacts.cc.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ncclfi::cli::lab {

// One node of the job: its host name and the ranks that ran on it.
struct LabNode {
  std::string host;
  std::vector<int> ranks;
};

// Where the fault was, in the words of the lab catalogue's `site` (kSites), the culprit ranks, how strong
// it was (0-1: how far a link degraded, how many errors a counter took) and when it happened (wall clock,
// ns; 0: unknown, the job's start is used).
struct FaultTruth {
  std::string site = "none";
  std::set<int> ranks;
  double strength = 1.0;
  int64_t at_ns = 0;
};

// nic, congestion, degraded_link, nvlink, pcie, host_hang, gpu_hang, dead_rank, bootstrap, configuration,
// none.
const std::vector<std::string>& fault_sites();
bool is_fault_site(const std::string& site);
// The site of a lab whose answer names only a cause (the cause vocabulary of lab_grading.h): nic -> nic,
// link_corruption -> degraded_link, hung_rank -> host_hang, ... ("none" for a cause that names no place,
// such as an error code).
std::string site_for_cause(const std::string& cause);

// `count` host names as a cluster names its nodes (gpu-node07, gpu-node08, ...): distinct, ascending,
// drawn from `draw` so that neighbours' workspaces differ.
std::vector<std::string> lab_node_names(int count, uint64_t draw);

// The files of every node, by path under the workspace ("nodes/<host>/ibstat.txt", ...). `job_start_ns`
// and `job_end_ns` (wall clock) place the kernel-log lines and the time the tools were run.
std::map<std::string, std::string> node_artefacts(const std::vector<LabNode>& nodes, const FaultTruth& truth,
                                                  int64_t job_start_ns, int64_t job_end_ns);

}  // namespace ncclfi::cli::lab
