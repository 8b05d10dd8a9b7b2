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

#endif
