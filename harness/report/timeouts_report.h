// The timeout matrix of `ncclfi timeouts` rendered: timeouts.json, the console's table and timeouts.html.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "timeouts_matrix.h"

namespace ncclfi::cli {

nlohmann::json to_json(const MatrixReport& report);
// The console form: the healthy profile, one row per fault and one column per setting, the legend,
// the findings and the recommendation.
std::string matrix_text(const MatrixReport& report);
// A self-contained HTML page with the same content: every cell a finding names marked as a problem,
// each setting's environment and parameters under its name, and links to each cell's trials, relative
// to `page_dir`, the directory the page is written to (empty: the matrix's own, out_dir).
std::string matrix_html(const MatrixReport& report, const std::string& page_dir = "");

}  // namespace ncclfi::cli
