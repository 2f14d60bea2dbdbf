// The timeline of one run in report.html (internal to the HTML report): a header of counts, then an
// inline SVG with a lane per rank. In each lane the op durations are a latency plot over time with its
// stalls marked, detections sit above the plot and exits below it; the fault windows (one per fault,
// attempt and window) and the expected detection band are shaded across the lanes; each attempt's
// launch is a labelled line. The span starts at the faulted attempt's launch (not at the baselines
// before it) and the axis counts seconds from the first injection. The SVG scales to the page's width
// (viewBox, width 100%) and carries the fault windows' x range (data-zoom) for the page's zoom button.
#pragma once

#include <string>

#include "run_record.h"

namespace ncclfi::harness {

// The run's facts over its timeline: ranks, attempts, injections and detections (held and counted),
// the date and host it ran on, and the ncclfi that ran it; each also a data- attribute.
std::string timeline_header(const RunRecord& record);
// `id` makes the SVG's element id unique in the page ("timeline-<id>").
std::string timeline_svg(const RunRecord& record, const std::string& id);

}  // namespace ncclfi::harness
