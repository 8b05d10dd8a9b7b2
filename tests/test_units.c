/* Unit tests per module: index grammar (docs/rules.md §4), managedBy format (§2.2-2.3), rendering
 * and escaping (§2.6), and the decoder's refusals. Rule gates are in test_rules.c. */
#include "jobguard/admit.h"
#include "jobguard/decode.h"
#include "jobguard/indexes.h"
#include "jobguard/match.h"
#include "jobguard/rules.h"

#include <check.h>
#include <fnmatch.h>

#include "run_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jg_str S(const char *s) {
    return (jg_str){s, strlen(s)};
}

/* ---- §4 index lists ---- */

static void expect_index(const char *list, int32_t c, const char *want_err) {
    jg_buf err = JG_BUF_INIT;
    bool ok = jg_index_list_valid(S(list), c, &err);
    if (!want_err) {
        ck_assert_msg(ok, "%s (C=%d) should be valid, got: %s", list, c, err.data);
    } else {
        ck_assert_msg(!ok, "%s (C=%d) should be invalid", list, c);
        ck_assert_str_eq(err.data, want_err);
    }
    jg_buf_free(&err);
}

START_TEST(index_grammar) {
    expect_index("", 0, NULL);
    expect_index("", 5, NULL);
    expect_index("0", 5, NULL);
    expect_index("0-4", 5, NULL);
    expect_index("1,2,3", 5, NULL);
    expect_index("1-2", 5, NULL);
    expect_index("0-1,2", 5, NULL);
    expect_index("+1", 5, NULL);
    expect_index("01", 5, NULL);
    expect_index("0-5", 5, "too large index: \"5\"");
    expect_index("5", 5, "too large index: \"5\"");
    expect_index("0", 0, "too large index: \"0\"");
    expect_index("1,1", 5, "non-increasing order, previous: 1, current: 1");
    expect_index("3-3", 5, "non-increasing order, previous: 3, current: 3");
    expect_index("2,1", 5, "non-increasing order, previous: 2, current: 1");
    expect_index("0-2,2-3", 5, "non-increasing order, previous: 2, current: 2");
    expect_index(" 1", 5, "cannot convert string to integer for index: \" 1\"");
    expect_index("1,", 5, "cannot convert string to integer for index: \"\"");
    expect_index(",1", 5, "cannot convert string to integer for index: \"\"");
    expect_index("-1", 5, "cannot convert string to integer for index: \"\"");
    expect_index("1-2-3", 5,
                 "the fragment \"1-2-3\" violates the requirement that an index interval can have "
                 "at most two parts separated by '-'");
    expect_index("1_0", 20, "cannot convert string to integer for index: \"1_0\"");
    expect_index("+", 5, "cannot convert string to integer for index: \"+\"");
    expect_index("9223372036854775807", 5, "too large index: \"9223372036854775807\"");
    expect_index("9223372036854775808", 5,
                 "cannot convert string to integer for index: \"9223372036854775808\"");
    expect_index("1-x", 5, "cannot convert string to integer for index: \"x\"");
    /* x's bound is checked before part 2 is parsed */
    expect_index("7-x", 5, "too large index: \"7\"");
    /* the interval is parsed whole before the order across intervals is checked */
    expect_index("2,1-x", 5, "cannot convert string to integer for index: \"x\"");
    expect_index("a\nb", 5, "cannot convert string to integer for index: \"a\\nb\"");
}
END_TEST

static void expect_overlap(const char *c, const char *f, int32_t n, long long want) {
    int64_t at = -1;
    bool got = jg_index_lists_overlap(S(c), S(f), n, &at);
    if (want < 0) {
        ck_assert_msg(!got, "completed %s failed %s: unexpected overlap at %lld", c, f,
                      (long long)at);
    } else {
        ck_assert_msg(got, "completed %s failed %s: overlap at %lld expected", c, f, want);
        ck_assert_int_eq(at, want);
    }
}

START_TEST(index_overlap) {
    expect_overlap("0-2", "2", 5, 2);
    expect_overlap("0-2", "3-4", 5, -1);
    expect_overlap("", "1", 5, -1);
    expect_overlap("1", "", 5, -1);
    expect_overlap("1,3", "0,2,4", 5, -1);
    expect_overlap("1-3", "0-1", 5, 1);
    expect_overlap("0,3-4", "1,4", 5, 4);
    /* §4.3: unsorted input can hide an overlap; unparsable intervals are skipped */
    expect_overlap("4,1", "1", 5, -1);
    expect_overlap("5,1", "1", 5, 1);
    expect_overlap("x,2", "y,2", 5, 2);
}
END_TEST

/* ---- §2.2 / §2.3 managedBy ---- */

static const char SUBDOMAIN[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
static const char PATH[] =
    "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')";

/* Checks v and compares the rendered "field: body" lines joined by '|'. */
static void expect_mb(const char *v, size_t n, const char *want) {
    struct jg_errors e;
    jg_errors_init(&e);
    jg_check_managed_by((jg_str){v, n}, "spec.managedBy", &e);
    jg_buf got = JG_BUF_INIT;
    for (size_t i = 0; i < e.n; i++) {
        jg_str f = jg_err_field(&e, i), b = jg_err_body(&e, i);
        if (i) jg_buf_putc(&got, '|');
        jg_buf_put(&got, f.p, f.n);
        jg_buf_put(&got, ": ", 2);
        jg_buf_put(&got, b.p, b.n);
    }
    ck_assert_str_eq(got.data ? got.data : "", want);
    jg_buf_free(&got);
    jg_errors_free(&e);
}
#define MB(v, want) expect_mb(v, strlen(v), want)

START_TEST(managed_by_format) {
    MB("kubernetes.io/job-controller", "");
    MB("acme.io/foo", "");
    MB("acme/foo", "");
    MB("foo.io/bar/baz", "");
    MB("acme.io//", "");
    MB("acme.io/%zz", "");
    MB("acme.io/a&b=c;d:e+f", "");
    MB("a/~!$&'()*+,;=:%._-AZaz09", "");
    MB("", "spec.managedBy: Required value");
    MB("acme.io", "spec.managedBy: Invalid value: \"acme.io\": must be a domain-prefixed path "
                  "(such as \"acme.io/foo\")");
    MB("/foo", "spec.managedBy: Invalid value: \"/foo\": must be a domain-prefixed path (such as "
               "\"acme.io/foo\")");
    MB("acme.io/", "spec.managedBy: Invalid value: \"acme.io/\": must be a domain-prefixed path "
                   "(such as \"acme.io/foo\")");
    char want[1024];
    const char *bad_hosts[] = {"Acme.io", "acme_io", "-a", "a..b", ".io", "a.", "a-", "a.-b"};
    for (size_t i = 0; i < sizeof bad_hosts / sizeof bad_hosts[0]; i++) {
        char v[64];
        snprintf(v, sizeof v, "%s/foo", bad_hosts[i]);
        snprintf(want, sizeof want, "spec.managedBy: Invalid value: \"%s\": %s", bad_hosts[i],
                 SUBDOMAIN);
        MB(v, want);
    }
    snprintf(want, sizeof want, "spec.managedBy: Invalid value: \"foo bar\": %s", PATH);
    MB("acme.io/foo bar", want);
    snprintf(want, sizeof want, "spec.managedBy: Invalid value: \"foo?x\": %s", PATH);
    MB("acme.io/foo?x", want);
    snprintf(want, sizeof want, "spec.managedBy: Invalid value: \"föo\": %s", PATH);
    MB("acme.io/föo", want);
    /* RE2 `$` is end of text: a trailing newline fails, rendered by %q */
    snprintf(want, sizeof want, "spec.managedBy: Invalid value: \"foo\\n\": %s", PATH);
    MB("acme.io/foo\n", want);
    snprintf(want, sizeof want,
             "spec.managedBy: Invalid value: \"A\": %s|spec.managedBy: Invalid value: \" b\": %s",
             SUBDOMAIN, PATH);
    MB("A/ b", want);
    /* NUL bytes are data, not terminators */
    snprintf(want, sizeof want, "spec.managedBy: Invalid value: \"a\\x00\": %s", PATH);
    expect_mb("acme.io/a\0", 10, want);
}
END_TEST

START_TEST(managed_by_length) {
    char v[300];
    /* exactly 63 bytes */
    memset(v, 'a', 63);
    memcpy(v, "acme.io/", 8);
    v[63] = '\0';
    MB(v, "");
    v[63] = 'a';
    v[64] = '\0';
    MB(v, "spec.managedBy: Too long: may not be more than 63 bytes");
    /* bytes, not characters: 31 two-byte runes in the path */
    char u[80] = "a/";
    for (int i = 0; i < 31; i++)
        strcat(u, "é");
    ck_assert_int_eq(strlen(u), 64);
    char w[1024];
    snprintf(w, sizeof w,
             "spec.managedBy: Invalid value: \"%s\": %s|spec.managedBy: Too long: may not be more "
             "than 63 bytes",
             u + 2, PATH);
    MB(u, w);
    /* 254-char single-label host: length error, no regex error, then TooLong */
    memset(v, 'h', 254);
    memcpy(v + 254, "/x", 3);
    char host[255];
    memcpy(host, v, 254);
    host[254] = '\0';
    char big[1024];
    snprintf(big, sizeof big,
             "spec.managedBy: Invalid value: \"%s\": must be no more than 253 characters|"
             "spec.managedBy: Too long: may not be more than 63 bytes",
             host);
    MB(v, big);
}
END_TEST

/* ---- §2.6 rendering and escaping ---- */

static void expect_quote(const char *in, size_t n, const char *go, const char *json) {
    jg_buf b = JG_BUF_INIT;
    jg_buf_go_quote(&b, in, n);
    ck_assert_str_eq(b.data, go);
    jg_buf_reset(&b);
    jg_buf_json_string(&b, in, n);
    ck_assert_str_eq(b.data, json);
    jg_buf_free(&b);
}
#define Q(in, go, json) expect_quote(in, sizeof(in) - 1, go, json)

START_TEST(render_escaping) {
    Q("plain", "\"plain\"", "\"plain\"");
    Q("a\"b\\c", "\"a\\\"b\\\\c\"", "\"a\\\"b\\\\c\"");
    Q("a&b<c>d", "\"a&b<c>d\"", "\"a\\u0026b\\u003cc\\u003ed\"");
    Q("\n\t\r", "\"\\n\\t\\r\"", "\"\\n\\t\\r\"");
    Q("\b\f\a\v", "\"\\b\\f\\a\\v\"", "\"\\b\\f\\u0007\\u000b\"");
    Q("\x01\x1f\x7f", "\"\\x01\\x1f\\x7f\"", "\"\\u0001\\u001f\x7f\"");
    Q("f\xc3\xb6o", "\"f\xc3\xb6o\"", "\"f\xc3\xb6o\"");              /* ö printable */
    Q("\xe2\x80\xa8", "\"\\u2028\"", "\"\\u2028\"");                  /* LINE SEPARATOR */
    Q("\xc2\xa0", "\"\\u00a0\"", "\"\xc2\xa0\"");                     /* NBSP: not IsPrint */
    Q("\xef\xbb\xbf", "\"\\ufeff\"", "\"\xef\xbb\xbf\"");             /* BOM */
    Q("\xf3\xb0\x80\x80", "\"\\U000f0000\"", "\"\xf3\xb0\x80\x80\""); /* plane 15 private use */
    Q("\xff", "\"\\xff\"", "\"\\ufffd\"");                            /* invalid UTF-8 */
    Q("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"", "\"\xf0\x9f\x98\x80\""); /* emoji */
    Q("\0", "\"\\x00\"", "\"\\u0000\"");
}
END_TEST

static void expect_time(const char *in, bool ok, long long sec, int nsec) {
    int64_t s;
    int32_t ns;
    bool got = jg_parse_rfc3339(in, strlen(in), &s, &ns);
    ck_assert_msg(got == ok, "%s: parse %s", in, got ? "succeeded" : "failed");
    if (ok) {
        ck_assert_int_eq(s, sec);
        ck_assert_int_eq(ns, nsec);
    }
}

START_TEST(render_time) {
    expect_time("2025-01-02T03:04:05Z", true, 1735787045, 0);
    expect_time("2025-01-02T04:04:05+01:00", true, 1735787045, 0);
    expect_time("2025-01-02T03:04:05.5Z", true, 1735787045, 500000000);
    expect_time("1970-01-01T00:00:00Z", true, 0, 0);
    expect_time("2024-02-29T00:00:00Z", true, 1709164800, 0);
    expect_time("2025-02-29T00:00:00Z", false, 0, 0);
    expect_time("2025-01-02 03:04:05Z", false, 0, 0);
    expect_time("2025-01-02T03:04:05", false, 0, 0);
    expect_time("2025-01-02T03:04:05z", false, 0, 0);
    expect_time("2025-01-02T24:00:00Z", false, 0, 0);
    expect_time("2025-13-02T03:04:05Z", false, 0, 0);
    expect_time("2025-01-02T03:04:05.Z", false, 0, 0);
    expect_time("", false, 0, 0);
    jg_buf b = JG_BUF_INIT;
    jg_buf_put_time(&b, 1735787045);
    ck_assert_str_eq(b.data, "2025-01-02T03:04:05Z");
    jg_buf_reset(&b);
    jg_buf_put_time(&b, -1);
    ck_assert_str_eq(b.data, "1969-12-31T23:59:59Z");
    jg_buf_free(&b);

    struct jg_errors e;
    jg_errors_init(&e);
    jg_err_invalid_time(&e, 0, "status.completionTime", (jg_time){true, 1735787045, 999}, "d");
    jg_err_invalid_time(&e, 0, "status.startTime", (jg_time){false, 0, 0}, "d");
    jg_err_invalid_time(&e, 0, "status.startTime", (jg_time){true, -62135596800LL, 0}, "d");
    ck_assert_str_eq(jg_err_body(&e, 0).p, "Invalid value: \"2025-01-02T03:04:05Z\": d"
                                           "status.startTimeInvalid value: null: d"
                                           "status.startTimeInvalid value: null: d");
    jg_errors_free(&e);
}
END_TEST

START_TEST(render_aggregate) {
    struct jg_errors e;
    jg_errors_init(&e);
    jg_buf m = JG_BUF_INIT;
    jg_render_message(&e, "Job", "batch", S("j"), &m);
    ck_assert_str_eq(m.data, "Job.batch \"j\" is invalid");
    jg_err_required(&e, 0, "spec.managedBy", "");
    jg_buf_reset(&m);
    jg_render_message(&e, "Job", "batch", S("j"), &m);
    ck_assert_str_eq(m.data, "Job.batch \"j\" is invalid: spec.managedBy: Required value");
    jg_err_required(&e, 0, "spec.managedBy", ""); /* duplicate: dropped from the message */
    jg_buf_reset(&m);
    jg_render_message(&e, "Job", "batch", S("j"), &m);
    ck_assert_str_eq(m.data, "Job.batch \"j\" is invalid: spec.managedBy: Required value");
    jg_err_invalid_jsonstr(&e, 0, "spec.managedBy", (jg_opt_str){false, {"", 0}},
                           "field is immutable");
    jg_buf_reset(&m);
    jg_render_message(&e, "CronJob", "batch", S("we\"ird"), &m);
    ck_assert_str_eq(m.data, "CronJob.batch \"we\\\"ird\" is invalid: [spec.managedBy: Required "
                             "value, spec.managedBy: Invalid value: null: field is immutable]");
    ck_assert_int_eq(e.n, 3);
    ck_assert_str_eq(jg_err_reason(e.v[2].type), "FieldValueInvalid");
    jg_err_too_long(&e, 0, "spec.managedBy", 63);
    jg_err_duplicate_json(&e, 0, "status.uncountedTerminatedPods.failed[0]", S("a&b"));
    ck_assert_str_eq(jg_err_reason(e.v[3].type), "FieldValueTooLong");
    ck_assert_str_eq(jg_err_reason(e.v[4].type), "FieldValueDuplicate");
    jg_str b = jg_err_body(&e, 4);
    ck_assert_int_eq(b.n, strlen("Duplicate value: \"a\\u0026b\""));
    ck_assert(memcmp(b.p, "Duplicate value: \"a\\u0026b\"", b.n) == 0);
    jg_buf_free(&m);
    jg_errors_free(&e);
}
END_TEST

/* ---- decoder refusals: each names the field and the problem ---- */

static const char *REVIEW_HEAD =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
    "\"request\":{\"uid\":\"u1\",\"operation\":\"UPDATE\","
    "\"resource\":{\"group\":\"batch\",\"version\":\"v1\",\"resource\":\"jobs\"},"
    "\"subResource\":\"status\",";

static void expect_decode(const char *body, enum jg_decode_status want, const char *want_msg) {
    jg_review r;
    jg_decode_error err;
    enum jg_decode_status got = jg_decode_review(body, strlen(body), &r, &err);
    ck_assert_msg(got == want, "%s\n-> status %d (%s), want %d", body, got, err.message, want);
    if (want_msg) ck_assert_str_eq(err.message, want_msg);
    jg_review_free(&r);
}

static void expect_status_field(const char *status_json, const char *want_msg) {
    char body[2048];
    snprintf(body, sizeof body,
             "%s\"object\":{\"metadata\":{\"name\":\"j\"},\"status\":%s},"
             "\"oldObject\":{\"metadata\":{\"name\":\"j\"},\"status\":{}}}}",
             REVIEW_HEAD, status_json);
    expect_decode(body, want_msg ? JG_DECODE_BAD_REQUEST : JG_DECODE_OK, want_msg);
}

START_TEST(decode_refusals) {
    expect_decode("", JG_DECODE_BAD_REQUEST, "AdmissionReview: empty input");
    expect_decode("{\"a\":", JG_DECODE_BAD_REQUEST, NULL);
    expect_decode("[1]", JG_DECODE_BAD_REQUEST,
                  "AdmissionReview: must be a JSON object, got an array");
    expect_decode("{\"apiVersion\":\"admission.k8s.io/v2\",\"kind\":\"AdmissionReview\"}",
                  JG_DECODE_BAD_REQUEST,
                  "apiVersion: unsupported \"admission.k8s.io/v2\" (expected admission.k8s.io/v1 "
                  "or admission.k8s.io/v1beta1)");
    /* absent apiVersion/kind default to v1 AdmissionReview (controller-runtime) */
    expect_decode("{\"kind\":\"AdmissionReview\"}", JG_DECODE_BAD_REQUEST, "request: required");
    expect_decode("{\"request\":{\"uid\":\"u\",\"operation\":\"DELETE\",\"resource\":{}}}",
                  JG_DECODE_OK, NULL);
    expect_decode("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"Review\"}",
                  JG_DECODE_BAD_REQUEST, "kind: expected \"AdmissionReview\", got \"Review\"");
    expect_decode("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
                  JG_DECODE_BAD_REQUEST, "request: required");
    expect_decode("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                  "\"request\":{\"operation\":\"CREATE\"}}",
                  JG_DECODE_BAD_REQUEST, "request.uid: required");
    expect_decode("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                  "\"request\":{\"uid\":\"u\",\"operation\":\"PATCH\"}}",
                  JG_DECODE_BAD_REQUEST,
                  "request.operation: unknown \"PATCH\" (CREATE, UPDATE, DELETE or CONNECT)");
    expect_decode("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                  "\"request\":{\"uid\":\"u\",\"uid\":\"v\"}}",
                  JG_DECODE_BAD_REQUEST, NULL);
    char body[1024];
    snprintf(body, sizeof body, "%s\"object\":{}}}", REVIEW_HEAD);
    expect_decode(body, JG_DECODE_BAD_REQUEST, "request.oldObject: required for UPDATE");
    snprintf(body, sizeof body, "%s\"object\":[],\"oldObject\":{}}}", REVIEW_HEAD);
    expect_decode(body, JG_DECODE_BAD_REQUEST, "request.object: must be an object, got an array");
    snprintf(body, sizeof body, "%s\"oldObject\":{}}}", REVIEW_HEAD);
    expect_decode(body, JG_DECODE_BAD_REQUEST, "request.object: required for UPDATE");
    snprintf(body, sizeof body, "%s\"object\":{\"kind\":\"Pod\"},\"oldObject\":{}}}", REVIEW_HEAD);
    expect_decode(body, JG_DECODE_BAD_REQUEST,
                  "request.object.kind: expected \"Job\", got \"Pod\"");

    expect_status_field("{\"active\":\"3\"}",
                        "request.object.status.active: must be an integer (int32), got a string");
    expect_status_field(
        "{\"active\":3.5}",
        "request.object.status.active: must be an integer (int32), got a non-integer number");
    expect_status_field("{\"failed\":2147483648}",
                        "request.object.status.failed: 2147483648 is outside the int32 range");
    expect_status_field("{\"ready\":-2147483648}", NULL);
    expect_status_field("{\"startTime\":\"yesterday\"}",
                        "request.object.status.startTime: yesterday is not an RFC 3339 time "
                        "(2006-01-02T15:04:05Z07:00)");
    expect_status_field(
        "{\"startTime\":5}",
        "request.object.status.startTime: must be an RFC 3339 time string, got an integer");
    expect_status_field("{\"conditions\":{}}",
                        "request.object.status.conditions: must be an array, got an object");
    expect_status_field("{\"conditions\":[1]}",
                        "request.object.status.conditions[0]: must be an object, got an integer");
    expect_status_field(
        "{\"conditions\":[{\"type\":true}]}",
        "request.object.status.conditions[0].type: must be a string, got a boolean");
    expect_status_field("{\"uncountedTerminatedPods\":{\"failed\":[\"a\",7]}}",
                        "request.object.status.uncountedTerminatedPods.failed[1]: must be a "
                        "string, got an integer");
    expect_status_field(
        "{\"uncountedTerminatedPods\":[]}",
        "request.object.status.uncountedTerminatedPods: must be an object, got an array");
    /* null is Go's nil: absent */
    expect_status_field("{\"active\":null,\"startTime\":null,\"conditions\":null,"
                        "\"uncountedTerminatedPods\":{\"succeeded\":null}}",
                        NULL);
    /* Other resources and DELETE are not decoded beyond the envelope */
    expect_decode("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                  "\"request\":{\"uid\":\"u\",\"operation\":\"DELETE\",\"resource\":{\"group\":"
                  "\"batch\",\"resource\":\"jobs\"},\"object\":7}}",
                  JG_DECODE_OK, NULL);
}
END_TEST

START_TEST(decode_deep_nesting) {
    size_t depth = 100000;
    char *body = malloc(depth * 2 + 1);
    memset(body, '[', depth);
    memset(body + depth, ']', depth);
    body[depth * 2] = '\0';
    expect_decode(body, JG_DECODE_BAD_REQUEST, NULL);
    free(body);
}
END_TEST

/* Runs a body through jg_admit and returns the response (static buffer). */
static const char *admit_text(const char *body, size_t len, enum jg_verdict *v) {
    static char text[8192];
    jg_buf out = JG_BUF_INIT;
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    *v = jg_admit(body, len, &cfg, &out, NULL);
    snprintf(text, sizeof text, "%s", out.data);
    jg_buf_free(&out);
    return text;
}

static const char *CREATE_HEAD =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
    "\"uid\":\"u\",\"operation\":\"CREATE\",\"resource\":{\"group\":\"batch\","
    "\"version\":\"v1\",\"resource\":\"jobs\"},\"object\":";

static void expect_create(const char *object_json, enum jg_verdict want,
                          const char *want_in_response) {
    char body[4096];
    int n = snprintf(body, sizeof body, "%s%s}}", CREATE_HEAD, object_json);
    enum jg_verdict v;
    const char *resp = admit_text(body, (size_t)n, &v);
    ck_assert_msg(v == want, "%s -> verdict %d, want %d: %s", object_json, v, want, resp);
    if (want_in_response)
        ck_assert_msg(strstr(resp, want_in_response) != NULL, "%s: %s not in %s", object_json,
                      want_in_response, resp);
}

START_TEST(scanner_strings_and_numbers) {
    /* escapes decode before the rules see the value */
    expect_create("{\"spec\":{\"managedBy\":\"acme.io\\/a\\u0026b\"}}", JG_VERDICT_ALLOWED, NULL);
    expect_create("{\"spec\":{\"managedBy\":\"acme.io/a\\u00e9\"}}", JG_VERDICT_DENIED,
                  "Invalid value: \\\"a\u00e9\\\"");
    expect_create("{\"spec\":{\"managedBy\":\"acme.io/\\ud83d\\ude00\"}}", JG_VERDICT_DENIED,
                  "\\\"\xf0\x9f\x98\x80\\\"");
    /* an escaped key is the same key */
    expect_create("{\"spec\":{\"\\u006danagedBy\":\"acme.io\"}}", JG_VERDICT_DENIED,
                  "must be a domain-prefixed path");
    /* syntax the scanner refuses */
    const char *bad[] = {
        "{\"spec\":{\"managedBy\":\"a\\ud800\"}}",      /* lone high surrogate */
        "{\"spec\":{\"managedBy\":\"a\\udc00\"}}",      /* lone low surrogate */
        "{\"spec\":{\"managedBy\":\"a\\x\"}}",          /* unknown escape */
        "{\"spec\":{\"managedBy\":\"a\\u12\"}}",        /* short \\u */
        "{\"spec\":{\"managedBy\":\"a\tb\"}}",          /* raw control character */
        "{\"spec\":{\"managedBy\":\"a\xc3\"}}",         /* truncated UTF-8 */
        "{\"spec\":{\"managedBy\":\"a\xed\xa0\x80\"}}", /* UTF-8 surrogate */
        "{\"spec\":{\"completions\":01}}",
        "{\"spec\":{\"completions\":-}}",
        "{\"spec\":{\"completions\":1.}}",
        "{\"spec\":{\"completions\":1e}}",
        "{\"spec\":{\"completions\":+1}}",
        "{\"spec\":{\"x\":[1,]}}",
        "{\"spec\":{\"x\":{\"a\":1,}}}",
        "{\"spec\":{\"x\":tru}}",
        "{\"spec\":{\"x\":NaN}}",
        "{\"spec\":{'x':1}}",
        "{\"spec\":{\"managedBy\":\"a\",\"managedBy\":\"b\"}}", /* duplicate key read */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_create(bad[i], JG_VERDICT_BAD_REQUEST, "invalid JSON at line 1, column");
    /* numbers that are valid JSON but not int32 */
    expect_create("{\"spec\":{\"completions\":1e2}}", JG_VERDICT_BAD_REQUEST,
                  "must be an integer (int32), got a non-integer number");
    expect_create("{\"spec\":{\"completions\":99999999999999999999999}}", JG_VERDICT_BAD_REQUEST,
                  "is outside the int32 range");
    /* unknown members may hold anything valid, and duplicates of keys not read are ignored */
    expect_create("{\"spec\":{\"x\":[1,-0.5e+3,true,false,null,{\"y\":[[]]},\"\\u0000\"],\"x\":2}}",
                  JG_VERDICT_ALLOWED, NULL);
    /* trailing data */
    enum jg_verdict v;
    const char *body = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                       "\"request\":{\"uid\":\"u\",\"operation\":\"DELETE\",\"kind\":{}}} x";
    const char *resp = admit_text(body, strlen(body), &v);
    ck_assert_int_eq(v, JG_VERDICT_BAD_REQUEST);
    ck_assert_ptr_nonnull(strstr(resp, "end of input expected"));
    /* NUL bytes outside strings */
    char nul[] = "{\"a\":1}\0";
    admit_text(nul, sizeof nul - 1, &v);
    ck_assert_int_eq(v, JG_VERDICT_BAD_REQUEST);
}
END_TEST

START_TEST(scanner_member_order_and_precedence) {
    enum jg_verdict v;
    /* object before operation and resource: decoded after the request is read */
    const char *late =
        "{\"request\":{\"object\":{\"spec\":{\"managedBy\":\"x\"},"
        "\"metadata\":{\"name\":\"n\"}},\"uid\":\"u\",\"operation\":\"CREATE\","
        "\"resource\":{\"group\":\"batch\",\"version\":\"v1\",\"resource\":\"jobs\"}},"
        "\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1beta1\"}";
    const char *resp = admit_text(late, strlen(late), &v);
    ck_assert_int_eq(v, JG_VERDICT_DENIED);
    ck_assert_ptr_nonnull(strstr(resp, "\"apiVersion\":\"admission.k8s.io/v1beta1\""));
    ck_assert_ptr_nonnull(strstr(resp, "Job.batch \\\"n\\\" is invalid"));
    /* a syntax error later in the body wins over an earlier type error */
    const char *both = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                       "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\",\"resource\":"
                       "{\"group\":\"batch\",\"resource\":\"jobs\"},\"object\":{\"spec\":"
                       "{\"completions\":\"3\"}},\"x\":[}}";
    resp = admit_text(both, strlen(both), &v);
    ck_assert_int_eq(v, JG_VERDICT_BAD_REQUEST);
    ck_assert_ptr_nonnull(strstr(resp, "invalid JSON"));
    /* a bad apiVersion after the request wins over a field error inside it */
    const char *env =
        "{\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u7\",\"operation\":\"CREATE\","
        "\"resource\":{\"group\":\"batch\",\"resource\":\"jobs\"},"
        "\"object\":{\"spec\":{\"completions\":\"3\"}}},\"apiVersion\":\"v9\"}";
    resp = admit_text(env, strlen(env), &v);
    ck_assert_int_eq(v, JG_VERDICT_BAD_REQUEST);
    ck_assert_ptr_nonnull(strstr(resp, "apiVersion: unsupported \\\"v9\\\""));
    ck_assert_ptr_nonnull(strstr(resp, "\"uid\":\"u7\""));
}
END_TEST

/* Found by fuzz_admit: a refusal before the envelope was read, then an escaped kind/apiVersion
 * (re-read by the precedence pass) crashed on a missing owner for the unescaped copy. */
START_TEST(fuzz_regressions) {
    const char *inputs[] = {
        "{\"request\":1,\"kind\":\"Admission\\u0052eview\"}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"apiVersion\":\"admission.k8s.io/v1\","
        "\"kind\":\"\\u0041dmissionReview\"}",
        "{\"request\":{\"uid\":7},\"apiVersion\":\"admission.k8s.io\\/v1\"}",
    };
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        enum jg_verdict v;
        const char *resp = admit_text(inputs[i], strlen(inputs[i]), &v);
        ck_assert_msg(v == JG_VERDICT_BAD_REQUEST, "%s -> %d: %s", inputs[i], v, resp);
    }
    jg_buf err = JG_BUF_INIT;
    ck_assert(!jg_index_list_valid(S("2,1"), 5, NULL)); /* a NULL err is allowed */
    jg_buf_free(&err);
}
END_TEST

/* A namespace is a DNS label: a longer one is refused where it is read (request.namespace, and
 * metadata.namespace of `check --new`), which bounds what the policy's globs are run on. */
START_TEST(decode_namespace_length) {
    char ns[80], body[512];
    memset(ns, 'n', sizeof ns);
    for (size_t n = 63; n <= 64; n++) {
        snprintf(body, sizeof body,
                 "{\"request\":{\"uid\":\"u\",\"operation\":\"DELETE\",\"resource\":{},"
                 "\"namespace\":\"%.*s\"}}",
                 (int)n, ns);
        expect_decode(body, n == 63 ? JG_DECODE_OK : JG_DECODE_BAD_REQUEST,
                      n == 63 ? NULL
                              : "request.namespace: must be no more than 63 bytes (a namespace is "
                                "a DNS label), got 64");
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\","
                 "\"namespace\":\"%.*s\"}}",
                 (int)n, ns);
        jg_review r;
        jg_decode_error err;
        ck_assert_int_eq(jg_decode_objects(NULL, 0, body, strlen(body), NULL, NULL, &r, &err),
                         n == 63 ? JG_DECODE_OK : JG_DECODE_BAD_REQUEST);
        if (n == 63)
            ck_assert_uint_eq(r.req.namespace_.n, 63);
        else
            ck_assert_str_eq(err.message, "new object: metadata.namespace: must be no more than 63 "
                                          "bytes (a namespace is a DNS label), got 64");
        jg_review_free(&r);
    }
}
END_TEST

/* A raw object says which target it is with apiVersion and kind; one without them was once
 * checked as a batch/v1 Job. --kind/--resource still name it; a kind that is no target is
 * marked as such (scan skips it); meta carries what check and scan print. */
static void expect_raw(const char *body, const char *kind, const char *want_msg, bool not_target) {
    jg_review r;
    jg_decode_error err;
    struct jg_object_meta meta;
    struct jg_decode_objects_opts opts = {NULL, kind, NULL, &meta};
    enum jg_decode_status st =
        jg_decode_objects(NULL, 0, body, strlen(body), NULL, &opts, &r, &err);
    ck_assert_int_eq(st, want_msg ? JG_DECODE_BAD_REQUEST : JG_DECODE_OK);
    if (want_msg) ck_assert_str_eq(err.message, want_msg);
    ck_assert_int_eq(meta.not_target, not_target);
    jg_review_free(&r);
}

START_TEST(decode_raw_object_type) {
    expect_raw("{\"metadata\":{\"name\":\"train-llm\"},\"spec\":{}}", NULL,
               "new object: Object 'Kind' is missing (an object names its target with apiVersion "
               "and kind)",
               false);
    expect_raw("{\"kind\":\"JobSet\",\"metadata\":{\"name\":\"t\"}}", NULL,
               "new object: Object 'apiVersion' is missing (an object names its target with "
               "apiVersion and kind)",
               false);
    expect_raw("{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"\"}", NULL,
               "new object: Object 'Kind' is missing (an object names its target with apiVersion "
               "and kind)",
               false);
    expect_raw("{\"metadata\":{\"name\":\"t\"},\"spec\":{}}", "JobSet.jobset.x-k8s.io", NULL,
               false);
    expect_raw("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\"}", NULL,
               "new object: kind ConfigMap of group \"\" is not a target (see 'jobguard rules'; a "
               "policy file's targets rows add kinds)",
               true);
    const char *job = "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\","
                      "\"uid\":\"u-1\",\"namespace\":\"ns\"}}";
    jg_review r;
    jg_decode_error err;
    struct jg_object_meta meta;
    struct jg_decode_objects_opts opts = {NULL, NULL, NULL, &meta};
    ck_assert_int_eq(jg_decode_objects(NULL, 0, job, strlen(job), NULL, &opts, &r, &err),
                     JG_DECODE_OK);
    ck_assert(meta.uid.set && jg_str_eq_lit(meta.uid.s, "u-1"));
    ck_assert(jg_str_eq_lit(meta.kind.s, "Job") && jg_str_eq_lit(meta.api_version.s, "batch/v1"));
    ck_assert(jg_str_eq_lit(r.req.namespace_, "ns") && !meta.not_target);
    jg_review_free(&r);
}
END_TEST

/* ---- match: name sets and namespace globs (include/jobguard/match.h) ---- */

START_TEST(strset_lookup) {
    const char *names[] = {"system:masters", "b", "a", "ab", "zz", "system:master"};
    struct jg_strset set;
    ck_assert(jg_strset_build(&set, names, 6));
    for (size_t i = 0; i < 6; i++)
        ck_assert(jg_strset_has(&set, (jg_str){names[i], strlen(names[i])}));
    static const char *const absent[] = {"", "c", "system:mastersx", "system:masterz", "aa", "z"};
    for (size_t i = 0; i < 6; i++)
        ck_assert(!jg_strset_has(&set, (jg_str){absent[i], strlen(absent[i])}));
    /* a slice is compared by its length, not up to a NUL */
    ck_assert(!jg_strset_has(&set, (jg_str){"ab\0", 3}));
    ck_assert(jg_strset_has(&set, (jg_str){"abc", 2}));
    jg_strset_free(&set);
    ck_assert(jg_strset_build(&set, names, 0));
    ck_assert(!jg_strset_has(&set, (jg_str){"a", 1}));
    jg_strset_free(&set);
}
END_TEST

static struct jg_glob compiled(const char *glob) {
    struct jg_glob g;
    size_t min_len, cost;
    ck_assert(jg_glob_compile(&g, glob, &min_len, &cost));
    return g;
}

static bool glob_matches(const struct jg_glob *g, const char *name) {
    return jg_glob_match(g, (jg_str){name, strlen(name)});
}

/* Every bracket expression over "ab-" of up to 4 characters, plain and negated, against every
 * byte: the compiled set is what fnmatch(3) matches (the matcher replaced it on the request path).
 */
START_TEST(glob_brackets_as_fnmatch) {
    static const char alpha[] = "ab-";
    size_t checked = 0;
    for (size_t len = 1; len <= 4; len++) {
        size_t combos = 1;
        for (size_t i = 0; i < len; i++)
            combos *= 3;
        for (size_t k = 0; k < combos; k++)
            for (int neg = 0; neg < 2; neg++) {
                char glob[16];
                size_t o = 0, v = k;
                glob[o++] = '[';
                if (neg) glob[o++] = '!';
                for (size_t i = 0; i < len; i++, v /= 3)
                    glob[o++] = alpha[v % 3];
                glob[o++] = ']';
                glob[o] = '\0';
                struct jg_glob g = compiled(glob);
                for (int c = 1; c < 256; c++) {
                    char name[2] = {(char)c, 0};
                    if (glob_matches(&g, name) != (fnmatch(glob, name, 0) == 0))
                        ck_abort_msg("%s on byte 0x%02x", glob, c);
                    checked++;
                }
                jg_glob_free(&g);
            }
    }
    ck_assert_uint_gt(checked, 30000);
}
END_TEST

/* Every glob of up to 4 pieces against every name over "ab-" of up to 5 bytes: the same answers
 * as fnmatch(3), and the kind the glob compiles to. */
START_TEST(glob_as_fnmatch) {
    static const char *const pieces[] = {"a", "b", "-", "*", "**", "?", "[ab]", "[!a]", "[a-b]"};
    enum { NP = sizeof pieces / sizeof pieces[0] };
    static const char alpha[] = "ab-";
    size_t checked = 0;
    for (size_t len = 0; len <= 4; len++) {
        size_t combos = 1;
        for (size_t i = 0; i < len; i++)
            combos *= NP;
        for (size_t k = 0; k < combos; k++) {
            char glob[32] = "";
            for (size_t i = 0, v = k; i < len; i++, v /= NP)
                strcat(glob, pieces[v % NP]);
            struct jg_glob g = compiled(glob);
            for (size_t nlen = 0; nlen <= 5; nlen++) {
                size_t names = 1;
                for (size_t i = 0; i < nlen; i++)
                    names *= 3;
                for (size_t m = 0; m < names; m++) {
                    char name[8];
                    size_t v = m;
                    for (size_t i = 0; i < nlen; i++, v /= 3)
                        name[i] = alpha[v % 3];
                    name[nlen] = '\0';
                    if (glob_matches(&g, name) != (fnmatch(glob, name, 0) == 0))
                        ck_abort_msg("glob \"%s\" name \"%s\"", glob, name);
                    checked++;
                }
            }
            jg_glob_free(&g);
        }
    }
    ck_assert_uint_gt(checked, 2000000);
    /* the kinds, and what the matcher is charged for */
    static const struct {
        const char *glob;
        enum jg_glob_kind kind;
        size_t min_len, cost;
    } kinds[] = {
        {"team-a", JG_GLOB_LITERAL, 6, 0},  {"team-*", JG_GLOB_PREFIX, 5, 0},
        {"**-prod", JG_GLOB_SUFFIX, 5, 0},  {"***", JG_GLOB_ANY, 0, 0},
        {"t*-prod", JG_GLOB_GENERAL, 6, 7}, {"*a*", JG_GLOB_GENERAL, 1, 3},
        {"ml-?", JG_GLOB_GENERAL, 4, 4},    {"[a-c]*", JG_GLOB_GENERAL, 1, 2},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        struct jg_glob g;
        size_t min_len, cost;
        ck_assert(jg_glob_compile(&g, kinds[i].glob, &min_len, &cost));
        ck_assert_msg(g.kind == kinds[i].kind, "%s", kinds[i].glob);
        ck_assert_uint_eq(min_len, kinds[i].min_len);
        ck_assert_uint_eq(cost, kinds[i].cost);
        jg_glob_free(&g);
    }
    /* a name is its bytes: a NUL inside it is not the end */
    struct jg_glob g;
    size_t min_len, cost;
    ck_assert(jg_glob_compile(&g, "team-a", &min_len, &cost));
    ck_assert(!jg_glob_match(&g, (jg_str){"team-a\0x", 8}));
    jg_glob_free(&g);
}
END_TEST

START_TEST(admit_error_echoes_uid) {
    const char *body = "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\","
                       "\"request\":{\"uid\":\"abc\",\"operation\":\"NOPE\"}}";
    jg_buf out = JG_BUF_INIT;
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    struct jg_outcome o;
    jg_outcome_init(&o);
    ck_assert_int_eq(jg_admit(body, strlen(body), &cfg, &out, &o), JG_VERDICT_BAD_REQUEST);
    ck_assert_int_eq(o.code, 400);
    ck_assert_str_eq(o.uid, "abc");
    ck_assert_str_eq(
        out.data,
        "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1beta1\","
        "\"response\":{\"uid\":\"abc\",\"allowed\":false,\"status\":{\"metadata\":{},"
        "\"status\":\"Failure\",\"message\":\"request.operation: unknown \\\"NOPE\\\" "
        "(CREATE, UPDATE, DELETE or CONNECT)\",\"reason\":\"BadRequest\",\"code\":400}}}");
    jg_outcome_free(&o);
    jg_buf_free(&out);
}
END_TEST

int main(void) {
    Suite *s = suite_create("units");
    struct {
        const char *name;
        const TTest *t;
    } tests[] = {
        {"indexes", index_grammar},
        {"indexes", index_overlap},
        {"managedby", managed_by_format},
        {"managedby", managed_by_length},
        {"render", render_escaping},
        {"render", render_time},
        {"render", render_aggregate},
        {"decode", decode_refusals},
        {"decode", decode_deep_nesting},
        {"decode", decode_namespace_length},
        {"decode", decode_raw_object_type},
        {"match", strset_lookup},
        {"match", glob_brackets_as_fnmatch},
        {"match", glob_as_fnmatch},
        {"admit", admit_error_echoes_uid},
        {"scanner", scanner_strings_and_numbers},
        {"scanner", scanner_member_order_and_precedence},
        {"scanner", fuzz_regressions},
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        TCase *tc = tcase_create(tests[i].name);
        tcase_add_test(tc, tests[i].t);
        suite_add_tcase(s, tc);
    }
    return run_suite(s);
}
