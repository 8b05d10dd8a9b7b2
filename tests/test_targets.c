/* CRD target rules on views built directly (no JSON): docs/rules.md §12. Each test sets up one
 * row of the target table (built-in, or a policy row) and the decoded objects, runs the engine
 * and checks which rules fired, on which fields, with which texts. */
#include "jobguard/admit.h"
#include "jobguard/policy.h"
#include "jobguard/rules.h"
#include "jobguard/targets.h"

#include <check.h>

#include "run_suite.h"
#include <stdio.h>
#include <string.h>

static struct jg_request req;
static char err[1024];

static jg_str S(const char *s) {
    return (jg_str){s, strlen(s)};
}
static jg_opt_str V(const char *s) {
    return (jg_opt_str){true, S(s)};
}

static const struct jg_policy_target *row(const char *group, const char *kind) {
    const struct jg_policy_target *t = jg_target_find(NULL, group, kind);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* A main-resource request for `t`: CREATE, or UPDATE when `old` is given (NULL = absent). */
static void setup(const struct jg_policy_target *t, const char *new_value, const char *old_value,
                  bool update) {
    memset(&req, 0, sizeof req);
    req.operation = update ? JG_OP_UPDATE : JG_OP_CREATE;
    req.target = JG_TARGET_CRD;
    req.row = t;
    req.group = S(t->group);
    req.resource = S(t->resource);
    req.namespace_ = S("ml");
    req.username = S("alice");
    req.object.present = true;
    req.object.name = S("w");
    if (new_value) req.object.spec.managed_by = V(new_value);
    if (update) {
        req.old_object.present = true;
        req.old_object.name = S("w");
        if (old_value) req.old_object.spec.managed_by = V(old_value);
    }
}

/* "RULE field: body" per error, joined by " | ". */
static const char *errors_with(const struct jg_config *cfg) {
    static char out[4096];
    struct jg_errors e;
    jg_errors_init(&e);
    jg_validate(&req, cfg, &e);
    out[0] = '\0';
    for (size_t i = 0; i < e.n; i++) {
        jg_str f = jg_err_field(&e, i), b = jg_err_body(&e, i);
        size_t n = strlen(out);
        snprintf(out + n, sizeof out - n, "%s%s %.*s: %.*s", i ? " | " : "",
                 jg_rules[e.v[i].rule].name, (int)f.n, f.p, (int)b.n, b.p);
    }
    ck_assert(!e.oom);
    jg_errors_free(&e);
    return out;
}
static const char *errors(void) {
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    return errors_with(&cfg);
}

static struct jg_policy *load(const char *json) {
    struct jg_policy *p = jg_policy_load_buffer("policy.json", json, strlen(json), err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    return p;
}

START_TEST(format_and_length_at_the_rows_path) {
    setup(row("kubeflow.org", "PyTorchJob"), "acme.io", NULL, false);
    ck_assert_str_eq(errors(), "ALWAYS-ManagedByFormat spec.runPolicy.managedBy: Invalid value: "
                               "\"acme.io\": must be a domain-prefixed path (such as "
                               "\"acme.io/foo\")");
    char long_value[80];
    snprintf(long_value, sizeof long_value, "acme.io/%060d", 0);
    setup(row("jobset.x-k8s.io", "JobSet"), long_value, NULL, false);
    ck_assert_str_eq(
        errors(), "ALWAYS-ManagedByLength spec.managedBy: Too long: may not be more than 63 bytes");
    setup(row("jobset.x-k8s.io", "JobSet"), "", NULL, false);
    ck_assert_str_eq(errors(), "ALWAYS-ManagedByFormat spec.managedBy: Required value");
    /* Kueue's mutating webhook writes this on CREATE: it passes on every row */
    for (size_t i = 2; i < jg_builtin_target_count; i++) {
        if (!jg_builtin_targets[i].delegation_supported) continue;
        setup(&jg_builtin_targets[i], "kueue.x-k8s.io/multikueue", NULL, false);
        ck_assert_msg(errors()[0] == '\0', "%s: %s", jg_builtin_targets[i].kind, errors());
        setup(&jg_builtin_targets[i], jg_builtin_targets[i].reserved_value, NULL, false);
        ck_assert_msg(errors()[0] == '\0', "%s: %s", jg_builtin_targets[i].kind, errors());
    }
}
END_TEST

START_TEST(tekton_takes_free_form_values_but_not_changes) {
    const struct jg_policy_target *t = row("tekton.dev", "PipelineRun");
    setup(t, "my-custom-controller", NULL, false);
    ck_assert_str_eq(errors(), "");
    setup(t, "my-custom-controller", "tekton.dev/pipeline", true);
    ck_assert_str_eq(errors(), "ALWAYS-ManagedByImmutable spec.managedBy: Invalid value: "
                               "\"my-custom-controller\": field is immutable");
}
END_TEST

START_TEST(immutability_absent_differs_from_any_value) {
    const struct jg_policy_target *t = row("ray.io", "RayJob");
    setup(t, "kueue.x-k8s.io/multikueue", NULL, true); /* added (KubeRay's CEL misses it) */
    ck_assert_str_eq(errors(), "ALWAYS-ManagedByImmutable spec.managedBy: Invalid value: "
                               "\"kueue.x-k8s.io/multikueue\": field is immutable");
    setup(t, NULL, "kueue.x-k8s.io/multikueue", true); /* removed */
    ck_assert_str_eq(errors(),
                     "ALWAYS-ManagedByImmutable spec.managedBy: Invalid value: null: field is "
                     "immutable");
    setup(t, "", NULL, true); /* "" is a value too */
    ck_assert_str_eq(errors(), "ALWAYS-ManagedByFormat spec.managedBy: Required value | "
                               "ALWAYS-ManagedByImmutable spec.managedBy: Invalid value: \"\": "
                               "field is immutable");
    setup(t, "ray.io/kuberay-operator", "ray.io/kuberay-operator", true);
    ck_assert_str_eq(errors(), "");
}
END_TEST

START_TEST(unchanged_values_are_ratcheted) {
    /* stored before jobguard: an invalid value, a delegated JAXJob; an UPDATE that keeps them
     * (a finalizer removal, say) passes */
    setup(row("workload.codeflare.dev", "AppWrapper"), "Bad Value", "Bad Value", true);
    ck_assert_str_eq(errors(), "");
    setup(row("kubeflow.org", "JAXJob"), "kueue.x-k8s.io/multikueue", "kueue.x-k8s.io/multikueue",
          true);
    ck_assert_str_eq(errors(), "");
    /* the same value on CREATE is refused */
    setup(row("workload.codeflare.dev", "AppWrapper"), "Bad Value", NULL, false);
    ck_assert_str_eq(errors(), "ALWAYS-ManagedByFormat spec.managedBy: Invalid value: \"Bad "
                               "Value\": must be a domain-prefixed path (such as \"acme.io/foo\")");
}
END_TEST

START_TEST(delegation_unsupported) {
    const struct jg_policy_target *t = row("kubeflow.org", "JAXJob");
    setup(t, "kueue.x-k8s.io/multikueue", NULL, false);
    ck_assert_str_eq(errors(), "Target-DelegationUnsupported spec.runPolicy.managedBy: Invalid "
                               "value: \"kueue.x-k8s.io/multikueue\": JAXJob's controller ignores "
                               "managedBy, so the local operator would still run the pods; leave "
                               "it unset or use \"kubeflow.org/training-operator\"");
    setup(t, "kubeflow.org/training-operator", NULL, false);
    ck_assert_str_eq(errors(), "");
    setup(t, NULL, NULL, false);
    ck_assert_str_eq(errors(), "");
    /* a policy row for the kind lifts it once the operator honours the field */
    struct jg_policy *p =
        load("{\"targets\": [{\"group\": \"kubeflow.org\", \"versions\": [\"v1\"], \"kind\": "
             "\"JAXJob\", \"resource\": \"jaxjobs\", \"managedByPath\": "
             "\"spec.runPolicy.managedBy\", \"reservedValue\": \"kubeflow.org/training-operator\", "
             "\"delegationSupported\": true}]}");
    setup(jg_target_find(p, "kubeflow.org", "JAXJob"), "kueue.x-k8s.io/multikueue", NULL, false);
    ck_assert_str_eq(errors(), "");
    jg_policy_free(p);
}
END_TEST

/* A copy matched by its field (a list without a key) */
static struct jg_nested_value nested(unsigned which, const char *field, const char *value) {
    return (struct jg_nested_value){which, S(field), S(value), S(field)};
}

/* A copy in an element of a keyed list: match as the decoder builds it, NULL = no key */
static struct jg_nested_value keyed(const char *field, const char *match, const char *value) {
    return (struct jg_nested_value){0, S(field), S(value), match ? S(match) : (jg_str){NULL, 0}};
}

START_TEST(nested_copies) {
    const struct jg_policy_target *t = row("jobset.x-k8s.io", "JobSet");
    struct jg_nested_value nv[3] = {
        nested(0, "spec.replicatedJobs[0].template.spec.managedBy", "kubernetes.io/job-controller"),
        nested(0, "spec.replicatedJobs[1].template.spec.managedBy", "kueue.x-k8s.io/multikueue"),
        nested(0, "spec.replicatedJobs[2].template.spec.managedBy", ""),
    };
    setup(t, "kueue.x-k8s.io/multikueue", NULL, false);
    req.object.nested = nv;
    req.object.n_nested = 3;
    ck_assert_str_eq(errors(),
                     "Target-NestedManagedBy spec.replicatedJobs[1].template.spec.managedBy: "
                     "Unsupported value: \"kueue.x-k8s.io/multikueue\": supported values: "
                     "\"kubernetes.io/job-controller\" | Target-NestedManagedBy "
                     "spec.replicatedJobs[2].template.spec.managedBy: Unsupported value: \"\": "
                     "supported values: \"kubernetes.io/job-controller\"");
    /* on UPDATE copies the stored object has are not re-checked, wherever they are in the list */
    struct jg_nested_value old[3] = {nv[2], nv[0], nv[1]};
    setup(t, "kueue.x-k8s.io/multikueue", "kueue.x-k8s.io/multikueue", true);
    req.object.nested = nv;
    req.object.n_nested = 3;
    req.old_object.nested = old;
    req.old_object.n_nested = 3;
    ck_assert_str_eq(errors(), "");
    /* a copy that moved to another element, or changed value, is new */
    struct jg_nested_value moved[1] = {
        nested(0, "spec.replicatedJobs[0].template.spec.managedBy", "kueue.x-k8s.io/multikueue")};
    req.old_object.nested = moved;
    req.old_object.n_nested = 1;
    ck_assert_str_eq(errors(),
                     "Target-NestedManagedBy spec.replicatedJobs[1].template.spec.managedBy: "
                     "Unsupported value: \"kueue.x-k8s.io/multikueue\": supported values: "
                     "\"kubernetes.io/job-controller\" | Target-NestedManagedBy "
                     "spec.replicatedJobs[2].template.spec.managedBy: Unsupported value: \"\": "
                     "supported values: \"kubernetes.io/job-controller\"");
}
END_TEST

/* JobSet's replicatedJobs is keyed by name: the stored copy ratchets the element of that name,
 * wherever it is, and not the element now at its index */
START_TEST(nested_copies_by_key) {
    const struct jg_policy_target *t = row("jobset.x-k8s.io", "JobSet");
    static const char f0[] = "spec.replicatedJobs[0].template.spec.managedBy",
                      f1[] = "spec.replicatedJobs[1].template.spec.managedBy",
                      driver[] = "=6:driver", trainer[] = "=7:trainer";
    struct jg_nested_value stored[1] = {keyed(f0, driver, "acme.io/x")};
    struct jg_nested_value nv[1];
    setup(t, NULL, NULL, true);
    req.old_object.nested = stored;
    req.old_object.n_nested = 1;
    req.object.nested = nv;
    req.object.n_nested = 1;
    nv[0] = keyed(f1, driver, "acme.io/x"); /* moved to index 1 */
    ck_assert_str_eq(errors(), "");
    nv[0] = keyed(f0, trainer, "acme.io/x"); /* another element at index 0 */
    ck_assert_str_eq(errors(), "Target-NestedManagedBy spec.replicatedJobs[0].template.spec."
                               "managedBy: Unsupported value: \"acme.io/x\": supported values: "
                               "\"kubernetes.io/job-controller\"");
    nv[0] = keyed(f0, NULL, "acme.io/x"); /* an element without a key matches nothing */
    ck_assert_str_ne(errors(), "");
    stored[0] = keyed(f0, NULL, "acme.io/x");
    ck_assert_str_ne(errors(), "");
}
END_TEST

START_TEST(nested_must_be_absent) {
    struct jg_policy *p = load(
        "{\"targets\": [{\"group\": \"example.com\", \"versions\": [\"v1\"], \"kind\": \"Widget\", "
        "\"resource\": \"widgets\", \"managedByPath\": \"spec.managedBy\", \"reservedValue\": "
        "\"example.com/widget-controller\", \"nestedPaths\": [{\"path\": "
        "\"spec.parts[*].managedBy\", "
        "\"reservedValue\": \"\"}]}]}");
    const struct jg_policy_target *t = jg_target_find(p, "example.com", "Widget");
    ck_assert_ptr_nonnull(t);
    struct jg_nested_value nv[1] = {
        nested(0, "spec.parts[3].managedBy", "example.com/widget-controller")};
    setup(t, NULL, NULL, false);
    req.object.nested = nv;
    req.object.n_nested = 1;
    ck_assert_str_eq(errors(),
                     "Target-NestedManagedBy spec.parts[3].managedBy: Forbidden: must not be set");
    jg_policy_free(p);
}
END_TEST

START_TEST(allow_list_with_the_rows_reserved_value) {
    struct jg_policy *p = load("{\"controllers\": [{\"name\": \"kueue.x-k8s.io/multikueue\", "
                               "\"namespaces\": [\"team-*\"]}], \"allowUnlistedControllers\": "
                               "false}");
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_policy_apply(p, &cfg);
    setup(row("kubeflow.org", "PyTorchJob"), "kueue.x-k8s.io/multikueue", NULL, false);
    ck_assert_str_eq(errors_with(&cfg),
                     "Policy-AllowedControllers spec.runPolicy.managedBy: Unsupported value: "
                     "\"kueue.x-k8s.io/multikueue\": supported values: "
                     "\"kubeflow.org/training-operator\"; \"kueue.x-k8s.io/multikueue\" is allowed "
                     "only in namespaces team-*");
    req.namespace_ = S("team-a");
    ck_assert_str_eq(errors_with(&cfg), "");
    /* MPIJob: the request's version picks the row, and so the reserved value */
    setup(jg_target_route(p, S("kubeflow.org"), S("v2beta1"), S("mpijobs"), false), "acme.io/x",
          NULL, false);
    ck_assert_str_eq(errors_with(&cfg),
                     "Policy-AllowedControllers spec.runPolicy.managedBy: Unsupported value: "
                     "\"acme.io/x\": supported values: \"kubeflow.org/mpi-operator\"");
    setup(jg_target_route(p, S("kubeflow.org"), S("v1"), S("mpijobs"), false), "acme.io/x", NULL,
          false);
    ck_assert_str_eq(errors_with(&cfg),
                     "Policy-AllowedControllers spec.runPolicy.managedBy: Unsupported value: "
                     "\"acme.io/x\": supported values: \"kubeflow.org/training-operator\"");
    /* an UPDATE that keeps a delisted value is ratcheted */
    setup(row("kubeflow.org", "PyTorchJob"), "acme.io/x", "acme.io/x", true);
    ck_assert_str_eq(errors_with(&cfg), "");
    jg_policy_free(p);
}
END_TEST

START_TEST(status_writers_on_crd_status) {
    struct jg_policy *p = load("{\"controllers\": [{\"name\": \"kueue.x-k8s.io/multikueue\", "
                               "\"statusWriters\": {\"users\": [\"system:serviceaccount:kueue-"
                               "system:kueue-controller-manager\"]}}]}");
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_policy_apply(p, &cfg);
    setup(row("jobset.x-k8s.io", "JobSet"), "kueue.x-k8s.io/multikueue",
          "kueue.x-k8s.io/multikueue", true);
    req.sub_resource = S("status");
    ck_assert_str_eq(errors_with(&cfg),
                     "Policy-StatusWriters : User \"alice\" cannot update the status of a JobSet "
                     "managed by \"kueue.x-k8s.io/multikueue\"");
    req.username = S("system:serviceaccount:kueue-system:kueue-controller-manager");
    ck_assert_str_eq(errors_with(&cfg), "");
    /* nothing else is checked on a CRD status: an invalid value stored there is not re-judged */
    setup(row("jobset.x-k8s.io", "JobSet"), "Bad", "Bad", true);
    req.sub_resource = S("status");
    ck_assert_str_eq(errors_with(&cfg), "");
    jg_policy_free(p);
}
END_TEST

START_TEST(routing) {
    /* by resource and by kind; versions pick MPIJob's rows; unknown kinds are no target */
    ck_assert_str_eq(
        jg_target_route(NULL, S("kubeflow.org"), S("v2beta1"), S("mpijobs"), false)->reserved_value,
        "kubeflow.org/mpi-operator");
    ck_assert_str_eq(
        jg_target_route(NULL, S("kubeflow.org"), S("v1"), S("MPIJob"), true)->reserved_value,
        "kubeflow.org/training-operator");
    ck_assert_str_eq(
        jg_target_route(NULL, S("kubeflow.org"), S("v9"), S("mpijobs"), false)->reserved_value,
        "kubeflow.org/mpi-operator"); /* unlisted version: the first row */
    ck_assert_str_eq(
        jg_target_route(NULL, S("tekton.dev"), S("v1beta1"), S("taskruns"), false)->kind,
        "TaskRun");
    ck_assert_ptr_null(jg_target_route(NULL, S("apps"), S("v1"), S("deployments"), false));
    ck_assert_ptr_null(jg_target_route(NULL, S("ray.io"), S("v1"), S("rayjobs"), true));
    /* a policy row replaces the built-in row of its group and kind */
    struct jg_policy *p = load(
        "{\"targets\": [{\"group\": \"kubeflow.org\", \"versions\": [\"v2beta1\"], \"kind\": "
        "\"MPIJob\", \"resource\": \"mpijobs\", \"managedByPath\": \"spec.runPolicy.managedBy\", "
        "\"reservedValue\": \"acme.io/mpi\"}]}");
    ck_assert_str_eq(
        jg_target_route(p, S("kubeflow.org"), S("v1"), S("mpijobs"), false)->reserved_value,
        "acme.io/mpi");
    ck_assert_ptr_eq(jg_target_route(p, S("kubeflow.org"), S("v2beta1"), S("MPIJob"), true),
                     &p->targets[0]);
    jg_policy_free(p);
}
END_TEST

START_TEST(modes_apply_to_crd_rules) {
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    char e[200];
    ck_assert(jg_mode_set("Target-NestedManagedBy=off", 26, cfg.mode, e, sizeof e));
    const struct jg_policy_target *t = row("ray.io", "RayService");
    struct jg_nested_value nv[1] = {
        nested(0, "spec.rayClusterConfig.managedBy", "kueue.x-k8s.io/multikueue")};
    setup(t, NULL, NULL, false);
    req.object.nested = nv;
    req.object.n_nested = 1;
    ck_assert_str_eq(
        errors(), "Target-NestedManagedBy spec.rayClusterConfig.managedBy: Unsupported value: "
                  "\"kueue.x-k8s.io/multikueue\": supported values: \"ray.io/kuberay-operator\"");
    ck_assert_str_eq(errors_with(&cfg), "");
}
END_TEST

/* A row's field names can be long (up to 256 bytes); a key written with escapes must be read as
 * the same name, and a longer one must not be taken for a name it starts with. */
static enum jg_verdict admit_long_key(const struct jg_policy *p, const char *key, char *msg,
                                      size_t cap) {
    char body[4096];
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
             "\"uid\":\"u\",\"resource\":{\"group\":\"example.com\",\"version\":\"v1\","
             "\"resource\":\"longs\"},\"operation\":\"CREATE\",\"object\":{\"metadata\":{\"name\":"
             "\"l\"},\"spec\":{\"%s\":\"NOT A VALID VALUE\"}}}}",
             key);
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_policy_apply(p, &cfg);
    jg_buf out = JG_BUF_INIT;
    enum jg_verdict v = jg_admit(body, strlen(body), &cfg, &out, NULL);
    snprintf(msg, cap, "%s", out.data ? out.data : "");
    jg_buf_free(&out);
    return v;
}

START_TEST(long_escaped_keys) {
    char name[300], esc[320], json[1024], msg[4096];
    memset(name, 'm', 250);
    name[250] = '\0';
    snprintf(
        json, sizeof json,
        "{\"targets\": [{\"group\": \"example.com\", \"versions\": [\"v1\"], \"kind\": "
        "\"Long\", \"resource\": \"longs\", \"managedByPath\": \"spec.%s\", \"reservedValue\": "
        "\"example.com/x\"}]}",
        name);
    struct jg_policy *p = load(json);
    /* the name plain, and with its first byte escaped: the same field, refused alike */
    ck_assert_int_eq(admit_long_key(p, name, msg, sizeof msg), JG_VERDICT_DENIED);
    snprintf(esc, sizeof esc, "\\u006d%s", name + 1);
    ck_assert_int_eq(admit_long_key(p, esc, msg, sizeof msg), JG_VERDICT_DENIED);
    ck_assert_msg(strstr(msg, "must be a domain-prefixed path") != NULL, "%s", msg);
    /* a longer escaped key that starts with the name is another field: not read */
    char longer[400];
    snprintf(longer, sizeof longer, "\\u006d%smmmmmmmmmmmmmmmmmmmm", name + 1);
    ck_assert_int_eq(admit_long_key(p, longer, msg, sizeof msg), JG_VERDICT_ALLOWED);
    jg_policy_free(p);
}
END_TEST

int main(void) {
    Suite *s = suite_create("targets");
    TCase *tc = tcase_create("crd");
    tcase_add_test(tc, format_and_length_at_the_rows_path);
    tcase_add_test(tc, tekton_takes_free_form_values_but_not_changes);
    tcase_add_test(tc, immutability_absent_differs_from_any_value);
    tcase_add_test(tc, unchanged_values_are_ratcheted);
    tcase_add_test(tc, delegation_unsupported);
    tcase_add_test(tc, nested_copies);
    tcase_add_test(tc, nested_copies_by_key);
    tcase_add_test(tc, nested_must_be_absent);
    tcase_add_test(tc, allow_list_with_the_rows_reserved_value);
    tcase_add_test(tc, status_writers_on_crd_status);
    tcase_add_test(tc, routing);
    tcase_add_test(tc, modes_apply_to_crd_rules);
    tcase_add_test(tc, long_escaped_keys);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
