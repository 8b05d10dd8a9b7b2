/* The rule table (docs/rules.md §2 and §3.2) and the loop that runs it. Pure functions of the
 * view: no JSON, no I/O; allocation only inside the error list. */
#include "jobguard/rules.h"

#include "jobguard/alloc.h"
#include "jobguard/compiled.h"
#include "jobguard/indexes.h"
#include "jobguard/targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct jg_status_ctx {
    const struct jg_job_status *old, *new_;
    const struct jg_job_spec *spec; /* the stored spec: /status resets spec to it (§3.0) */
    enum jg_parity parity;
};

/* ---- §3.0 predicates ---- */

static bool is_true(const struct jg_job_status *s, enum jg_cond c) {
    return (s->cond_true & JG_COND_BIT(c)) != 0;
}
static bool is_false(const struct jg_job_status *s, enum jg_cond c) {
    return (s->cond_false & JG_COND_BIT(c)) != 0;
}
static bool finished(const struct jg_job_status *s) {
    return is_true(s, JG_COND_COMPLETE) || is_true(s, JG_COND_FAILED);
}
static bool cond_changed(const struct jg_status_ctx *c, enum jg_cond t) {
    return is_true(c->old, t) != is_true(c->new_, t);
}
static bool time_eq(jg_time a, jg_time b) {
    return a.set == b.set && (!a.set || (a.sec == b.sec && a.nsec == b.nsec));
}
static bool time_before(jg_time a, jg_time b) /* strict */
{
    return a.sec < b.sec || (a.sec == b.sec && a.nsec < b.nsec);
}
static bool opt_i32_eq(jg_opt_i32 a, jg_opt_i32 b) {
    return a.set == b.set && (!a.set || a.v == b.v);
}
static bool opt_str_eq(jg_opt_str a, jg_opt_str b) {
    return a.set == b.set && (!a.set || jg_str_eq(a.s, b.s));
}
/* Semantic equality: nil and empty lists are equal. */
static bool list_eq(const jg_str_list *a, const jg_str_list *b) {
    if (a->n != b->n) return false;
    for (size_t i = 0; i < a->n; i++)
        if (!jg_str_eq(a->items[i], b->items[i])) return false;
    return true;
}

static bool finished_changed(const struct jg_status_ctx *c) {
    return finished(c->old) != finished(c->new_);
}
static bool complete_changed(const struct jg_status_ctx *c) {
    return cond_changed(c, JG_COND_COMPLETE);
}
static bool failed_changed(const struct jg_status_ctx *c) {
    return cond_changed(c, JG_COND_FAILED);
}
static bool completed_indexes_changed(const struct jg_status_ctx *c) {
    return !jg_str_eq(c->old->completed_indexes, c->new_->completed_indexes);
}
static bool failed_indexes_changed(const struct jg_status_ctx *c) {
    return !opt_str_eq(c->old->failed_indexes, c->new_->failed_indexes);
}
static bool active_changed(const struct jg_status_ctx *c) {
    return c->old->active != c->new_->active;
}
static bool start_time_changed(const struct jg_status_ctx *c) {
    return !time_eq(c->old->start_time, c->new_->start_time);
}
static bool completion_time_changed(const struct jg_status_ctx *c) {
    return !time_eq(c->old->completion_time, c->new_->completion_time);
}
static bool uncounted_changed(const struct jg_status_ctx *c) {
    if (c->old->uncounted_set != c->new_->uncounted_set) return true; /* nil vs {} */
    return !list_eq(&c->old->uncounted_succeeded, &c->new_->uncounted_succeeded) ||
           !list_eq(&c->old->uncounted_failed, &c->new_->uncounted_failed);
}
static bool suspended_zero_completions(const struct jg_status_ctx *c) {
    return c->spec->suspend && c->spec->completions.set && c->spec->completions.v == 0;
}
static bool resuming(const struct jg_status_ctx *c) {
    return is_true(c->old, JG_COND_SUSPENDED) && is_false(c->new_, JG_COND_SUSPENDED);
}

/* ---- §3.1 gates ---- */

static bool always(const struct jg_status_ctx *c) {
    (void)c;
    return true;
}
static bool never(const struct jg_status_ctx *c) /* AllowForSuccessCriteriaMetInExtendedScope */
{
    (void)c;
    return false;
}
static bool gate_decreasing_succeeded(const struct jg_status_ctx *c) {
    return !c->spec->indexed || !opt_i32_eq(c->spec->completions, c->spec->parallelism);
}
static bool gate_failed_target(const struct jg_status_ctx *c) {
    return failed_changed(c) || failed_indexes_changed(c);
}
static bool gate_complete_scm(const struct jg_status_ctx *c) {
    return complete_changed(c) || cond_changed(c, JG_COND_SUCCESS_CRITERIA_MET);
}
static bool gate_finished_active(const struct jg_status_ctx *c) {
    return finished_changed(c) || active_changed(c);
}
static bool gate_finished_start(const struct jg_status_ctx *c) {
    return (finished_changed(c) || start_time_changed(c)) && !suspended_zero_completions(c);
}
static bool gate_finished_uncounted(const struct jg_status_ctx *c) {
    return finished_changed(c) || uncounted_changed(c);
}
static bool gate_start_time_update(const struct jg_status_ctx *c) {
    return start_time_changed(c) && !resuming(c);
}
static bool gate_times(const struct jg_status_ctx *c) {
    return start_time_changed(c) || completion_time_changed(c);
}
static bool gate_complete_or_completion_time(const struct jg_status_ctx *c) {
    return complete_changed(c) || completion_time_changed(c);
}
static bool gate_complete_or_failed(const struct jg_status_ctx *c) {
    return complete_changed(c) || failed_changed(c);
}
static bool gate_complete_or_failure_target(const struct jg_status_ctx *c) {
    return complete_changed(c) || cond_changed(c, JG_COND_FAILURE_TARGET);
}
static bool gate_ready(const struct jg_status_ctx *c) {
    return !opt_i32_eq(c->old->ready, c->new_->ready) || active_changed(c);
}
static bool gate_terminating(const struct jg_status_ctx *c) {
    return finished_changed(c) || !opt_i32_eq(c->old->terminating, c->new_->terminating);
}
static bool gate_overlap(const struct jg_status_ctx *c) {
    return failed_indexes_changed(c) || completed_indexes_changed(c);
}

/* ---- §3.2 checks, one per row ---- */

#define NONNEG "must be greater than or equal to 0"

static void check_non_negative(const struct jg_status_ctx *c, struct jg_errors *e) {
    const struct jg_job_status *s = c->new_;
    if (s->active < 0) jg_err_invalid_int(e, JG_R_NON_NEGATIVE, "status.active", s->active, NONNEG);
    if (s->succeeded < 0)
        jg_err_invalid_int(e, JG_R_NON_NEGATIVE, "status.succeeded", s->succeeded, NONNEG);
    if (s->failed < 0) jg_err_invalid_int(e, JG_R_NON_NEGATIVE, "status.failed", s->failed, NONNEG);
    if (s->ready.set && s->ready.v < 0)
        jg_err_invalid_int(e, JG_R_NON_NEGATIVE, "status.ready", s->ready.v, NONNEG);
    if (s->terminating.set && s->terminating.v < 0)
        jg_err_invalid_int(e, JG_R_NON_NEGATIVE, "status.terminating", s->terminating.v, NONNEG);
}

/* The uncounted UIDs of succeeded then failed as one sequence: position k < succeeded.n is in
 * succeeded, the rest in failed. */
static jg_str uid_at(const jg_str_list *const l[2], size_t k) {
    return k < l[0]->n ? l[0]->items[k] : l[1]->items[k - l[0]->n];
}

/* A non-empty UID and its position in uid_at's sequence. */
struct uid_ref {
    const char *p;
    uint32_t n, k;
};

/* By UID, then position: equal UIDs are adjacent, the earliest first. */
static int uid_ref_cmp(const void *a, const void *b) {
    const struct uid_ref *x = a, *y = b;
    int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);
    if (c) return c;
    if (x->n != y->n) return x->n < y->n ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

/* Kubernetes' shared set of rows 6 and 7, by sorting: returns a bitmap (in the error list's
 * scratch) with bit k set for every non-empty UID at position k that equals an earlier one, or
 * NULL when there can be none. Sets e->oom when memory ran out. */
static const uint8_t *duplicate_uids(const jg_str_list *const l[2], struct jg_errors *e) {
    size_t total = l[0]->n + l[1]->n, m = 0;
    for (size_t k = 0; k < total; k++)
        m += uid_at(l, k).n > 0;
    if (m < 2) return NULL;
    size_t bytes = (total + 63) / 64 * 8; /* keeps the entries after it aligned */
    jg_buf *d = &e->scratch;
    jg_buf_reset(d);
    if (total > UINT32_MAX || !jg_buf_reserve(d, bytes + m * sizeof(struct uid_ref))) {
        e->oom = true; /* more UIDs than positions: beyond any body the decoder accepts */
        return NULL;
    }
    uint8_t *dup = (uint8_t *)d->data;
    memset(dup, 0, bytes);
    struct uid_ref *v = (struct uid_ref *)(void *)(dup + bytes);
    for (size_t k = 0, j = 0; k < total; k++) {
        jg_str uid = uid_at(l, k);
        if (uid.n > 0) v[j++] = (struct uid_ref){uid.p, (uint32_t)uid.n, (uint32_t)k};
    }
    /* qsort: O(n log n) comparisons whatever the UIDs. A hash + MSD radix sort + heapsort did the
     * same in 130 lines; on the worst case, 160,000 distinct UIDs in a 6.2 MB body, qsort takes
     * 28–33 ms of CPU where that took 14–15 ms, and on 160,000 copies of one UID 42–67 ms where
     * that took 112–126 ms (bench_engine --scaling, release build): no answer a user waits for
     * moves noticeably within the webhook's timeout. glibc's qsort may malloc a copy of v. */
    qsort(v, m, sizeof *v, uid_ref_cmp);
    for (size_t i = 1; i < m; i++)
        if (v[i].n == v[i - 1].n && memcmp(v[i].p, v[i - 1].p, v[i].n) == 0)
            dup[v[i].k / 8] |= (uint8_t)(1u << (v[i].k % 8));
    return dup;
}

/* Rows 6 and 7 in one pass: succeeded then failed, one shared set; empty wins over duplicate. */
static void check_uncounted(const struct jg_status_ctx *c, struct jg_errors *e) {
    const struct jg_job_status *s = c->new_;
    if (!s->uncounted_set) return;
    const jg_str_list *lists[2] = {&s->uncounted_succeeded, &s->uncounted_failed};
    const char *names[2] = {"succeeded", "failed"};
    const uint8_t *dup = duplicate_uids(lists, e);
    if (e->oom) return;
    for (size_t k = 0; k < lists[0]->n + lists[1]->n; k++) {
        int l = k >= lists[0]->n;
        size_t i = l ? k - lists[0]->n : k;
        jg_str uid = lists[l]->items[i];
        bool empty = uid.n == 0, repeated = dup && (dup[k / 8] >> (k % 8) & 1);
        if (!empty && !repeated) continue;
        char field[96];
        snprintf(field, sizeof field, "status.uncountedTerminatedPods.%s[%zu]", names[l], i);
        if (empty) /* types.UID is a named type: JSON rendering (§2.6) */
            jg_err_invalid_jsonstr(e, JG_R_UNCOUNTED_EMPTY, field, (jg_opt_str){true, uid},
                                   "must not be empty");
        else
            jg_err_duplicate_json(e, JG_R_UNCOUNTED_DUPLICATE, field, uid);
    }
}

static void check_complete_with_failed(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (is_true(c->new_, JG_COND_COMPLETE) && is_true(c->new_, JG_COND_FAILED))
        jg_err_invalid_omit(e, JG_R_COMPLETE_WITH_FAILED, "status.conditions",
                            jg_rules[JG_R_COMPLETE_WITH_FAILED].message);
}

static void check_complete_with_failure_target(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (is_true(c->new_, JG_COND_COMPLETE) && is_true(c->new_, JG_COND_FAILURE_TARGET))
        jg_err_invalid_omit(e, JG_R_COMPLETE_WITH_FAILURE_TARGET, "status.conditions",
                            jg_rules[JG_R_COMPLETE_WITH_FAILURE_TARGET].message);
}

static void check_not_complete_with_completion_time(const struct jg_status_ctx *c,
                                                    struct jg_errors *e) {
    if (c->new_->completion_time.set && !is_true(c->new_, JG_COND_COMPLETE))
        jg_err_invalid_time(e, JG_R_NOT_COMPLETE_WITH_COMPLETION_TIME, "status.completionTime",
                            c->new_->completion_time,
                            jg_rules[JG_R_NOT_COMPLETE_WITH_COMPLETION_TIME].message);
}

static void check_complete_without_completion_time(const struct jg_status_ctx *c,
                                                   struct jg_errors *e) {
    if (is_true(c->new_, JG_COND_COMPLETE) && !c->new_->completion_time.set)
        jg_err_required(e, JG_R_COMPLETE_WITHOUT_COMPLETION_TIME, "status.completionTime",
                        jg_rules[JG_R_COMPLETE_WITHOUT_COMPLETION_TIME].message);
}

static void check_completion_before_start(const struct jg_status_ctx *c, struct jg_errors *e) {
    const struct jg_job_status *s = c->new_;
    if (s->completion_time.set && s->start_time.set &&
        time_before(s->completion_time, s->start_time))
        jg_err_invalid_time(e, JG_R_COMPLETION_BEFORE_START, "status.completionTime",
                            s->completion_time, jg_rules[JG_R_COMPLETION_BEFORE_START].message);
}

static void check_failed_without_failure_target(const struct jg_status_ctx *c,
                                                struct jg_errors *e) {
    if (is_true(c->new_, JG_COND_FAILED) && !is_true(c->new_, JG_COND_FAILURE_TARGET))
        jg_err_invalid_omit(e, JG_R_FAILED_WITHOUT_FAILURE_TARGET, "status.conditions",
                            jg_rules[JG_R_FAILED_WITHOUT_FAILURE_TARGET].message);
}

static void check_complete_without_scm(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (is_true(c->new_, JG_COND_COMPLETE) && !is_true(c->new_, JG_COND_SUCCESS_CRITERIA_MET))
        jg_err_invalid_omit(e, JG_R_COMPLETE_WITHOUT_SCM, "status.conditions",
                            jg_rules[JG_R_COMPLETE_WITHOUT_SCM].message);
}

static void check_finished_with_active(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (finished(c->new_) && c->new_->active > 0)
        jg_err_invalid_int(e, JG_R_FINISHED_WITH_ACTIVE, "status.active", c->new_->active,
                           jg_rules[JG_R_FINISHED_WITH_ACTIVE].message);
}

static void check_finished_without_start_time(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (finished(c->new_) && !c->new_->start_time.set)
        jg_err_required(e, JG_R_FINISHED_WITHOUT_START_TIME, "status.startTime",
                        jg_rules[JG_R_FINISHED_WITHOUT_START_TIME].message);
}

static void check_finished_with_uncounted(const struct jg_status_ctx *c, struct jg_errors *e) {
    const struct jg_job_status *s = c->new_;
    if (finished(s) && s->uncounted_set &&
        (s->uncounted_succeeded.n > 0 || s->uncounted_failed.n > 0))
        jg_err_invalid_uncounted(e, JG_R_FINISHED_WITH_UNCOUNTED, "status.uncountedTerminatedPods",
                                 &s->uncounted_succeeded, &s->uncounted_failed,
                                 jg_rules[JG_R_FINISHED_WITH_UNCOUNTED].message);
}

static void check_invalid_completed_indexes(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (!c->spec->completions.set) return;
    jg_buf *d = &e->scratch;
    jg_buf_reset(d);
    jg_buf_puts(d, "error parsing completedIndexes: ");
    if (!jg_index_list_valid(c->new_->completed_indexes, c->spec->completions.v, d))
        jg_err_invalid_gostr(e, JG_R_INVALID_COMPLETED_INDEXES, "status.completedIndexes",
                             c->new_->completed_indexes, d->oom ? "" : d->data);
    if (d->oom) e->oom = true;
}

static void check_invalid_failed_indexes(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (!c->spec->completions.set || !c->spec->backoff_limit_per_index.set ||
        !c->new_->failed_indexes.set)
        return;
    jg_buf *d = &e->scratch;
    jg_buf_reset(d);
    jg_buf_puts(d, "error parsing failedIndexes: ");
    if (!jg_index_list_valid(c->new_->failed_indexes.s, c->spec->completions.v, d))
        jg_err_invalid_jsonstr(e, JG_R_INVALID_FAILED_INDEXES, "status.failedIndexes",
                               c->new_->failed_indexes, d->oom ? "" : d->data);
    if (d->oom) e->oom = true;
}

static void check_completed_indexes_non_indexed(const struct jg_status_ctx *c,
                                                struct jg_errors *e) {
    if (c->new_->completed_indexes.n > 0 && !c->spec->indexed)
        jg_err_invalid_gostr(e, JG_R_COMPLETED_INDEXES_NON_INDEXED, "status.completedIndexes",
                             c->new_->completed_indexes,
                             jg_rules[JG_R_COMPLETED_INDEXES_NON_INDEXED].message);
}

static void check_failed_indexes_no_backoff_limit(const struct jg_status_ctx *c,
                                                  struct jg_errors *e) {
    if (c->new_->failed_indexes.set && !c->spec->backoff_limit_per_index.set)
        jg_err_invalid_gostr(e, JG_R_FAILED_INDEXES_NO_BACKOFF_LIMIT, "status.failedIndexes",
                             c->new_->failed_indexes.s,
                             jg_rules[JG_R_FAILED_INDEXES_NO_BACKOFF_LIMIT].message);
}

static void check_failed_indexes_overlap(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (!c->spec->completions.set || !c->new_->failed_indexes.set) return;
    int64_t at;
    if (jg_index_lists_overlap(c->new_->completed_indexes, c->new_->failed_indexes.s,
                               c->spec->completions.v, &at)) {
        char detail[96];
        snprintf(detail, sizeof detail, "failedIndexes and completedIndexes overlap at index: %lld",
                 (long long)at);
        jg_err_invalid_gostr(e, JG_R_FAILED_INDEXES_OVERLAP, "status.failedIndexes",
                             c->new_->failed_indexes.s, detail);
    }
}

static void check_finished_with_terminating(const struct jg_status_ctx *c, struct jg_errors *e) {
    const struct jg_job_status *s = c->new_;
    if (finished(s) && s->terminating.set && s->terminating.v > 0)
        jg_err_invalid_int(e, JG_R_FINISHED_WITH_TERMINATING, "status.terminating",
                           s->terminating.v, jg_rules[JG_R_FINISHED_WITH_TERMINATING].message);
}

static void check_more_ready_than_active(const struct jg_status_ctx *c, struct jg_errors *e) {
    const struct jg_job_status *s = c->new_;
    if (s->ready.set && s->ready.v > s->active)
        jg_err_invalid_int(e, JG_R_MORE_READY_THAN_ACTIVE, "status.ready", s->ready.v,
                           jg_rules[JG_R_MORE_READY_THAN_ACTIVE].message);
}

static void check_scm_non_indexed(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (is_true(c->new_, JG_COND_SUCCESS_CRITERIA_MET) && !c->spec->indexed)
        jg_err_invalid_omit(e, JG_R_SCM_NON_INDEXED, "status.conditions",
                            jg_rules[JG_R_SCM_NON_INDEXED].message);
}

static void check_scm_with_failed(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (is_true(c->new_, JG_COND_SUCCESS_CRITERIA_MET) && is_true(c->new_, JG_COND_FAILED))
        jg_err_invalid_omit(e, JG_R_SCM_WITH_FAILED, "status.conditions",
                            jg_rules[JG_R_SCM_WITH_FAILED].message);
}

static void check_scm_with_failure_target(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (is_true(c->new_, JG_COND_SUCCESS_CRITERIA_MET) && is_true(c->new_, JG_COND_FAILURE_TARGET))
        jg_err_invalid_omit(e, JG_R_SCM_WITH_FAILURE_TARGET, "status.conditions",
                            jg_rules[JG_R_SCM_WITH_FAILURE_TARGET].message);
}

static void check_scm_without_success_policy(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (is_true(c->new_, JG_COND_SUCCESS_CRITERIA_MET) && !c->spec->has_success_policy)
        jg_err_invalid_omit(e, JG_R_SCM_WITHOUT_SUCCESS_POLICY, "status.conditions",
                            jg_rules[JG_R_SCM_WITHOUT_SUCCESS_POLICY].message);
}

static void check_success_policy_complete(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (c->spec->has_success_policy && is_true(c->new_, JG_COND_COMPLETE) &&
        !is_true(c->new_, JG_COND_SUCCESS_CRITERIA_MET))
        jg_err_invalid_omit(e, JG_R_SUCCESS_POLICY_COMPLETE_WITHOUT_SCM, "status.conditions",
                            jg_rules[JG_R_SUCCESS_POLICY_COMPLETE_WITHOUT_SCM].message);
}

static void check_disabling_terminal(const struct jg_status_ctx *c, struct jg_errors *e) {
    static const struct {
        enum jg_cond cond;
        const char *detail;
    } terminal[] = {
        {JG_COND_FAILED, "cannot disable the terminal Failed=True condition"},
        {JG_COND_COMPLETE, "cannot disable the terminal Complete=True condition"},
        {JG_COND_FAILURE_TARGET, "cannot disable the terminal FailureTarget=True condition"},
    };
    for (size_t i = 0; i < sizeof terminal / sizeof terminal[0]; i++)
        if (is_true(c->old, terminal[i].cond) && !is_true(c->new_, terminal[i].cond))
            jg_err_invalid_omit(e, JG_R_DISABLING_TERMINAL_CONDITION, "status.conditions",
                                terminal[i].detail);
}

static void check_decreasing_failed(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (c->new_->failed < c->old->failed)
        jg_err_invalid_int(e, JG_R_DECREASING_FAILED, "status.failed", c->new_->failed,
                           jg_rules[JG_R_DECREASING_FAILED].message);
}

static void check_decreasing_succeeded(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (c->new_->succeeded < c->old->succeeded)
        jg_err_invalid_int(e, JG_R_DECREASING_SUCCEEDED, "status.succeeded", c->new_->succeeded,
                           jg_rules[JG_R_DECREASING_SUCCEEDED].message);
}

static void check_mutating_completion_time(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (c->old->completion_time.set && c->new_->completion_time.set &&
        !time_eq(c->old->completion_time, c->new_->completion_time))
        jg_err_invalid_time(e, JG_R_MUTATING_COMPLETION_TIME, "status.completionTime",
                            c->new_->completion_time,
                            jg_rules[JG_R_MUTATING_COMPLETION_TIME].message);
}

static void check_start_time_update(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (!c->old->start_time.set || time_eq(c->old->start_time, c->new_->start_time) ||
        c->spec->suspend)
        return;
    if (c->parity >= JG_PARITY_1_36) /* #136585; unchanged in 1.37 */
        jg_err_invalid_time(e, JG_R_START_TIME_UPDATE_UNSUSPENDED, "status.startTime",
                            c->new_->start_time, "field is immutable for unsuspended job once set");
    else
        jg_err_required(e, JG_R_START_TIME_UPDATE_UNSUSPENDED, "status.startTime",
                        jg_rules[JG_R_START_TIME_UPDATE_UNSUSPENDED].message);
}

static void check_scm_disable(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (is_true(c->old, JG_COND_SUCCESS_CRITERIA_MET) &&
        !is_true(c->new_, JG_COND_SUCCESS_CRITERIA_MET))
        jg_err_invalid_omit(e, JG_R_SCM_DISABLE, "status.conditions",
                            jg_rules[JG_R_SCM_DISABLE].message);
}

static void check_scm_after_complete(const struct jg_status_ctx *c, struct jg_errors *e) {
    if (is_true(c->old, JG_COND_COMPLETE) && !is_true(c->old, JG_COND_SUCCESS_CRITERIA_MET) &&
        is_true(c->new_, JG_COND_SUCCESS_CRITERIA_MET))
        jg_err_invalid_omit(e, JG_R_SCM_AFTER_COMPLETE, "status.conditions",
                            jg_rules[JG_R_SCM_AFTER_COMPLETE].message);
}

/* ---- the table ---- */

#define SPEC(id_, name_, field_, when_, msg_, sec_)                                                \
    [id_] = {.id = id_,                                                                            \
             .name = name_,                                                                        \
             .field = field_,                                                                      \
             .when = when_,                                                                        \
             .message = msg_,                                                                      \
             .section = sec_}
#define STATUS(id_, name_, field_, when_, msg_, sec_, active_, check_)                             \
    [id_] = {.id = id_,                                                                            \
             .name = name_,                                                                        \
             .field = field_,                                                                      \
             .when = when_,                                                                        \
             .message = msg_,                                                                      \
             .section = sec_,                                                                      \
             .active = active_,                                                                    \
             .check = check_}

const struct jg_rule jg_rules[JG_RULE_COUNT] = {
    SPEC(JG_R_MANAGED_BY_FORMAT, "ALWAYS-ManagedByFormat", "spec.managedBy",
         "jobs and cronjobs CREATE/UPDATE, when present (also spec.jobTemplate.spec.managedBy); "
         "CRD targets with checkFormat: CREATE, and UPDATE when the value changed, at the row's "
         "path",
         "must be a domain-prefixed path (such as \"acme.io/foo\") | RFC 1123 subdomain host | "
         "Invalid path | Required value",
         "docs/rules.md §2.2"),
    SPEC(JG_R_MANAGED_BY_LENGTH, "ALWAYS-ManagedByLength", "spec.managedBy",
         "jobs and cronjobs CREATE/UPDATE, when present; CRD targets as ALWAYS-ManagedByFormat",
         "Too long: may not be more than 63 bytes", "docs/rules.md §2.3"),
    SPEC(JG_R_MANAGED_BY_IMMUTABLE, "ALWAYS-ManagedByImmutable", "spec.managedBy",
         "jobs and CRD targets UPDATE (main resource); absent differs from any value",
         "field is immutable", "docs/rules.md §2.5"),
    STATUS(JG_R_NON_NEGATIVE, "ALWAYS-NonNeg", "status.active|succeeded|failed|ready|terminating",
           "always", "must be greater than or equal to 0", "docs/rules.md §3.2 #1-5", always,
           check_non_negative),
    STATUS(JG_R_UNCOUNTED_EMPTY, "ALWAYS-UncountedEmpty",
           "status.uncountedTerminatedPods.succeeded[i]|failed[i]", "always", "must not be empty",
           "docs/rules.md §3.2 #6", always, check_uncounted),
    STATUS(JG_R_UNCOUNTED_DUPLICATE, "ALWAYS-UncountedDup",
           "status.uncountedTerminatedPods.succeeded[i]|failed[i]",
           "always (same pass as ALWAYS-UncountedEmpty)", "Duplicate value",
           "docs/rules.md §3.2 #7", always, NULL),
    STATUS(JG_R_COMPLETE_WITH_FAILED, "RejectCompleteJobWithFailedCondition", "status.conditions",
           "Complete or Failed changed", "cannot set Complete=True and Failed=true conditions",
           "docs/rules.md §3.2 #8", gate_complete_or_failed, check_complete_with_failed),
    STATUS(JG_R_COMPLETE_WITH_FAILURE_TARGET, "RejectCompleteJobWithFailureTargetCondition",
           "status.conditions", "Complete or FailureTarget changed",
           "cannot set Complete=True and FailureTarget=true conditions", "docs/rules.md §3.2 #9",
           gate_complete_or_failure_target, check_complete_with_failure_target),
    STATUS(JG_R_NOT_COMPLETE_WITH_COMPLETION_TIME, "RejectNotCompleteJobWithCompletionTime",
           "status.completionTime", "Complete or completionTime changed",
           "cannot set completionTime when there is no Complete=True condition",
           "docs/rules.md §3.2 #10", gate_complete_or_completion_time,
           check_not_complete_with_completion_time),
    STATUS(JG_R_COMPLETE_WITHOUT_COMPLETION_TIME, "RejectCompleteJobWithoutCompletionTime",
           "status.completionTime", "Complete or completionTime changed",
           "completionTime is required for Complete jobs", "docs/rules.md §3.2 #11",
           gate_complete_or_completion_time, check_complete_without_completion_time),
    STATUS(JG_R_COMPLETION_BEFORE_START, "RejectCompletionTimeBeforeStartTime",
           "status.completionTime", "startTime or completionTime changed",
           "must be equal to or after `startTime`", "docs/rules.md §3.2 #12", gate_times,
           check_completion_before_start),
    STATUS(JG_R_FAILED_WITHOUT_FAILURE_TARGET, "RejectFailedJobWithoutFailureTarget",
           "status.conditions", "Failed or failedIndexes changed",
           "cannot set Failed=True condition without the FailureTarget=true condition",
           "docs/rules.md §3.2 #13", gate_failed_target, check_failed_without_failure_target),
    STATUS(JG_R_COMPLETE_WITHOUT_SCM, "RejectCompleteJobWithoutSuccessCriteriaMet",
           "status.conditions", "Complete or SuccessCriteriaMet changed",
           "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
           "docs/rules.md §3.2 #14", gate_complete_scm, check_complete_without_scm),
    STATUS(JG_R_FINISHED_WITH_ACTIVE, "RejectFinishedJobWithActivePods", "status.active",
           "finished or active changed", "active>0 is invalid for finished job",
           "docs/rules.md §3.2 #15", gate_finished_active, check_finished_with_active),
    STATUS(JG_R_FINISHED_WITHOUT_START_TIME, "RejectFinishedJobWithoutStartTime",
           "status.startTime",
           "(finished or startTime changed) and not (suspend=true and completions=0)",
           "startTime is required for finished job", "docs/rules.md §3.2 #16", gate_finished_start,
           check_finished_without_start_time),
    STATUS(JG_R_FINISHED_WITH_UNCOUNTED, "RejectFinishedJobWithUncountedTerminatedPods",
           "status.uncountedTerminatedPods", "finished or uncountedTerminatedPods changed",
           "must be empty for finished job", "docs/rules.md §3.2 #17", gate_finished_uncounted,
           check_finished_with_uncounted),
    STATUS(JG_R_INVALID_COMPLETED_INDEXES, "RejectInvalidCompletedIndexes",
           "status.completedIndexes", "completedIndexes changed (and spec.completions set)",
           "error parsing completedIndexes: <reason>", "docs/rules.md §3.2 #18, §4",
           completed_indexes_changed, check_invalid_completed_indexes),
    STATUS(JG_R_INVALID_FAILED_INDEXES, "RejectInvalidFailedIndexes", "status.failedIndexes",
           "failedIndexes changed (and completions, backoffLimitPerIndex, failedIndexes set)",
           "error parsing failedIndexes: <reason>", "docs/rules.md §3.2 #19, §4",
           failed_indexes_changed, check_invalid_failed_indexes),
    STATUS(JG_R_COMPLETED_INDEXES_NON_INDEXED, "RejectCompletedIndexesForNonIndexedJob",
           "status.completedIndexes", "completedIndexes changed",
           "cannot set non-empty completedIndexes when non-indexed completion mode",
           "docs/rules.md §3.2 #20", completed_indexes_changed,
           check_completed_indexes_non_indexed),
    STATUS(JG_R_FAILED_INDEXES_NO_BACKOFF_LIMIT, "RejectFailedIndexesForNoBackoffLimitPerIndex",
           "status.failedIndexes", "failedIndexes changed",
           "cannot set non-null failedIndexes when backoffLimitPerIndex is null",
           "docs/rules.md §3.2 #21", failed_indexes_changed, check_failed_indexes_no_backoff_limit),
    STATUS(JG_R_FAILED_INDEXES_OVERLAP, "RejectFailedIndexesOverlappingCompleted",
           "status.failedIndexes", "failedIndexes or completedIndexes changed",
           "failedIndexes and completedIndexes overlap at index: <N>",
           "docs/rules.md §3.2 #22, §4.3", gate_overlap, check_failed_indexes_overlap),
    STATUS(JG_R_FINISHED_WITH_TERMINATING, "RejectFinishedJobWithTerminatingPods",
           "status.terminating", "finished or terminating changed",
           "terminating>0 is invalid for finished job", "docs/rules.md §3.2 #23", gate_terminating,
           check_finished_with_terminating),
    STATUS(JG_R_MORE_READY_THAN_ACTIVE, "RejectMoreReadyThanActivePods", "status.ready",
           "ready or active changed", "cannot set more ready pods than active",
           "docs/rules.md §3.2 #24", gate_ready, check_more_ready_than_active),
    STATUS(JG_R_SCM_NON_INDEXED, "X1-SuccessCriteriaMetNonIndexed", "status.conditions",
           "never in v1.35 (AllowForSuccessCriteriaMetInExtendedScope)",
           "cannot set SuccessCriteriaMet to NonIndexed Job", "docs/rules.md §3.2 #25", never,
           check_scm_non_indexed),
    STATUS(JG_R_SCM_WITH_FAILED, "ALWAYS-SCMFailed", "status.conditions", "always",
           "cannot set SuccessCriteriaMet=True and Failed=true conditions",
           "docs/rules.md §3.2 #26", always, check_scm_with_failed),
    STATUS(JG_R_SCM_WITH_FAILURE_TARGET, "ALWAYS-SCMFailureTarget", "status.conditions", "always",
           "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
           "docs/rules.md §3.2 #27", always, check_scm_with_failure_target),
    STATUS(JG_R_SCM_WITHOUT_SUCCESS_POLICY, "X2-SuccessCriteriaMetWithoutSuccessPolicy",
           "status.conditions", "never in v1.35 (AllowForSuccessCriteriaMetInExtendedScope)",
           "cannot set SuccessCriteriaMet=True for Job without SuccessPolicy",
           "docs/rules.md §3.2 #28", never, check_scm_without_success_policy),
    STATUS(JG_R_SUCCESS_POLICY_COMPLETE_WITHOUT_SCM, "ALWAYS-SuccessPolicyComplete",
           "status.conditions", "always (spec.successPolicy set)",
           "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
           "docs/rules.md §3.2 #29", always, check_success_policy_complete),
    STATUS(JG_R_DISABLING_TERMINAL_CONDITION, "RejectDisablingTerminalCondition",
           "status.conditions", "always",
           "cannot disable the terminal <Failed|Complete|FailureTarget>=True condition",
           "docs/rules.md §3.2 #30", always, check_disabling_terminal),
    STATUS(JG_R_DECREASING_FAILED, "RejectDecreasingFailedCounter", "status.failed", "always",
           "cannot decrease the failed counter", "docs/rules.md §3.2 #31", always,
           check_decreasing_failed),
    STATUS(JG_R_DECREASING_SUCCEEDED, "RejectDecreasingSucceededCounter", "status.succeeded",
           "NonIndexed, or completions != parallelism", "cannot decrease the succeeded counter",
           "docs/rules.md §3.2 #32", gate_decreasing_succeeded, check_decreasing_succeeded),
    STATUS(JG_R_MUTATING_COMPLETION_TIME, "RejectMutatingCompletionTime", "status.completionTime",
           "always", "field is immutable", "docs/rules.md §3.2 #33", always,
           check_mutating_completion_time),
    STATUS(JG_R_START_TIME_UPDATE_UNSUSPENDED, "RejectStartTimeUpdateForUnsuspendedJob",
           "status.startTime", "startTime changed and not resuming (Suspended True -> False)",
           "startTime cannot be removed for unsuspended job", "docs/rules.md §3.2 #34",
           gate_start_time_update, check_start_time_update),
    STATUS(JG_R_SCM_DISABLE, "ALWAYS-SCMDisable", "status.conditions", "always",
           "cannot disable the SuccessCriteriaMet=True condition", "docs/rules.md §3.2 #35", always,
           check_scm_disable),
    STATUS(JG_R_SCM_AFTER_COMPLETE, "ALWAYS-SCMAfterComplete", "status.conditions", "always",
           "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions",
           "docs/rules.md §3.2 #36", always, check_scm_after_complete),
    SPEC(JG_R_TARGET_NESTED_MANAGED_BY, "Target-NestedManagedBy", "<a nested path of the row>",
         "CRD targets with nestedPaths CREATE/UPDATE (on UPDATE only copies not in the stored "
         "object)",
         "Unsupported value: \"<value>\": supported values: \"<nested reserved value>\" | "
         "Forbidden: must not be set",
         "docs/rules.md §12.3"),
    SPEC(JG_R_TARGET_DELEGATION_UNSUPPORTED, "Target-DelegationUnsupported",
         "<the row's managedByPath>",
         "CRD targets with delegationSupported: false, CREATE, and UPDATE when the value changed",
         "Invalid value: \"<value>\": <Kind>'s controller ignores managedBy, so the local "
         "operator would still run the pods; leave it unset or use \"<reserved value>\"",
         "docs/rules.md §12.4"),
    SPEC(JG_R_POLICY_ALLOWED_CONTROLLERS, "Policy-AllowedControllers", "spec.managedBy",
         "jobs, cronjobs and CRD targets CREATE, and UPDATE when the value changed, when the "
         "policy sets allowUnlistedControllers: false",
         "Unsupported value: \"<value>\": supported values: \"<a>\", \"<b>\" (then where a "
         "namespace-limited controller is allowed)",
         "docs/rules.md §11.1"),
    SPEC(JG_R_POLICY_STATUS_WRITERS, "Policy-StatusWriters", "status",
         "jobs/status and <CRD target>/status UPDATE (and a CRD target UPDATE that changes "
         "status), when the object's controller lists statusWriters in the policy",
         "User \"<user>\" cannot update the status of a <Kind> managed by \"<controller>\" "
         "(403)",
         "docs/rules.md §11.2"),
};

const struct jg_rule *jg_rule_find(const char *name) {
    for (size_t i = 0; i < JG_RULE_COUNT; i++)
        if (strcmp(jg_rules[i].name, name) == 0) return &jg_rules[i];
    return NULL;
}

/* §2.5: pointer comparison. */
static void check_managed_by_immutable(const struct jg_job_spec *new_,
                                       const struct jg_job_spec *old, struct jg_errors *e) {
    if (!opt_str_eq(new_->managed_by, old->managed_by))
        jg_err_invalid_jsonstr(e, JG_R_MANAGED_BY_IMMUTABLE, "spec.managedBy", new_->managed_by,
                               "field is immutable");
}

static void validate_status(const struct jg_request *req, const struct jg_config *cfg, uint64_t on,
                            struct jg_errors *e) {
    struct jg_status_ctx c = {
        .old = &req->old_object.status,
        .new_ = &req->object.status,
        .spec = &req->old_object.spec,
        .parity = cfg->parity,
    };
    for (size_t i = 0; i < JG_RULE_COUNT; i++) {
        const struct jg_rule *r = &jg_rules[i];
        if (!r->check) continue;
        /* a check also emits the errors of the rows after it that have none (rows 6-7) */
        uint64_t mine = UINT64_C(1) << i;
        for (size_t k = i + 1; k < JG_RULE_COUNT && !jg_rules[k].check && jg_rules[k].active; k++)
            mine |= UINT64_C(1) << k;
        if ((on & mine) && r->active(&c)) r->check(&c, e);
    }
}

/* ---- policy rules (docs/rules.md §11) ---- */

/* Whether controller entry `c` applies in namespace `ns` (globs; none = every namespace). */
static bool in_namespace(const struct jg_policy_controller *c, jg_str ns) {
    return jg_nsmatch_has(&c->ns_match, ns);
}

static int cmp_str(const void *a, const void *b) {
    const jg_str *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int c = n ? memcmp(x->p, y->p, n) : 0;
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* How many of a controller's namespace globs a refusal names (§11.1): enough for any real list,
 * few enough that the message stays a line. */
#define MAX_NS_NAMED 8

/* §11.1: when the value is refused only because its controller is limited to other namespaces,
 * the note `"<value>" is allowed only in namespaces <glob>, <glob>` (at most MAX_NS_NAMED globs,
 * then `and N more`) into `note`; nothing when no entry names the value. */
static void namespace_note(const struct jg_policy *p, jg_str value, jg_buf *note) {
    for (size_t i = 0; i < p->n_controllers; i++) {
        const struct jg_policy_controller *c = &p->controllers[i];
        if (!jg_str_eq((jg_str){c->name, c->name_len}, value)) continue;
        jg_buf_go_quote(note, value.p, value.n);
        jg_buf_puts(note, " is allowed only in namespaces ");
        size_t k = c->namespaces.n < MAX_NS_NAMED ? c->namespaces.n : MAX_NS_NAMED;
        for (size_t j = 0; j < k; j++)
            jg_buf_printf(note, "%s%s", j ? ", " : "", c->namespaces.v[j]);
        if (c->namespaces.n > k) jg_buf_printf(note, " and %zu more", c->namespaces.n - k);
        return; /* names are unique in the policy */
    }
}

/* §11.1: with allowUnlistedControllers false, a set value must be the reserved one or a
 * controller listed for the namespace. "supported values" lists those (reserved one included,
 * sorted, without duplicates); a value listed for other namespaces only adds where it is
 * allowed. */
static void check_allowed_controllers(const struct jg_request *req, const struct jg_policy *p,
                                      const char *field, const char *reserved,
                                      struct jg_errors *e) {
    const jg_opt_str *mb = &req->object.spec.managed_by;
    if (!p || p->allow_unlisted_controllers || !mb->set) return;
    if (jg_str_eq_lit(mb->s, reserved)) return;
    jg_str stack[16], *vals = stack;
    if (p->n_controllers + 1 > sizeof stack / sizeof *stack) {
        vals = jg_malloc((p->n_controllers + 1) * sizeof *vals);
        if (!vals) {
            e->oom = true;
            return;
        }
    }
    size_t n = 0;
    vals[n++] = (jg_str){reserved, strlen(reserved)};
    bool listed = false;
    for (size_t i = 0; i < p->n_controllers && !listed; i++) {
        const struct jg_policy_controller *c = &p->controllers[i];
        if (!in_namespace(c, req->namespace_)) continue;
        jg_str name = {c->name, c->name_len};
        listed = jg_str_eq(name, mb->s);
        vals[n++] = name;
    }
    if (!listed) {
        qsort(vals, n, sizeof *vals, cmp_str);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (k == 0 || !jg_str_eq(vals[k - 1], vals[i])) vals[k++] = vals[i];
        jg_buf note = JG_BUF_INIT;
        namespace_note(p, mb->s, &note);
        if (note.oom) e->oom = true;
        jg_err_not_supported_note(e, JG_R_POLICY_ALLOWED_CONTROLLERS, field, mb->s, vals, k,
                                  (jg_str){note.data ? note.data : "", note.len});
        jg_buf_free(&note);
    }
    if (vals != stack) jg_free(vals);
}

/* Whether the request's user may write the status of objects managed by `ctl`: true when no
 * entry for it (in this namespace) lists statusWriters. */
static bool may_write_status(const struct jg_request *req, const struct jg_policy *p, jg_str ctl) {
    for (size_t g = 0; g < req->groups.n; g++)
        if (jg_strset_has(&p->exempt_set, req->groups.items[g])) return true;
    bool bound = false;
    for (size_t i = 0; i < p->n_controllers; i++) {
        const struct jg_policy_controller *c = &p->controllers[i];
        if (!c->has_status_writers || !jg_str_eq(ctl, (jg_str){c->name, c->name_len}) ||
            !in_namespace(c, req->namespace_))
            continue;
        bound = true;
        if (jg_strset_has(&c->writer_user_set, req->username)) return true;
        for (size_t g = 0; g < req->groups.n; g++)
            if (jg_strset_has(&c->writer_group_set, req->groups.items[g])) return true;
    }
    return !bound;
}

/* §11.2: a jobs/status UPDATE by someone other than the status writers of the Job's controller
 * (as the stored object names it, and as the new one does if it differs). */
static void check_status_writers(const struct jg_request *req, const struct jg_policy *p,
                                 const char *kind, struct jg_errors *e) {
    if (!p) return;
    const jg_opt_str *v[2] = {&req->old_object.spec.managed_by, &req->object.spec.managed_by};
    for (int i = 0; i < 2; i++) {
        if (!v[i]->set || (i == 1 && v[0]->set && jg_str_eq(v[0]->s, v[1]->s))) continue;
        if (may_write_status(req, p, v[i]->s)) continue;
        jg_buf_reset(&e->scratch);
        jg_buf_puts(&e->scratch, "User ");
        jg_buf_go_quote(&e->scratch, req->username.p, req->username.n);
        jg_buf_puts(&e->scratch, " cannot update the status of a ");
        jg_buf_puts(&e->scratch, kind);
        jg_buf_puts(&e->scratch, " managed by ");
        jg_buf_go_quote(&e->scratch, v[i]->s.p, v[i]->s.n);
        if (e->scratch.oom) {
            e->oom = true;
            return;
        }
        jg_err_forbidden(e, JG_R_POLICY_STATUS_WRITERS, e->scratch.data);
        return;
    }
}

/* ---- CRD targets (docs/rules.md §12) ---- */

/* A nested copy that the stored object has too, with the same match (the same field, or the
 * same key for an element of a keyed list: view.h) and the same value. Copies are in document
 * order, so the same index is tried first; otherwise a sorted index of the stored copies (built
 * once, on the first miss) is searched. A copy without a match (a keyed element without a key)
 * matches nothing; those sort first. */
struct nested_index {
    const struct jg_job *old;
    const struct jg_nested_value **order; /* old->nested sorted by (which, match, value); NULL
                                           * until the first miss */
    bool oom;
};

static int nested_cmp(const struct jg_nested_value *a, const struct jg_nested_value *b) {
    if (a->which != b->which) return a->which < b->which ? -1 : 1;
    if (!a->match.p || !b->match.p) return a->match.p ? 1 : b->match.p ? -1 : 0;
    int c = cmp_str(&a->match, &b->match);
    return c ? c : cmp_str(&a->value, &b->value);
}

static int nested_ptr_cmp(const void *a, const void *b) {
    return nested_cmp(*(const struct jg_nested_value *const *)a,
                      *(const struct jg_nested_value *const *)b);
}

static bool nested_unchanged(struct nested_index *ix, size_t i, const struct jg_nested_value *v) {
    const struct jg_job *old = ix->old;
    if (!v->match.p) return false;
    if (i < old->n_nested && nested_cmp(&old->nested[i], v) == 0) return true;
    if (old->n_nested == 0 || ix->oom) return false;
    if (!ix->order) {
        ix->order = jg_malloc(old->n_nested * sizeof *ix->order);
        if (!ix->order) {
            ix->oom = true;
            return false;
        }
        for (size_t k = 0; k < old->n_nested; k++)
            ix->order[k] = &old->nested[k];
        qsort(ix->order, old->n_nested, sizeof *ix->order, nested_ptr_cmp);
    }
    size_t lo = 0, hi = old->n_nested;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = nested_cmp(ix->order[mid], v);
        if (c == 0) return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* §12.3: each nested copy must be absent or the nested kind's reserved value ("" = absent only).
 * On UPDATE a copy the stored object already has is not re-checked (validation ratcheting). */
static void check_nested(const struct jg_request *req, const struct jg_policy_target *t,
                         struct jg_errors *e) {
    if (!(e->only & (UINT64_C(1) << JG_R_TARGET_NESTED_MANAGED_BY))) return; /* off: no lookups */
    const struct jg_job *obj = &req->object;
    struct nested_index ix = {.old = &req->old_object};
    bool update = req->operation == JG_OP_UPDATE;
    for (size_t i = 0; i < obj->n_nested && !e->oom; i++) {
        const struct jg_nested_value *v = &obj->nested[i];
        if (v->which >= t->n_nested) continue;
        const char *rv = t->nested[v->which].reserved_value;
        if (rv[0] && jg_str_eq_lit(v->value, rv)) continue;
        if (update && nested_unchanged(&ix, i, v)) continue;
        if (rv[0]) {
            jg_str valid = {rv, strlen(rv)};
            jg_err_not_supported(e, JG_R_TARGET_NESTED_MANAGED_BY, v->field.p, v->value, &valid, 1);
        } else {
            jg_err_field_forbidden(e, JG_R_TARGET_NESTED_MANAGED_BY, v->field.p, "must not be set");
        }
    }
    if (ix.oom) e->oom = true;
    jg_free((void *)ix.order);
}

/* §12.4: the row's controller ignores managedBy, so only its own value (or none) is safe. */
static void check_delegation(const jg_opt_str *mb, const struct jg_policy_target *t,
                             struct jg_errors *e) {
    if (t->delegation_supported || !mb->set || jg_str_eq_lit(mb->s, t->reserved_value)) return;
    jg_buf_reset(&e->scratch);
    jg_buf_puts(&e->scratch, t->kind);
    jg_buf_puts(&e->scratch, "'s controller ignores managedBy, so the local operator would still "
                             "run the pods; leave it unset or use ");
    jg_buf_go_quote(&e->scratch, t->reserved_value, strlen(t->reserved_value));
    if (e->scratch.oom) {
        e->oom = true;
        return;
    }
    jg_err_invalid_gostr(e, JG_R_TARGET_DELEGATION_UNSUPPORTED, t->managed_by_path, mb->s,
                         e->scratch.data);
}

/* §12.1: a CRD target. Its own project's admission checks differ (docs/targets.md); jobguard
 * applies Job's contract at the row's path. Values the stored object already has are not
 * re-checked on UPDATE, as the API server ratchets CRD validation, so objects created before
 * jobguard can still be updated (and their finalizers removed); immutability catches any change. */
static void validate_target(const struct jg_request *req, const struct jg_policy *p,
                            struct jg_errors *e) {
    const struct jg_policy_target *t = req->row;
    const char *field = t->managed_by_path;
    const jg_opt_str *mb = &req->object.spec.managed_by, *old = &req->old_object.spec.managed_by;
    bool update = req->operation == JG_OP_UPDATE;
    if (update && jg_str_eq_lit(req->sub_resource, "status")) {
        check_status_writers(req, p, t->kind, e);
        return;
    }
    if (req->sub_resource.n) return;
    /* A main-resource UPDATE that changes status writes it: only possible when the CRD has no
     * status subresource, as the API server otherwise puts the stored status back before
     * validating admission (docs/rules.md §11.2). */
    if (update && !opt_str_eq(req->object.status_json, req->old_object.status_json))
        check_status_writers(req, p, t->kind, e);
    bool changed = !update || !opt_str_eq(*mb, *old);
    if (changed && mb->set && t->check_format) jg_check_managed_by(mb->s, field, e);
    if (update && changed)
        jg_err_invalid_jsonstr(e, JG_R_MANAGED_BY_IMMUTABLE, field, *mb, "field is immutable");
    if (changed) check_delegation(mb, t, e);
    check_nested(req, t, e);
    if (changed) check_allowed_controllers(req, p, field, t->reserved_value, e);
}

/* Runs the rules in e->only (the caller has already removed the rules that are off). */
static void validate_only(const struct jg_request *req, const struct jg_config *cfg,
                          struct jg_errors *e) {
    bool create = req->operation == JG_OP_CREATE, update = req->operation == JG_OP_UPDATE;
    if (!create && !update) return;
    uint64_t on = e->only;
    const struct jg_policy *p = cfg->policy;
    if (req->target == JG_TARGET_JOB && req->sub_resource.n == 0) {
        /* §2.6: on UPDATE the JobSpec validator runs twice (ValidateJob, ValidateJobSpecUpdate). */
        const jg_opt_str *mb = &req->object.spec.managed_by;
        for (int pass = 0; pass < (update ? 2 : 1); pass++)
            if (mb->set) jg_check_managed_by(mb->s, "spec.managedBy", e);
        if (update) check_managed_by_immutable(&req->object.spec, &req->old_object.spec, e);
        /* §11.1: an unchanged value is not re-checked on UPDATE, as for every kind */
        if (!update || !opt_str_eq(*mb, req->old_object.spec.managed_by))
            check_allowed_controllers(req, p, "spec.managedBy", JG_JOB_CONTROLLER, e);
    } else if (req->target == JG_TARGET_JOB && update &&
               jg_str_eq_lit(req->sub_resource, "status")) {
        /* the API server authorizes before it validates: the 403 comes first (§11.3) */
        check_status_writers(req, p, "Job", e);
        validate_status(req, cfg, on, e);
    } else if (req->target == JG_TARGET_CRONJOB && req->sub_resource.n == 0) {
        const jg_opt_str *mb = &req->object.spec.managed_by;
        if (mb->set) jg_check_managed_by(mb->s, "spec.jobTemplate.spec.managedBy", e);
        if (!update || !opt_str_eq(*mb, req->old_object.spec.managed_by))
            check_allowed_controllers(req, p, "spec.jobTemplate.spec.managedBy", JG_JOB_CONTROLLER,
                                      e);
    } else if (req->target == JG_TARGET_CRD && req->row) {
        validate_target(req, p, e);
    }
}

/* mask[m]: the rules whose mode is m (deny, warn, audit); off rules are in none. */
static void mode_masks(const struct jg_config *cfg, uint64_t mask[JG_MODE_OFF]) {
    uint64_t all[JG_MODE_COUNT] = {0};
    for (int i = 0; i < JG_RULE_COUNT; i++) { /* jg_rule_mode, without branches */
        unsigned m = cfg->mode[i];
        m = m < JG_MODE_COUNT ? m : JG_MODE_DENY;
        all[m] |= UINT64_C(1) << i;
    }
    for (int m = 0; m < JG_MODE_OFF; m++)
        mask[m] = all[m] & ~cfg->disabled;
}

void jg_validate(const struct jg_request *req, const struct jg_config *cfg, struct jg_errors *e) {
    uint64_t mask[JG_MODE_OFF], saved = e->only;
    mode_masks(cfg, mask);
    e->only &= mask[JG_MODE_DENY] | mask[JG_MODE_WARN] | mask[JG_MODE_AUDIT];
    validate_only(req, cfg, e);
    e->only = saved;
}

void jg_validate_modes(const struct jg_request *req, const struct jg_config *cfg,
                       struct jg_errors out[JG_MODE_OFF]) {
    uint64_t mask[JG_MODE_OFF];
    mode_masks(cfg, mask);
    int in_use = (mask[JG_MODE_DENY] != 0) + (mask[JG_MODE_WARN] != 0) + (mask[JG_MODE_AUDIT] != 0);
    if (in_use > 1) {
        /* Most requests break no rule: one pass over every rule that is on tells, and then no
         * pass per mode is needed; otherwise only the modes whose rules fired run again. */
        struct jg_errors *probe = &out[JG_MODE_DENY];
        uint64_t saved = probe->only;
        probe->only &= mask[JG_MODE_DENY] | mask[JG_MODE_WARN] | mask[JG_MODE_AUDIT];
        validate_only(req, cfg, probe);
        probe->only = saved;
        bool clean = !probe->oom && probe->n == 0 && probe->omitted == 0;
        uint64_t fired = probe->oom ? UINT64_MAX : probe->rules;
        jg_errors_reset(probe);
        if (clean) return;
        for (int m = 0; m < JG_MODE_OFF; m++)
            mask[m] &= fired;
    }
    for (int m = 0; m < JG_MODE_OFF; m++) {
        if (!mask[m]) continue;
        uint64_t saved = out[m].only;
        out[m].only &= mask[m];
        validate_only(req, cfg, &out[m]);
        out[m].only = saved;
    }
}

static const char *const mode_names[JG_MODE_COUNT] = {"deny", "warn", "audit", "off"};

const char *jg_mode_name(enum jg_mode m) {
    return (unsigned)m < JG_MODE_COUNT ? mode_names[m] : "deny";
}

static const char *const parity_names[JG_PARITY_COUNT] = {"1.35", "1.36", "1.37"};

const char *jg_parity_name(enum jg_parity p) {
    return (unsigned)p < JG_PARITY_COUNT ? parity_names[p] : "?";
}

bool jg_parity_parse(const char *s, enum jg_parity *out) {
    for (int p = 0; p < JG_PARITY_COUNT; p++)
        if (strcmp(s, parity_names[p]) == 0) {
            *out = (enum jg_parity)p;
            return true;
        }
    return false;
}

bool jg_mode_parse(const char *s, enum jg_mode *out) {
    for (int m = 0; m < JG_MODE_COUNT; m++)
        if (strcmp(s, mode_names[m]) == 0) {
            *out = (enum jg_mode)m;
            return true;
        }
    return false;
}

bool jg_mode_set(const char *spec, size_t n, unsigned char mode[JG_RULE_MAX], char *err,
                 size_t errcap) {
    const char *eq = memchr(spec, '=', n);
    char id[128], name[16];
    enum jg_mode m;
    size_t idn = eq ? (size_t)(eq - spec) : 0, mn = eq ? n - idn - 1 : 0;
    if (eq && mn < sizeof name) {
        memcpy(name, eq + 1, mn);
        name[mn] = '\0';
    }
    if (!eq || idn == 0 || mn >= sizeof name || !jg_mode_parse(name, &m)) {
        snprintf(err, errcap, "\"%.*s\": expected ID=MODE, MODE one of deny, warn, audit, off",
                 (int)(n > 200 ? 200 : n), spec);
        return false;
    }
    snprintf(id, sizeof id, "%.*s", (int)(idn < sizeof id ? idn : sizeof id - 1), spec);
    if (idn == 1 && spec[0] == '*') {
        memset(mode, m, JG_RULE_MAX);
        return true;
    }
    const struct jg_rule *r = idn < sizeof id ? jg_rule_find(id) : NULL;
    if (!r) {
        snprintf(err, errcap, "unknown rule ID \"%s\" (see 'jobguard rules')", id);
        return false;
    }
    mode[r->id] = (unsigned char)m;
    return true;
}
