// The marks of a run's timeline that come from its events (internal to html_timeline.cc): each rank's
// latency plot with its stalls, the attempts' launches, the harness's actions, injections, detections
// and exits. Only what falls in the frame's span is drawn.
#pragma once

#include <string>

#include "history.h"
#include "html_timeline_frame.h"

namespace ncclfi::harness::timeline {

std::string latency_plots(const Frame& f, const History& h);
// Attempts, actions, injections, detections and exits, in that order (each over the ones before).
std::string event_marks(const Frame& f, const History& h);

}  // namespace ncclfi::harness::timeline
