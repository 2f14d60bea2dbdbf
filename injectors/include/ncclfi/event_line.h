// One event line as JSON, the single place its shape is decided: the event log writes it and the
// injection channel (injection_channel.h) sends the same object as an injection's record.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "ncclfi/event_log.h"

namespace ncclfi {

// {"ts_ns","mono_ns","rank","pid","host","source","event", ...fields}: `fields` never override the
// first seven.
nlohmann::json event_line(const std::string& source, const std::string& host, int rank,
                          const std::string& event, const nlohmann::json& fields, EventTime at);

}  // namespace ncclfi
