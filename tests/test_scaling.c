/* The largest request of every shape that `bench_engine --scaling` times (bench/shapes.c), each
 * within the body and depth limits (those whose every element is an error at 100,000 elements):
 * the verdict and its causes, never the time. A quadratic check would still pass here, only
 * slowly: the bench shows the cost, this shows the answers. */
#include "jobguard/admit.h"
#include "jobguard/policy.h"
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

/* ---- the policy rules at the policy's limits (bench_engine --policy-scaling) ---- */

static struct jg_policy *policy;

static void load_policy(const jg_buf *json) {
    char err[1024];
    jg_policy_free(policy);
    policy = jg_policy_load_buffer("policy.json", json->data, json->len, err, sizeof err);
    ck_assert_msg(policy != NULL, "%s", err);
}

static enum jg_verdict decide_under_policy(void) {
    ck_assert(!body.oom);
    ck_assert_uint_le(body.len, JG_MAX_BODY_BYTES);
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_config_modes_unset(&cfg);
    jg_policy_apply(policy, &cfg);
    jg_outcome_free(&o);
    jg_outcome_init(&o);
    return jg_admit(body.data, body.len, &cfg, &response, &o);
}

START_TEST(status_writers_at_limits) {
    /* 1,024 exempt and 1,024 writer groups of 500 bytes; 600,000 groups in the request */
    jg_buf pol = JG_BUF_INIT, name = JG_BUF_INIT;
    policy_writers(&pol, 1024, 1024, 500);
    load_policy(&pol);
    review_writers(&body, 600000, NULL);
    ck_assert_int_eq(decide_under_policy(), JG_VERDICT_DENIED);
    ck_assert_int_eq(o.code, 403);
    ck_assert_str_eq(causes(), "User \"bench\" cannot update the status of a Job managed by "
                               "\"" WRITERS_CONTROLLER "\"\n");
    /* the last group alone decides: the last writer group, the last and first exempt group */
    static const struct {
        char which;
        size_t i;
    } last[] = {{'w', 1023}, {'w', 0}, {'e', 1023}, {'e', 0}};
    for (size_t k = 0; k < sizeof last / sizeof last[0]; k++) {
        jg_buf_reset(&name);
        writers_group_name(&name, last[k].which, last[k].i, 500);
        review_writers(&body, 600000, name.data);
        ck_assert_msg(decide_under_policy() == JG_VERDICT_ALLOWED, "%c%zu", last[k].which,
                      last[k].i);
        /* one byte shorter or longer is another group */
        name.data[--name.len] = '\0';
        review_writers(&body, 600000, name.data);
        ck_assert_int_eq(decide_under_policy(), JG_VERDICT_DENIED);
        jg_buf_puts(&name, "xx");
        review_writers(&body, 600000, name.data);
        ck_assert_int_eq(decide_under_policy(), JG_VERDICT_DENIED);
    }
    jg_buf_free(&pol);
    jg_buf_free(&name);
}
END_TEST

#define JOB_CONTROLLER "\"kubernetes.io/job-controller\""
#define UNLISTED "spec.managedBy: Unsupported value: \"x.io/unlisted\": supported values: "

START_TEST(namespace_globs_at_limits) {
    /* a policy of 1 MiB: 47 literal, prefix and suffix globs and one general glob per controller */
    jg_buf pol = JG_BUF_INIT;
    size_t n = policy_globs(&pol, 1u << 20);
    ck_assert_uint_gt(pol.len, 700000);
    load_policy(&pol);
    char ns[80], ctl[64], want[256];
    memset(ns, 'a', 63);
    memcpy(ns, "team-", 5);
    ns[63] = '\0';
    review_namespace(&body, ns, "x.io/unlisted"); /* no glob matches: the reserved value alone */
    ck_assert_int_eq(decide_under_policy(), JG_VERDICT_DENIED);
    ck_assert_str_eq(causes(), UNLISTED JOB_CONTROLLER "\n");
    /* each kind of glob of the last controller, the general one last */
    snprintf(ctl, sizeof ctl, "c%04zu.example.com/ctl", n - 1);
    static const char *const forms[] = {"team-%04zu-0", "team-%04zu-1-x", "x-%04zu-2",
                                        "ab1-%04zu-47"};
    for (size_t f = 0; f < 4; f++) {
        snprintf(ns, sizeof ns, forms[f], n - 1);
        review_namespace(&body, ns, ctl);
        ck_assert_msg(decide_under_policy() == JG_VERDICT_ALLOWED, "%s", ns);
        review_namespace(&body, ns, "x.io/unlisted");
        ck_assert_int_eq(decide_under_policy(), JG_VERDICT_DENIED);
        snprintf(want, sizeof want, UNLISTED "\"%s\", " JOB_CONTROLLER "\n", ctl); /* sorted */
        ck_assert_str_eq(causes(), want);
    }
    /* the general glob needs its digit: "*[a-z]*[a-z]*[0-9]*-NNNN-47" */
    snprintf(ns, sizeof ns, "abc-%04zu-47", n - 1);
    review_namespace(&body, ns, ctl);
    ck_assert_int_eq(decide_under_policy(), JG_VERDICT_DENIED);
    /* a namespace longer than a DNS label never reaches the globs */
    memset(ns, 'a', 64);
    ns[64] = '\0';
    review_namespace(&body, ns, "x.io/unlisted");
    ck_assert_int_eq(decide_under_policy(), JG_VERDICT_BAD_REQUEST);
    ck_assert_str_eq(o.message.data,
                     "request.namespace: must be no more than 63 bytes (a namespace "
                     "is a DNS label), got 64");

    /* the limit of general glob tokens, filled with the matcher's worst glob */
    policy_globs_worst(&pol, 16384 / GLOB_WORST_TOKENS);
    load_policy(&pol);
    memset(ns, 'a', 63);
    ns[63] = '\0';
    review_namespace(&body, ns, "x.io/unlisted");
    ck_assert_int_eq(decide_under_policy(), JG_VERDICT_DENIED);
    ck_assert_str_eq(causes(), UNLISTED JOB_CONTROLLER "\n");
    ns[31] = 'b'; /* "*aaa...ab*" matches now: every controller is listed here */
    review_namespace(&body, ns, "c0000.example.com/ctl");
    ck_assert_int_eq(decide_under_policy(), JG_VERDICT_ALLOWED);
    /* one more token is refused at load */
    policy_globs_worst(&pol, 16384 / GLOB_WORST_TOKENS + 1);
    char err[512];
    ck_assert_ptr_null(jg_policy_load_buffer("policy.json", pol.data, pol.len, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "more than the limit of 16384"));
    jg_buf_free(&pol);
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
    tcase_add_test(tc, status_writers_at_limits);
    tcase_add_test(tc, namespace_globs_at_limits);
    suite_add_tcase(s, tc);
    int rc = run_suite(s);
    jg_outcome_free(&o);
    jg_buf_free(&body);
    jg_buf_free(&response);
    return rc;
}
