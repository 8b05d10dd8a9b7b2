/* Shared by the fuzz targets: an invariant that aborts (libFuzzer records the crash input). */
#ifndef JOBGUARD_FUZZ_CHECK_H
#define JOBGUARD_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif
