// Which ranks a report lists, decided in one place for every report that reads a history back.
#pragma once

#include <vector>

#include "history.h"

namespace ncclfi::harness {

// 0 .. world_size-1 where the history states its size, else (a verdict.json whose size was
// unbelievable: history_from_json) the ranks it holds records of, at most kMaxWorldSize of them and each
// below it. A report is sized by what it read, never by a number a file declares.
std::vector<int> job_ranks(const History& history);

}  // namespace ncclfi::harness
