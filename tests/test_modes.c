/* Modes (deny, warn, audit, off), the two policy rules (Policy-AllowedControllers,
 * Policy-StatusWriters) and their rendering, on views and policies built directly (no JSON, no
 * policy file): docs/modes.md, docs/rules.md §11. Responses are compared byte for byte. */
#include "jobguard/admit.h"
#include "jobguard/encode.h"
#include "jobguard/policy.h"
#include "jobguard/rules.h"

#include <check.h>

#include "run_suite.h"
#include <regex.h>
#include <stdio.h>
#include <string.h>

#define HEAD "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\",\"response\":"
#define LONG_OK "a.io/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 64 bytes */
#define TOO_LONG_TEXT "spec.managedBy: Too long: may not be more than 63 bytes"
/* What a warn-mode warning starts with (docs/modes.md "Warnings") */
#define WARN(id) "jobguard (" id ", warn mode; denied in deny mode): "

static struct jg_request req;
static struct jg_config cfg;
static struct jg_outcome out;
static jg_buf resp;

static jg_str S(const char *s) {
    return (jg_str){s, strlen(s)};
}

static void setup(void) {
    memset(&req, 0, sizeof req);
    req.api_version = JG_API_V1;
    req.uid = S("u1");
    req.operation = JG_OP_CREATE;
    req.group = S("batch");
    req.resource = S("jobs");
    req.target = JG_TARGET_JOB;
    req.name = S("j");
    req.namespace_ = S("team-a");
    req.username = S("alice");
    req.object.present = true;
    req.object.name = S("j");
    cfg = (struct jg_config)JG_CONFIG_DEFAULT;
    jg_outcome_init(&out);
    resp = (jg_buf)JG_BUF_INIT;
}

static void drop_lookups(void);

static void teardown(void) {
    drop_lookups();
    jg_outcome_free(&out);
    jg_buf_free(&resp);
}

static void managed_by(const char *v) {
    req.object.spec.managed_by = (jg_opt_str){true, S(v)};
}

/* The response bytes for the request under cfg. */
static const char *admit(void) {
    jg_review r = {req, NULL};
    jg_admit_review(&r, &cfg, &resp, &out);
    ck_assert(!resp.oom);
    return resp.data;
}

static uint64_t bit(int r) {
    return UINT64_C(1) << r;
}

/* ---- modes ---- */

START_TEST(deny_is_unchanged_by_other_modes) {
    managed_by(LONG_OK);
    char before[512];
    snprintf(before, sizeof before, "%s", admit());
    ck_assert_str_eq(before, HEAD
                     "{\"uid\":\"u1\",\"allowed\":false,\"status\":{\"metadata\":{},\"status\":"
                     "\"Failure\",\"message\":\"Job.batch \\\"j\\\" is invalid: " TOO_LONG_TEXT
                     "\",\"reason\":\"Invalid\",\"details\":{\"name\":\"j\",\"group\":\"batch\","
                     "\"kind\":\"Job\",\"causes\":[{\"reason\":\"FieldValueTooLong\",\"message\":"
                     "\"Too long: may not be more than 63 bytes\",\"field\":\"spec.managedBy\"}]},"
                     "\"code\":422}}}");
    /* rules that do not fire change nothing, whatever their mode */
    cfg.mode[JG_R_MANAGED_BY_FORMAT] = JG_MODE_WARN;
    cfg.mode[JG_R_NON_NEGATIVE] = JG_MODE_AUDIT;
    cfg.mode[JG_R_MANAGED_BY_IMMUTABLE] = JG_MODE_OFF;
    ck_assert_str_eq(admit(), before);
    ck_assert_int_eq(out.code, 422);
    ck_assert_uint_eq(out.rules, bit(JG_R_MANAGED_BY_LENGTH));
    ck_assert_uint_eq(out.rules_warn | out.rules_audit, 0);
}
END_TEST

START_TEST(warn_allows_with_one_warning) {
    managed_by(LONG_OK);
    cfg.mode[JG_R_MANAGED_BY_LENGTH] = JG_MODE_WARN;
    ck_assert_str_eq(admit(), HEAD "{\"uid\":\"u1\",\"allowed\":true,\"warnings\":[\"" WARN(
                                  "ALWAYS-ManagedByLength") TOO_LONG_TEXT "\"]}}");
    ck_assert_int_eq(out.verdict, JG_VERDICT_ALLOWED);
    ck_assert_uint_eq(out.rules, 0);
    ck_assert_uint_eq(out.rules_warn, bit(JG_R_MANAGED_BY_LENGTH));
    ck_assert_str_eq(out.warnings.data, WARN("ALWAYS-ManagedByLength") TOO_LONG_TEXT "\n");
}
END_TEST

START_TEST(warn_update_reports_once) {
    /* on UPDATE the format check runs twice (docs/rules.md §2.6): one warning, not two */
    req.operation = JG_OP_UPDATE;
    req.old_object.present = true;
    managed_by(LONG_OK);
    req.old_object.spec.managed_by = req.object.spec.managed_by;
    cfg.mode[JG_R_MANAGED_BY_LENGTH] = JG_MODE_WARN;
    ck_assert_str_eq(admit(), HEAD "{\"uid\":\"u1\",\"allowed\":true,\"warnings\":[\"" WARN(
                                  "ALWAYS-ManagedByLength") TOO_LONG_TEXT "\"]}}");
}
END_TEST

START_TEST(audit_allows_with_annotation) {
    managed_by(LONG_OK);
    cfg.mode[JG_R_MANAGED_BY_LENGTH] = JG_MODE_AUDIT;
    ck_assert_str_eq(admit(), HEAD "{\"uid\":\"u1\",\"allowed\":true,\"auditAnnotations\":{"
                                   "\"ALWAYS-ManagedByLength\":\"" TOO_LONG_TEXT "\"}}}");
    ck_assert_uint_eq(out.rules_audit, bit(JG_R_MANAGED_BY_LENGTH));
    ck_assert_uint_eq(out.rules | out.rules_warn, 0);
    ck_assert_uint_eq(out.warnings.len, 0);
}
END_TEST

START_TEST(off_and_disabled_report_nothing) {
    managed_by(LONG_OK);
    cfg.mode[JG_R_MANAGED_BY_LENGTH] = JG_MODE_OFF;
    const char *allowed = HEAD "{\"uid\":\"u1\",\"allowed\":true}}";
    ck_assert_str_eq(admit(), allowed);
    ck_assert_uint_eq(out.rules | out.rules_warn | out.rules_audit, 0);
    /* --disable-rule wins over any mode */
    cfg.mode[JG_R_MANAGED_BY_LENGTH] = JG_MODE_WARN;
    cfg.disabled = bit(JG_R_MANAGED_BY_LENGTH);
    ck_assert_str_eq(admit(), allowed);
    ck_assert_int_eq(jg_rule_mode(&cfg, JG_R_MANAGED_BY_LENGTH), JG_MODE_OFF);
    /* an out-of-range mode counts as deny */
    cfg.disabled = 0;
    cfg.mode[JG_R_MANAGED_BY_LENGTH] = 200;
    ck_assert_int_eq(jg_rule_mode(&cfg, JG_R_MANAGED_BY_LENGTH), JG_MODE_DENY);
    admit();
    ck_assert_int_eq(out.code, 422);
}
END_TEST

/* "Acme.io/" + 60 bytes: both the format (host not lowercase) and the length rules fire. */
#define BOTH "Acme.io/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"

START_TEST(mixed_strictest_wins_others_attached) {
    managed_by(BOTH);
    admit();
    size_t all_deny_len = resp.len;
    ck_assert_uint_eq(out.rules, bit(JG_R_MANAGED_BY_FORMAT) | bit(JG_R_MANAGED_BY_LENGTH));

    /* deny + warn: the denial holds the deny-mode error only, the warning rides along */
    cfg.mode[JG_R_MANAGED_BY_LENGTH] = JG_MODE_WARN;
    const char *r = admit();
    ck_assert_int_eq(out.verdict, JG_VERDICT_DENIED);
    ck_assert_int_eq(out.code, 422);
    ck_assert_ptr_null(strstr(r, "FieldValueTooLong"));
    ck_assert_ptr_null(strstr(out.message.data, "Too long"));
    ck_assert_uint_eq(out.n_errors, 1);
    const char *tail =
        "\"code\":422},\"warnings\":[\"" WARN("ALWAYS-ManagedByLength") TOO_LONG_TEXT "\"]}}";
    ck_assert_str_eq(r + strlen(r) - strlen(tail), tail);
    ck_assert_uint_lt(resp.len,
                      all_deny_len + strlen(WARN("ALWAYS-ManagedByLength") TOO_LONG_TEXT) + 20);

    /* deny + audit */
    cfg.mode[JG_R_MANAGED_BY_LENGTH] = JG_MODE_AUDIT;
    r = admit();
    tail =
        "\"code\":422},\"auditAnnotations\":{\"ALWAYS-ManagedByLength\":\"" TOO_LONG_TEXT "\"}}}";
    ck_assert_str_eq(r + strlen(r) - strlen(tail), tail);

    /* warn + audit: allowed, annotations before warnings (AdmissionResponse field order) */
    cfg.mode[JG_R_MANAGED_BY_FORMAT] = JG_MODE_WARN;
    r = admit();
    ck_assert_int_eq(out.verdict, JG_VERDICT_ALLOWED);
    const char *want_start =
        HEAD "{\"uid\":\"u1\",\"allowed\":true,\"auditAnnotations\":{"
             "\"ALWAYS-ManagedByLength\":\"" TOO_LONG_TEXT "\"},\"warnings\":"
             "[\"" WARN("ALWAYS-ManagedByFormat") "spec.managedBy: Invalid value: \\\"Acme.io\\\": "
                                                  "a lowercase RFC "
                                                  "1123 subdomain";
    ck_assert_int_eq(strncmp(r, want_start, strlen(want_start)), 0);
    ck_assert_uint_eq(out.rules_warn, bit(JG_R_MANAGED_BY_FORMAT));
    ck_assert_uint_eq(out.rules_audit, bit(JG_R_MANAGED_BY_LENGTH));
    /* the RFC 1123 text is longer than 256 bytes: cut, ending in "..." */
    ck_assert_uint_eq(strlen(out.warnings.data), JG_MAX_WARNING_BYTES + 1);
    ck_assert_str_eq(out.warnings.data + JG_MAX_WARNING_BYTES - 3, "...\n");

    /* both warn: two warnings, in rule order */
    cfg.mode[JG_R_MANAGED_BY_LENGTH] = JG_MODE_WARN;
    admit();
    ck_assert_str_eq(strchr(out.warnings.data, '\n') + 1,
                     WARN("ALWAYS-ManagedByLength") TOO_LONG_TEXT "\n");
}
END_TEST

START_TEST(dry_run_is_decided_the_same) {
    managed_by(BOTH);
    cfg.mode[JG_R_MANAGED_BY_LENGTH] = JG_MODE_WARN;
    char wet[2048];
    snprintf(wet, sizeof wet, "%s", admit());
    ck_assert(!out.dry_run);
    req.dry_run = true;
    ck_assert_str_eq(admit(), wet);
    ck_assert(out.dry_run);
    ck_assert_uint_eq(out.rules_warn, bit(JG_R_MANAGED_BY_LENGTH));
}
END_TEST

START_TEST(v1beta1_and_status_modes) {
    /* status rules take modes too; the review's apiVersion is echoed */
    req.api_version = JG_API_V1BETA1;
    req.operation = JG_OP_UPDATE;
    req.sub_resource = S("status");
    req.old_object.present = true;
    req.object.status.active = -1;
    req.old_object.status.active = 0;
    cfg.mode[JG_R_NON_NEGATIVE] = JG_MODE_WARN;
    ck_assert_str_eq(
        admit(),
        "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/"
        "v1beta1\",\"response\":{\"uid\":\"u1\",\"allowed\":true,\"warnings\":"
        "[\"" WARN(
            "ALWAYS-NonNeg") "status.active: Invalid value: -1: must be greater than or equal "
                             "to 0\"]}}");
}
END_TEST

/* ---- warning and annotation bounds ---- */

START_TEST(warnings_are_bounded) {
    struct jg_errors e;
    jg_errors_init(&e);
    char detail[200];
    for (int i = 0; i < 100; i++) {
        snprintf(detail, sizeof detail, "%03d %0100d", i, 0);
        jg_err_invalid_omit(&e, JG_R_NON_NEGATIVE, "status.active", detail);
    }
    jg_buf w = JG_BUF_INIT;
    jg_render_warnings(&e, &w);
    ck_assert(!w.oom);
    ck_assert_uint_le(w.len, JG_MAX_WARNINGS_TOTAL);
    size_t lines = 0;
    for (size_t i = 0; i < w.len; i++)
        lines += w.data[i] == '\n';
    /* each warning is "jobguard (ALWAYS-NonNeg, warn mode; denied in deny mode): status.active:
     * Invalid value: NNN 000…" = 58 + 134 bytes (+ a newline here) */
    size_t kept = (JG_MAX_WARNINGS_TOTAL - 64) / (58 + 134);
    ck_assert_uint_eq(lines, kept + 1);
    char note[64];
    snprintf(note, sizeof note, "jobguard: %zu more warnings omitted\n", 100 - kept);
    ck_assert_str_eq(w.data + w.len - strlen(note), note);
    const char *first = WARN("ALWAYS-NonNeg") "status.active: Invalid value: 000 0000";
    ck_assert_int_eq(strncmp(w.data, first, strlen(first)), 0);
    /* the prefix counts toward the 256 bytes of one warning: 3 of 100 bytes more cut it */
    jg_errors_reset(&e);
    char longer[300];
    snprintf(longer, sizeof longer, "%0170d", 0);
    jg_err_invalid_omit(&e, JG_R_NON_NEGATIVE, "status.active", longer);
    jg_buf_reset(&w);
    jg_render_warnings(&e, &w);
    ck_assert_uint_eq(w.len, JG_MAX_WARNING_BYTES + 1);
    ck_assert_str_eq(w.data + JG_MAX_WARNING_BYTES - 3, "...\n");
    jg_errors_reset(&e);
    for (int i = 0; i < 100; i++) {
        snprintf(detail, sizeof detail, "%03d %0100d", i, 0);
        jg_err_invalid_omit(&e, JG_R_NON_NEGATIVE, "status.active", detail);
    }

    /* the audit value of the same errors: the aggregate, cut at 10 KiB */
    jg_buf a = JG_BUF_INIT;
    jg_render_audit_value(&e, JG_R_NON_NEGATIVE, &a);
    ck_assert_uint_le(a.len, JG_MAX_AUDIT_VALUE_BYTES);
    ck_assert_int_eq(a.data[0], '[');
    ck_assert_ptr_nonnull(strstr(a.data, " [truncated "));
    ck_assert_str_eq(a.data + a.len - 6, "bytes]");
    jg_buf_reset(&a);
    jg_render_audit_value(&e, JG_R_MANAGED_BY_FORMAT, &a); /* no error of that rule */
    ck_assert_uint_eq(a.len, 0);
    jg_buf_free(&a);
    jg_buf_free(&w);
    jg_errors_free(&e);
}
END_TEST

START_TEST(audit_keys_are_valid_annotation_names) {
    /* the API server prefixes "<webhook name>/": the key must be a qualified name's name part */
    regex_t re;
    ck_assert_int_eq(regcomp(&re, "^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$", REG_EXTENDED), 0);
    for (int i = 0; i < JG_RULE_COUNT; i++) {
        ck_assert_uint_le(strlen(jg_rules[i].name), 63);
        ck_assert_msg(regexec(&re, jg_rules[i].name, 0, NULL, 0) == 0, "%s", jg_rules[i].name);
    }
    regfree(&re);
}
END_TEST

START_TEST(not_supported_rendering) {
    struct jg_errors e;
    jg_errors_init(&e);
    jg_str vals[] = {S("a.io/x"), S("b.io/\"q\"")};
    jg_err_not_supported(&e, JG_R_POLICY_ALLOWED_CONTROLLERS, "spec.managedBy", S("c\n"), vals, 2);
    jg_err_not_supported(&e, JG_R_POLICY_ALLOWED_CONTROLLERS, "spec.managedBy", S("d"), vals, 0);
    ck_assert_uint_eq(e.n, 2);
    jg_str b0 = jg_err_body(&e, 0), b1 = jg_err_body(&e, 1);
    ck_assert_str_eq(jg_err_reason(e.v[0].type), "FieldValueNotSupported");
    ck_assert_int_eq((int)b0.n, (int)strlen("Unsupported value: \"c\\n\": supported values: "
                                            "\"a.io/x\", \"b.io/\\\"q\\\"\""));
    ck_assert_int_eq(memcmp(b0.p,
                            "Unsupported value: \"c\\n\": supported values: \"a.io/x\", "
                            "\"b.io/\\\"q\\\"\"",
                            b0.n),
                     0);
    /* apimachinery: no valid values, no detail */
    ck_assert_int_eq((int)b1.n, (int)strlen("Unsupported value: \"d\""));
    ck_assert_int_eq(memcmp(b1.p, "Unsupported value: \"d\"", b1.n), 0);
    jg_errors_free(&e);
}
END_TEST

/* ---- Policy-AllowedControllers ---- */

static const char *mgr_ns[] = {"team-*", "batch"};
static const char *any_ns[] = {"kueue-*"};
static const char *sa_users[] = {"system:serviceaccount:ctl:ctl"};
static const char *writer_groups[] = {"ctl-writers"};
static const char *masters[] = {"system:masters"};
static struct jg_policy_controller ctls[] = {
    {.name = "kueue.x-k8s.io/multikueue", .name_len = sizeof "kueue.x-k8s.io/multikueue" - 1},
    {.name = "z.io/ctl", .name_len = sizeof "z.io/ctl" - 1, .namespaces = {mgr_ns, 2}},
    {.name = "a.io/ctl", .name_len = sizeof "a.io/ctl" - 1, .namespaces = {any_ns, 1}},
    {.name = "z.io/ctl",
     .name_len = sizeof "z.io/ctl" - 1,
     .namespaces = {mgr_ns, 2}}, /* listed twice: named once */
};
static struct jg_policy pol;

static void lookups(void);

static void allow_list(void) {
    drop_lookups();
    memset(&pol, 0, sizeof pol);
    pol.controllers = ctls;
    pol.n_controllers = 4;
    pol.allow_unlisted_controllers = false;
    pol.status_writer_exempt = (struct jg_strv){masters, 1};
    cfg.policy = &pol;
    lookups();
}

#define UNSUPPORTED(field, v, list) field ": Unsupported value: \"" v "\": supported values: " list

START_TEST(allow_list_denies_unlisted) {
    allow_list();
    managed_by("x.io/other");
    ck_assert_str_eq(
        admit(), HEAD
        "{\"uid\":\"u1\",\"allowed\":false,\"status\":{\"metadata\":{},\"status\":\"Failure\","
        "\"message\":\"Job.batch \\\"j\\\" is invalid: spec.managedBy: Unsupported value: "
        "\\\"x.io/other\\\": supported values: \\\"kubernetes.io/job-controller\\\", "
        "\\\"kueue.x-k8s.io/multikueue\\\", \\\"z.io/ctl\\\"\",\"reason\":\"Invalid\","
        "\"details\":{\"name\":\"j\",\"group\":\"batch\",\"kind\":\"Job\",\"causes\":[{"
        "\"reason\":\"FieldValueNotSupported\",\"message\":\"Unsupported value: \\\"x.io/"
        "other\\\": supported values: \\\"kubernetes.io/job-controller\\\", \\\"kueue.x-k8s.io/"
        "multikueue\\\", \\\"z.io/ctl\\\"\",\"field\":\"spec.managedBy\"}]},\"code\":422}}}");
    ck_assert_uint_eq(out.rules, bit(JG_R_POLICY_ALLOWED_CONTROLLERS));
}
END_TEST

START_TEST(allow_list_namespaces_and_values) {
    allow_list();
    /* listed for this namespace by glob, by an empty list, and the reserved value */
    const char *allowed = HEAD "{\"uid\":\"u1\",\"allowed\":true}}";
    managed_by("z.io/ctl");
    ck_assert_str_eq(admit(), allowed);
    req.namespace_ = S("batch");
    ck_assert_str_eq(admit(), allowed);
    managed_by("kueue.x-k8s.io/multikueue");
    ck_assert_str_eq(admit(), allowed);
    managed_by(JG_JOB_CONTROLLER);
    ck_assert_str_eq(admit(), allowed);
    req.object.spec.managed_by.set = false; /* absent: nothing to check */
    ck_assert_str_eq(admit(), allowed);
    /* not listed in this namespace: the message lists what is allowed here */
    req.namespace_ = S("kueue-system");
    managed_by("z.io/ctl");
    admit();
    ck_assert_str_eq(out.causes.data,
                     UNSUPPORTED("spec.managedBy", "z.io/ctl",
                                 "") "\"a.io/ctl\", \"kubernetes.io/job-controller\", "
                                     "\"kueue.x-k8s.io/multikueue\"; "
                                     "\"z.io/ctl\" is allowed only in namespaces team-*, batch\n");
    /* a value no entry names gets the list alone */
    managed_by("y.io/ctl");
    admit();
    ck_assert_str_eq(out.causes.data,
                     UNSUPPORTED("spec.managedBy", "y.io/ctl",
                                 "") "\"a.io/ctl\", \"kubernetes.io/job-controller\", "
                                     "\"kueue.x-k8s.io/multikueue\"\n");
    managed_by("z.io/ctl");
    /* no controller listed at all: the reserved value is the one supported value */
    pol.n_controllers = 0;
    admit();
    ck_assert_str_eq(out.causes.data, UNSUPPORTED("spec.managedBy", "z.io/ctl",
                                                  "") "\"kubernetes.io/job-controller\"\n");
    /* allowUnlistedControllers (the default) and no policy: anything goes */
    pol.allow_unlisted_controllers = true;
    ck_assert_str_eq(admit(), allowed);
    cfg.policy = NULL;
    ck_assert_str_eq(admit(), allowed);
}
END_TEST

START_TEST(allow_list_update_cronjob_and_modes) {
    allow_list();
    managed_by("x.io/other");
    /* UPDATE: an unchanged value is not re-checked (docs/rules.md §11.1), a changed one is */
    req.operation = JG_OP_UPDATE;
    req.old_object.present = true;
    req.old_object.spec.managed_by = req.object.spec.managed_by;
    admit();
    ck_assert_int_eq(out.verdict, JG_VERDICT_ALLOWED);
    req.old_object.spec.managed_by.set = false;
    admit();
    ck_assert_uint_eq(out.rules,
                      bit(JG_R_POLICY_ALLOWED_CONTROLLERS) | bit(JG_R_MANAGED_BY_IMMUTABLE));
    req.old_object.spec.managed_by = req.object.spec.managed_by;
    /* the status subresource is not the allow-list's business */
    req.sub_resource = S("status");
    admit();
    ck_assert_int_eq(out.verdict, JG_VERDICT_ALLOWED);
    /* CronJob: the job template's field, the CronJob kind */
    req.sub_resource = S("");
    req.operation = JG_OP_CREATE;
    req.target = JG_TARGET_CRONJOB;
    req.resource = S("cronjobs");
    admit();
    ck_assert_str_eq(out.message.data,
                     "CronJob.batch \"j\" is invalid: spec.jobTemplate.spec.managedBy: Unsupported "
                     "value: \"x.io/other\": supported values: \"kubernetes.io/job-controller\", "
                     "\"kueue.x-k8s.io/multikueue\", \"z.io/ctl\"");
    /* warn mode: allowed with the same text as a warning */
    cfg.mode[JG_R_POLICY_ALLOWED_CONTROLLERS] = JG_MODE_WARN;
    admit();
    ck_assert_int_eq(out.verdict, JG_VERDICT_ALLOWED);
    ck_assert_str_eq(
        out.warnings.data,
        WARN("Policy-AllowedControllers") "spec.jobTemplate.spec.managedBy: Unsupported value: "
                                          "\"x.io/other\": supported "
                                          "values: \"kubernetes.io/job-controller\", "
                                          "\"kueue.x-k8s.io/multikueue\", "
                                          "\"z.io/ctl\"\n");
    /* DELETE is never checked */
    cfg.mode[JG_R_POLICY_ALLOWED_CONTROLLERS] = JG_MODE_DENY;
    req.operation = JG_OP_DELETE;
    admit();
    ck_assert_int_eq(out.verdict, JG_VERDICT_ALLOWED);
}
END_TEST

/* ---- Policy-StatusWriters ---- */

static struct jg_policy_controller bound[] = {
    {.name = "example.com/ctl",
     .name_len = sizeof "example.com/ctl" - 1,
     .has_status_writers = true,
     .writer_users = {sa_users, 1},
     .writer_groups = {writer_groups, 1}},
    {.name = "example.com/free",
     .name_len = sizeof "example.com/free" - 1}, /* no statusWriters: anyone may write */
    {.name = "example.com/ns",
     .name_len = sizeof "example.com/ns" - 1,
     .namespaces = {any_ns, 1},
     .has_status_writers = true,
     .writer_users = {sa_users, 1}},
};

/* The lookups the rules read (jobguard/match.h), built from pol's lists, again after a change to
 * them; teardown frees them. */
static void drop_lookups(void) {
    struct jg_policy tables[] = {{.controllers = ctls, .n_controllers = 4},
                                 {.controllers = bound, .n_controllers = 3}};
    for (size_t i = 0; i < 2; i++)
        jg_policy_free_lookups(&tables[i]);
    jg_strset_free(&pol.exempt_set);
}

static void lookups(void) {
    drop_lookups();
    ck_assert(jg_policy_build_lookups(&pol));
}

static void status_update(const char *ctl) {
    allow_list();
    pol.allow_unlisted_controllers = true;
    pol.controllers = bound;
    pol.n_controllers = 3;
    lookups();
    req.operation = JG_OP_UPDATE;
    req.sub_resource = S("status");
    req.old_object.present = true;
    req.old_object.name = S("j");
    req.groups = (jg_str_list){0};
    managed_by(ctl);
    req.old_object.spec.managed_by = req.object.spec.managed_by;
}

static jg_str group_items[2];

static void groups(const char *a, const char *b) {
    group_items[0] = S(a);
    group_items[1] = S(b);
    req.groups = (jg_str_list){true, 2, group_items};
}

#define FORBIDDEN                                                                                  \
    HEAD "{\"uid\":\"u1\",\"allowed\":false,\"status\":{\"metadata\":{},\"status\":\"Failure\","   \
         "\"message\":\"jobs.batch \\\"j\\\" is forbidden: User \\\"alice\\\" cannot update the "  \
         "status of a Job managed by \\\"example.com/ctl\\\"\",\"reason\":\"Forbidden\","          \
         "\"details\":{\"name\":\"j\",\"group\":\"batch\",\"kind\":\"jobs\"},\"code\":403}}}"

START_TEST(status_writers_forbid_others) {
    status_update("example.com/ctl");
    groups("system:authenticated", "dev");
    ck_assert_str_eq(admit(), FORBIDDEN);
    ck_assert_int_eq(out.verdict, JG_VERDICT_DENIED);
    ck_assert_int_eq(out.code, 403);
    ck_assert_uint_eq(out.rules, bit(JG_R_POLICY_STATUS_WRITERS));
    ck_assert_str_eq(
        out.causes.data,
        "User \"alice\" cannot update the status of a Job managed by \"example.com/ctl\"\n");
}
END_TEST

START_TEST(status_writers_allow_writers) {
    const char *allowed = HEAD "{\"uid\":\"u1\",\"allowed\":true}}";
    status_update("example.com/ctl");
    req.username = S("system:serviceaccount:ctl:ctl"); /* a listed service account */
    ck_assert_str_eq(admit(), allowed);
    req.username = S("system:serviceaccount:ctl:other");
    admit();
    ck_assert_int_eq(out.code, 403);
    groups("system:serviceaccounts", "ctl-writers"); /* a listed group */
    ck_assert_str_eq(admit(), allowed);
    groups("system:masters", "x"); /* the break-glass group */
    ck_assert_str_eq(admit(), allowed);
    pol.status_writer_exempt.n = 0; /* ... only while the policy exempts it */
    lookups();
    admit();
    ck_assert_int_eq(out.code, 403);
    /* a controller without statusWriters, one bound in other namespaces only, no controller */
    status_update("example.com/free");
    ck_assert_str_eq(admit(), allowed);
    status_update("example.com/ns");
    ck_assert_str_eq(admit(), allowed);
    req.namespace_ = S("kueue-system");
    admit();
    ck_assert_int_eq(out.code, 403);
    status_update("example.com/ctl");
    req.object.spec.managed_by.set = req.old_object.spec.managed_by.set = false;
    ck_assert_str_eq(admit(), allowed);
    /* no policy */
    status_update("example.com/ctl");
    cfg.policy = NULL;
    ck_assert_str_eq(admit(), allowed);
    /* the main resource and CronJobs are not bound (docs/rules.md §11.2) */
    status_update("example.com/ctl");
    req.sub_resource = S("");
    ck_assert_str_eq(admit(), allowed);
    status_update("example.com/ctl");
    req.target = JG_TARGET_CRONJOB;
    req.resource = S("cronjobs");
    ck_assert_str_eq(admit(), allowed);
}
END_TEST

START_TEST(status_writers_old_or_new_value) {
    /* the stored object names the controller; a new value differing from it is checked too */
    status_update("example.com/free");
    req.old_object.spec.managed_by = (jg_opt_str){true, S("example.com/ctl")};
    ck_assert_str_eq(admit(), FORBIDDEN);
    status_update("example.com/ctl");
    req.old_object.spec.managed_by.set = false;
    ck_assert_str_eq(admit(), FORBIDDEN);
}
END_TEST

START_TEST(status_writers_precedence_and_modes) {
    status_update("example.com/ctl");
    req.object.status.active = -1; /* also Invalid (ALWAYS-NonNeg) */
    /* authorization before validation: the 403 alone */
    ck_assert_str_eq(admit(), FORBIDDEN);
    ck_assert_uint_eq(out.rules, bit(JG_R_POLICY_STATUS_WRITERS) | bit(JG_R_NON_NEGATIVE));
    /* the binding in warn mode: the 422 of the Invalid error, the binding as a warning */
    cfg.mode[JG_R_POLICY_STATUS_WRITERS] = JG_MODE_WARN;
    const char *r = admit();
    ck_assert_int_eq(out.code, 422);
    const char *tail = "\"code\":422},\"warnings\":[\"" WARN(
        "Policy-StatusWriters") "User \\\"alice\\\" cannot update the status "
                                "of a Job managed by \\\"example.com/ctl\\\"\"]}}";
    ck_assert_str_eq(r + strlen(r) - strlen(tail), tail);
    /* in audit mode with the Invalid error warned: allowed, both attached */
    cfg.mode[JG_R_POLICY_STATUS_WRITERS] = JG_MODE_AUDIT;
    cfg.mode[JG_R_NON_NEGATIVE] = JG_MODE_WARN;
    ck_assert_str_eq(admit(), HEAD "{\"uid\":\"u1\",\"allowed\":true,\"auditAnnotations\":{"
                                   "\"Policy-StatusWriters\":\"User \\\"alice\\\" cannot update "
                                   "the status of a Job managed by \\\"example.com/ctl\\\"\"},"
                                   "\"warnings\":[\"" WARN(
                                       "ALWAYS-NonNeg") "status.active: Invalid value: -1: must be "
                                                        "greater than or equal to 0\"]}}");
    /* the binding on and the Invalid rule off: the 403 */
    cfg.mode[JG_R_POLICY_STATUS_WRITERS] = JG_MODE_DENY;
    cfg.mode[JG_R_NON_NEGATIVE] = JG_MODE_OFF;
    ck_assert_str_eq(admit(), FORBIDDEN);
    ck_assert_uint_eq(out.rules, bit(JG_R_POLICY_STATUS_WRITERS));
}
END_TEST

START_TEST(status_writers_quote_names) {
    status_update("example.com/ctl");
    req.username = S("m\xc3\xa9\"x");
    req.name = req.object.name = S("");
    admit();
    ck_assert_str_eq(
        out.message.data,
        "jobs.batch \"\" is forbidden: User \"m\xc3\xa9\\\"x\" cannot update the status "
        "of a Job managed by \"example.com/ctl\"");
}
END_TEST

/* ---- the decoder reads request.userInfo.groups ---- */

START_TEST(decoder_reads_groups) {
    const char *body =
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
        "\"uid\":\"g\",\"operation\":\"UPDATE\",\"resource\":{\"group\":\"batch\",\"version\":"
        "\"v1\",\"resource\":\"jobs\"},\"subResource\":\"status\",\"userInfo\":{\"groups\":"
        "[\"system:masters\",null],\"username\":\"bob\"},\"object\":{\"kind\":\"Job\"},"
        "\"oldObject\":{\"kind\":\"Job\"}}}";
    jg_review r;
    jg_decode_error err;
    ck_assert_int_eq(jg_decode_review(body, strlen(body), &r, &err), JG_DECODE_OK);
    ck_assert(r.req.groups.set);
    ck_assert_uint_eq(r.req.groups.n, 2);
    ck_assert(jg_str_eq_lit(r.req.groups.items[0], "system:masters"));
    ck_assert_uint_eq(r.req.groups.items[1].n, 0);
    ck_assert(jg_str_eq_lit(r.req.username, "bob"));
    jg_review_free(&r);
    const char *bad =
        "{\"request\":{\"uid\":\"g\",\"operation\":\"CREATE\",\"userInfo\":{\"groups\":\"x\"}}}";
    ck_assert_int_eq(jg_decode_review(bad, strlen(bad), &r, &err), JG_DECODE_BAD_REQUEST);
    ck_assert_ptr_nonnull(strstr(err.message, "request.userInfo.groups"));
    jg_review_free(&r);
}
END_TEST

int main(void) {
    Suite *s = suite_create("modes");
    TCase *tc = tcase_create("modes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, deny_is_unchanged_by_other_modes);
    tcase_add_test(tc, warn_allows_with_one_warning);
    tcase_add_test(tc, warn_update_reports_once);
    tcase_add_test(tc, audit_allows_with_annotation);
    tcase_add_test(tc, off_and_disabled_report_nothing);
    tcase_add_test(tc, mixed_strictest_wins_others_attached);
    tcase_add_test(tc, dry_run_is_decided_the_same);
    tcase_add_test(tc, v1beta1_and_status_modes);
    tcase_add_test(tc, warnings_are_bounded);
    tcase_add_test(tc, audit_keys_are_valid_annotation_names);
    tcase_add_test(tc, not_supported_rendering);
    tcase_add_test(tc, allow_list_denies_unlisted);
    tcase_add_test(tc, allow_list_namespaces_and_values);
    tcase_add_test(tc, allow_list_update_cronjob_and_modes);
    tcase_add_test(tc, status_writers_forbid_others);
    tcase_add_test(tc, status_writers_allow_writers);
    tcase_add_test(tc, status_writers_old_or_new_value);
    tcase_add_test(tc, status_writers_precedence_and_modes);
    tcase_add_test(tc, status_writers_quote_names);
    tcase_add_test(tc, decoder_reads_groups);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
