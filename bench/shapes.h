/* Request shapes whose size grows along one input dimension (UIDs, conditions, keys, index
 * intervals, nesting, ...), built in memory: bench_engine --scaling times them, test_scaling
 * checks their verdicts at the largest size. */
#ifndef JOBGUARD_BENCH_SHAPES_H
#define JOBGUARD_BENCH_SHAPES_H

#include "jobguard/buf.h"

#include <stdbool.h>
#include <stddef.h>

struct shape {
    const char *name;
    const char *element; /* what one element is */
    size_t max;          /* most elements that fit the body limit (or the depth limit) */
    /* Writes an AdmissionReview with n elements into out (reset first). `spoil` changes the last
     * element so that it alone decides the verdict (see each shape in shapes.c). */
    void (*build)(jg_buf *out, size_t n, bool spoil);
};

extern const struct shape shapes[];
extern const size_t shape_count;

const struct shape *shape_find(const char *name);

/* Policies and the reviews that make their rules work hardest (bench_engine --policy-scaling,
 * test_scaling). Names are distinct and `name_len` bytes long (at least 16). */

/* statusWriterExemptGroups of n_exempt groups; one controller, WRITERS_CONTROLLER, whose
 * statusWriters are one service account and n_writers groups. */
#define WRITERS_CONTROLLER "example.com/ctl"
void policy_writers(jg_buf *out, size_t n_exempt, size_t n_writers, size_t name_len);
/* The name of exempt group i (which 'e') or writer group i (which 'w') of policy_writers. */
void writers_group_name(jg_buf *out, char which, size_t i, size_t name_len);
/* A jobs/status UPDATE of a Job managed by WRITERS_CONTROLLER by user "bench" with n_groups
 * groups "r000000", "r000001", ...; `last` (NULL: none) replaces the last group. */
void review_writers(jg_buf *out, size_t n_groups, const char *last);

/* allowUnlistedControllers false and controllers "cNNNN.example.com/ctl" with GLOBS_PER_CONTROLLER
 * namespace globs each (literal, prefix and suffix globs, and one general glob of
 * GLOB_GENERAL_FORM, 14 tokens), as many controllers as fit in max_bytes. Returns their number. */
#define GLOBS_PER_CONTROLLER 48
#define GLOB_GENERAL_FORM "*[a-z]*[a-z]*[0-9]*-%04zu-%zu"
size_t policy_globs(jg_buf *out, size_t max_bytes);
/* n controllers with one general glob each, "*", 31 'a', "b*" (GLOB_WORST_TOKENS tokens): on a
 * namespace of 63 'a' every start fails after 31 matches, about 1,000 matcher steps each. */
#define GLOB_WORST_TOKENS 34
void policy_globs_worst(jg_buf *out, size_t n);
/* A Job CREATE whose spec.managedBy is `managed_by` in namespace `ns`. */
void review_namespace(jg_buf *out, const char *ns, const char *managed_by);

#endif
