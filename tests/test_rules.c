/* Rule tests on views built directly (no JSON): every status rule fires when its gate is open
 * and stays silent when the same violation is already stored and its gate is closed (docs/rules.md
 * §3.1). */
#include "jobguard/rules.h"

#include <check.h>

#include "run_suite.h"
#include <stdio.h>
#include <string.h>

#define T0 1735689600 /* 2025-01-01T00:00:00Z */
#define T1 (T0 + 60)

static struct jg_request req;
#define OLD (&req.old_object.status)
#define NEW (&req.object.status)
#define SPEC (&req.old_object.spec)

static jg_str S(const char *s) {
    return (jg_str){s, strlen(s)};
}
static jg_time at(int64_t t) {
    return (jg_time){true, t, 0};
}

static void base(void) {
    memset(&req, 0, sizeof req);
    req.operation = JG_OP_UPDATE;
    req.target = JG_TARGET_JOB;
    req.sub_resource = S("status");
    req.object.present = req.old_object.present = true;
    req.object.name = req.old_object.name = S("j");
    SPEC->completions = (jg_opt_i32){true, 5};
    SPEC->parallelism = (jg_opt_i32){true, 5};
    req.object.spec = *SPEC;
    OLD->start_time = NEW->start_time = at(T0);
    OLD->active = NEW->active = 1;
}

static void set_cond(struct jg_job_status *s, enum jg_cond c) {
    s->cond_true |= JG_COND_BIT(c);
}

/* Runs the engine; returns the fired rule IDs as "ID,ID,...". */
static const char *fired(struct jg_config cfg) {
    static char out[2048];
    struct jg_errors e;
    jg_errors_init(&e);
    jg_validate(&req, &cfg, &e);
    out[0] = '\0';
    for (size_t i = 0; i < e.n; i++) {
        if (i) strcat(out, ",");
        strcat(out, jg_rules[e.v[i].rule].name);
    }
    jg_errors_free(&e);
    return out;
}
static const char *run(void) {
    return fired((struct jg_config)JG_CONFIG_DEFAULT);
}

/* Cause i as "<field>: <body>". */
static const char *cause_line(const struct jg_errors *e, size_t i) {
    static char line[256];
    jg_str f = jg_err_field(e, i), b = jg_err_body(e, i);
    snprintf(line, sizeof line, "%.*s: %.*s", (int)f.n, f.p, (int)b.n, b.p);
    return line;
}

/* A complete, valid finished state (SCM + Complete + completionTime, active 0). */
static void complete(struct jg_job_status *s) {
    set_cond(s, JG_COND_SUCCESS_CRITERIA_MET);
    set_cond(s, JG_COND_COMPLETE);
    s->completion_time = at(T1);
    s->active = 0;
}

START_TEST(baseline_allows) {
    base();
    ck_assert_str_eq(run(), "");
    complete(NEW);
    ck_assert_str_eq(run(), "");
}
END_TEST

START_TEST(non_negative_always) {
    base();
    OLD->active = NEW->active = -1; /* absolute: fires even when unchanged */
    ck_assert_str_eq(run(), "ALWAYS-NonNeg");
    base();
    NEW->ready = (jg_opt_i32){true, -1};
    NEW->terminating = (jg_opt_i32){true, -2};
    NEW->failed = -1;
    NEW->succeeded = -1;
    OLD->failed = -1;
    OLD->succeeded = -1;
    ck_assert_str_eq(run(), "ALWAYS-NonNeg,ALWAYS-NonNeg,ALWAYS-NonNeg,ALWAYS-NonNeg");
}
END_TEST

START_TEST(uncounted_always) {
    base();
    jg_str s_items[] = {S("a"), S("")}, f_items[] = {S("a")};
    NEW->uncounted_set = OLD->uncounted_set = true;
    NEW->uncounted_succeeded = OLD->uncounted_succeeded = (jg_str_list){true, 2, s_items};
    NEW->uncounted_failed = OLD->uncounted_failed = (jg_str_list){true, 1, f_items};
    ck_assert_str_eq(run(), "ALWAYS-UncountedEmpty,ALWAYS-UncountedDup");
}
END_TEST

/* Rows 6 and 7 against a plain quadratic reference of Kubernetes' shared set, on random lists
 * full of repeats, prefixes of each other and empty UIDs: the same causes in the same order. */
START_TEST(uncounted_duplicates_match_a_set) {
    static const char *const pool[] = {
        "",   "a",   "b",   "aa",  "ab",
        "ba", "abc", "abd", "a b", "0123456789abcdef0123456789abcdef0123"};
    const size_t npool = sizeof pool / sizeof pool[0];
    uint32_t rng = 2463534242u;
    for (int trial = 0; trial < 400; trial++) {
        base();
        jg_str items[2][48];
        size_t n[2];
        for (int l = 0; l < 2; l++) {
            rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
            n[l] = rng % 48;
            for (size_t i = 0; i < n[l]; i++) {
                rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
                items[l][i] = S(pool[rng % (trial < 200 ? npool : 3)]); /* then mostly repeats */
            }
        }
        NEW->uncounted_set = true;
        NEW->uncounted_succeeded = (jg_str_list){true, n[0], items[0]};
        NEW->uncounted_failed = (jg_str_list){true, n[1], items[1]};

        struct jg_config cfg = JG_CONFIG_DEFAULT;
        struct jg_errors e;
        jg_errors_init(&e);
        jg_validate(&req, &cfg, &e);
        size_t k = 0;
        for (int l = 0; l < 2; l++) {
            for (size_t i = 0; i < n[l]; i++) {
                char want[160];
                bool seen = false;
                for (int pl = 0; pl <= l && !seen; pl++)
                    for (size_t j = 0; j < (pl == l ? i : n[pl]) && !seen; j++)
                        seen = items[l][i].n && jg_str_eq(items[pl][j], items[l][i]);
                if (items[l][i].n == 0)
                    snprintf(want, sizeof want,
                             "status.uncountedTerminatedPods.%s[%zu]: Invalid "
                             "value: \"\": must not be empty",
                             l ? "failed" : "succeeded", i);
                else if (seen)
                    snprintf(want, sizeof want,
                             "status.uncountedTerminatedPods.%s[%zu]: Duplicate value: \"%s\"",
                             l ? "failed" : "succeeded", i, items[l][i].p);
                else
                    continue;
                ck_assert_uint_lt(k, e.n);
                ck_assert_str_eq(cause_line(&e, k), want);
                k++;
            }
        }
        ck_assert_uint_eq(k, e.n);
        jg_errors_free(&e);
    }
}
END_TEST

/* uid-00014e03 and uid-00069723 share the 32-bit key the duplicate search sorts by (found by
 * search): equal keys must still be told apart by their bytes. */
START_TEST(uncounted_colliding_keys) {
    base();
    jg_str s_items[] = {S("uid-00014e03"), S("uid-00069723"), S("uid-00014e04")};
    jg_str f_items[] = {S("uid-00069723"), S("uid-00014e03")};
    NEW->uncounted_set = true;
    NEW->uncounted_succeeded = (jg_str_list){true, 3, s_items};
    NEW->uncounted_failed = (jg_str_list){true, 2, f_items};
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    struct jg_errors e;
    jg_errors_init(&e);
    jg_validate(&req, &cfg, &e);
    ck_assert_uint_eq(e.n, 2);
    const char *want[] = {
        "status.uncountedTerminatedPods.failed[0]: Duplicate value: \"uid-00069723\"",
        "status.uncountedTerminatedPods.failed[1]: Duplicate value: \"uid-00014e03\""};
    for (size_t i = 0; i < 2; i++)
        ck_assert_str_eq(cause_line(&e, i), want[i]);
    jg_errors_free(&e);
}
END_TEST

START_TEST(complete_with_failed_gate) {
    base();
    complete(NEW);
    set_cond(NEW, JG_COND_FAILED);
    set_cond(NEW, JG_COND_FAILURE_TARGET);
    ck_assert_str_eq(run(), "RejectCompleteJobWithFailedCondition,"
                            "RejectCompleteJobWithFailureTargetCondition,ALWAYS-SCMFailed,"
                            "ALWAYS-SCMFailureTarget");
    /* stored that way, unrelated update: only the absolute SCM rules fire */
    *OLD = *NEW;
    NEW->failed = 1;
    ck_assert_str_eq(run(), "ALWAYS-SCMFailed,ALWAYS-SCMFailureTarget");
}
END_TEST

START_TEST(completion_time_rules) {
    base();
    NEW->completion_time = at(T1); /* without Complete */
    ck_assert_str_eq(run(), "RejectNotCompleteJobWithCompletionTime");
    *OLD = *NEW; /* stored: gate closed */
    NEW->active = 2;
    ck_assert_str_eq(run(), "");

    base();
    set_cond(NEW, JG_COND_COMPLETE);
    set_cond(NEW, JG_COND_SUCCESS_CRITERIA_MET);
    NEW->active = 0;
    ck_assert_str_eq(run(), "RejectCompleteJobWithoutCompletionTime");
    *OLD = *NEW;
    NEW->succeeded = 1;
    ck_assert_str_eq(run(), "");

    base();
    complete(NEW);
    NEW->completion_time = at(T0 - 1);
    ck_assert_str_eq(run(), "RejectCompletionTimeBeforeStartTime");
    *OLD = *NEW;
    NEW->succeeded = 1;
    ck_assert_str_eq(run(), "");
    NEW->completion_time = at(T0); /* equal is fine, but mutating is not */
    ck_assert_str_eq(run(), "RejectMutatingCompletionTime");
}
END_TEST

START_TEST(failed_without_failure_target_gate) {
    base();
    set_cond(NEW, JG_COND_FAILED);
    NEW->active = 0;
    ck_assert_str_eq(run(), "RejectFailedJobWithoutFailureTarget");
    *OLD = *NEW;
    NEW->failed = 2; /* legacy stored Failed without FailureTarget: tolerated */
    ck_assert_str_eq(run(), "");
    NEW->active = 1; /* an active change opens RejectFinishedJobWithActivePods only */
    ck_assert_str_eq(run(), "RejectFinishedJobWithActivePods");
    NEW->active = 0;
    SPEC->backoff_limit_per_index = (jg_opt_i32){true, 1};
    SPEC->indexed = true;
    NEW->failed_indexes = (jg_opt_str){true, S("1")};
    ck_assert_str_eq(run(), "RejectFailedJobWithoutFailureTarget");
}
END_TEST

START_TEST(complete_without_scm_gate) {
    base();
    set_cond(NEW, JG_COND_COMPLETE);
    NEW->completion_time = at(T1);
    NEW->active = 0;
    ck_assert_str_eq(run(), "RejectCompleteJobWithoutSuccessCriteriaMet");
    *OLD = *NEW;
    NEW->succeeded = 6;
    ck_assert_str_eq(run(), "");
    set_cond(NEW, JG_COND_SUCCESS_CRITERIA_MET); /* SCM after Complete */
    ck_assert_str_eq(run(), "ALWAYS-SCMAfterComplete");
}
END_TEST

START_TEST(finished_rules_gates) {
    base();
    complete(NEW);
    NEW->active = 2;
    NEW->terminating = (jg_opt_i32){true, 1};
    jg_str items[] = {S("a")};
    NEW->uncounted_set = true;
    NEW->uncounted_succeeded = (jg_str_list){true, 1, items};
    ck_assert_str_eq(run(), "RejectFinishedJobWithActivePods,"
                            "RejectFinishedJobWithUncountedTerminatedPods,"
                            "RejectFinishedJobWithTerminatingPods");
    *OLD = *NEW;
    NEW->succeeded = 3;
    ck_assert_str_eq(run(), "");

    base();
    OLD->start_time = NEW->start_time = (jg_time){0};
    complete(NEW);
    ck_assert_str_eq(run(), "RejectFinishedJobWithoutStartTime");
    SPEC->suspend = true;
    SPEC->completions = (jg_opt_i32){true, 0};
    ck_assert_str_eq(run(), ""); /* suspended with completions=0 exemption */
}
END_TEST

START_TEST(index_rules_gates) {
    base();
    NEW->completed_indexes = S("0-5");
    ck_assert_str_eq(run(), "RejectInvalidCompletedIndexes,RejectCompletedIndexesForNonIndexedJob");
    SPEC->indexed = true;
    ck_assert_str_eq(run(), "RejectInvalidCompletedIndexes");
    *OLD = *NEW; /* corrupt but stored: tolerated */
    NEW->active = 3;
    ck_assert_str_eq(run(), "");
    SPEC->completions = (jg_opt_i32){false, 0};
    NEW->completed_indexes = S("abc");
    SPEC->indexed = false;
    ck_assert_str_eq(run(), "RejectCompletedIndexesForNonIndexedJob");

    base();
    SPEC->indexed = true;
    NEW->failed_indexes = (jg_opt_str){true, S("")};
    ck_assert_str_eq(run(), "RejectFailedIndexesForNoBackoffLimitPerIndex");
    SPEC->backoff_limit_per_index = (jg_opt_i32){true, 1};
    ck_assert_str_eq(run(), "");
    NEW->failed_indexes = (jg_opt_str){true, S("9")};
    ck_assert_str_eq(run(), "RejectInvalidFailedIndexes");
    NEW->failed_indexes = (jg_opt_str){true, S("2")};
    OLD->completed_indexes = NEW->completed_indexes = S("0-2");
    ck_assert_str_eq(run(), "RejectFailedIndexesOverlappingCompleted");
    *OLD = *NEW;
    NEW->active = 3;
    ck_assert_str_eq(run(), "");
}
END_TEST

START_TEST(ready_gate) {
    base();
    NEW->ready = (jg_opt_i32){true, 2};
    ck_assert_str_eq(run(), "RejectMoreReadyThanActivePods");
    *OLD = *NEW;
    NEW->succeeded = 1;
    ck_assert_str_eq(run(), "");
}
END_TEST

START_TEST(extended_scope_rules_never_fire) {
    base();
    set_cond(NEW, JG_COND_SUCCESS_CRITERIA_MET); /* NonIndexed, no successPolicy */
    ck_assert_str_eq(run(), "");
    SPEC->has_success_policy = true;
    set_cond(NEW, JG_COND_COMPLETE);
    NEW->completion_time = at(T1);
    NEW->active = 0;
    ck_assert_str_eq(run(), "");
    NEW->cond_true &= ~JG_COND_BIT(JG_COND_SUCCESS_CRITERIA_MET);
    ck_assert_str_eq(run(), "RejectCompleteJobWithoutSuccessCriteriaMet,"
                            "ALWAYS-SuccessPolicyComplete");
}
END_TEST

START_TEST(terminal_and_counters) {
    base();
    set_cond(OLD, JG_COND_FAILED);
    set_cond(OLD, JG_COND_FAILURE_TARGET);
    complete(OLD);
    OLD->failed = 3;
    OLD->succeeded = 3;
    NEW->failed = 2;
    NEW->succeeded = 2;
    ck_assert_str_eq(run(), "RejectDisablingTerminalCondition,RejectDisablingTerminalCondition,"
                            "RejectDisablingTerminalCondition,RejectDecreasingFailedCounter,"
                            "RejectDecreasingSucceededCounter,ALWAYS-SCMDisable");
    /* Indexed with completions == parallelism: decreasing succeeded is allowed */
    base();
    SPEC->indexed = true;
    OLD->succeeded = 3;
    NEW->succeeded = 2;
    ck_assert_str_eq(run(), "");
    SPEC->parallelism = (jg_opt_i32){true, 2};
    ck_assert_str_eq(run(), "RejectDecreasingSucceededCounter");
}
END_TEST

START_TEST(start_time_rule_and_parity) {
    base();
    NEW->start_time = at(T1);
    ck_assert_str_eq(run(), "RejectStartTimeUpdateForUnsuspendedJob");
    NEW->start_time = (jg_time){0};
    ck_assert_str_eq(run(), "RejectStartTimeUpdateForUnsuspendedJob");
    SPEC->suspend = true;
    ck_assert_str_eq(run(), "");
    SPEC->suspend = false;
    NEW->start_time = at(T1);
    set_cond(OLD, JG_COND_SUSPENDED);
    NEW->cond_false |= JG_COND_BIT(JG_COND_SUSPENDED);
    ck_assert_str_eq(run(), ""); /* resuming */

    base();
    NEW->start_time = (jg_time){0};
    struct jg_errors e;
    jg_errors_init(&e);
    jg_validate(&req, &(struct jg_config){.parity = JG_PARITY_1_36}, &e);
    ck_assert_int_eq(e.n, 1);
    jg_str b = jg_err_body(&e, 0);
    const char *want = "Invalid value: null: field is immutable for unsuspended job once set";
    ck_assert_int_eq(b.n, strlen(want));
    ck_assert(memcmp(b.p, want, b.n) == 0);
    jg_errors_reset(&e);
    jg_validate(&req, &(struct jg_config){.parity = JG_PARITY_1_37}, &e); /* 1.37: 1.36's text */
    ck_assert_int_eq(e.n, 1);
    b = jg_err_body(&e, 0);
    ck_assert(b.n == strlen(want) && memcmp(b.p, want, b.n) == 0);
    jg_errors_reset(&e);
    jg_validate(&req, &(struct jg_config)JG_CONFIG_DEFAULT, &e);
    b = jg_err_body(&e, 0);
    want = "Required value: startTime cannot be removed for unsuspended job";
    ck_assert(b.n == strlen(want) && memcmp(b.p, want, b.n) == 0);
    jg_errors_free(&e);
}
END_TEST

/* --parity's values: names and parsing agree, nothing else parses */
START_TEST(parity_names) {
    for (int p = 0; p < JG_PARITY_COUNT; p++) {
        enum jg_parity got;
        ck_assert(jg_parity_parse(jg_parity_name((enum jg_parity)p), &got));
        ck_assert_int_eq(got, p);
    }
    ck_assert_str_eq(jg_parity_name(JG_PARITY_1_37), "1.37");
    enum jg_parity got = JG_PARITY_1_35;
    ck_assert(!jg_parity_parse("1.38", &got) && !jg_parity_parse("1.3", &got) &&
              !jg_parity_parse("", &got));
    ck_assert_int_eq(got, JG_PARITY_1_35);
}
END_TEST

START_TEST(disabled_rules_and_scope) {
    base();
    NEW->start_time = at(T1);
    NEW->ready = (jg_opt_i32){true, 5};
    const struct jg_rule *r = jg_rule_find("RejectStartTimeUpdateForUnsuspendedJob");
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(
        fired((struct jg_config){.parity = JG_PARITY_1_35, .disabled = UINT64_C(1) << r->id}),
        "RejectMoreReadyThanActivePods");
    ck_assert_ptr_null(jg_rule_find("NoSuchRule"));
    /* main-resource UPDATE: no status rules, managedBy rules only */
    req.sub_resource = S("");
    ck_assert_str_eq(run(), "");
    req.object.spec.managed_by = (jg_opt_str){true, S("kubernetes.io/job-controller")};
    ck_assert_str_eq(run(), "ALWAYS-ManagedByImmutable");
    req.object.spec.managed_by = (jg_opt_str){true, S("Foo")};
    ck_assert_str_eq(run(), "ALWAYS-ManagedByFormat,ALWAYS-ManagedByFormat,"
                            "ALWAYS-ManagedByImmutable");
    /* status update carrying another managedBy: ignored (§7: spec is reset) */
    req.sub_resource = S("status");
    ck_assert_str_eq(run(), "RejectMoreReadyThanActivePods,RejectStartTimeUpdateForUnsuspendedJob");
    /* DELETE: nothing */
    req.operation = JG_OP_DELETE;
    ck_assert_str_eq(run(), "");
    /* CronJob: format only, once */
    req.operation = JG_OP_UPDATE;
    req.target = JG_TARGET_CRONJOB;
    req.sub_resource = S("");
    ck_assert_str_eq(run(), "ALWAYS-ManagedByFormat");
}
END_TEST

START_TEST(table_is_consistent) {
    for (size_t i = 0; i < JG_RULE_COUNT; i++) {
        ck_assert_int_eq(jg_rules[i].id, (int)i);
        ck_assert_ptr_nonnull(jg_rules[i].name);
        ck_assert_ptr_eq(jg_rule_find(jg_rules[i].name), &jg_rules[i]);
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne(jg_rules[i].name, jg_rules[j].name);
        if (i >= JG_R_NON_NEGATIVE && i <= JG_R_SCM_AFTER_COMPLETE)
            ck_assert_ptr_nonnull(jg_rules[i].active);
    }
    ck_assert(JG_RULE_COUNT <= 64); /* fits the disabled/fired bitmasks */
}
END_TEST

int main(void) {
    Suite *s = suite_create("rules");
    TCase *tc = tcase_create("gates");
    tcase_add_test(tc, baseline_allows);
    tcase_add_test(tc, non_negative_always);
    tcase_add_test(tc, uncounted_always);
    tcase_add_test(tc, uncounted_duplicates_match_a_set);
    tcase_add_test(tc, uncounted_colliding_keys);
    tcase_add_test(tc, complete_with_failed_gate);
    tcase_add_test(tc, completion_time_rules);
    tcase_add_test(tc, failed_without_failure_target_gate);
    tcase_add_test(tc, complete_without_scm_gate);
    tcase_add_test(tc, finished_rules_gates);
    tcase_add_test(tc, index_rules_gates);
    tcase_add_test(tc, ready_gate);
    tcase_add_test(tc, extended_scope_rules_never_fire);
    tcase_add_test(tc, terminal_and_counters);
    tcase_add_test(tc, start_time_rule_and_parity);
    tcase_add_test(tc, parity_names);
    tcase_add_test(tc, disabled_rules_and_scope);
    tcase_add_test(tc, table_is_consistent);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
