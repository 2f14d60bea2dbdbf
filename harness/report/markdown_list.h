// A Markdown catalogue (what `ncclfi list` and the docs print: headings, paragraphs, tables) laid out as
// a narrow list for a terminal. A table's rows become entries: the row's name on a line of its own, then
// each other cell as "column: text", word-wrapped and indented. The registries keep one rendering, the
// Markdown the docs hold; this only changes its layout, so the list and the docs never disagree.
#pragma once

#include <cstddef>
#include <string>

namespace ncclfi::harness {

// Every line at most `width` columns (a word longer than a line is cut). Backticks are dropped.
std::string markdown_as_list(const std::string& markdown, size_t width);

}  // namespace ncclfi::harness
