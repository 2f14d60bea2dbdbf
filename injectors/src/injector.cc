#include "ncclfi/injector.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <mutex>

#include <fiu-control.h>
#include <fiu.h>

#include "ncclfi/event_line.h"
#include "ncclfi/fault_kinds.h"
#include "ncclfi/host_allow.h"
#include "ncclfi/injection_channel.h"

namespace ncclfi {

void ensure_fiu_initialised() {
  static std::once_flag once;
  std::call_once(once, [] { fiu_init(0); });
}

Injector::Injector(const Params& params, Layer layer, std::string source)
    : params_(params),
      layer_(layer),
      source_(std::move(source)),
      events_(params.events_path, source_, params.rank) {
  if (params_.plan_path.empty()) return;  // inert: no plan, no behaviour change, no output
  try {
    plan_ = load_plan_file(params_.plan_path);
  } catch (const std::exception& e) {
    // The harness validates plans before launch; a bad plan given by hand must not break the job.
    load_error_ = e.what();
    if (params_.quiet) return;  // a lab's rank log must not mention the plan
    std::fprintf(stderr, "ncclfi[%d %d] %s: ignoring the fault plan: %s\n", params_.rank,
                 static_cast<int>(::getpid()), source_.c_str(), e.what());
    return;
  }
  // A drill's safety net: on a host outside the allow-list the plan is ignored, loudly, and the job runs
  // clean. Checked after parsing so a plan without faults for this layer stays silent.
  const bool has_layer_faults = std::any_of(plan_.faults.begin(), plan_.faults.end(),
                                            [&](const Fault& f) { return f.layer == layer_; });
  if (std::string warning; has_layer_faults && !host_allowed(&warning)) {
    load_error_ = warning;
    std::fprintf(stderr, "%s (%s, rank %d)\n", warning.c_str(), source_.c_str(), params_.rank);
    events_.write(ev::kRefused, {{"host", host_name()},
                                 {"allowed", allow_list_from_env().describe()},
                                 {"layer", to_string(layer_)},
                                 {"attempt", params_.attempt}});
    return;
  }
  bool control = plan_.control;
  for (const Fault& f : plan_.faults) control = control || !f.trigger.armed;
  for (const Fault& f : plan_.faults) {
    if (f.layer != layer_) continue;
    Fault copy = f;
    if (copy.target.rank_select == Target::RankSelect::kRandom && params_.world_size > 0) {
      copy.target.ranks = copy.target.resolve_ranks(params_.world_size);
      copy.target.rank_select = Target::RankSelect::kList;
    }
    armed_.push_back(std::make_unique<ArmedFault>(std::move(copy), plan_.seed, control));
    armed_.back()->set_heal_log(&events_, params_.rank, params_.attempt);
  }
  if (armed_.empty()) return;
  ensure_fiu_initialised();
  for (const auto& fault : armed_) {
    if (control && fault->fault().trigger.armed) fiu_enable(fault->control_point().c_str(), 1, nullptr, 0);
  }
  if (control) {
    std::string dir = params_.run_dir.empty() ? "." : params_.run_dir;
    if (!open_control_fifo(dir, source_)) log("could not open the control FIFO in " + dir);
  }
}

Injector::~Injector() = default;

void Injector::install(std::span<FaultPoint* const> points) {
  if (armed_.empty()) return;
  bool any = false;
  for (FaultPoint* point : points) {
    auto list = std::make_unique<std::vector<ArmedFault*>>();
    for (const auto& fault : armed_) {
      for (const auto& name : points_for_fault(fault->fault())) {
        if (name == point->name()) {
          list->push_back(fault.get());
          break;
        }
      }
    }
    if (list->empty()) continue;
    fiu_enable(point->name(), 1, nullptr, 0);
    point->faults_.store(list.get(), std::memory_order_release);
    point_lists_.push_back(std::move(list));
    any = true;
  }
  if (any) g_any_armed.store(true, std::memory_order_release);
}

void Injector::record_injection(const ArmedFault& fault, const char* point, const CallSite& site,
                                const nlohmann::json& extra) const {
  const Fault& f = fault.fault();
  nlohmann::json fields = {{"fault_id", f.id},
                           {"kind", f.kind},
                           {"layer", to_string(f.layer)},
                           {"point", point},
                           {"call", ArmedFault::last_call_on_this_thread()},
                           {"firing", ArmedFault::last_firing_on_this_thread()},
                           {"attempt", params_.attempt}};
  if (const uint64_t window = ArmedFault::last_window_on_this_thread(); f.trigger.windowed() && window != 0)
    fields["window"] = window;
  if (site.op != nullptr) fields["op"] = site.op;
  if (site.peer >= 0) fields["peer"] = site.peer;
  if (site.bytes != 0) fields["bytes"] = site.bytes;
  if (site.comm >= 0) fields["comm"] = site.comm;
  if (site.direction != Direction::kAny) fields["direction"] = to_string(site.direction);
  if (extra.is_object()) {
    for (const auto& [k, v] : extra.items()) fields[k] = v;
  }
  const int rank = site.rank >= 0 ? site.rank : params_.rank;
  const EventTime at = EventTime::now();
  // The harness's record of the injection goes over the channel, where the ranks' code cannot forge or
  // erase it; the events file's line, with the same seq, is what the rank says (injection_channel.h).
  if (InjectionChannel* channel = InjectionChannel::process(); channel != nullptr) {
    const uint64_t seq = channel->next_seq();
    fields[kRecordSeqField] = seq;
    channel->send(seq, event_line(source_, host_name(), rank, ev::kInject, fields, at)
                           .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  events_.write_for_rank(rank, ev::kInject, fields, at);
  if (params_.log) {
    log("inject " + f.id + " (" + f.kind + ") at " + point + " " + fields.dump());
  }
}

void Injector::log(const std::string& msg) const {
  if (!params_.log) return;
  std::fprintf(stderr, "ncclfi[%d %d] %s: %s\n", params_.rank, static_cast<int>(::getpid()), source_.c_str(),
               msg.c_str());
}

Injector& Injector::instance(Layer layer, const char* source) {
  // Created once per layer and never destroyed: NCCL's proxy threads may still call into points while
  // the process runs its static destructors.
  static std::array<std::once_flag, kLayerCount> once;
  static std::array<Injector*, kLayerCount> instances{};
  auto index = static_cast<size_t>(layer);
  std::call_once(once[index], [&] { instances[index] = new Injector(Params::get(), layer, source); });
  return *instances[index];
}

}  // namespace ncclfi
