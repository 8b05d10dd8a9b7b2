/* Shared by the Check test programs: runs a suite, returns the process exit status. */
#ifndef JOBGUARD_TESTS_RUN_SUITE_H
#define JOBGUARD_TESTS_RUN_SUITE_H

#include <check.h>

static inline int run_suite(Suite *s) {
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

#endif
