/* The largest request of every shape that `bench_engine --scaling` times (bench/shapes.c), each
 * within the body and depth limits (those whose every element is an error at 100,000 elements):
 * the verdict and its causes, never the time. A quadratic check would still pass here, only
 * slowly: the bench shows the cost, this shows the answers. */
#include "jobguard/admit.h"
#include "shapes.h"

#include <check.h>

#include "run_suite.h"
#include <stdio.h>
#include <string.h>

static jg_buf body = JG_BUF_INIT, response = JG_BUF_INIT;
static struct jg_outcome o;

static enum jg_verdict decide(const char *name, size_t n, bool spoil) {
    const struct shape *sh = shape_find(name);
    ck_assert_ptr_nonnull(sh);
    ck_assert_uint_le(n, sh->max);
    sh->build(&body, n, spoil);
    ck_assert(!body.oom);
    ck_assert_uint_le(body.len, JG_MAX_BODY_BYTES);
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_outcome_free(&o);
    jg_outcome_init(&o);
    return jg_admit(body.data, body.len, &cfg, &response, &o);
}

/* The shape at its largest, as built and then spoiled: asserts both verdicts and leaves the
 * spoiled one's outcome in `o`. Returns the size. */
static size_t largest(const char *name, enum jg_verdict clean, enum jg_verdict spoiled) {
    const struct shape *sh = shape_find(name);
    ck_assert_ptr_nonnull(sh);
    ck_assert_int_eq(decide(name, sh->max, false), clean);
    ck_assert_int_eq(decide(name, sh->max, true), spoiled);
    return sh->max;
}

/* The outcome's cause lines ("<field>: <body>\n" each), as a string. */
static const char *causes(void) {
    return o.causes.data ? o.causes.data : "";
}

static size_t lines(void) {
    size_t n = 0;
    for (const char *p = causes(); (p = strchr(p, '\n')) != NULL; p++)
        n++;
    return n;
}

static bool starts_with(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

#define UID0 "\"00000000-0000-4000-8000-000000000000\""

START_TEST(uncounted_distinct) {
    /* the last failed UID repeats the first succeeded one: one set across both lists */
    size_t n = largest("uncounted-distinct", JG_VERDICT_ALLOWED, JG_VERDICT_DENIED);
    ck_assert_uint_ge(n, 160000);
    char want[128];
    snprintf(want, sizeof want,
             "status.uncountedTerminatedPods.failed[%zu]: Duplicate value: " UID0 "\n", n / 2 - 1);
    ck_assert_str_eq(causes(), want);
}
END_TEST

START_TEST(uncounted_escaped) {
    /* "\u0030..." then the same UID written plainly: equal once decoded */
    size_t n = largest("uncounted-escaped", JG_VERDICT_ALLOWED, JG_VERDICT_DENIED);
    char want[128];
    snprintf(want, sizeof want,
             "status.uncountedTerminatedPods.succeeded[%zu]: Duplicate value: " UID0 "\n", n - 1);
    ck_assert_str_eq(causes(), want);
}
END_TEST

START_TEST(uncounted_pairs) {
    const struct shape *sh = shape_find("uncounted-pairs");
    ck_assert_int_eq(decide(sh->name, sh->max, false), JG_VERDICT_DENIED);
    ck_assert(starts_with(causes(), "status.uncountedTerminatedPods.succeeded[1]: Duplicate value: "
                                    "" UID0 "\nstatus.uncountedTerminatedPods.succeeded[3]: "
                                    "Duplicate value: \"00000001-0000-4000-8000-000000000001\"\n"));
}
END_TEST

START_TEST(uncounted_same) {
    /* 100,000 copies of one UID: every sort key equal; 99,999 causes */
    ck_assert_int_eq(decide("uncounted-same", 100000, false), JG_VERDICT_DENIED);
    ck_assert(starts_with(causes(), "status.uncountedTerminatedPods.succeeded[1]: Duplicate value: "
                                    "" UID0 "\nstatus.uncountedTerminatedPods.succeeded[2]: "
                                    "Duplicate value: " UID0 "\n"));
}
END_TEST

START_TEST(uncounted_empty) {
    /* 100,000 of the 2,000,000 that fit: one cause each */
    ck_assert_int_eq(decide("uncounted-empty", 100000, false), JG_VERDICT_DENIED);
    ck_assert(starts_with(causes(), "status.uncountedTerminatedPods.succeeded[0]: Invalid value: "
                                    "\"\": must not be empty\n"));
}
END_TEST

START_TEST(conditions) {
    largest("conditions", JG_VERDICT_ALLOWED, JG_VERDICT_DENIED);
    ck_assert_str_eq(causes(), "status.conditions: Invalid value: cannot set Failed=True condition "
                               "without the FailureTarget=true condition\n");
}
END_TEST

START_TEST(status_keys) {
    largest("status-keys", JG_VERDICT_ALLOWED, JG_VERDICT_DENIED);
    ck_assert_str_eq(causes(),
                     "status.active: Invalid value: -1: must be greater than or equal to 0\n");
}
END_TEST

START_TEST(repeated_key) {
    /* a key the decoder reads (startTime), repeated after a million skipped ones */
    largest("repeated-key", JG_VERDICT_ALLOWED, JG_VERDICT_BAD_REQUEST);
    ck_assert_ptr_nonnull(strstr(o.message.data, "duplicate object key"));
}
END_TEST

START_TEST(index_lists) {
    size_t n = largest("index-lists", JG_VERDICT_ALLOWED, JG_VERDICT_DENIED);
    long long k = (long long)n / 2, span = 2147483646 / k;
    char want[96];
    snprintf(want, sizeof want, ": failedIndexes and completedIndexes overlap at index: %lld\n",
             (k - 1) * span + span / 2 - 1);
    ck_assert(starts_with(causes(), "status.failedIndexes: Invalid value: \""));
    ck_assert_str_eq(causes() + strlen(causes()) - strlen(want), want);
    ck_assert_uint_eq(lines(), 1);

    /* two intervals spanning every int32 index: cost does not depend on the span */
    ck_assert_int_eq(decide("index-lists", 2, false), JG_VERDICT_ALLOWED);
    ck_assert_int_eq(decide("index-lists", 2, true), JG_VERDICT_DENIED);
    ck_assert_str_eq(causes(), "status.failedIndexes: Invalid value: \"1073741822-2147483645\": "
                               "failedIndexes and completedIndexes overlap at index: 1073741822\n");
}
END_TEST

START_TEST(nesting) {
    largest("nesting", JG_VERDICT_ALLOWED, JG_VERDICT_BAD_REQUEST);
    ck_assert_ptr_nonnull(strstr(o.message.data, "nesting deeper than 2048 levels"));
}
END_TEST

START_TEST(managed_by_long) {
    ck_assert_int_eq(decide("managedby-long", 1000, false), JG_VERDICT_DENIED);
    ck_assert_str_eq(causes(), "spec.managedBy: Too long: may not be more than 63 bytes\n");
    largest("managedby-long", JG_VERDICT_DENIED, JG_VERDICT_DENIED);
    ck_assert(starts_with(causes(), "spec.managedBy: Invalid value: \"aaaaaaaa"));
    const char *last = "\nspec.managedBy: Too long: may not be more than 63 bytes\n";
    ck_assert_str_eq(causes() + strlen(causes()) - strlen(last), last);
}
END_TEST

int main(void) {
    jg_outcome_init(&o);
    Suite *s = suite_create("scaling");
    TCase *tc = tcase_create("largest");
    tcase_add_test(tc, uncounted_distinct);
    tcase_add_test(tc, uncounted_escaped);
    tcase_add_test(tc, uncounted_pairs);
    tcase_add_test(tc, uncounted_same);
    tcase_add_test(tc, uncounted_empty);
    tcase_add_test(tc, conditions);
    tcase_add_test(tc, status_keys);
    tcase_add_test(tc, repeated_key);
    tcase_add_test(tc, index_lists);
    tcase_add_test(tc, nesting);
    tcase_add_test(tc, managed_by_long);
    suite_add_tcase(s, tc);
    int rc = run_suite(s);
    jg_outcome_free(&o);
    jg_buf_free(&body);
    jg_buf_free(&response);
    return rc;
}
