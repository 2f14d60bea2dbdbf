// Sweep rendering (sweep_report.h).
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "reports.h"
#include "sweep_report.h"

namespace ncclfi::harness {
namespace {

std::string axis_name(const std::string& pointer) {
  const size_t slash = pointer.rfind('/');
  return slash == std::string::npos ? pointer : pointer.substr(slash + 1);
}

std::string cell(const SweepPoint& p) {
  std::string s(to_string(p.outcome));
  if (p.detection_s) s += " " + format_seconds(p.detection_s);
  return s;
}

std::string pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string render_rows(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    std::string line;
    for (size_t i = 0; i < rows[r].size(); ++i)
      line += pad(rows[r][i], widths[i]) + (i + 1 < rows[r].size() ? "  " : "");
    out += line + "\n";
    if (r == 0) {
      size_t total = 0;
      for (size_t w : widths) total += w + 2;
      out += std::string(total > 2 ? total - 2 : total, '-') + "\n";
    }
  }
  return out;
}

// Every combination of the values of axes [first, end), in order (the last axis varies fastest).
std::vector<std::vector<std::string>> combinations(const SweepAxes& axes, size_t first) {
  std::vector<std::vector<std::string>> out = {{}};
  for (size_t a = first; a < axes.values.size(); ++a) {
    std::vector<std::vector<std::string>> next;
    for (const auto& prefix : out) {
      for (const auto& v : axes.values[a]) {
        auto combo = prefix;
        combo.push_back(v);
        next.push_back(std::move(combo));
      }
    }
    out = std::move(next);
  }
  return out;
}

}  // namespace

std::string render_sweep_matrix(const SweepAxes& axes, const std::vector<SweepPoint>& points) {
  if (axes.pointers.empty()) return "(no sweep axes)\n";
  std::map<std::vector<std::string>, const SweepPoint*> by_values;
  for (const auto& p : points) by_values[p.values] = &p;
  std::vector<std::vector<std::string>> rows;
  if (axes.pointers.size() == 1) {
    rows.push_back({axes.pointers[0], "outcome", "detection", "mechanisms", "verdict"});
    for (const auto& v : axes.values[0]) {
      auto it = by_values.find({v});
      if (it == by_values.end()) {
        rows.push_back({v, "-", "-", "-", "-"});
        continue;
      }
      std::string mechanisms;
      for (const auto& m : it->second->mechanisms) mechanisms += (mechanisms.empty() ? "" : ",") + m;
      rows.push_back({v, std::string(to_string(it->second->outcome)), format_seconds(it->second->detection_s),
                      mechanisms.empty() ? "-" : mechanisms, std::string(to_string(it->second->status))});
    }
    return render_rows(rows);
  }
  const auto columns = combinations(axes, 1);
  std::vector<std::string> header = {axis_name(axes.pointers[0]) + " \\ "};
  for (size_t a = 1; a < axes.pointers.size(); ++a)
    header[0] += (a > 1 ? "," : "") + axis_name(axes.pointers[a]);
  for (const auto& c : columns) {
    std::string label;
    for (const auto& v : c) label += (label.empty() ? "" : ",") + v;
    header.push_back(label);
  }
  rows.push_back(header);
  for (const auto& v : axes.values[0]) {
    std::vector<std::string> row = {v};
    for (const auto& c : columns) {
      std::vector<std::string> key = {v};
      key.insert(key.end(), c.begin(), c.end());
      auto it = by_values.find(key);
      row.push_back(it == by_values.end() ? "-" : cell(*it->second));
    }
    rows.push_back(row);
  }
  return render_rows(rows);
}

nlohmann::json sweep_json(const SweepAxes& axes, const std::vector<SweepPoint>& points) {
  nlohmann::json out = {
      {"axes", axes.pointers}, {"values", axes.values}, {"points", nlohmann::json::array()}};
  for (const auto& p : points) {
    out["points"].push_back(
        {{"values", p.values},
         {"outcome", std::string(to_string(p.outcome))},
         {"detection_s", p.detection_s ? nlohmann::json(*p.detection_s) : nlohmann::json()},
         {"mechanisms", p.mechanisms},
         {"verdict", std::string(to_string(p.status))}});
  }
  return out;
}

}  // namespace ncclfi::harness
