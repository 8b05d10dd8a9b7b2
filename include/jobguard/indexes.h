/* docs/rules.md §4: the index-list format of status.completedIndexes / status.failedIndexes. */
#ifndef JOBGUARD_INDEXES_H
#define JOBGUARD_INDEXES_H

#include "jobguard/buf.h"
#include "jobguard/view.h"

/* validateIndexesFormat: returns true when `s` is a valid list for `completions` (C); otherwise
 * appends upstream's error text (e.g. `too large index: "5"`) to err and returns false. */
bool jg_index_list_valid(jg_str s, int32_t completions, jg_buf *err);

/* validateFailedIndexesNotOverlapCompleted, including its tolerance of unsorted and unparsable
 * intervals (§4.3). Returns true and the index in *at when an overlap is found. */
bool jg_index_lists_overlap(jg_str completed, jg_str failed, int32_t completions, int64_t *at);

#endif
