// Targets and triggers: parsing, serialising and rank resolution.
#include <algorithm>
#include <numeric>

#include "ncclfi/fault_kinds.h"
#include "ncclfi/plan.h"
#include "plan_json.h"
#include "splitmix.h"

namespace ncclfi {

using plan_json::Where;

std::vector<int> Target::resolve_ranks(int world_size) const {
  std::vector<int> out;
  switch (rank_select) {
    case RankSelect::kAll:
      out.resize(static_cast<size_t>(std::max(world_size, 0)));
      std::iota(out.begin(), out.end(), 0);
      return out;
    case RankSelect::kList:
      return ranks;
    case RankSelect::kRandom: {
      if (world_size <= 0) return out;
      std::vector<int> all(static_cast<size_t>(world_size));
      std::iota(all.begin(), all.end(), 0);
      SplitMix64 rng(random_seed);
      // Fisher-Yates with a fixed generator: same seed and world size, same ranks everywhere.
      for (size_t i = all.size() - 1; i > 0; --i) {
        size_t j = static_cast<size_t>(rng.next() % (i + 1));
        std::swap(all[i], all[j]);
      }
      size_t n = std::min(all.size(), static_cast<size_t>(random_count));
      out.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
      std::sort(out.begin(), out.end());
      return out;
    }
  }
  return out;
}

bool Target::matches_rank(int rank, int world_size) const {
  if (rank_select == RankSelect::kAll) return true;
  if (rank < 0) return false;
  auto selected = resolve_ranks(world_size);
  return std::find(selected.begin(), selected.end(), rank) != selected.end();
}

namespace plan_detail {
namespace {

// `device` and `port`: one HCA and/or one of its ports, for the verbs layer only (the other layers never
// see a QP). A port number is what ibv_modify_qp's attr.port_num carries: 1-based, at most 255.
void parse_hca_target(const nlohmann::json& v, const Where& w, Layer layer, Target& t) {
  for (const char* key : {"device", "port"}) {
    if (v.contains(key) && layer != Layer::kVerbs)
      w.at(key).fail_text("no `" + std::string(key) + "` (only verbs faults target an HCA or a port)",
                          describe_json(v[key]));
  }
  if (v.contains("device")) {
    const auto& d = v["device"];
    if (!d.is_string() || d.get<std::string>().empty() || d.get<std::string>().size() > 63)
      w.at("device").fail("an HCA name as ibv_devices lists it (\"mlx5_0\")", d);
    t.device = d.get<std::string>();
  }
  if (v.contains("port")) {
    const auto& p = v["port"];
    if (!p.is_number_integer() || p.get<int64_t>() < 1 || p.get<int64_t>() > 255)
      w.at("port").fail("a port number from 1 to 255 (ports are 1-based)", p);
    t.port = static_cast<int>(p.get<int64_t>());
  }
}

}  // namespace

Target parse_target(const nlohmann::json& v, const Where& w, Layer layer) {
  plan_json::require_object(v, w,
                            {"ranks", "ops", "peer", "direction", "min_bytes", "comm", "device", "port"});
  Target t;
  if (v.contains("ranks")) {
    const auto& r = v["ranks"];
    Where wr = w.at("ranks");
    if (r.is_string()) {
      if (r != "all") wr.fail("\"all\", a list of ranks or {\"random\": n, \"seed\": s}", r);
      t.rank_select = Target::RankSelect::kAll;
    } else if (r.is_array()) {
      t.rank_select = Target::RankSelect::kList;
      if (r.empty()) wr.fail("a non-empty list of ranks", r);
      for (size_t i = 0; i < r.size(); ++i) {
        uint64_t rank = plan_json::read_nonneg_int(r[i], wr.at(i));
        if (rank > 1u << 20) wr.at(i).fail("a rank below 1048576", r[i]);
        t.ranks.push_back(static_cast<int>(rank));
      }
    } else if (r.is_object()) {
      plan_json::require_object(r, wr, {"random", "seed"});
      t.rank_select = Target::RankSelect::kRandom;
      if (!r.contains("random")) wr.at("random").fail_text("how many ranks to pick", "nothing");
      uint64_t n = plan_json::read_positive_int(r["random"], wr.at("random"));
      if (n > 1u << 20) wr.at("random").fail("a count below 1048576", r["random"]);
      t.random_count = static_cast<int>(n);
      if (r.contains("seed")) t.random_seed = plan_json::read_nonneg_int(r["seed"], wr.at("seed"));
    } else {
      wr.fail("\"all\", a list of ranks or {\"random\": n, \"seed\": s}", r);
    }
  }
  if (v.contains("ops")) {
    const auto& ops = v["ops"];
    Where wo = w.at("ops");
    if (!ops.is_array() || ops.empty()) wo.fail("a non-empty list of op names", ops);
    for (size_t i = 0; i < ops.size(); ++i) {
      std::string op = plan_json::read_string(ops[i], wo.at(i));
      if (!point_for_op(layer, op)) {
        std::string expected = layer == Layer::kApi ? "an " : "a ";
        expected.append(to_string(layer)).append(" op (");
        for (const auto& known : ops_of(layer)) {
          if (expected.back() != '(') expected += ", ";
          expected += known;
        }
        expected += ")";
        wo.at(i).fail(expected, ops[i]);
      }
      t.ops.push_back(op);
    }
  }
  if (v.contains("peer")) {
    uint64_t peer = plan_json::read_nonneg_int(v["peer"], w.at("peer"));
    if (peer > 1u << 20) w.at("peer").fail("a rank below 1048576", v["peer"]);
    t.peer = static_cast<int>(peer);
  }
  if (v.contains("direction")) {
    const auto& d = v["direction"];
    if (d == "send") {
      t.direction = Direction::kSend;
    } else if (d == "recv") {
      t.direction = Direction::kRecv;
    } else if (d == "any") {
      t.direction = Direction::kAny;
    } else {
      w.at("direction").fail("\"send\", \"recv\" or \"any\"", d);
    }
  }
  if (v.contains("min_bytes")) t.min_bytes = plan_json::read_nonneg_int(v["min_bytes"], w.at("min_bytes"));
  if (v.contains("comm")) {
    uint64_t comm = plan_json::read_nonneg_int(v["comm"], w.at("comm"));
    if (comm > 1u << 20) w.at("comm").fail("a communicator index below 1048576", v["comm"]);
    t.comm = static_cast<int>(comm);
  }
  parse_hca_target(v, w, layer, t);
  return t;
}

namespace {

// duration_s, every_s and times: a drill's inject-heal-inject rhythm. Bounded so that the window
// arithmetic cannot overflow (a million seconds is eleven days), and consistent so that a window heals
// before the next one opens.
void parse_windows(const nlohmann::json& v, const Where& w, Trigger& t) {
  constexpr double kMaxSeconds = 1e6;
  if (v.contains("duration_s")) {
    const double d = plan_json::read_positive_number(v["duration_s"], w.at("duration_s"));
    if (d > kMaxSeconds) w.at("duration_s").fail("at most 1e6 seconds", v["duration_s"]);
    t.duration_s = d;
  }
  if (v.contains("every_s")) {
    t.every_s = plan_json::read_positive_number(v["every_s"], w.at("every_s"));
    if (t.every_s > kMaxSeconds) w.at("every_s").fail("at most 1e6 seconds", v["every_s"]);
  }
  if (v.contains("times")) {
    t.times = plan_json::read_positive_int(v["times"], w.at("times"));
    if (t.times > 1000000) w.at("times").fail("at most 1000000 windows", v["times"]);
  }
  if (t.times > 1 && t.every_s == 0)
    w.at("every_s").fail_text("how often the " + std::to_string(t.times) + " windows open (every_s > 0)",
                              "nothing");
  if (t.every_s > 0 && t.times < 2) {
    w.at("times").fail_text("2 or more windows with every_s (one window needs no every_s)",
                            v.contains("times") ? describe_json(v["times"]) : "nothing");
  }
  if (t.duration_s && t.every_s > 0 && *t.duration_s >= t.every_s) {
    w.at("duration_s")
        .fail("less than every_s (" + describe_json(v["every_s"]) + "): a window heals before the next opens",
              v["duration_s"]);
  }
}

}  // namespace

Trigger parse_trigger(const nlohmann::json& v, const Where& w) {
  plan_json::require_object(
      v, w,
      {"after_calls", "after_ms", "probability", "seed", "count", "armed", "duration_s", "every_s", "times"});
  Trigger t;
  if (v.contains("after_calls"))
    t.after_calls = plan_json::read_positive_int(v["after_calls"], w.at("after_calls"));
  if (v.contains("after_ms")) {
    double ms = plan_json::read_nonneg_number(v["after_ms"], w.at("after_ms"));
    if (ms > 1e12) w.at("after_ms").fail("at most 1e12 ms", v["after_ms"]);
    t.after_ms = static_cast<uint64_t>(ms);
  }
  if (v.contains("probability")) {
    const auto& p = v["probability"];
    if (!p.is_number() || !(p.get<double>() > 0.0) || p.get<double>() > 1.0) {
      w.at("probability").fail("a number in (0, 1]", p);
    }
    t.probability = p.get<double>();
  }
  if (v.contains("seed")) t.seed = plan_json::read_nonneg_int(v["seed"], w.at("seed"));
  if (v.contains("count")) t.count = plan_json::read_nonneg_int(v["count"], w.at("count"));
  if (v.contains("armed")) t.armed = plan_json::read_bool(v["armed"], w.at("armed"));
  parse_windows(v, w, t);
  return t;
}

nlohmann::json target_to_json(const Target& t) {
  nlohmann::json j = nlohmann::json::object();
  switch (t.rank_select) {
    case Target::RankSelect::kAll:
      j["ranks"] = "all";
      break;
    case Target::RankSelect::kList:
      j["ranks"] = t.ranks;
      break;
    case Target::RankSelect::kRandom:
      j["ranks"] = {{"random", t.random_count}, {"seed", t.random_seed}};
      break;
  }
  if (!t.ops.empty()) j["ops"] = t.ops;
  if (t.peer) j["peer"] = *t.peer;
  if (t.direction != Direction::kAny) j["direction"] = to_string(t.direction);
  if (t.min_bytes != 0) j["min_bytes"] = t.min_bytes;
  if (t.comm) j["comm"] = *t.comm;
  if (t.device) j["device"] = *t.device;
  if (t.port) j["port"] = *t.port;
  return j;
}

nlohmann::json trigger_to_json(const Trigger& t) {
  nlohmann::json j = {{"after_calls", t.after_calls}, {"count", t.count}, {"armed", t.armed}};
  if (t.after_ms != 0) j["after_ms"] = t.after_ms;
  if (t.probability != 1.0) j["probability"] = t.probability;
  if (t.seed != 0) j["seed"] = t.seed;
  if (t.duration_s) j["duration_s"] = *t.duration_s;
  if (t.every_s > 0) j["every_s"] = t.every_s;
  if (t.times > 1) j["times"] = t.times;
  return j;
}

}  // namespace plan_detail
}  // namespace ncclfi
