#include "comm_registry.h"

namespace ncclfi::preload {

CommInfo* CommRegistry::add(ncclComm_t comm, int rank, int nranks, int device, bool may_query) {
  if (comm == nullptr) return nullptr;
  auto* info = new CommInfo;  // never freed (see remove)
  info->comm = comm;
  info->rank.store(rank, std::memory_order_relaxed);
  info->nranks.store(nranks, std::memory_order_relaxed);
  info->device.store(device, std::memory_order_relaxed);
  {
    std::unique_lock lock(mu_);
    info->index = next_index_.fetch_add(1, std::memory_order_relaxed);
    by_comm_[comm] = info;
  }
  if (may_query) complete(*info);
  return info;
}

CommInfo* CommRegistry::lookup(ncclComm_t comm, bool may_query) {
  if (comm == nullptr) return nullptr;
  CommInfo* info = nullptr;
  {
    std::shared_lock lock(mu_);
    auto it = by_comm_.find(comm);
    if (it != by_comm_.end()) info = it->second;
  }
  if (info == nullptr) return add(comm, -1, -1, -1, may_query);
  if (may_query) complete(*info);
  return info;
}

void CommRegistry::remove(ncclComm_t comm) {
  std::unique_lock lock(mu_);
  by_comm_.erase(comm);
}

}  // namespace ncclfi::preload
