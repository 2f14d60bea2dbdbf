// Detection mechanisms: the names a detection and a scenario's expect.detected_by use. Each is declared
// by its own file in mechanisms/ (mechanism_spec.h); the scenario validator accepts exactly these.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mechanism_list.h"

namespace ncclfi::harness {

const std::vector<std::string>& known_mechanisms();
bool is_known_mechanism(std::string_view name);

}  // namespace ncclfi::harness
