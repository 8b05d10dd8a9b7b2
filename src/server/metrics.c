/* metrics: the Prometheus series of jobguard. Every label value is an index into a const table
 * (resource, subresource, operation, verdict, HTTP code, rule ID): the set of series is bounded
 * whatever clients send. The series of one decided review (requests, histogram, rule violations)
 * change together under one lock, so that a scrape is a consistent snapshot: the histogram's
 * +Inf bucket equals its _count and equals the sum of requests_total. The rest are relaxed atomics.
 */
#include "metrics.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "jobguard/alloc.h"
#include "jobguard/rules.h"
#include "jobguard/server/budget.h"
#include "jobguard/targets.h"

/* Request labels. The resources and kinds are those of the built-in target table (jobs, cronjobs
 * and the batch CRDs), then "" and "other": a policy file's own kinds and anything else fold into
 * "other", which keeps the cardinality bounded whatever is registered. */
#define MAX_TARGET_LABELS 32
static const char *resources[MAX_TARGET_LABELS + 2];
static size_t n_res;
static const char *const subresources[] = {"", "status", "other"};
static const char *const operations[] = {"CREATE", "UPDATE", "DELETE", "CONNECT", ""};
static const char *const verdicts[] = {"allowed", "denied", "bad_request", "error"};
static const char *const dry_runs[] = {"false", "true"};
/* Rule violation labels: the target kind and the rule's mode (deny, warn, audit). kinds[0] and
 * [1] are Job and CronJob, whose series are always shown; the others once they happened. */
static const char *kinds[MAX_TARGET_LABELS + 1];
static size_t n_kinds;
#define N_RES (MAX_TARGET_LABELS + 2)
#define N_SUB (sizeof subresources / sizeof subresources[0])
#define N_OP (sizeof operations / sizeof operations[0])
#define N_VERDICT (sizeof verdicts / sizeof verdicts[0])
#define N_KIND (MAX_TARGET_LABELS + 1)
#define N_MODE JG_MODE_OFF

/* Seconds. The engine decides a 4 KB review in ~60 µs and TLS+HTTP adds ~30 µs, so the buckets
 * start at 100 µs; 1 s is far beyond anything but a stalled upload. */
static const double buckets[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                 0.025,  0.05,    0.1,    0.25,  0.5,    1.0};
#define N_BUCKETS (sizeof buckets / sizeof buckets[0])

static const unsigned http_codes[] = {200, 400, 403, 404, 405, 411, 413, 414, 431, 500, 501, 503};
#define N_CODES (sizeof http_codes / sizeof http_codes[0])

/* The series one decided review moves, updated and read under admission_lock. */
struct admission_series {
    uint64_t requests[N_RES][N_SUB][N_OP][N_VERDICT][2]; /* last: dry_run */
    uint64_t bucket[N_BUCKETS + 1];                      /* last = +Inf only */
    uint64_t duration_count;
    uint64_t duration_sum_ns;
    uint64_t rule[JG_RULE_COUNT][N_KIND][N_MODE][2]; /* last: dry_run */
};
static pthread_mutex_t admission_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
    struct admission_series a;
    atomic_int_fast64_t in_flight;
    atomic_uint_fast64_t http[N_CODES + 1]; /* last = any other code */
    atomic_int_fast64_t cert_expiry;
    atomic_uint_fast64_t reload_ok, reload_failed;
    atomic_uint_fast64_t policy_reload_ok, policy_reload_failed;
    atomic_int policy_file_refused; /* the file on disk is not the policy serving */
} m;
static pthread_mutex_t policy_lock = PTHREAD_MUTEX_INITIALIZER;
static char policy_sha256[65]; /* of the policy serving now; "" = no policy file */
/* --metrics-zero-series: the rule series at 0 before their first event */
static bool zero_series = true;

#define ADD(x, v) atomic_fetch_add_explicit(&(x), (v), memory_order_relaxed)
#define GET(x) atomic_load_explicit(&(x), memory_order_relaxed)

static void add_label(const char **table, size_t *n, const char *v) {
    for (size_t i = 0; i < *n; i++)
        if (strcmp(table[i], v) == 0) return;
    table[(*n)++] = v;
}

_Static_assert(MAX_TARGET_LABELS >= 18, "room for every built-in target");
_Static_assert(JG_R_POLICY_STATUS_WRITERS == JG_RULE_COUNT - 1, "rule_applies knows every rule");

void jg_metrics_reset(void) {
    memset(&m, 0, sizeof m); /* before any thread starts */
    policy_sha256[0] = '\0';
    zero_series = true;
    n_res = n_kinds = 0;
    for (size_t i = 0; i < jg_builtin_target_count && n_kinds < MAX_TARGET_LABELS; i++) {
        add_label(resources, &n_res, jg_builtin_targets[i].resource);
        add_label(kinds, &n_kinds, jg_builtin_targets[i].kind);
    }
    resources[n_res++] = "";
    resources[n_res++] = "other";
    kinds[n_kinds++] = "other";
}

/* Whether rule r can fire for kinds[k], so that its series exist at 0 from the start (alerts on a
 * rate need the series before the first event): the managedBy rules and the allow-list for every
 * kind; the Job status rules for Job only; the target rules for the CRD kinds (a policy file's own
 * kinds count as "other"); status writers for every kind with a status, CronJob aside. */
static bool rule_applies(int r, size_t k) {
    bool job = k == 0, cronjob = k == 1;
    switch (r) {
    case JG_R_MANAGED_BY_FORMAT:
    case JG_R_MANAGED_BY_LENGTH:
    case JG_R_MANAGED_BY_IMMUTABLE:
    case JG_R_POLICY_ALLOWED_CONTROLLERS:
        return true;
    case JG_R_TARGET_NESTED_MANAGED_BY:
    case JG_R_TARGET_DELEGATION_UNSUPPORTED:
        return !job && !cronjob;
    case JG_R_POLICY_STATUS_WRITERS:
        return !cronjob;
    default: /* the Job status rules */
        return job;
    }
}

void jg_metrics_zero_series(bool on) {
    zero_series = on;
}

static size_t index_of(const char *const *table, size_t n, const char *v, size_t other) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(table[i], v) == 0) return i;
    return other;
}

void jg_metrics_admission(const struct jg_outcome *o, double seconds) {
    size_t r = index_of(resources, n_res, o->resource, n_res - 1);
    size_t s = index_of(subresources, N_SUB, o->sub_resource, N_SUB - 1);
    size_t op = index_of(operations, N_OP, o->operation, N_OP - 1);
    size_t v = (size_t)o->verdict < N_VERDICT ? (size_t)o->verdict : JG_VERDICT_ERROR;
    size_t b = 0;
    while (b < N_BUCKETS && seconds > buckets[b])
        b++;
    uint64_t ns = (uint64_t)(seconds > 0 ? seconds * 1e9 : 0);

    size_t d = o->dry_run, k = index_of(kinds, n_kinds, o->kind, n_kinds - 1);
    const uint64_t by_mode[N_MODE] = {o->rules, o->rules_warn, o->rules_audit};

    pthread_mutex_lock(&admission_lock);
    m.a.requests[r][s][op][v][d]++;
    m.a.bucket[b]++;
    m.a.duration_count++;
    m.a.duration_sum_ns += ns;
    for (int i = 0; i < JG_RULE_COUNT; i++)
        for (size_t md = 0; md < N_MODE; md++)
            if (by_mode[md] & (UINT64_C(1) << i)) m.a.rule[i][k][md][d]++;
    pthread_mutex_unlock(&admission_lock);
}

void jg_metrics_http_response(unsigned code) {
    size_t i = 0;
    while (i < N_CODES && http_codes[i] != code)
        i++;
    ADD(m.http[i], 1);
}

void jg_metrics_in_flight(int delta) {
    ADD(m.in_flight, delta);
}

void jg_metrics_cert_reload(bool success) {
    if (success)
        ADD(m.reload_ok, 1);
    else
        ADD(m.reload_failed, 1);
}

void jg_metrics_policy_reload(bool success) {
    if (success)
        ADD(m.policy_reload_ok, 1);
    else
        ADD(m.policy_reload_failed, 1);
}

void jg_metrics_policy_file_refused(bool refused) {
    atomic_store_explicit(&m.policy_file_refused, refused, memory_order_relaxed);
}

void jg_metrics_policy_serving(const char *sha256) {
    pthread_mutex_lock(&policy_lock);
    snprintf(policy_sha256, sizeof policy_sha256, "%s", sha256);
    pthread_mutex_unlock(&policy_lock);
}

void jg_metrics_cert_expiry(int64_t unix_seconds) {
    atomic_store_explicit(&m.cert_expiry, unix_seconds, memory_order_relaxed);
}

static void header(jg_buf *out, const char *name, const char *type, const char *help) {
    jg_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A series without labels: its # HELP and # TYPE lines, then its value. */
static void unlabelled(jg_buf *out, const char *name, const char *type, const char *help,
                       uint64_t v) {
    header(out, name, type, help);
    jg_buf_printf(out, "%s %llu\n", name, (unsigned long long)v);
}

/* The memory budget's series (docs/memory.md). */
static const struct {
    const char *name, *type, *help;
    uint64_t (*value)(void);
} budget_series[] = {
    {"jobguard_memory_budget_bytes", "gauge",
     "Bytes that request bodies and decisions in flight may hold together (--memory-budget).",
     jg_budget_total},
    {"jobguard_memory_held_bytes", "gauge",
     "Bytes of the memory budget held by requests in flight: bodies as they arrive, decisions, "
     "answers until they are sent.",
     jg_budget_held},
    {"jobguard_requests_shed_total", "counter",
     "Requests answered 503 with Retry-After, their body dropped unread into memory: the memory "
     "budget was full.",
     jg_budget_refused},
    {"jobguard_requests_evicted_total", "counter",
     "Requests cut because a newer small review needed the bytes they held (the budget's client "
     "share was full).",
     jg_budget_evicted},
    {"jobguard_connections_evicted_total", "counter",
     "Connections shut down, having waited longest for a request, to make room for a new one "
     "near the connection limit (webhook and ops ports).",
     jg_budget_connections_evicted},
};

/* Label values here come from const tables of plain tokens: nothing to escape. */
void jg_metrics_render(jg_buf *out) {
    /* one copy, so every series of a scrape comes from the same moment (on the heap: ~90 KB) */
    struct admission_series *ap = jg_malloc(sizeof *ap);
    if (!ap) {
        out->oom = true;
        return;
    }
    pthread_mutex_lock(&admission_lock);
    *ap = m.a;
    pthread_mutex_unlock(&admission_lock);

    header(out, "jobguard_admission_requests_total", "counter",
           "AdmissionReview requests decided, by resource, subresource, operation, verdict and "
           "dry run.");
    for (size_t r = 0; r < n_res; r++)
        for (size_t s = 0; s < N_SUB; s++)
            for (size_t op = 0; op < N_OP; op++)
                for (size_t v = 0; v < N_VERDICT; v++)
                    for (size_t d = 0; d < 2; d++) {
                        uint64_t n = ap->requests[r][s][op][v][d];
                        if (n == 0) continue; /* only series that happened */
                        jg_buf_printf(out,
                                      "jobguard_admission_requests_total{resource=\"%s\","
                                      "subresource=\"%s\",operation=\"%s\",verdict=\"%s\","
                                      "dry_run=\"%s\"} %llu\n",
                                      resources[r], subresources[s], operations[op], verdicts[v],
                                      dry_runs[d], (unsigned long long)n);
                    }

    header(out, "jobguard_admission_duration_seconds", "histogram",
           "Time from request headers to queued response for decided AdmissionReviews.");
    uint64_t cum = 0;
    for (size_t b = 0; b <= N_BUCKETS; b++) {
        cum += ap->bucket[b];
        if (b < N_BUCKETS)
            jg_buf_printf(out, "jobguard_admission_duration_seconds_bucket{le=\"%g\"} %llu\n",
                          buckets[b], (unsigned long long)cum);
        else
            jg_buf_printf(out, "jobguard_admission_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
                          (unsigned long long)cum);
    }
    jg_buf_printf(out, "jobguard_admission_duration_seconds_sum %.9f\n",
                  (double)ap->duration_sum_ns / 1e9);
    jg_buf_printf(out, "jobguard_admission_duration_seconds_count %llu\n",
                  (unsigned long long)ap->duration_count);

    header(out, "jobguard_rule_violations_total", "counter",
           "AdmissionReviews in which the rule fired, by rule ID, target kind, the rule's mode "
           "(deny, warn, audit) and dry run.");
    for (int i = 0; i < JG_RULE_COUNT; i++)
        for (size_t k = 0; k < n_kinds; k++)
            for (size_t md = 0; md < N_MODE; md++)
                for (size_t d = 0; d < 2; d++) {
                    uint64_t n = ap->rule[i][k][md][d];
                    /* a zero series for every rule that can fire for the kind (unless
                     * --metrics-zero-series=false); dry-run series once they happened */
                    if ((d || !zero_series || !rule_applies(i, k)) && n == 0) continue;
                    jg_buf_printf(out,
                                  "jobguard_rule_violations_total{rule=\"%s\",kind=\"%s\","
                                  "mode=\"%s\",dry_run=\"%s\"} %llu\n",
                                  jg_rules[i].name, kinds[k], jg_mode_name((enum jg_mode)md),
                                  dry_runs[d], (unsigned long long)n);
                }

    jg_free(ap);

    header(out, "jobguard_requests_in_flight", "gauge",
           "Requests on the webhook port being received or answered.");
    jg_buf_printf(out, "jobguard_requests_in_flight %lld\n", (long long)GET(m.in_flight));

    for (size_t i = 0; i < sizeof budget_series / sizeof budget_series[0]; i++)
        unlabelled(out, budget_series[i].name, budget_series[i].type, budget_series[i].help,
                   budget_series[i].value());

    header(out, "jobguard_http_responses_total", "counter",
           "HTTP responses of the webhook port, by status code.");
    for (size_t i = 0; i <= N_CODES; i++) {
        uint64_t n = GET(m.http[i]);
        if (i < N_CODES)
            jg_buf_printf(out, "jobguard_http_responses_total{code=\"%u\"} %llu\n", http_codes[i],
                          (unsigned long long)n);
        else if (n > 0)
            jg_buf_printf(out, "jobguard_http_responses_total{code=\"other\"} %llu\n",
                          (unsigned long long)n);
    }

    header(out, "jobguard_certificate_expiry_timestamp_seconds", "gauge",
           "notAfter of the serving certificate, Unix seconds.");
    jg_buf_printf(out, "jobguard_certificate_expiry_timestamp_seconds %lld\n",
                  (long long)GET(m.cert_expiry));

    header(out, "jobguard_certificate_reloads_total", "counter",
           "Attempts to load a changed certificate/key pair, by result.");
    jg_buf_printf(out, "jobguard_certificate_reloads_total{result=\"success\"} %llu\n",
                  (unsigned long long)GET(m.reload_ok));
    jg_buf_printf(out, "jobguard_certificate_reloads_total{result=\"failure\"} %llu\n",
                  (unsigned long long)GET(m.reload_failed));

    header(out, "jobguard_policy_reloads_total", "counter",
           "Attempts to load a changed policy file, by result (failure: refused, the previous "
           "policy keeps serving).");
    jg_buf_printf(out, "jobguard_policy_reloads_total{result=\"success\"} %llu\n",
                  (unsigned long long)GET(m.policy_reload_ok));
    jg_buf_printf(out, "jobguard_policy_reloads_total{result=\"failure\"} %llu\n",
                  (unsigned long long)GET(m.policy_reload_failed));
    header(out, "jobguard_policy_info", "gauge",
           "Always 1; sha256 of the policy file serving now (\"\" without --policy-file).");
    pthread_mutex_lock(&policy_lock);
    jg_buf_printf(out, "jobguard_policy_info{sha256=\"%s\"} 1\n", policy_sha256);
    pthread_mutex_unlock(&policy_lock);

    header(out, "jobguard_policy_file_serving", "gauge",
           "1 when the policy file on disk is the policy serving (or there is no policy file); 0 "
           "while the file on disk is refused and the previous policy serves: the next restart "
           "would refuse to start.");
    jg_buf_printf(out, "jobguard_policy_file_serving %d\n",
                  !atomic_load_explicit(&m.policy_file_refused, memory_order_relaxed));

    header(out, "jobguard_build_info", "gauge", "Always 1; the version label is the build.");
    jg_buf_printf(out, "jobguard_build_info{version=\"%s\"} 1\n", JG_VERSION);
}
