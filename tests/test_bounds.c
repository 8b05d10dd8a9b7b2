/* Output bounds (docs/limits.md): the worst shapes a request within the 7 MiB body limit can take
 * get a well-formed, bounded denial that names its first causes and says how many were left out;
 * quoted values and log values are cut with client-go's "[truncated N ...]" marker. */
#include "jobguard/admit.h"
#include "jobguard/decode.h"
#include "jobguard/server/log.h"
#include "jobguard/verdict.h"

#include <check.h>
#include <jansson.h>

#include "run_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The largest denial the bounds allow: message and causes each at most 6x (JSON escaping of
 * '<' as \u003c) the error text, plus each cause's own JSON. */
#define MAX_RESPONSE                                                                               \
    (12 * (size_t)JG_MAX_ERROR_TEXT + 12 * (size_t)JG_MAX_VALUE_BYTES + 100 * JG_MAX_CAUSES)

#define REVIEW_HEAD(sub, op)                                                                       \
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"           \
    "\"uid\":\"u\",\"kind\":{\"group\":\"batch\",\"version\":\"v1\",\"kind\":\"Job\"},"            \
    "\"resource\":{\"group\":\"batch\",\"version\":\"v1\",\"resource\":\"jobs\"}," sub             \
    "\"name\":\"worst\",\"namespace\":\"default\",\"operation\":\"" op "\","                       \
    "\"userInfo\":{\"username\":\"t\"},"
#define JOB_HEAD                                                                                   \
    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"worst\"},"             \
    "\"spec\":{\"parallelism\":5,\"completions\":5,\"completionMode\":\"NonIndexed\""
#define RUNNING                                                                                    \
    JOB_HEAD "},\"status\":{\"startTime\":\"2025-01-01T00:00:00Z\",\"active\":1,\"succeeded\":4,"  \
             "\"uncountedTerminatedPods\":{}}}"

/* A jobs/status UPDATE to a finished Job whose uncountedTerminatedPods.succeeded holds `items`
 * (JSON array elements, comma-separated). */
static void status_review(jg_buf *b, const char *items, size_t n) {
    jg_buf_reset(b);
    jg_buf_puts(
        b,
        REVIEW_HEAD(
            "\"subResource\":\"status\",",
            "UPDATE") "\"object\":" JOB_HEAD
                      "},\"status\":{\"conditions\":[{\"type\":\"SuccessCriteriaMet\",\"status\":"
                      "\"True\"},{\"type\":\"Complete\",\"status\":\"True\"}],\"startTime\":"
                      "\"2025-01-01T00:00:00Z\",\"completionTime\":\"2025-01-01T00:00:05Z\","
                      "\"succeeded\":5,\"uncountedTerminatedPods\":{\"succeeded\":[");
    jg_buf_put(b, items, n);
    jg_buf_puts(b, "]}}},\"oldObject\":" RUNNING "}}");
}

/* `n` copies of `item` joined by commas. */
static void repeat(jg_buf *b, const char *item, size_t n) {
    jg_buf_reset(b);
    size_t k = strlen(item);
    jg_buf_reserve(b, n * (k + 1));
    for (size_t i = 0; i < n; i++) {
        if (i) jg_buf_putc(b, ',');
        jg_buf_put(b, item, k);
    }
}

struct denial {
    json_t *root;
    json_t *status, *causes;
    const char *message;
    size_t bytes;
    struct jg_outcome o;
};

/* Decides `review`; asserts a 422 denial that jansson parses and that stays under MAX_RESPONSE. */
static void deny(const jg_buf *review, struct denial *d) {
    ck_assert_uint_le(review->len, JG_MAX_BODY_BYTES);
    jg_buf out = JG_BUF_INIT;
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_outcome_init(&d->o);
    ck_assert_int_eq(jg_admit(review->data, review->len, &cfg, &out, &d->o), JG_VERDICT_DENIED);
    ck_assert(!out.oom);
    d->bytes = out.len;
    ck_assert_uint_le(d->bytes, MAX_RESPONSE);
    json_error_t err;
    d->root = json_loadb(out.data, out.len, 0, &err);
    ck_assert_msg(d->root, "response is not JSON: %s", err.text);
    jg_buf_free(&out);
    d->status = json_object_get(json_object_get(d->root, "response"), "status");
    ck_assert_int_eq(json_integer_value(json_object_get(d->status, "code")), 422);
    d->causes = json_object_get(json_object_get(d->status, "details"), "causes");
    ck_assert(json_is_array(d->causes));
    d->message = json_string_value(json_object_get(d->status, "message"));
    ck_assert_ptr_nonnull(d->message);
}

static void denial_free(struct denial *d) {
    json_decref(d->root);
    jg_outcome_free(&d->o);
}

static const char *cause_str(const struct denial *d, size_t i, const char *key) {
    const char *s = json_string_value(json_object_get(json_array_get(d->causes, i), key));
    return s ? s : "(absent)";
}

/* String equality that reports where long strings first differ (Check cannot print them). */
static void expect_long_eq(const char *got, const char *want) {
    size_t i = 0;
    while (got[i] && got[i] == want[i])
        i++;
    ck_assert_msg(got[i] == want[i], "differ at byte %zu of %zu/%zu: got ...%.60s want ...%.60s", i,
                  strlen(got), strlen(want), got + (i > 20 ? i - 20 : 0),
                  want + (i > 20 ? i - 20 : 0));
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The first JG_MAX_CAUSES per-UID errors, then one cause and the message's end saying how many
 * more there were (`total` errors in all). */
static void expect_empty_uid_denial(const struct denial *d, size_t total) {
    ck_assert_uint_eq(d->o.n_errors, total);
    ck_assert(d->o.rules & (UINT64_C(1) << JG_R_UNCOUNTED_EMPTY));
    ck_assert(d->o.rules &
              (UINT64_C(1) << JG_R_FINISHED_WITH_UNCOUNTED)); /* omitted, still named */
    ck_assert_uint_eq(json_array_size(d->causes), JG_MAX_CAUSES + 1);
    for (size_t i = 0; i < JG_MAX_CAUSES; i += JG_MAX_CAUSES - 1) {
        char field[80];
        snprintf(field, sizeof field, "status.uncountedTerminatedPods.succeeded[%zu]", i);
        ck_assert_str_eq(cause_str(d, i, "reason"), "FieldValueInvalid");
        ck_assert_str_eq(cause_str(d, i, "field"), field);
        ck_assert_str_eq(cause_str(d, i, "message"), "Invalid value: \"\": must not be empty");
    }
    char note[64];
    snprintf(note, sizeof note, "[truncated %zu errors]", total - JG_MAX_CAUSES);
    json_t *last = json_array_get(d->causes, JG_MAX_CAUSES);
    ck_assert_str_eq(cause_str(d, JG_MAX_CAUSES, "reason"), "TooManyErrors");
    ck_assert_str_eq(cause_str(d, JG_MAX_CAUSES, "message"), note);
    ck_assert_ptr_null(json_object_get(last, "field"));
    ck_assert_msg(strncmp(d->message,
                          "Job.batch \"worst\" is invalid: [status.uncountedTerminatedPods."
                          "succeeded[0]: Invalid value: \"\": must not be empty, ",
                          110) == 0,
                  "%.200s", d->message);
    char tail[200];
    snprintf(tail, sizeof tail,
             "succeeded[%d]: Invalid value: \"\": must not be empty] [truncated %zu errors]",
             JG_MAX_CAUSES - 1, total - JG_MAX_CAUSES);
    ck_assert_msg(ends_with(d->message, tail), "message ends %s",
                  d->message + strlen(d->message) - 120);
}

START_TEST(empty_uids_400k) {
    jg_buf items = JG_BUF_INIT, review = JG_BUF_INIT;
    repeat(&items, "\"\"", 400000);
    status_review(&review, items.data, items.len);
    struct denial d;
    deny(&review, &d);
    expect_empty_uid_denial(&d, 400000 + 1); /* + must be empty for finished job */
    ck_assert_uint_lt(d.bytes, 1 << 20);
    denial_free(&d);
    jg_buf_free(&items);
    jg_buf_free(&review);
}
END_TEST

START_TEST(empty_uids_at_body_limit) {
    jg_buf items = JG_BUF_INIT, review = JG_BUF_INIT;
    status_review(&review, "", 0);
    size_t n = (JG_MAX_BODY_BYTES - review.len + 1) / 3; /* `"",` each */
    repeat(&items, "\"\"", n);
    status_review(&review, items.data, items.len);
    struct denial d;
    deny(&review, &d);
    expect_empty_uid_denial(&d, n + 1);
    ck_assert_uint_lt(d.bytes, 1 << 20);
    denial_free(&d);
    jg_buf_free(&items);
    jg_buf_free(&review);
}
END_TEST

/* UPDATE of the main resource whose managedBy is 7,000,000 '<' (old: none): the format and length
 * errors of both validation passes and the immutability error, each quoting the first 64 KiB. */
START_TEST(managed_by_lt_update) {
    enum { N = 7000000 };
    jg_buf review = JG_BUF_INIT;
    jg_buf_puts(&review, REVIEW_HEAD("", "UPDATE") "\"object\":" JOB_HEAD ",\"managedBy\":\"");
    jg_buf_reserve(&review, N + 4096);
    memset(review.data + review.len, '<', N);
    review.len += N;
    jg_buf_puts(&review, "\"}},\"oldObject\":" JOB_HEAD "}}}}");
    struct denial d;
    deny(&review, &d);
    ck_assert_uint_lt(d.bytes, 3 << 20);
    ck_assert_uint_eq(json_array_size(d.causes), 5);
    ck_assert_uint_eq(d.o.n_errors, 5);

    char marker[64];
    snprintf(marker, sizeof marker, "\" [truncated %d bytes]", N - JG_MAX_VALUE_BYTES);
    jg_buf want = JG_BUF_INIT;
    jg_buf_puts(&want, "Invalid value: \"");
    for (int i = 0; i < JG_MAX_VALUE_BYTES; i++)
        jg_buf_putc(&want, '<');
    jg_buf_puts(&want, marker);
    jg_buf_puts(&want, ": must be a domain-prefixed path (such as \"acme.io/foo\")");
    const char *too_long = "Too long: may not be more than 63 bytes";
    for (size_t i = 0; i < 4; i += 2) {
        ck_assert_str_eq(cause_str(&d, i, "field"), "spec.managedBy");
        expect_long_eq(cause_str(&d, i, "message"), want.data);
        ck_assert_str_eq(cause_str(&d, i + 1, "message"), too_long);
    }
    jg_buf_reset(&want);
    jg_buf_puts(&want, "Invalid value: \"");
    for (int i = 0; i < JG_MAX_VALUE_BYTES; i++)
        jg_buf_puts(&want, "\\u003c");
    jg_buf_puts(&want, marker);
    jg_buf_puts(&want, ": field is immutable");
    expect_long_eq(cause_str(&d, 4, "message"), want.data);
    ck_assert(strstr(d.message, " errors]") == NULL); /* nothing omitted */
    ck_assert(ends_with(d.message, "[truncated 6934464 bytes]: field is immutable]"));
    jg_buf_free(&want);
    denial_free(&d);
    jg_buf_free(&review);
}
END_TEST

/* Many distinct errors with long values: the 1 MiB of error text binds before the cause count. */
START_TEST(long_duplicate_uids) {
    enum { UIDS = 1000, LEN = 3000 };
    jg_buf items = JG_BUF_INIT, review = JG_BUF_INIT;
    for (int i = 0; i < UIDS; i++)
        for (int twice = 0; twice < 2; twice++) {
            if (items.len) jg_buf_putc(&items, ',');
            jg_buf_printf(&items, "\"%04d", i);
            for (int k = 4; k < LEN; k++)
                jg_buf_putc(&items, '<');
            jg_buf_putc(&items, '"');
        }
    status_review(&review, items.data, items.len);
    struct denial d;
    deny(&review, &d);
    size_t kept = json_array_size(d.causes) - 1, text = 0;
    ck_assert_uint_gt(kept, 10);
    ck_assert_uint_lt(kept, UIDS);
    for (size_t i = 0; i < kept; i++) {
        char field[80];
        snprintf(field, sizeof field, "status.uncountedTerminatedPods.succeeded[%zu]", 2 * i + 1);
        ck_assert_str_eq(cause_str(&d, i, "reason"), "FieldValueDuplicate");
        ck_assert_str_eq(cause_str(&d, i, "field"), field);
        text += strlen(field) + 2 + strlen(cause_str(&d, i, "message"));
    }
    ck_assert_uint_le(text, JG_MAX_ERROR_TEXT);
    char note[64];
    snprintf(note, sizeof note, "[truncated %zu errors]", UIDS + 1 - kept);
    ck_assert_str_eq(cause_str(&d, kept, "message"), note);
    ck_assert(ends_with(d.message, note));
    ck_assert_uint_eq(d.o.n_errors, UIDS + 1);
    denial_free(&d);
    jg_buf_free(&items);
    jg_buf_free(&review);
}
END_TEST

/* A value is cut at a character boundary: 'a' then 40,000 'é' (2 bytes) keeps 65,535 bytes. */
START_TEST(value_cut_at_character) {
    struct jg_errors e;
    jg_errors_init(&e);
    jg_buf v = JG_BUF_INIT;
    jg_buf_putc(&v, 'a');
    for (int i = 0; i < 40000; i++)
        jg_buf_puts(&v, "\xc3\xa9");
    jg_err_invalid_gostr(&e, 0, "spec.managedBy", (jg_str){v.data, v.len}, "detail");
    ck_assert_uint_eq(e.n, 1);
    jg_str body = jg_err_body(&e, 0);
    const char *want_end = "\xc3\xa9\" [truncated 14466 bytes]: detail";
    ck_assert_uint_eq(body.n, strlen("Invalid value: \"") + 65535 + strlen(want_end) - 2);
    ck_assert(memcmp(body.p + body.n - strlen(want_end), want_end, strlen(want_end)) == 0);
    jg_buf_free(&v);
    jg_errors_free(&e);
}
END_TEST

/* The uncountedTerminatedPods value lists items within 64 KiB, then counts the rest. */
START_TEST(uncounted_value_items) {
    enum { UIDS = 30000 };
    jg_buf items = JG_BUF_INIT, review = JG_BUF_INIT;
    for (int i = 0; i < UIDS; i++)
        jg_buf_printf(&items, "%s\"u%05d\"", i ? "," : "", i);
    status_review(&review, items.data, items.len);
    struct denial d;
    deny(&review, &d);
    ck_assert_uint_eq(json_array_size(d.causes), 1);
    ck_assert_str_eq(cause_str(&d, 0, "field"), "status.uncountedTerminatedPods");
    /* 7,282 items of 6 bytes, each counted with its quotes and comma (9 bytes), fill 65,536 */
    ck_assert(ends_with(cause_str(&d, 0, "message"),
                        ",\"u07281\" [truncated 22718 items]],"
                        "\"Failed\":null}: must be empty for finished job"));
    denial_free(&d);
    jg_buf_free(&items);
    jg_buf_free(&review);
}
END_TEST

/* One distinct error repeated past the cause cap: the single-error form, then the note. */
START_TEST(message_note_single_distinct) {
    struct jg_errors e;
    jg_errors_init(&e);
    for (int i = 0; i < JG_MAX_CAUSES + 1; i++)
        jg_err_invalid_omit(&e, 0, "status.conditions", "same");
    ck_assert_uint_eq(e.n, JG_MAX_CAUSES);
    ck_assert_uint_eq(e.omitted, 1);
    jg_buf m = JG_BUF_INIT;
    jg_render_message(&e, "Job", "batch", (jg_str){"j", 1}, &m);
    ck_assert_str_eq(m.data, "Job.batch \"j\" is invalid: status.conditions: Invalid value: same "
                             "[truncated 1 error]");
    jg_buf_free(&m);
    jg_errors_free(&e);
}
END_TEST

/* A log line with a 1 MB value stays one bounded JSON line. */
START_TEST(log_value_cut) {
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    jg_log_setup(JG_LOG_INFO, JG_LOG_FORMAT_JSON, fileno(f));
    size_t n = 1000000;
    char *v = malloc(n);
    memset(v, '<', n);
    struct jg_log l;
    ck_assert(jg_log_begin(&l, JG_LOG_INFO, "admission denied"));
    jg_log_strn(&l, "message", v, n);
    jg_log_end(&l);
    free(v);
    long size = ftell(f);
    ck_assert_int_lt(size, 6 * JG_LOG_MAX_VALUE + 200);
    rewind(f);
    json_error_t err;
    json_t *line = json_loadf(f, 0, &err);
    ck_assert_msg(line, "log line is not JSON: %s", err.text);
    const char *m = json_string_value(json_object_get(line, "message"));
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(strspn(m, "<"), JG_LOG_MAX_VALUE);
    ck_assert_str_eq(m + JG_LOG_MAX_VALUE, " [truncated 995904 bytes]");
    json_decref(line);
    fclose(f);
}
END_TEST

/* The request fields of an admission line as the server logs them, for a Job CREATE by `user`
 * with request uid `uid`. */
static json_t *logged_request(const char *user, const char *uid) {
    jg_buf review = JG_BUF_INIT, out = JG_BUF_INIT;
    jg_buf_puts(&review, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                         "\"request\":{\"uid\":");
    jg_buf_json_string(&review, uid, strlen(uid));
    jg_buf_puts(&review, ",\"resource\":{\"group\":\"batch\",\"version\":\"v1\",\"resource\":"
                         "\"jobs\"},\"name\":\"j\",\"namespace\":\"d\",\"operation\":\"CREATE\","
                         "\"userInfo\":{\"username\":");
    jg_buf_json_string(&review, user, strlen(user));
    jg_buf_puts(&review, "},\"object\":" JOB_HEAD "}}}}");
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    struct jg_outcome o;
    jg_outcome_init(&o);
    ck_assert_int_eq(jg_admit(review.data, review.len, &cfg, &out, &o), JG_VERDICT_ALLOWED);
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    jg_log_setup(JG_LOG_INFO, JG_LOG_FORMAT_JSON, fileno(f));
    struct jg_log l;
    ck_assert(jg_log_begin(&l, JG_LOG_INFO, "admission denied"));
    jg_log_request(&l, &o);
    jg_log_end(&l);
    rewind(f);
    json_error_t err;
    json_t *line = json_loadf(f, 0, &err);
    ck_assert_msg(line, "log line is not JSON: %s", err.text);
    fclose(f);
    jg_outcome_free(&o);
    jg_buf_free(&review);
    jg_buf_free(&out);
    return line;
}

/* A service account's full name (339 bytes at most) is logged whole; a longer user or uid keeps
 * its first bytes, at a character boundary, and says how many it lost. */
START_TEST(log_request_fields_cut_marked) {
    char sa[400], ns[64], name[254];
    memset(ns, 'n', 63);
    ns[63] = '\0';
    memset(name, 'a', 253);
    name[253] = '\0';
    snprintf(sa, sizeof sa, "system:serviceaccount:%s:%s", ns, name);
    ck_assert_uint_eq(strlen(sa), 339);
    json_t *line = logged_request(sa, "u");
    ck_assert_str_eq(json_string_value(json_object_get(line, "user")), sa);
    json_decref(line);

    char user[800] = "u", want[800];
    for (int i = 0; i < 350; i++)
        strcat(user, "\xc3\xa9"); /* é: 701 bytes in all */
    char uid[300];
    memset(uid, '7', 299);
    uid[299] = '\0';
    line = logged_request(user, uid);
    /* 512 bytes of room, 22 of them for " [truncated 701 bytes]": 489 bytes kept (byte 490 is
     * inside an é) */
    snprintf(want, sizeof want, "%.489s [truncated 212 bytes]", user);
    ck_assert_str_eq(json_string_value(json_object_get(line, "user")), want);
    /* the uid (Kubernetes sends 36 bytes): 127 bytes of room, 22 for the marker */
    snprintf(want, sizeof want, "%.105s [truncated 194 bytes]", uid);
    ck_assert_str_eq(json_string_value(json_object_get(line, "uid")), want);
    json_decref(line);
}
END_TEST

/* A JobSet CREATE up to the body limit whose every replicated Job template names another
 * controller: one Target-NestedManagedBy error per element, bounded like any list; on UPDATE of
 * named elements (replicatedJobs is keyed by name) rotated by one, so that no copy is where the
 * stored one was, every copy is looked up by key in the stored object (the sorted path) and only
 * the one new element's copy is refused. */
#define JOBSET_HEAD(op)                                                                            \
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":"   \
    "\"u\",\"resource\":{\"group\":\"jobset.x-k8s.io\",\"version\":\"v1alpha2\",\"resource\":"     \
    "\"jobsets\"},\"name\":\"big\",\"namespace\":\"d\",\"operation\":\"" op "\",\"userInfo\":{"    \
    "\"username\":\"a\"},"
#define JOBSET_OBJ                                                                                 \
    "{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\",\"metadata\":{\"name\":"     \
    "\"big\"},\"spec\":{\"replicatedJobs\":["
#define COPY "{\"template\":{\"spec\":{\"managedBy\":\"kueue.x-k8s.io/multikueue\"}}}"
#define NAMED_COPY "{\"name\":\"r%07zu\",\"template\":{\"spec\":{\"managedBy\":\"x.io/y\"}}}"

/* Elements first .. first + n - 1 (mod n) of n named copies, comma-separated. */
static void named_copies(jg_buf *b, size_t n, size_t first) {
    jg_buf_reset(b);
    for (size_t i = 0; i < n; i++) {
        if (i) jg_buf_putc(b, ',');
        jg_buf_printf(b, NAMED_COPY, (first + i) % n);
    }
}

START_TEST(jobset_nested_copies_at_body_limit) {
    jg_buf items = JG_BUF_INIT, review = JG_BUF_INIT;
    size_t n = (JG_MAX_BODY_BYTES - 1024) / (sizeof COPY);
    repeat(&items, COPY, n);
    jg_buf_puts(&review, JOBSET_HEAD("CREATE") "\"object\":" JOBSET_OBJ);
    jg_buf_put(&review, items.data, items.len);
    jg_buf_puts(&review, "]}}}}");
    struct denial d;
    deny(&review, &d);
    ck_assert_uint_eq(d.o.n_errors, n);
    ck_assert_uint_eq(json_array_size(d.causes), JG_MAX_CAUSES + 1);
    ck_assert_str_eq(cause_str(&d, 1999, "field"),
                     "spec.replicatedJobs[1999].template.spec.managedBy");
    ck_assert_str_eq(cause_str(&d, 0, "reason"), "FieldValueNotSupported");
    char note[64];
    snprintf(note, sizeof note, "[truncated %zu errors]", n - JG_MAX_CAUSES);
    ck_assert(ends_with(d.message, note));
    denial_free(&d);

    /* UPDATE: the stored elements r0..r(m-1), the new ones rotated by one (r(m-1) first) and a
     * new element "extra" at the end with the same value: no copy is where it was stored, each
     * is found by its element's name; "extra" has no stored copy */
    char one[128];
    size_t m = (JG_MAX_BODY_BYTES - 1024) / 2 /
                   ((size_t)snprintf(one, sizeof one, NAMED_COPY, (size_t)0) + 1) -
               2;
    jg_buf_reset(&review);
    jg_buf_puts(&review, JOBSET_HEAD("UPDATE") "\"object\":" JOBSET_OBJ);
    named_copies(&items, m, m - 1);
    jg_buf_put(&review, items.data, items.len);
    jg_buf_puts(&review, ",{\"name\":\"extra\",\"template\":{\"spec\":{\"managedBy\":\"x.io/y\"}}}"
                         "]}},\"oldObject\":" JOBSET_OBJ);
    named_copies(&items, m, 0);
    jg_buf_put(&review, items.data, items.len);
    jg_buf_puts(&review, "]}}}}");
    ck_assert_uint_le(review.len, JG_MAX_BODY_BYTES);
    deny(&review, &d);
    ck_assert_uint_eq(d.o.n_errors, 1);
    char field[80];
    snprintf(field, sizeof field, "spec.replicatedJobs[%zu].template.spec.managedBy", m);
    ck_assert_str_eq(cause_str(&d, 0, "field"), field);
    denial_free(&d);
    jg_buf_free(&items);
    jg_buf_free(&review);
}
END_TEST

/* The same refused copies in warn and audit mode, at the cause limit and one past it: the
 * warnings that fit are written whatever the list left out, and the note (and the audit value's
 * marker) counts exactly what is not shown. */
static json_t *allowed_response(size_t copies, enum jg_mode mode) {
    jg_buf items = JG_BUF_INIT, review = JG_BUF_INIT, out = JG_BUF_INIT;
    repeat(&items, COPY, copies);
    jg_buf_puts(&review, JOBSET_HEAD("CREATE") "\"object\":" JOBSET_OBJ);
    jg_buf_put(&review, items.data, items.len);
    jg_buf_puts(&review, "]}}}}");
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    cfg.mode[JG_R_TARGET_NESTED_MANAGED_BY] = mode;
    ck_assert_int_eq(jg_admit(review.data, review.len, &cfg, &out, NULL), JG_VERDICT_ALLOWED);
    ck_assert(!out.oom);
    json_error_t err;
    json_t *root = json_loadb(out.data, out.len, 0, &err);
    ck_assert_msg(root, "response is not JSON: %s", err.text);
    jg_buf_free(&items);
    jg_buf_free(&review);
    jg_buf_free(&out);
    return root;
}

START_TEST(jobset_nested_copies_warn_and_audit) {
    size_t shown = 0;
    for (size_t copies = JG_MAX_CAUSES; copies <= JG_MAX_CAUSES + 1; copies++) {
        json_t *root = allowed_response(copies, JG_MODE_WARN);
        json_t *w = json_object_get(json_object_get(root, "response"), "warnings");
        size_t n = json_array_size(w);
        ck_assert_uint_gt(n, 1);
        if (copies == JG_MAX_CAUSES) shown = n - 1;
        ck_assert_uint_eq(n - 1, shown); /* one more copy changes nothing but the count */
        ck_assert_str_eq(json_string_value(json_array_get(w, 0)),
                         "jobguard (Target-NestedManagedBy, warn mode; denied in deny mode): "
                         "spec.replicatedJobs[0].template.spec.managedBy: Unsupported value: "
                         "\"kueue.x-k8s.io/multikueue\": supported values: "
                         "\"kubernetes.io/job-controller\"");
        char note[64];
        snprintf(note, sizeof note, "jobguard: %zu more warnings omitted", copies - shown);
        ck_assert_str_eq(json_string_value(json_array_get(w, n - 1)), note);
        json_decref(root);

        root = allowed_response(copies, JG_MODE_AUDIT);
        const char *v = json_string_value(
            json_object_get(json_object_get(json_object_get(root, "response"), "auditAnnotations"),
                            "Target-NestedManagedBy"));
        ck_assert_ptr_nonnull(v);
        ck_assert_uint_le(strlen(v), JG_MAX_AUDIT_VALUE_BYTES);
        ck_assert_int_eq(v[0], '['); /* the aggregate, cut at its byte limit */
        ck_assert_ptr_nonnull(strstr(v, " bytes]"));
        if (copies > JG_MAX_CAUSES) /* and the copy left out of the list */
            ck_assert(ends_with(v, " bytes] [truncated 1 error]"));
        else
            ck_assert(ends_with(v, " bytes]"));
        json_decref(root);
    }
}
END_TEST

/* The `admission audit` line's errors for `review` decided with every rule in audit mode, as the
 * server logs them (jg_log_errors). */
static json_t *audit_line(const jg_buf *review) {
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    memset(cfg.mode, JG_MODE_AUDIT, sizeof cfg.mode);
    struct jg_outcome o;
    jg_outcome_init(&o);
    jg_buf out = JG_BUF_INIT;
    ck_assert_int_eq(jg_admit(review->data, review->len, &cfg, &out, &o), JG_VERDICT_ALLOWED);
    ck_assert_uint_ne(o.rules_audit, 0);
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    jg_log_setup(JG_LOG_INFO, JG_LOG_FORMAT_JSON, fileno(f));
    struct jg_log l;
    ck_assert(jg_log_begin(&l, JG_LOG_INFO, "admission audit"));
    jg_log_errors(&l, "errors", &o.audit);
    jg_log_end(&l);
    ck_assert_int_lt(ftell(f), JG_LOG_MAX_ERRORS * 4 * (JG_LOG_MAX_ERROR_VALUE + 64) + 200);
    rewind(f);
    json_error_t err;
    json_t *line = json_loadf(f, 0, &err);
    ck_assert_msg(line, "log line is not JSON: %s", err.text);
    fclose(f);
    jg_outcome_free(&o);
    jg_buf_free(&out);
    return line;
}

static const char *member(json_t *line, size_t i, const char *key) {
    return json_string_value(
        json_object_get(json_array_get(json_object_get(line, "errors"), i), key));
}

/* The audit line carries each audited error's rule, field, value and message: a 6 KB managedBy
 * value is cut at JG_LOG_MAX_ERROR_VALUE with the marker, the UPDATE's repeated format error is
 * listed once, an error without a value has no "value"; past JG_LOG_MAX_ERRORS the rest is
 * counted. */
START_TEST(log_audit_errors) {
    jg_buf review = JG_BUF_INIT, path = JG_BUF_INIT;
    repeat(&path, "a b", 2000); /* "a b,a b,...": a space is not allowed in the path */
    jg_buf_puts(&review,
                REVIEW_HEAD("", "UPDATE") "\"object\":" JOB_HEAD ",\"managedBy\":\"acme.io/");
    jg_buf_put(&review, path.data, path.len);
    jg_buf_puts(&review, "\"}},\"oldObject\":" JOB_HEAD ",\"managedBy\":\"acme.io/");
    jg_buf_put(&review, path.data, path.len);
    jg_buf_puts(&review, "\"}}}}");
    json_t *line = audit_line(&review);
    ck_assert_uint_eq(json_array_size(json_object_get(line, "errors")), 2);
    ck_assert_ptr_null(json_object_get(line, "errors_omitted"));
    ck_assert_str_eq(member(line, 0, "rule"), "ALWAYS-ManagedByFormat");
    ck_assert_str_eq(member(line, 0, "field"), "spec.managedBy");
    const char *v = member(line, 0, "value"), *m = member(line, 0, "message");
    ck_assert_int_eq(strncmp(v, "\"a b,a b", 8), 0);
    char marker[64];
    snprintf(marker, sizeof marker, " [truncated %zu bytes]",
             path.len + 2 - JG_LOG_MAX_ERROR_VALUE);
    ck_assert_uint_eq(strlen(v), JG_LOG_MAX_ERROR_VALUE + strlen(marker));
    ck_assert(ends_with(v, marker));
    ck_assert_int_eq(strncmp(m, "Invalid value: \"a b,a b", 23), 0);
    ck_assert(ends_with(m, " bytes]"));
    ck_assert_str_eq(member(line, 1, "rule"), "ALWAYS-ManagedByLength");
    ck_assert_ptr_null(member(line, 1, "value")); /* Too long: the value is omitted upstream */
    ck_assert_str_eq(member(line, 1, "message"), "Too long: may not be more than 63 bytes");
    json_decref(line);

    /* 2,001 refused nested copies: 8 listed, 1,993 counted (one of them left out by the list) */
    jg_buf items = JG_BUF_INIT;
    repeat(&items, COPY, JG_MAX_CAUSES + 1);
    jg_buf_reset(&review);
    jg_buf_puts(&review, JOBSET_HEAD("CREATE") "\"object\":" JOBSET_OBJ);
    jg_buf_put(&review, items.data, items.len);
    jg_buf_puts(&review, "]}}}}");
    line = audit_line(&review);
    ck_assert_uint_eq(json_array_size(json_object_get(line, "errors")), JG_LOG_MAX_ERRORS);
    ck_assert_int_eq(json_integer_value(json_object_get(line, "errors_omitted")),
                     JG_MAX_CAUSES + 1 - JG_LOG_MAX_ERRORS);
    ck_assert_str_eq(member(line, 7, "field"), "spec.replicatedJobs[7].template.spec.managedBy");
    ck_assert_str_eq(member(line, 7, "value"), "\"kueue.x-k8s.io/multikueue\"");
    ck_assert_str_eq(member(line, 7, "message"),
                     "Unsupported value: \"kueue.x-k8s.io/multikueue\": "
                     "supported values: \"kubernetes.io/job-controller\"");
    json_decref(line);
    jg_buf_free(&items);
    jg_buf_free(&path);
    jg_buf_free(&review);
}
END_TEST

int main(void) {
    Suite *s = suite_create("bounds");
    struct {
        const char *name;
        const TTest *t;
    } tests[] = {
        {"shapes", empty_uids_400k},
        {"shapes", empty_uids_at_body_limit},
        {"shapes", managed_by_lt_update},
        {"shapes", long_duplicate_uids},
        {"shapes", jobset_nested_copies_at_body_limit},
        {"shapes", jobset_nested_copies_warn_and_audit},
        {"values", value_cut_at_character},
        {"values", uncounted_value_items},
        {"message", message_note_single_distinct},
        {"log", log_value_cut},
        {"log", log_request_fields_cut_marked},
        {"log", log_audit_errors},
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        TCase *tc = tcase_create(tests[i].name);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, tests[i].t);
        suite_add_tcase(s, tc);
    }
    return run_suite(s);
}
