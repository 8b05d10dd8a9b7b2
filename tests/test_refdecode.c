/* The scanner (src/decode.c) against the jansson reference decoder (refdecode.h), through the
 * comparator the fuzz target uses (refdiff.h):
 *  - every tests/cases review, every fuzz seed and regression: the two agree (both wordings);
 *  - each place where they may legitimately differ: the comparator applies exactly the
 *    documented exception and the outcome a user sees is the scanner's;
 *  - member order never changes the answer (regressions of the decoder fixed by this check).
 * Usage: test_refdecode CASES_DIR FUZZ_DIR */
#include "jobguard/admit.h"
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

static struct refdiff run(const char *body, size_t len, enum jg_parity parity) {
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    cfg.parity = parity;
    struct refdiff d;
    refdiff_run(body, len, &cfg, &d);
    return d;
}

START_TEST(corpus_agrees) {
    size_t len;
    char *body = slurp(files[_i], &len);
    ck_assert_ptr_nonnull(body);
    for (int parity = JG_PARITY_1_35; parity <= JG_PARITY_1_36; parity++) {
        struct refdiff d = run(body, len, (enum jg_parity)parity);
        ck_assert_msg(d.kind != RD_DIFFER, "%s: %s", files[_i], d.detail);
    }
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
    suite_add_tcase(s, tc);
    return run_suite(s);
}
