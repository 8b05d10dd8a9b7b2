/* Shared by the Check test programs: runs a suite, returns the process exit status; reads a
 * whole file. */
#ifndef JOBGUARD_TESTS_RUN_SUITE_H
#define JOBGUARD_TESTS_RUN_SUITE_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

static inline int run_suite(Suite *s) {
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

/* The whole file, NUL-terminated (the terminator is not counted in *len); NULL if unreadable. */
static inline char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n < 0 ? NULL : malloc((size_t)n + 1);
    if (!buf) {
        fclose(f);
        return NULL;
    }
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

#endif
