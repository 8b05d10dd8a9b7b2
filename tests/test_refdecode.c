/* The scanner (src/engine/decode/) against the jansson reference decoder (refdecode.h), through the
 * comparator the fuzz target uses (refdiff.h):
 *  - every tests/cases review, every fuzz seed and regression: the two agree (both wordings);
 *  - each place where they may legitimately differ: the comparator applies exactly the
 *    documented exception and the outcome a user sees is the scanner's;
 *  - member order never changes the answer (regressions of the decoder fixed by this check).
 * Usage: test_refdecode CASES_DIR FUZZ_DIR */
#include "jobguard/admit.h"
#include "jobguard/policy.h"
#include "jobguard/targets.h"
#include "refdecode.h"
#include "refdiff.h"

#include <check.h>

#include "run_suite.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char **files;
static int nfiles;

static void add_file(const char *path) {
    files = realloc(files, sizeof *files * (size_t)(nfiles + 1));
    files[nfiles++] = strdup(path);
}

/* Every regular file in dir (or dir/<entry>/review.json when `review` is set). */
static void add_dir(const char *dir, bool review) {
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        exit(2);
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0) continue;
        char p[4400];
        snprintf(p, sizeof p, review ? "%.4000s/%.256s/review.json" : "%.4000s/%.256s", dir,
                 e->d_name);
        FILE *f = fopen(p, "rb");
        if (!f) continue;
        fclose(f);
        add_file(p);
    }
    closedir(d);
}

/* Both decoders under `policy` (NULL: the built-in target rows), as the server runs with it. */
static struct refdiff run_p(const char *body, size_t len, enum jg_parity parity,
                            const struct jg_policy *policy) {
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    cfg.parity = parity;
    jg_config_modes_unset(&cfg);
    jg_policy_apply(policy, &cfg);
    struct refdiff d;
    refdiff_run(body, len, &cfg, &d);
    return d;
}

static struct refdiff run(const char *body, size_t len, enum jg_parity parity) {
    return run_p(body, len, parity, NULL);
}

/* A case (DIR/review.json) under its DIR/policy.json when it has one; a seed or regression under
 * no policy and under refdiff_test_policy(). */
START_TEST(corpus_agrees) {
    size_t len;
    char *body = slurp(files[_i], &len);
    ck_assert_ptr_nonnull(body);
    const struct jg_policy *policies[2] = {NULL, refdiff_test_policy()};
    struct jg_policy *own = NULL;
    size_t n = strlen(files[_i]);
    static const char review_json[] = "/review.json";
    bool is_case = n > sizeof review_json &&
                   strcmp(files[_i] + n - (sizeof review_json - 1), review_json) == 0;
    if (is_case) {
        char p[4400], why[1024];
        snprintf(p, sizeof p, "%.*s/policy.json", (int)(n - (sizeof review_json - 1)), files[_i]);
        FILE *f = fopen(p, "rb");
        if (f) {
            fclose(f);
            own = jg_policy_load_file(p, why, sizeof why);
            ck_assert_msg(own != NULL, "%s: %s", p, why);
        }
        policies[0] = own;
    }
    for (int k = 0; k < (is_case ? 1 : 2); k++)
        for (int parity = JG_PARITY_1_35; parity < JG_PARITY_COUNT; parity++) {
            struct refdiff d = run_p(body, len, (enum jg_parity)parity, policies[k]);
            ck_assert_msg(d.kind != RD_DIFFER, "%s%s: %s", files[_i],
                          k     ? " (test policy)"
                          : own ? " (its policy.json)"
                                : "",
                          d.detail);
        }
    jg_policy_free(own);
    free(body);
}
END_TEST

/* ---- targeted inputs ---- */

/* A Job CREATE whose request members are `members` (no braces) and object is `object`. */
static char *review(const char *members, const char *object) {
    static const char fmt[] =
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{%s"
        "\"operation\":\"CREATE\",\"resource\":{\"group\":\"batch\",\"version\":\"v1\","
        "\"resource\":\"jobs\"},\"object\":%s}}";
    size_t n = strlen(fmt) + strlen(members) + strlen(object) + 1;
    char *s = malloc(n);
    snprintf(s, n, fmt, members, object);
    return s;
}

/* Runs `body` through the comparator; checks outcome, exceptions and the verdict users see. */
static void expect(const char *body, size_t len, enum refdiff_kind kind, unsigned exceptions,
                   enum jg_verdict verdict, const char *message_part) {
    struct refdiff d = run(body, len, JG_PARITY_1_35);
    ck_assert_msg(d.kind == kind, "%.300s: %s (%s), expected %s", body, refdiff_kind_name(d.kind),
                  d.detail, refdiff_kind_name(kind));
    ck_assert_msg(d.exceptions == exceptions, "%.300s: exceptions %u, expected %u", body,
                  d.exceptions, exceptions);
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_buf out = JG_BUF_INIT;
    struct jg_outcome o;
    jg_outcome_init(&o);
    ck_assert_int_eq(jg_admit(body, len, &cfg, &out, &o), verdict);
    if (message_part)
        ck_assert_msg(o.message.data && strstr(o.message.data, message_part), "%.300s: %s", body,
                      o.message.data ? o.message.data : "(none)");
    jg_outcome_free(&o);
    jg_buf_free(&out);
}

static void expect_s(const char *body, enum refdiff_kind kind, unsigned exceptions,
                     enum jg_verdict verdict, const char *message_part) {
    expect(body, strlen(body), kind, exceptions, verdict, message_part);
}

static void expect_r(const char *members, const char *object, enum refdiff_kind kind,
                     unsigned exceptions, enum jg_verdict verdict, const char *message_part) {
    char *b = review(members, object);
    expect_s(b, kind, exceptions, verdict, message_part);
    free(b);
}

START_TEST(duplicate_keys) {
    /* repeated where the decoder reads it: both refuse */
    expect_r("\"uid\":\"a\",\"uid\":\"b\",", "{}", RD_SAME_DUPLICATE, RD_EX_DUPLICATE,
             JG_VERDICT_BAD_REQUEST, "duplicate object key");
    expect_r("\"uid\":\"a\",", "{\"spec\":{\"managedBy\":\"a/b\",\"m\\u0061nagedBy\":\"c/d\"}}",
             RD_SAME_DUPLICATE, RD_EX_DUPLICATE, JG_VERDICT_BAD_REQUEST, "duplicate object key");
    /* three times: the third is the repeat of a repeat */
    expect_r("\"uid\":\"a\",", "{\"kind\":\"Job\",\"kind\":null,\"kind\":\"Job\"}",
             RD_SAME_DUPLICATE, RD_EX_DUPLICATE, JG_VERDICT_BAD_REQUEST, "duplicate object key");
    /* the first occurrence is already wrong: that is what both report */
    expect_r("\"uid\":5,\"uid\":\"b\",", "{}", RD_SAME_REFUSAL, RD_EX_DUPLICATE,
             JG_VERDICT_BAD_REQUEST, "request.uid: must be a string, got an integer");
    /* repeated where nothing is read: both ignore it (jansson alone would refuse) */
    expect_r("\"uid\":\"a\",",
             "{\"metadata\":{\"name\":\"j\",\"labels\":{\"x\":\"1\",\"x\":\"2\"}}}", RD_SAME_VIEW,
             RD_EX_DUPLICATE, JG_VERDICT_ALLOWED, NULL);
    /* repeated apiVersion: the first string wins the envelope check */
    expect_s("{\"apiVersion\":null,\"apiVersion\":\"v9\",\"request\":{}}", RD_SAME_REFUSAL,
             RD_EX_DUPLICATE, JG_VERDICT_BAD_REQUEST, "apiVersion: unsupported \"v9\"");
}
END_TEST

START_TEST(nul) {
    /* \u0000 in a value: both keep it (jansson with JSON_ALLOW_NUL) */
    expect_r("\"uid\":\"a\\u0000b\",", "{}", RD_SAME_VIEW, 0, JG_VERDICT_ALLOWED, NULL);
    /* in a key: jansson cannot hold it; rewritten, and either way it names nothing read */
    expect_r("\"uid\":\"a\",\"u\\u0000id\":5,", "{}", RD_SAME_VIEW, RD_EX_NUL_KEY,
             JG_VERDICT_ALLOWED, NULL);
    expect_r("\"uid\":\"a\",", "{\"spec\":{\"\\u0000\":1,\"\\u001f\":2}}", RD_SAME_VIEW,
             RD_EX_NUL_KEY | RD_EX_DUPLICATE, JG_VERDICT_ALLOWED, NULL);
    /* a raw NUL byte after a number: invalid JSON that jansson 2.14 skips; the scanner refuses */
    static const char raw[] = "{\"request\":{\"x\":1\0}}";
    expect(raw, sizeof raw - 1, RD_BOTH_INVALID, RD_EX_NUL_BYTE, JG_VERDICT_BAD_REQUEST,
           "near byte 0x00");
    static const char raw2[] = "88\0";
    expect(raw2, sizeof raw2 - 1, RD_BOTH_INVALID, RD_EX_NUL_BYTE, JG_VERDICT_BAD_REQUEST,
           "near byte 0x00");
}
END_TEST

START_TEST(big_numbers) {
    /* beyond int64 / double where nothing is read: valid JSON, ignored */
    expect_r("\"uid\":\"a\",\"x\":[123456789012345678901234567890,-99999999999999999999,1e400],",
             "{}", RD_SAME_VIEW, RD_EX_BIGNUM, JG_VERDICT_ALLOWED, NULL);
    /* where an int32 is read: both quote the number */
    expect_r("\"uid\":\"a\",", "{\"spec\":{\"completions\":123456789012345678901234567890}}",
             RD_SAME_REFUSAL, RD_EX_BIGNUM, JG_VERDICT_BAD_REQUEST,
             "request.object.spec.completions: 123456789012345678901234567890 is outside the "
             "int32 range");
    expect_r("\"uid\":\"a\",", "{\"spec\":{\"parallelism\":-1e999}}", RD_SAME_REFUSAL, RD_EX_BIGNUM,
             JG_VERDICT_BAD_REQUEST,
             "request.object.spec.parallelism: must be an integer (int32), got a non-integer");
    /* followed by what cannot follow a number: invalid for both */
    expect_r("\"uid\":\"a\",\"x\":1E31350000000e01,", "{}", RD_BOTH_INVALID, 0,
             JG_VERDICT_BAD_REQUEST, "invalid JSON");
    expect_s("1-1e400", RD_BOTH_INVALID, 0, JG_VERDICT_BAD_REQUEST, "invalid JSON");
    /* within int64: no exception */
    expect_r("\"uid\":\"a\",", "{\"spec\":{\"completions\":-9223372036854775808}}", RD_SAME_REFUSAL,
             0, JG_VERDICT_BAD_REQUEST, "-9223372036854775808 is outside");
    expect_r("\"uid\":\"a\",\"x\":[1e-400,-0,-0.0,0e5],", "{\"spec\":{\"completions\":-0}}",
             RD_SAME_VIEW, 0, JG_VERDICT_ALLOWED, NULL);
}
END_TEST

static char *nested(int levels, const char *inner) {
    size_t n = strlen(inner) + 2 * (size_t)levels + 1;
    char *s = malloc(n);
    memset(s, '[', (size_t)levels);
    strcpy(s + levels, inner);
    memset(s + levels + strlen(inner), ']', (size_t)levels);
    s[n - 1] = '\0';
    return s;
}

START_TEST(depth) {
    /* request.x is at level 3: 2045 + 1 arrays there make 2048 levels with the review */
    char *deep = nested(2045, "[]"), *members = malloc(strlen(deep) + 32);
    sprintf(members, "\"uid\":\"a\",\"x\":%s,", deep);
    expect_r(members, "{}", RD_SAME_VIEW, 0, JG_VERDICT_ALLOWED, NULL); /* 2048 levels */
    free(deep);
    free(members);
    /* 2048 containers holding a scalar: within the scanner's limit, beyond jansson's */
    deep = nested(2045, "[1]");
    members = malloc(strlen(deep) + 32);
    sprintf(members, "\"uid\":\"a\",\"x\":%s,", deep);
    expect_r(members, "{}", RD_DEPTH_2048, RD_EX_DEPTH, JG_VERDICT_ALLOWED, NULL);
    free(deep);
    free(members);
    /* 2049: refused by both */
    deep = nested(2046, "[]");
    members = malloc(strlen(deep) + 32);
    sprintf(members, "\"uid\":\"a\",\"x\":%s,", deep);
    expect_r(members, "{}", RD_BOTH_INVALID, RD_EX_DEPTH, JG_VERDICT_BAD_REQUEST,
             "nesting deeper than 2048 levels");
    free(deep);
    free(members);
}
END_TEST

/* Where both already agree without any exception: each is refused (or accepted) by both. */
START_TEST(agreed_edges) {
    static const char *const invalid[] = {
        "\"uid\":\"\\ud800\",",          /* lone high surrogate */
        "\"uid\":\"\\udc00\",",          /* lone low surrogate */
        "\"uid\":\"\\ud800\\u0041\",",   /* high surrogate, then not a low one */
        "\"uid\":\"\xc0\xaf\",",         /* overlong UTF-8 */
        "\"uid\":\"\xed\xa0\x80\",",     /* UTF-8 surrogate */
        "\"uid\":\"\xf4\x90\x80\x80\",", /* beyond U+10FFFF */
        "\"uid\":\"\xe2\x82\",",         /* truncated sequence */
        "\"uid\":\"a\tb\",",             /* raw control character */
        "\"uid\":\"\\x\",",              /* unknown escape */
        "\"x\":01,",                     /* leading zero */
        "\"x\":1.,",                     /* no digit after '.' */
        "\"x\":-,",                      /* sign alone */
        "\"x\":truex,",                  /* literal run-on */
        "\"x\":[1,],",                   /* trailing comma */
    };
    for (size_t i = 0; i < sizeof invalid / sizeof *invalid; i++)
        expect_r(invalid[i], "{}", RD_BOTH_INVALID, 0, JG_VERDICT_BAD_REQUEST, "invalid JSON");
    char *b = review("\"uid\":\"a\",", "{}");
    size_t n = strlen(b);
    expect_s("", RD_BOTH_INVALID, 0, JG_VERDICT_BAD_REQUEST, "empty input");
    expect_s(" \n\t", RD_BOTH_INVALID, 0, JG_VERDICT_BAD_REQUEST, "empty input");
    b = realloc(b, n + 8);
    strcpy(b + n, " {}");
    expect_s(b, RD_BOTH_INVALID, 0, JG_VERDICT_BAD_REQUEST, "end of input expected");
    memcpy(b + n, "\0x", 3); /* a NUL byte after the value */
    expect(b, n + 2, RD_BOTH_INVALID, 0, JG_VERDICT_BAD_REQUEST, "end of input expected");
    free(b);
    /* valid JSON both read the same way */
    expect_s("[1]", RD_SAME_REFUSAL, 0, JG_VERDICT_BAD_REQUEST, "must be a JSON object");
    expect_s("\"x\"", RD_SAME_REFUSAL, 0, JG_VERDICT_BAD_REQUEST, "got a string");
    expect_r("\"\\u0075id\":\"\\ud83d\\ude00\\/\",", "{\"k\\u0069nd\":\"Job\"}", RD_SAME_VIEW, 0,
             JG_VERDICT_ALLOWED, NULL);
}
END_TEST

/* The answer never depends on the order of the request's members. */
static void same_answer(const char *a, const char *b, enum jg_verdict verdict) {
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_buf ra = JG_BUF_INIT, rb = JG_BUF_INIT;
    ck_assert_int_eq(jg_admit(a, strlen(a), &cfg, &ra, NULL), verdict);
    ck_assert_int_eq(jg_admit(b, strlen(b), &cfg, &rb, NULL), verdict);
    ck_assert_str_eq(ra.data, rb.data);
    jg_buf_free(&ra);
    jg_buf_free(&rb);
    for (int i = 0; i < 2; i++) {
        struct refdiff d = run(i ? b : a, strlen(i ? b : a), JG_PARITY_1_35);
        ck_assert_msg(d.kind != RD_DIFFER, "%s", d.detail);
    }
}

#define ENV "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
START_TEST(member_order) {
    /* request.resource decides the route even when request.kind and operation come first */
    same_answer(ENV "\"uid\":\"u\",\"kind\":{\"group\":\"batch\",\"kind\":\"Job\"},\"operation\":"
                    "\"CREATE\",\"resource\":{\"group\":\"\",\"resource\":\"pods\"},"
                    "\"object\":{\"spec\":{\"managedBy\":\"x\"}}}}",
                ENV "\"uid\":\"u\",\"resource\":{\"group\":\"\",\"resource\":\"pods\"},\"kind\":"
                    "{\"group\":\"batch\",\"kind\":\"Job\"},\"operation\":\"CREATE\","
                    "\"object\":{\"spec\":{\"managedBy\":\"x\"}}}}",
                JG_VERDICT_ALLOWED);
    /* a CronJob status update: its object is read (and must be well-typed) in either order */
    same_answer(
        ENV "\"uid\":\"u\",\"object\":{\"spec\":{\"jobTemplate\":{\"spec\":{\"managedBy\":5}}}},"
            "\"operation\":\"UPDATE\",\"subResource\":\"status\",\"resource\":{\"group\":\"batch\","
            "\"resource\":\"cronjobs\"},\"oldObject\":{}}}",
        ENV "\"uid\":\"u\",\"operation\":\"UPDATE\",\"subResource\":\"status\",\"resource\":{"
            "\"group\":\"batch\",\"resource\":\"cronjobs\"},\"object\":{\"spec\":{\"jobTemplate\":"
            "{\"spec\":{\"managedBy\":5}}}},\"oldObject\":{}}}",
        JG_VERDICT_BAD_REQUEST);
    /* oldObject of a CREATE is never read, whatever comes first */
    same_answer(ENV "\"uid\":\"u\",\"operation\":\"CREATE\",\"resource\":{\"group\":\"batch\","
                    "\"resource\":\"jobs\"},\"object\":{},\"oldObject\":{\"spec\":{"
                    "\"completions\":\"x\"}}}}",
                ENV "\"uid\":\"u\",\"oldObject\":{\"spec\":{\"completions\":\"x\"}},\"object\":{},"
                    "\"operation\":\"CREATE\",\"resource\":{\"group\":\"batch\",\"resource\":"
                    "\"jobs\"}}}",
                JG_VERDICT_ALLOWED);
}
END_TEST

/* ---- CRD targets ---- */

#define JOBSETS                                                                                    \
    "\"resource\":{\"group\":\"jobset.x-k8s.io\",\"version\":\"v1alpha2\",\"resource\":"           \
    "\"jobsets\"}"

/* An AdmissionReview whose request members are `members` (no braces, no trailing comma). */
static char *req(const char *members) {
    size_t n = strlen(ENV) + strlen(members) + 8;
    char *s = malloc(n);
    snprintf(s, n, "%s%s}}", ENV, members);
    return s;
}

/* A CREATE of `route` ("resource":{...} and/or "kind":{...}) with `object`. */
static char *crd_create(const char *route, const char *object) {
    size_t n = strlen(route) + strlen(object) + 64;
    char *m = malloc(n);
    snprintf(m, n, "\"uid\":\"u\",\"operation\":\"CREATE\",%s,\"object\":%s", route, object);
    char *b = req(m);
    free(m);
    return b;
}

#define ANY_VERDICT (-1)

/* The comparator under `policy`, then the verdict users see (and part of its message). */
static void expect_p(const struct jg_policy *policy, const char *body, enum refdiff_kind kind,
                     unsigned exceptions, int verdict, const char *message_part) {
    struct refdiff d = run_p(body, strlen(body), JG_PARITY_1_35, policy);
    ck_assert_msg(d.kind == kind, "%.400s: %s (%s), expected %s", body, refdiff_kind_name(d.kind),
                  d.detail, refdiff_kind_name(kind));
    ck_assert_msg(d.exceptions == exceptions, "%.400s: exceptions %u, expected %u", body,
                  d.exceptions, exceptions);
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_config_modes_unset(&cfg);
    jg_policy_apply(policy, &cfg);
    jg_buf out = JG_BUF_INIT;
    struct jg_outcome o;
    jg_outcome_init(&o);
    enum jg_verdict v = jg_admit(body, strlen(body), &cfg, &out, &o);
    if (verdict != ANY_VERDICT) ck_assert_int_eq(v, verdict);
    if (message_part)
        ck_assert_msg(o.message.data && strstr(o.message.data, message_part), "%.400s: %s", body,
                      o.message.data ? o.message.data : "(none)");
    jg_outcome_free(&o);
    jg_buf_free(&out);
}

/* The reference's view of `body` (which both decoders must agree on: checked first). */
static const struct jg_request *ref_view(const struct jg_policy *policy, const char *body,
                                         struct ref_review *rr) {
    expect_p(policy, body, RD_SAME_VIEW, 0, ANY_VERDICT, NULL); /* the rules may deny it */
    struct ref_options opt = {.policy = policy};
    struct ref_result res;
    ck_assert_int_eq(ref_decode_review(body, strlen(body), &opt, rr, &res), REF_OK);
    return &rr->review.req;
}

static const struct jg_policy_target *builtin(const char *group, const char *kind,
                                              const char *version) {
    for (size_t i = 0; i < jg_builtin_target_count; i++) {
        const struct jg_policy_target *t = &jg_builtin_targets[i];
        if (strcmp(t->group, group) || strcmp(t->kind, kind)) continue;
        for (size_t v = 0; v < t->versions.n; v++)
            if (strcmp(t->versions.v[v], version) == 0) return t;
    }
    ck_abort_msg("no built-in row %s/%s %s", group, version, kind);
    return NULL;
}

static void nested_is(const struct jg_job *j, size_t i, unsigned which, const char *field,
                      const char *value) {
    ck_assert_uint_gt(j->n_nested, i);
    const struct jg_nested_value *v = &j->nested[i];
    ck_assert_uint_eq(v->which, which);
    ck_assert_msg(jg_str_eq_lit(v->field, field) && v->field.p[v->field.n] == '\0',
                  "nested[%zu].field %.*s, expected %s", i, (int)v->field.n, v->field.p, field);
    ck_assert_msg(jg_str_eq_lit(v->value, value), "nested[%zu].value %.*s, expected %s", i,
                  (int)v->value.n, v->value.p, value);
}

/* The copy's match (NULL: none, it matches no stored copy); bytes, so lengths count. */
static void match_is(const struct jg_job *j, size_t i, const char *match, size_t n) {
    ck_assert_uint_gt(j->n_nested, i);
    const struct jg_nested_value *v = &j->nested[i];
    if (!match) {
        ck_assert_msg(!v->match.p, "nested[%zu].match %.*s, expected none", i, (int)v->match.n,
                      v->match.p);
        return;
    }
    ck_assert_msg(v->match.p && v->match.n == n && memcmp(v->match.p, match, n) == 0,
                  "nested[%zu].match %.*s, expected %s", i, (int)v->match.n,
                  v->match.p ? v->match.p : "(none)", match);
}

/* JobSet's replicatedJobs is keyed by name: the match names the element by its key, wherever the
 * key is among the element's members; no string key, no match */
START_TEST(crd_list_keys) {
    struct ref_review rr;
    char *b = crd_create(
        JOBSETS,
        "{\"spec\":{\"replicatedJobs\":[{\"name\":\"driver\",\"template\":{\"spec\":{"
        "\"managedBy\":\"x.io/a\"}}},{\"template\":{\"spec\":{\"managedBy\":\"x.io/b\"}},"
        "\"replicas\":2,\"name\":\"work\\u0065rs\"},{\"template\":{\"spec\":{\"managedBy\":"
        "\"x.io/c\"}}},{\"name\":null,\"template\":{\"spec\":{\"managedBy\":\"x.io/d\"}}},"
        "{\"name\":7,\"template\":{\"spec\":{\"managedBy\":\"x.io/e\"}}},"
        "{\"name\":\"\",\"template\":{\"spec\":{\"managedBy\":\"x.io/f\"}}},"
        "{\"name\":\"a\\u0000]\",\"template\":{\"spec\":{\"managedBy\":\"x.io/g\"}}}]}}");
    const struct jg_request *q = ref_view(NULL, b, &rr);
    ck_assert_uint_eq(q->object.n_nested, 7);
    nested_is(&q->object, 1, 0, "spec.replicatedJobs[1].template.spec.managedBy", "x.io/b");
    match_is(&q->object, 0, "=6:driver", 9);
    match_is(&q->object, 1, "=7:workers", 10); /* the key after the copy, escaped */
    match_is(&q->object, 2, NULL, 0);          /* no key, a null one, a number */
    match_is(&q->object, 3, NULL, 0);
    match_is(&q->object, 4, NULL, 0);
    match_is(&q->object, 5, "=0:", 3);
    match_is(&q->object, 6, "=3:a\0]", 6);
    ref_review_free(&rr);
    free(b);
    /* a row without list keys matches by field: RayJob's copy */
    b = crd_create(
        "\"resource\":{\"group\":\"ray.io\",\"version\":\"v1\",\"resource\":\"rayjobs\"}",
        "{\"spec\":{\"rayClusterSpec\":{\"managedBy\":\"x.io/a\"}}}");
    q = ref_view(NULL, b, &rr);
    match_is(&q->object, 0, "spec.rayClusterSpec.managedBy", 29);
    ref_review_free(&rr);
    free(b);
}
END_TEST

START_TEST(crd_views) {
    struct ref_review rr;
    /* JobSet: the nested copies in document order, null elements and null values skipped */
    char *b = crd_create(
        JOBSETS,
        "{\"kind\":\"JobSet\",\"metadata\":{\"name\":\"js\",\"labels\":{\"a\":\"b\"}},"
        "\"spec\":{\"managedBy\":\"kueue.x-k8s.io/multikueue\",\"replicatedJobs\":["
        "{\"name\":\"a\",\"template\":{\"spec\":{\"managedBy\":\"x.io/a\"}}},null,"
        "{\"template\":{\"spec\":{\"managedBy\":null}}},{\"template\":null},"
        "{\"template\":{\"spec\":null}},{\"template\":{\"spec\":{\"managedBy\":\"\"}}}]}}");
    const struct jg_request *q = ref_view(NULL, b, &rr);
    ck_assert_int_eq(q->target, JG_TARGET_CRD);
    ck_assert_ptr_eq(q->row, builtin("jobset.x-k8s.io", "JobSet", "v1alpha2"));
    ck_assert(jg_str_eq_lit(q->object.name, "js"));
    ck_assert(q->object.spec.managed_by.set);
    ck_assert(jg_str_eq_lit(q->object.spec.managed_by.s, "kueue.x-k8s.io/multikueue"));
    ck_assert_uint_eq(q->object.n_nested, 2);
    nested_is(&q->object, 0, 0, "spec.replicatedJobs[0].template.spec.managedBy", "x.io/a");
    nested_is(&q->object, 1, 0, "spec.replicatedJobs[5].template.spec.managedBy", "");
    ref_review_free(&rr);
    free(b);
    /* null anywhere on the path: nothing read; a managedBy of null is unset */
    static const char *const nulls[] = {
        "{\"spec\":null}", "{\"spec\":{\"replicatedJobs\":null,\"managedBy\":null}}",
        "{\"spec\":{\"replicatedJobs\":[]}}", "{\"metadata\":null,\"kind\":null}"};
    for (size_t i = 0; i < sizeof nulls / sizeof *nulls; i++) {
        b = crd_create(JOBSETS, nulls[i]);
        q = ref_view(NULL, b, &rr);
        ck_assert(q->object.present && !q->object.spec.managed_by.set);
        ck_assert_uint_eq(q->object.n_nested, 0);
        ref_review_free(&rr);
        free(b);
    }
    /* Kubeflow: spec.runPolicy.managedBy; spec.managedBy is no field of theirs (not read) */
    b = crd_create("\"resource\":{\"group\":\"kubeflow.org\",\"version\":\"v1\",\"resource\":"
                   "\"pytorchjobs\"}",
                   "{\"kind\":\"PyTorchJob\",\"spec\":{\"managedBy\":5,\"runPolicy\":{"
                   "\"managedBy\":\"kueue.x-k8s.io/multikueue\"}}}");
    q = ref_view(NULL, b, &rr);
    ck_assert_ptr_eq(q->row, builtin("kubeflow.org", "PyTorchJob", "v1"));
    ck_assert(jg_str_eq_lit(q->object.spec.managed_by.s, "kueue.x-k8s.io/multikueue"));
    ref_review_free(&rr);
    free(b);
    /* RayJob: the embedded RayCluster spec's copy */
    b = crd_create(
        "\"resource\":{\"group\":\"ray.io\",\"version\":\"v1\",\"resource\":\"rayjobs\"}",
        "{\"spec\":{\"rayClusterSpec\":{\"managedBy\":\"ray.io/kuberay-operator\"}}}");
    q = ref_view(NULL, b, &rr);
    ck_assert_ptr_eq(q->row, builtin("ray.io", "RayJob", "v1"));
    ck_assert(!q->object.spec.managed_by.set);
    ck_assert_uint_eq(q->object.n_nested, 1);
    nested_is(&q->object, 0, 0, "spec.rayClusterSpec.managedBy", "ray.io/kuberay-operator");
    ref_review_free(&rr);
    free(b);
    /* MPIJob: v2beta1 and v1 are two rows; a version neither lists: the first (v2beta1) */
    static const char *const mpi[][2] = {{"v2beta1", "v2beta1"}, {"v1", "v1"}, {"v9", "v2beta1"}};
    for (int i = 0; i < 3; i++) {
        char route[200];
        snprintf(route, sizeof route,
                 "\"resource\":{\"group\":\"kubeflow.org\",\"version\":\"%s\",\"resource\":"
                 "\"mpijobs\"}",
                 mpi[i][0]);
        b = crd_create(route, "{\"kind\":\"MPIJob\",\"spec\":{\"runPolicy\":{}}}");
        q = ref_view(NULL, b, &rr);
        ck_assert_ptr_eq(q->row, builtin("kubeflow.org", "MPIJob", mpi[i][1]));
        ref_review_free(&rr);
        free(b);
    }
    /* routed by kind alone (no resource, or an empty one): the row's resource, the kind's GV */
    static const char *const by_kind[] = {
        "\"kind\":{\"group\":\"ray.io\",\"version\":\"v1\",\"kind\":\"RayJob\"}",
        "\"resource\":{\"group\":\"x\",\"version\":\"v7\",\"resource\":\"\"},\"kind\":{\"group\":"
        "\"ray.io\",\"version\":\"v1\",\"kind\":\"RayJob\"}"};
    for (int i = 0; i < 2; i++) {
        b = crd_create(by_kind[i], "{\"spec\":{\"managedBy\":\"a.io/b\"}}");
        q = ref_view(NULL, b, &rr);
        ck_assert_ptr_eq(q->row, builtin("ray.io", "RayJob", "v1"));
        ck_assert(jg_str_eq_lit(q->resource, "rayjobs") && jg_str_eq_lit(q->group, "ray.io") &&
                  jg_str_eq_lit(q->version, "v1"));
        ref_review_free(&rr);
        free(b);
    }
    /* no row names it: not a target, objects not read */
    b = crd_create("\"resource\":{\"group\":\"jobset.x-k8s.io\",\"version\":\"v1alpha2\","
                   "\"resource\":\"jobsetz\"}",
                   "{\"spec\":5}");
    q = ref_view(NULL, b, &rr);
    ck_assert_int_eq(q->target, JG_TARGET_OTHER);
    ck_assert_ptr_null(q->row);
    ck_assert(!q->object.present);
    ref_review_free(&rr);
    free(b);
    /* batch Job keeps its own row */
    b = crd_create("\"resource\":{\"group\":\"batch\",\"version\":\"v2\",\"resource\":\"jobs\"}",
                   "{}");
    q = ref_view(NULL, b, &rr);
    ck_assert_int_eq(q->target, JG_TARGET_JOB);
    ck_assert_ptr_eq(q->row, builtin("batch", "Job", "v1"));
    ref_review_free(&rr);
    free(b);
}
END_TEST

/* An UPDATE of JobSets' `sub` subresource ("" for none) with the given object members. */
static char *jobset_update(const char *sub, const char *objects) {
    char m[2000];
    snprintf(m, sizeof m, "\"uid\":\"u\",\"operation\":\"UPDATE\",%s,\"subResource\":\"%s\",%s",
             JOBSETS, sub, objects);
    return req(m);
}

START_TEST(crd_subresources) {
    static const char old_js[] = "\"oldObject\":{\"spec\":{\"managedBy\":\"a.io/b\"}}";
    /* status: both objects read and required */
    char *b = jobset_update("status", "\"object\":{\"spec\":{\"managedBy\":\"a.io/b\"}}");
    expect_p(NULL, b, RD_SAME_REFUSAL, 0, JG_VERDICT_BAD_REQUEST,
             "request.oldObject: required for UPDATE");
    free(b);
    b = jobset_update("status", "\"object\":{\"spec\":{\"managedBy\":\"a.io/b\"}},"
                                "\"oldObject\":{\"spec\":{\"replicatedJobs\":[7]}}");
    expect_p(NULL, b, RD_SAME_REFUSAL, 0, JG_VERDICT_BAD_REQUEST,
             "request.oldObject.spec.replicatedJobs[0]: must be an object, got an integer");
    free(b);
    b = jobset_update("status", "\"object\":{\"spec\":{\"managedBy\":\"a.io/b\"}},"
                                "\"oldObject\":{\"spec\":{\"managedBy\":\"a.io/b\"}}");
    expect_p(NULL, b, RD_SAME_VIEW, 0, JG_VERDICT_ALLOWED, NULL);
    free(b);
    /* scale: not required, but read (and checked) when sent */
    b = jobset_update("scale", "\"object\":{\"kind\":\"Scale\"}");
    expect_p(NULL, b, RD_SAME_REFUSAL, 0, JG_VERDICT_BAD_REQUEST,
             "request.object.kind: expected \"JobSet\", got \"Scale\"");
    free(b);
    b = jobset_update("scale", "\"object\":null");
    expect_p(NULL, b, RD_SAME_VIEW, 0, JG_VERDICT_ALLOWED, NULL);
    free(b);
    /* the objects come before the routing fields: read once the request is routed */
    char m[1000];
    snprintf(m, sizeof m,
             "\"object\":{\"spec\":{\"managedBy\":[]}},%s,\"uid\":\"u\",\"operation\":\"UPDATE\","
             "\"dryRun\":7,%s",
             old_js, JOBSETS);
    b = req(m);
    expect_p(NULL, b, RD_SAME_REFUSAL, 0, JG_VERDICT_BAD_REQUEST,
             "request.dryRun: must be a boolean, got an integer");
    free(b);
    snprintf(m, sizeof m,
             "\"uid\":\"u\",\"operation\":\"UPDATE\",%s,\"object\":{\"spec\":{\"managedBy\":[]}},"
             "%s,\"dryRun\":7",
             JOBSETS, old_js);
    b = req(m);
    expect_p(NULL, b, RD_SAME_REFUSAL, 0, JG_VERDICT_BAD_REQUEST,
             "request.object.spec.managedBy: must be a string, got an array");
    free(b);
    /* DELETE: no object read */
    snprintf(m, sizeof m, "\"uid\":\"u\",\"operation\":\"DELETE\",%s,\"oldObject\":{\"spec\":5}",
             JOBSETS);
    b = req(m);
    expect_p(NULL, b, RD_SAME_VIEW, 0, JG_VERDICT_ALLOWED, NULL);
    free(b);
}
END_TEST

START_TEST(crd_refusals) {
    static const char *const cases[][2] = {
        {"{\"spec\":{\"replicatedJobs\":[{},\"x\"]}}",
         "request.object.spec.replicatedJobs[1]: must be an object, got a string"},
        {"{\"spec\":{\"managedBy\":5}}",
         "request.object.spec.managedBy: must be a string, got an integer"},
        {"{\"spec\":{\"replicatedJobs\":{}}}",
         "request.object.spec.replicatedJobs: must be an array, got an object"},
        {"{\"spec\":[]}", "request.object.spec: must be an object, got an array"},
        {"{\"spec\":{\"replicatedJobs\":[null,{\"template\":{\"spec\":{\"managedBy\":true}}}]}}",
         "request.object.spec.replicatedJobs[1].template.spec.managedBy: must be a string, got a "
         "boolean"},
        {"{\"spec\":{\"replicatedJobs\":[{\"template\":[1]}]}}",
         "request.object.spec.replicatedJobs[0].template: must be an object, got an array"},
        {"{\"spec\":{\"replicatedJobs\":[{\"template\":{\"spec\":1.5}}]}}",
         "request.object.spec.replicatedJobs[0].template.spec: must be an object, got a "
         "non-integer number"},
        {"{\"metadata\":{\"name\":1}}",
         "request.object.metadata.name: must be a string, got an integer"},
        {"{\"metadata\":\"m\"}", "request.object.metadata: must be an object, got a string"},
        {"{\"kind\":\"Job\"}", "request.object.kind: expected \"JobSet\", got \"Job\""},
        {"{\"kind\":[]}", "request.object.kind: must be a string, got an array"},
        /* the first problem in document order */
        {"{\"spec\":{\"replicatedJobs\":[5],\"managedBy\":5},\"kind\":\"X\"}",
         "request.object.spec.replicatedJobs[0]: must be an object, got an integer"},
        {"{\"kind\":\"X\",\"spec\":{\"replicatedJobs\":[5]}}",
         "request.object.kind: expected \"JobSet\", got \"X\""},
        {"\"js\"", "request.object: must be an object, got a string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *b = crd_create(JOBSETS, cases[i][0]);
        expect_p(NULL, b, RD_SAME_REFUSAL, 0, JG_VERDICT_BAD_REQUEST, cases[i][1]);
        free(b);
    }
    /* a key repeated on a path is refused; off the paths it is ignored */
    static const char *const dups[] = {
        "{\"spec\":{},\"spec\":{}}",
        "{\"spec\":{\"replicatedJobs\":[{\"template\":{\"spec\":{\"managedBy\":\"a/b\","
        "\"managedBy\":\"a/b\"}}}]}}",
        "{\"spec\":{\"replicatedJobs\":[{\"template\":{},\"templat\\u0065\":{}}]}}",
        "{\"metadata\":{\"name\":\"a\",\"name\":null}}",
        "{\"spec\":{\"replicatedJobs\":null,\"replicatedJobs\":[]}}",
        /* status is read (as a whole, for Policy-StatusWriters on a main-resource UPDATE) */
        "{\"status\":1,\"status\":2}",
        /* the list key of replicatedJobs is read too (JobSet's row keys it by name) */
        "{\"spec\":{\"replicatedJobs\":[{\"name\":\"a\",\"name\":\"b\"},{\"template\":{}}]}}",
        "{\"spec\":{\"replicatedJobs\":[{\"template\":{},\"name\":1,\"n\\u0061me\":\"b\"}]}}",
    };
    for (size_t i = 0; i < sizeof dups / sizeof *dups; i++) {
        char *b = crd_create(JOBSETS, dups[i]);
        expect_p(NULL, b, RD_SAME_DUPLICATE, RD_EX_DUPLICATE, JG_VERDICT_BAD_REQUEST,
                 "duplicate object key");
        free(b);
    }
    static const char *const ignored[] = {
        "{\"metadata\":{\"labels\":{\"x\":\"1\",\"x\":\"2\"}}}",
        "{\"spec\":{\"replicatedJobs\":[{\"replicas\":1,\"replicas\":2},{\"template\":{}}]}}",
        "{\"status\":{\"a\":1,\"a\":2},\"apiVersion\":3,\"apiVersion\":4}",
    };
    for (size_t i = 0; i < sizeof ignored / sizeof *ignored; i++) {
        char *b = crd_create(JOBSETS, ignored[i]);
        expect_p(NULL, b, RD_SAME_VIEW, RD_EX_DUPLICATE, JG_VERDICT_ALLOWED, NULL);
        free(b);
    }
    /* status on UPDATE: the scanner compares bytes, the reference values; the same status spelled
     * two ways is the one accepted difference, the scanner's answer (changed) stands */
    static const char *const statuses[][2] = {
        {"{\"a\":1}", "{\"a\":1}"}, {"{\"a\":1}", "{\"a\":2}"}, {"{\"a\":1}", "{ \"a\": 1 }"}};
    for (size_t i = 0; i < 3; i++) {
        char m[400];
        snprintf(m, sizeof m,
                 "\"uid\":\"u\",\"operation\":\"UPDATE\"," JOBSETS ",\"object\":{\"status\":%s},"
                 "\"oldObject\":{\"status\":%s}",
                 statuses[i][0], statuses[i][1]);
        char *u = req(m);
        expect_p(NULL, u, RD_SAME_VIEW, i == 2 ? RD_EX_STATUS_BYTES : 0, JG_VERDICT_ALLOWED, NULL);
        free(u);
    }
    /* "kind" is no path's: each occurrence is checked, a repeat is no error of its own */
    char *b = crd_create(JOBSETS, "{\"kind\":\"JobSet\",\"kind\":\"JobSet\"}");
    expect_p(NULL, b, RD_SAME_VIEW, RD_EX_DUPLICATE, JG_VERDICT_ALLOWED, NULL);
    free(b);
    b = crd_create(JOBSETS, "{\"kind\":\"JobSet\",\"kind\":\"Job\"}");
    expect_p(NULL, b, RD_SAME_REFUSAL, RD_EX_DUPLICATE, JG_VERDICT_BAD_REQUEST,
             "request.object.kind: expected \"JobSet\", got \"Job\"");
    free(b);
}
END_TEST

START_TEST(crd_policy_rows) {
    const struct jg_policy *p = refdiff_test_policy();
    struct ref_review rr;
    /* the policy's JobSet row: four nested paths, in document order across them */
    char *b = crd_create(
        JOBSETS, "{\"managedBy\":\"top/level\",\"spec\":{\"groups\":[{\"members\":[null,"
                 "{\"managedBy\":\"g0/m1\"}]},null,{\"members\":[{\"managedBy\":\"g2/m0\"}]}],"
                 "\"replicatedJobs\":[{\"template\":{\"metadata\":{\"name\":\"t0\"},\"spec\":{"
                 "\"managedBy\":\"r0/s\"}}},{\"template\":{\"spec\":{\"managedBy\":\"r1/s\"},"
                 "\"metadata\":{\"name\":\"t1\"}}}]}}");
    const struct jg_request *q = ref_view(p, b, &rr);
    ck_assert_ptr_eq(q->row, &p->targets[0]);
    ck_assert_uint_eq(q->object.n_nested, 7);
    nested_is(&q->object, 0, 3, "managedBy", "top/level");
    nested_is(&q->object, 1, 2, "spec.groups[0].members[1].managedBy", "g0/m1");
    nested_is(&q->object, 2, 2, "spec.groups[2].members[0].managedBy", "g2/m0");
    nested_is(&q->object, 3, 1, "spec.replicatedJobs[0].template.metadata.name", "t0");
    nested_is(&q->object, 4, 0, "spec.replicatedJobs[0].template.spec.managedBy", "r0/s");
    nested_is(&q->object, 5, 0, "spec.replicatedJobs[1].template.spec.managedBy", "r1/s");
    nested_is(&q->object, 6, 1, "spec.replicatedJobs[1].template.metadata.name", "t1");
    ref_review_free(&rr);
    free(b);
    /* two levels: groups keyed by id (read after the copies too), members by index */
    b = crd_create(JOBSETS, "{\"spec\":{\"groups\":[{\"id\":\"g0\",\"members\":[null,{"
                            "\"managedBy\":\"g0/m1\"}]},{\"members\":[{\"managedBy\":\"x/y\","
                            "\"id\":\"not-a-key\"}],\"id\":\"g1\"},{\"members\":[{\"managedBy\":"
                            "\"z/z\"}]}]}}");
    q = ref_view(p, b, &rr);
    ck_assert_uint_eq(q->object.n_nested, 3);
    nested_is(&q->object, 1, 2, "spec.groups[1].members[0].managedBy", "x/y");
    match_is(&q->object, 0, "=2:g0[1]", 8);
    match_is(&q->object, 1, "=2:g1[0]", 8);
    match_is(&q->object, 2, NULL, 0);
    ref_review_free(&rr);
    free(b);
    b = crd_create(JOBSETS, "{\"spec\":{\"groups\":[{\"members\":[{},3]}]}}");
    expect_p(p, b, RD_SAME_REFUSAL, 0, JG_VERDICT_BAD_REQUEST,
             "request.object.spec.groups[0].members[1]: must be an object, got an integer");
    free(b);
    b = crd_create(JOBSETS, "{\"managedBy\":{}}");
    expect_p(p, b, RD_SAME_REFUSAL, 0, JG_VERDICT_BAD_REQUEST,
             "request.object.managedBy: must be a string, got an object");
    free(b);
    /* Widget: managedByPath metadata.name, read once for both */
    b = crd_create("\"resource\":{\"group\":\"example.com\",\"version\":\"v1\",\"resource\":"
                   "\"widgets\"}",
                   "{\"metadata\":{\"name\":\"example.com/w\"}}");
    q = ref_view(p, b, &rr);
    ck_assert_ptr_eq(q->row, &p->targets[1]);
    ck_assert(jg_str_eq_lit(q->object.name, "example.com/w"));
    ck_assert(jg_str_eq_lit(q->object.spec.managed_by.s, "example.com/w"));
    ref_review_free(&rr);
    free(b);
    /* Gadget: managedByPath "kind", so no kind check */
    b = crd_create("\"kind\":{\"group\":\"example.com\",\"version\":\"v1\",\"kind\":\"Gadget\"}",
                   "{\"kind\":\"example.com/other\",\"metadata\":{\"name\":\"g\"}}");
    q = ref_view(p, b, &rr);
    ck_assert_ptr_eq(q->row, &p->targets[3]);
    ck_assert(jg_str_eq_lit(q->object.spec.managed_by.s, "example.com/other"));
    nested_is(&q->object, 0, 0, "metadata.name", "g");
    ref_review_free(&rr);
    free(b);
    b = crd_create("\"kind\":{\"group\":\"example.com\",\"version\":\"v1\",\"kind\":\"Gadget\"}",
                   "{\"kind\":\"a/b\",\"kind\":\"c/d\"}");
    expect_p(p, b, RD_SAME_DUPLICATE, RD_EX_DUPLICATE, JG_VERDICT_BAD_REQUEST,
             "duplicate object key");
    free(b);
    /* rayjobs: v1 is the built-in RayJob's, v2 RayJobX's, v3 nobody's: the first row (policy) */
    static const char *const ray[] = {"v1", "v2", "v3"};
    for (int i = 0; i < 3; i++) {
        char route[200];
        snprintf(route, sizeof route,
                 "\"resource\":{\"group\":\"ray.io\",\"version\":\"%s\",\"resource\":\"rayjobs\"}",
                 ray[i]);
        b = crd_create(route, "{\"spec\":{\"x\":[{\"y\":\"a/b\"}]}}");
        q = ref_view(p, b, &rr);
        ck_assert_ptr_eq(q->row, i ? &p->targets[2] : builtin("ray.io", "RayJob", "v1"));
        ck_assert_int_eq(q->object.spec.managed_by.set, i != 0);
        ref_review_free(&rr);
        free(b);
    }
    /* MPIJob: the policy row replaces both built-in rows, at every version */
    static const char *const mpi[] = {"v1", "v2beta1", "v3"};
    for (int i = 0; i < 3; i++) {
        char route[200];
        snprintf(route, sizeof route,
                 "\"kind\":{\"group\":\"kubeflow.org\",\"version\":\"%s\",\"kind\":\"MPIJob\"}",
                 mpi[i]);
        b = crd_create(route, "{\"kind\":\"MPIJob\"}");
        q = ref_view(p, b, &rr);
        ck_assert_ptr_eq(q->row, &p->targets[4]);
        ref_review_free(&rr);
        free(b);
    }
}
END_TEST

/* A policy row's field names may be longer than any key the decoder reads for Job (a 70-byte
 * one here): the messages name them whole. */
START_TEST(crd_long_field_names) {
    char seg[71], pol[1024], err[512];
    memset(seg, 'b', 70);
    seg[70] = '\0';
    snprintf(pol, sizeof pol,
             "{\"targets\":[{\"group\":\"example.com\",\"versions\":[\"v1\"],\"kind\":\"Long\","
             "\"resource\":\"longs\",\"managedByPath\":\"spec.%s\",\"reservedValue\":"
             "\"example.com/x\",\"nestedPaths\":[{\"path\":\"%s[*].x\",\"reservedValue\":\"\"}]}]}",
             seg, seg);
    struct jg_policy *p = jg_policy_load_buffer("long", pol, strlen(pol), err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    static const char route[] =
        "\"resource\":{\"group\":\"example.com\",\"version\":\"v1\",\"resource\":\"longs\"}";
    char obj[400], msg[400];
    snprintf(obj, sizeof obj, "{\"spec\":{\"%s\":5}}", seg);
    snprintf(msg, sizeof msg, "request.object.spec.%s: must be a string, got an integer", seg);
    char *b = crd_create(route, obj);
    expect_p(p, b, RD_SAME_REFUSAL, 0, JG_VERDICT_BAD_REQUEST, msg);
    free(b);
    snprintf(obj, sizeof obj, "{\"%s\":[{\"x\":{}}]}", seg);
    snprintf(msg, sizeof msg, "request.object.%s[0].x: must be a string, got an object", seg);
    b = crd_create(route, obj);
    expect_p(p, b, RD_SAME_REFUSAL, 0, JG_VERDICT_BAD_REQUEST, msg);
    free(b);
    snprintf(obj, sizeof obj, "{\"%s\":{}}", seg);
    snprintf(msg, sizeof msg, "request.object.%s: must be an array, got an object", seg);
    b = crd_create(route, obj);
    expect_p(p, b, RD_SAME_REFUSAL, 0, JG_VERDICT_BAD_REQUEST, msg);
    free(b);
    jg_policy_free(p);
}
END_TEST

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s CASES_DIR FUZZ_DIR\n", argv[0]);
        return 2;
    }
    char p[4200];
    add_dir(argv[1], true);
    int ncases = nfiles;
    snprintf(p, sizeof p, "%.4000s/seeds/fuzz_admit", argv[2]);
    add_dir(p, false);
    snprintf(p, sizeof p, "%.4000s/regressions/fuzz_admit", argv[2]);
    add_dir(p, false);
    snprintf(p, sizeof p, "%.4000s/regressions/fuzz_refdecode", argv[2]);
    add_dir(p, false);
    if (ncases < 100) { /* the corpus is the point: a wrong path must not pass vacuously */
        fprintf(stderr, "only %d cases under %s\n", ncases, argv[1]);
        return 1;
    }
    Suite *s = suite_create("refdecode");
    TCase *tc = tcase_create("refdecode");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, corpus_agrees, 0, nfiles);
    tcase_add_test(tc, duplicate_keys);
    tcase_add_test(tc, nul);
    tcase_add_test(tc, big_numbers);
    tcase_add_test(tc, depth);
    tcase_add_test(tc, agreed_edges);
    tcase_add_test(tc, member_order);
    tcase_add_test(tc, crd_views);
    tcase_add_test(tc, crd_list_keys);
    tcase_add_test(tc, crd_subresources);
    tcase_add_test(tc, crd_refusals);
    tcase_add_test(tc, crd_policy_rows);
    tcase_add_test(tc, crd_long_field_names);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
