// The kind registry, the code and signal tables, and the catalogue they print: docs/faults.md contains
// exactly what `ncclfi list faults` prints, every declared default is a value the validator accepts, and
// every accepted code and signal name resolves to the table's value.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "ncclfi/fault_kinds.h"
#include "ncclfi/fault_points.h"
#include "ncclfi/nccl_results.h"
#include "ncclfi/signals.h"
#include "test_support.h"

namespace ncclfi {
namespace {

using nlohmann::json;

json one_fault(const FaultKindSpec& kind, json params) {
  return json{{"faults",
               {{{"id", "f"},
                 {"layer", to_string(kind.layer)},
                 {"kind", kind.kind},
                 {"params", std::move(params)}}}}};
}

// The required parameters of a kind with a value each accepts.
json required_params(const FaultKindSpec& kind) {
  json params = json::object();
  for (const ParamSpec& p : kind.params) {
    if (p.required) params[std::string(p.name)] = 5;
  }
  return params;
}

TEST(FaultCatalogue, DocsContainTheCatalogueVerbatim) {
  std::ifstream in(NCCLFI_SOURCE_DIR "/docs/faults.md");
  ASSERT_TRUE(in) << "docs/faults.md not found";
  std::stringstream text;
  text << in.rdbuf();
  const std::string catalogue = fault_catalogue_markdown();
  EXPECT_NE(text.str().find(catalogue), std::string::npos)
      << "docs/faults.md is out of date: run scripts/update-doc-tables:\n"
      << catalogue;
}

TEST(FaultCatalogue, KindsAreUniqueAndEveryOneResolvesToItsLayersAction) {
  std::set<std::pair<Layer, std::string_view>> seen;
  for (const FaultKindSpec* kind : fault_kinds()) {
    EXPECT_TRUE(seen.insert({kind->layer, kind->kind}).second) << kind->kind;
    const Fault f = parse_plan(one_fault(*kind, required_params(*kind)), "p.json").faults.at(0);
    EXPECT_EQ(f.action.index(), static_cast<size_t>(kind->layer)) << kind->kind;
  }
}

// A default is applied by the kinds through ParamReader; it must be a value the validator accepts
// when written out, and give the same action.
TEST(FaultCatalogue, EveryDeclaredDefaultIsAnAcceptedValue) {
  for (const FaultKindSpec* kind : fault_kinds()) {
    for (const ParamSpec& p : kind->params) {
      if (p.default_json.empty()) {
        EXPECT_TRUE(p.required || !p.absent.empty())
            << kind->kind << "." << p.name << ": say what absent means";
        continue;
      }
      EXPECT_FALSE(p.required) << kind->kind << "." << p.name;
      json params = required_params(*kind);
      const Fault implicit = parse_plan(one_fault(*kind, params), "p.json").faults.at(0);
      params[std::string(p.name)] = json::parse(p.default_json);
      Fault explicit_default;
      ASSERT_NO_THROW(explicit_default = parse_plan(one_fault(*kind, params), "p.json").faults.at(0))
          << kind->kind << "." << p.name;
      EXPECT_EQ(implicit.action, explicit_default.action) << kind->kind << "." << p.name;
    }
  }
}

// Every point is reachable: the point list is the union of the kinds' points.
TEST(FaultCatalogue, EveryPointIsSomeKindsPoint) {
  std::set<std::string_view> reached;
  for (const FaultKindSpec* kind : fault_kinds()) reached.insert(kind->points.begin(), kind->points.end());
  const auto names = all_point_names();
  EXPECT_EQ(std::set<std::string_view>(names.begin(), names.end()), reached);
  EXPECT_EQ(names.size(), reached.size());
  EXPECT_EQ(std::count(names.begin(), names.end(), "net/listen"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "nccl/comm/async_error"), 0);
  EXPECT_FALSE(point_for_op(Layer::kNet, "listen").has_value());
}

// The shim carries out ConnectFail at connection points and every other net action at request points:
// no kind may mix them.
TEST(FaultCatalogue, OnlyConnectFailFiresAtConnectionPoints) {
  for (const FaultKindSpec* kind : fault_kinds()) {
    if (kind->layer != Layer::kNet) continue;
    const Fault f = parse_plan(one_fault(*kind, required_params(*kind)), "p.json").faults.at(0);
    const bool connect_fail = std::holds_alternative<ConnectFail>(std::get<NetAction>(f.action));
    for (auto point : kind->points) {
      const bool connection = point == points::kNetConnect || point == points::kNetAccept;
      EXPECT_EQ(connection, connect_fail) << kind->kind << " at " << point;
    }
  }
}

// The traits the harness asks instead of a kind's name agree with what the kind does: a kind ends the
// process exactly when its action kills the rank, stops it exactly when its action is a SIGSTOP, and its
// duration parameter is one of its parameters.
TEST(KindTraits, AgreeWithTheKindsActionsAndParameters) {
  for (const FaultKindSpec* kind : fault_kinds()) {
    const Fault f = parse_plan(one_fault(*kind, required_params(*kind)), "p.json").faults.at(0);
    const auto* api = std::get_if<ApiAction>(&f.action);
    const auto* proc = std::get_if<ProcAction>(&f.action);
    const bool dies = (api != nullptr && (std::holds_alternative<DieBySignal>(*api) ||
                                          std::holds_alternative<ExitWithCode>(*api))) ||
                      (proc != nullptr && std::holds_alternative<KillProcess>(*proc));
    const bool stops = proc != nullptr && std::holds_alternative<StopProcess>(*proc);
    EXPECT_EQ(kind->ends_process(), dies) << to_string(kind->layer) << " " << kind->kind;
    EXPECT_EQ(kind->traits.process == ProcessEffect::kStops, stops)
        << to_string(kind->layer) << " " << kind->kind;
    EXPECT_EQ(kind->takes_rank_down(), dies || stops) << to_string(kind->layer) << " " << kind->kind;
    if (kind->has_duration()) {
      EXPECT_TRUE(std::any_of(kind->params.begin(), kind->params.end(),
                              [&](const ParamSpec& p) { return p.name == kind->traits.duration_param; }))
          << to_string(kind->layer) << " " << kind->kind;
    }
  }
}

// The kinds a layer can find by the names its events carry are the registry's.
TEST(KindTraits, FoundByTheLayerNameEventsCarry) {
  for (const FaultKindSpec* kind : fault_kinds()) {
    EXPECT_EQ(find_fault_kind(to_string(kind->layer), kind->kind), kind);
  }
  EXPECT_EQ(find_fault_kind("net", "crash"), nullptr);
  EXPECT_EQ(find_fault_kind("", "crash"), nullptr);
}

TEST(NcclCodes, EveryCodeOfTheTableIsAcceptedByNameAndNumberAndResolvesToItself) {
  const FaultKindSpec* error = find_fault_kind(Layer::kApi, "error");
  ASSERT_NE(error, nullptr);
  for (const NcclErrorInfo& e : kNcclErrors) {
    for (const json& value : {json(e.name), json(to_int(e.code))}) {
      const Fault f = parse_plan(one_fault(*error, {{"code", value}}), "p.json").faults.at(0);
      EXPECT_EQ(test::action_as<FailWithCode>(f).code, e.code) << value.dump();
    }
    EXPECT_EQ(nccl_error_from_name(e.name), e.code);
    EXPECT_EQ(name_of(e.code), e.name);
  }
  EXPECT_EQ(std::size(kNcclErrors), 6u) << "NCCL 2.28 has six error codes (1-6)";
}

TEST(Signals, EveryAcceptedSignalResolvesToItsNumberInEveryForm) {
  const FaultKindSpec* kill = find_fault_kind(Layer::kProc, "kill");
  ASSERT_NE(kill, nullptr);
  auto resolved = [&](const json& value) {
    return test::action_as<KillProcess>(
               parse_plan(one_fault(*kill, {{"signal", value}}), "p.json").faults.at(0))
        .signal;
  };
  for (const SignalInfo& s : fatal_signals()) {
    EXPECT_EQ(resolved(s.name), s.number);
    EXPECT_EQ(resolved(std::string(s.name.substr(3))), s.number);
    EXPECT_EQ(resolved(s.number), s.number);
  }
  for (int n = realtime_min(); n <= realtime_max(); ++n) EXPECT_EQ(resolved(n), n);
  const auto all = accepted_signal_numbers();
  EXPECT_EQ(all.size(), fatal_signals().size() + static_cast<size_t>(realtime_max() - realtime_min() + 1));
  for (const RefusedSignal& r : refused_signals()) {
    EXPECT_EQ(std::count(all.begin(), all.end(), r.number), 0) << r.name;
  }
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(signal_name(realtime_min() + 2), "SIGRTMIN+2");
}

}  // namespace
}  // namespace ncclfi
