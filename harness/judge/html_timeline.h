// The timeline of one run in report.html (internal to the HTML report): an inline SVG with a lane per
// rank. In each lane the op durations are a latency plot over time, detections sit above the plot and
// exits below it; the fault windows (first to last injection of each fault) are shaded across the
// lanes; each attempt's launch is a labelled line; the time axis counts seconds from the first
// injection. The SVG carries the fault window's x range (data-zoom) for the page's zoom button.
#pragma once

#include <string>

#include "history.h"

namespace ncclfi::harness {

// `id` makes the SVG's element id unique in the page ("timeline-<id>").
std::string timeline_svg(const History& history, const std::string& id);

}  // namespace ncclfi::harness
