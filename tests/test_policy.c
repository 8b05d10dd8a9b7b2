/* The policy file reader (src/policy/policy.c, docs/policy.md): defaults, a full valid file read
 * back field by field, modes and jg_policy_apply, limits, the target table, and every invalid file
 * under tests/policy/invalid/<case>/{policy.json,error} (one folder per case: the exact one-line
 * error, with the file named "policy.json"). Usage: test_policy INVALID_DIR */
#include "jobguard/policy.h"
#include "jobguard/targets.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_suite.h"

static const char *invalid_dir;
static char err[1024];

static struct jg_policy *load(const char *json) {
    err[0] = '\0';
    return jg_policy_load_buffer("policy.json", json, strlen(json), err, sizeof err);
}

static void expect_error(const char *json, const char *want) {
    struct jg_policy *p = load(json);
    ck_assert_ptr_null(p);
    ck_assert_str_eq(err, want);
}

START_TEST(defaults) {
    struct jg_policy *p = load("{}");
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(p->n_targets, 0);
    ck_assert_uint_eq(p->n_controllers, 0);
    ck_assert(p->allow_unlisted_controllers);
    ck_assert_uint_eq(p->status_writer_exempt.n, 1);
    ck_assert_str_eq(p->status_writer_exempt.v[0], "system:masters");
    for (size_t i = 0; i < sizeof p->mode; i++)
        ck_assert_uint_eq(p->mode[i], JG_MODE_DENY);
    /* sha256("{}"), as sha256sum prints it */
    ck_assert_str_eq(p->sha256, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
    jg_policy_free(p);
}
END_TEST

START_TEST(empty_lists_are_kept_empty) {
    struct jg_policy *p = load("{\"statusWriterExemptGroups\": [], \"controllers\": [], "
                               "\"targets\": [], \"modes\": {}}");
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(p->status_writer_exempt.n, 0); /* [] = nobody is exempt */
    ck_assert_uint_eq(p->n_controllers, 0);
    jg_policy_free(p);
}
END_TEST

/* A controller name that fails the managedBy format (Tekton's documented "my-custom-controller")
 * is accepted while some row in effect does not check the format, and refused once none does. */
START_TEST(free_form_controller_names) {
    static const char *const names[] = {
        "my-custom-controller", "Acme.io/ctl",
        "acme.io/ccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"};
    for (size_t i = 0; i < 3; i++) {
        char json[1024];
        snprintf(json, sizeof json, "{\"controllers\": [{\"name\": \"%s\"}]}", names[i]);
        struct jg_policy *p = load(json); /* the built-in Tekton rows do not check it */
        ck_assert_msg(p != NULL, "%s", err);
        ck_assert_str_eq(p->controllers[0].name, names[i]);
        jg_policy_free(p);
    }
    /* both Tekton rows replaced by rows that check the format, a custom row that does not */
    static const char tekton[] =
        "{\"group\": \"tekton.dev\", \"versions\": [\"v1\"], \"kind\": \"PipelineRun\", "
        "\"resource\": \"pipelineruns\", \"managedByPath\": \"spec.managedBy\", "
        "\"reservedValue\": \"tekton.dev/pipeline\"}, {\"group\": \"tekton.dev\", \"versions\": "
        "[\"v1\"], \"kind\": \"TaskRun\", \"resource\": \"taskruns\", \"managedByPath\": "
        "\"spec.managedBy\", \"reservedValue\": \"tekton.dev/pipeline\"}";
    char json[2048];
    snprintf(json, sizeof json,
             "{\"targets\": [%s, {\"group\": \"example.com\", \"versions\": [\"v1\"], "
             "\"kind\": \"Widget\", \"resource\": \"widgets\", \"managedByPath\": "
             "\"spec.owner\", \"reservedValue\": \"widget\", \"checkFormat\": false}], "
             "\"controllers\": [{\"name\": \"my-custom-controller\"}]}",
             tekton);
    struct jg_policy *p = load(json);
    ck_assert_msg(p != NULL, "%s", err);
    jg_policy_free(p);
    snprintf(json, sizeof json,
             "{\"targets\": [%s], \"controllers\": [{\"name\": "
             "\"my-custom-controller\"}]}",
             tekton);
    expect_error(json, "policy.json: controllers[0].name: Invalid value: \"my-custom-controller\": "
                       "must be a domain-prefixed path (such as \"acme.io/foo\") (every target row "
                       "checks the format, so no object can carry this name)");
}
END_TEST

static const char full[] =
    "{\n"
    "  \"targets\": [\n"
    "    {\"group\": \"jobset.x-k8s.io\", \"versions\": [\"v1alpha2\"], \"kind\": \"JobSet\",\n"
    "     \"resource\": \"jobsets\", \"managedByPath\": \"spec.managedBy\",\n"
    "     \"reservedValue\": \"jobset.sigs.k8s.io/jobset-controller\",\n"
    "     \"nestedPaths\": [{\"path\": \"spec.replicatedJobs[*].template.spec.managedBy\",\n"
    "                      \"reservedValue\": \"\", \"listKeys\": [\"name\"]}]},\n"
    "    {\"group\": \"kubeflow.org\", \"versions\": [\"v1\"], \"kind\": \"JAXJob\",\n"
    "     \"resource\": \"jaxjobs\", \"managedByPath\": \"spec.runPolicy.managedBy\",\n"
    "     \"reservedValue\": \"kubeflow.org/training-operator\", \"delegationSupported\": false},\n"
    "    {\"group\": \"tekton.dev\", \"versions\": [\"v1\", \"v1beta1\"], \"kind\": "
    "\"PipelineRun\",\n"
    "     \"resource\": \"pipelineruns\", \"managedByPath\": \"spec.managedBy\",\n"
    "     \"reservedValue\": \"tekton.dev/pipeline\", \"checkFormat\": false},\n"
    "    {\"group\": \"ray.io\", \"versions\": [\"v1\"], \"kind\": \"RayCluster\", "
    "\"resource\": \"rayclusters\",\n"
    "     \"managedByPath\": \"spec.managedBy\", \"reservedValue\": "
    "\"ray.io/kuberay-operator\",\n"
    "     \"checkFormat\": false}\n"
    "  ],\n"
    "  \"controllers\": [\n"
    "    {\"name\": \"kueue.x-k8s.io/multikueue\", \"namespaces\": [\"team-*\", \"ml-[!x]?\"],\n"
    "     \"statusWriters\": {\"users\": "
    "[\"system:serviceaccount:kueue-system:kueue-controller-manager\"],\n"
    "                       \"groups\": [\"kueue-admins\"]}},\n"
    "    {\"name\": \"acme.io/batch\"}\n"
    "  ],\n"
    "  \"allowUnlistedControllers\": false,\n"
    "  \"statusWriterExemptGroups\": [\"system:masters\", \"breakglass\"],\n"
    "  \"modes\": {\"*\": \"audit\", \"ALWAYS-ManagedByImmutable\": \"deny\",\n"
    "            \"ALWAYS-ManagedByFormat\": \"warn\", \"RejectDecreasingSucceededCounter\": "
    "\"off\"}\n"
    "}\n";

START_TEST(full_file) {
    struct jg_policy *p = load(full);
    ck_assert_msg(p != NULL, "%s", err);
    ck_assert_uint_eq(p->n_targets, 4);
    const struct jg_policy_target *t = &p->targets[0];
    ck_assert_str_eq(t->group, "jobset.x-k8s.io");
    ck_assert_uint_eq(t->versions.n, 1);
    ck_assert_str_eq(t->versions.v[0], "v1alpha2");
    ck_assert_str_eq(t->kind, "JobSet");
    ck_assert_str_eq(t->resource, "jobsets");
    ck_assert_str_eq(t->managed_by_path, "spec.managedBy");
    ck_assert_str_eq(t->reserved_value, "jobset.sigs.k8s.io/jobset-controller");
    ck_assert_uint_eq(t->n_nested, 1);
    ck_assert_str_eq(t->nested[0].path, "spec.replicatedJobs[*].template.spec.managedBy");
    ck_assert_str_eq(t->nested[0].reserved_value, "");
    ck_assert_uint_eq(t->nested[0].list_keys.n, 1);
    ck_assert_str_eq(t->nested[0].list_keys.v[0], "name");
    ck_assert(t->check_format && t->delegation_supported);
    ck_assert(!p->targets[1].delegation_supported && p->targets[1].check_format);
    ck_assert(!p->targets[2].check_format);
    ck_assert_uint_eq(p->targets[2].versions.n, 2);
    ck_assert_str_eq(p->targets[2].versions.v[1], "v1beta1");

    ck_assert_uint_eq(p->n_controllers, 2);
    const struct jg_policy_controller *k = &p->controllers[0];
    ck_assert_str_eq(k->name, "kueue.x-k8s.io/multikueue");
    ck_assert_uint_eq(k->namespaces.n, 2);
    ck_assert_str_eq(k->namespaces.v[1], "ml-[!x]?");
    ck_assert(k->has_status_writers);
    ck_assert_uint_eq(k->writer_users.n, 1);
    ck_assert_str_eq(k->writer_users.v[0],
                     "system:serviceaccount:kueue-system:kueue-controller-manager");
    ck_assert_uint_eq(k->writer_groups.n, 1);
    ck_assert_str_eq(k->writer_groups.v[0], "kueue-admins");
    k = &p->controllers[1];
    ck_assert(!k->has_status_writers);
    ck_assert_uint_eq(k->namespaces.n, 0); /* every namespace */

    ck_assert(!p->allow_unlisted_controllers);
    ck_assert_uint_eq(p->status_writer_exempt.n, 2);
    ck_assert_str_eq(p->status_writer_exempt.v[1], "breakglass");

    ck_assert_uint_eq(p->mode[JG_R_MANAGED_BY_IMMUTABLE], JG_MODE_DENY);
    ck_assert_uint_eq(p->mode[JG_R_MANAGED_BY_FORMAT], JG_MODE_WARN);
    ck_assert_uint_eq(p->mode[JG_R_DECREASING_SUCCEEDED], JG_MODE_OFF);
    ck_assert_uint_eq(p->mode[JG_R_MANAGED_BY_LENGTH], JG_MODE_AUDIT); /* "*" */
    ck_assert_uint_eq(p->mode[JG_R_SCM_AFTER_COMPLETE], JG_MODE_AUDIT);

    /* the file's RayCluster row replaces the built-in one; Job and CronJob stay built-in */
    ck_assert_ptr_eq(jg_target_find(p, "ray.io", "RayCluster"), &p->targets[3]);
    ck_assert_ptr_eq(jg_target_find(p, "batch", "Job"), &jg_builtin_targets[0]);
    ck_assert_ptr_eq(jg_target_find(p, "batch", "CronJob"), &jg_builtin_targets[1]);
    ck_assert(!jg_target_builtin_replaced(p, 0));
    ck_assert(!jg_target_builtin_replaced(p, 1));
    for (size_t i = 0; i < jg_builtin_target_count; i++)
        ck_assert(jg_target_builtin_replaced(p, i) ==
                  (strcmp(jg_builtin_targets[i].kind, "RayCluster") == 0 ||
                   strcmp(jg_builtin_targets[i].kind, "JobSet") == 0 ||
                   strcmp(jg_builtin_targets[i].kind, "JAXJob") == 0 ||
                   strcmp(jg_builtin_targets[i].kind, "PipelineRun") == 0));
    ck_assert_ptr_eq(jg_target_find(p, "jobset.x-k8s.io", "JobSet"), &p->targets[0]);
    ck_assert_ptr_null(jg_target_find(p, "batch", "Pod"));
    jg_policy_free(p);
}
END_TEST

START_TEST(builtin_targets) {
    ck_assert_uint_eq(jg_builtin_target_count, 18);
    const struct jg_policy_target *job = jg_target_find(NULL, "batch", "Job");
    const struct jg_policy_target *cj = jg_target_find(NULL, "batch", "CronJob");
    ck_assert_ptr_nonnull(job);
    ck_assert_ptr_nonnull(cj);
    ck_assert_str_eq(job->managed_by_path, "spec.managedBy");
    ck_assert_str_eq(job->resource, "jobs");
    ck_assert_str_eq(cj->managed_by_path, "spec.jobTemplate.spec.managedBy");
    ck_assert_str_eq(cj->resource, "cronjobs");
    ck_assert_str_eq(job->reserved_value, "kubernetes.io/job-controller");
    ck_assert_str_eq(cj->reserved_value, "kubernetes.io/job-controller");
    ck_assert_str_eq(job->versions.v[0], "v1");
    ck_assert(!jg_target_builtin_replaced(NULL, 0));
}
END_TEST

/* Every CRD row, written out by hand from the upstream projects' sources (docs/targets.md). */
static const struct {
    const char *group, *version, *kind, *resource, *path, *reserved, *nested, *nested_reserved;
    bool check_format, delegation;
} crd_rows[] = {
    {"jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets", "spec.managedBy",
     "jobset.sigs.k8s.io/jobset-controller", "spec.replicatedJobs[*].template.spec.managedBy",
     "kubernetes.io/job-controller", true, true},
    {"trainer.kubeflow.org", "v1alpha1", "TrainJob", "trainjobs", "spec.managedBy",
     "trainer.kubeflow.org/trainjob-controller", NULL, NULL, true, true},
    {"kubeflow.org", "v1", "PyTorchJob", "pytorchjobs", "spec.runPolicy.managedBy",
     "kubeflow.org/training-operator", NULL, NULL, true, true},
    {"kubeflow.org", "v1", "TFJob", "tfjobs", "spec.runPolicy.managedBy",
     "kubeflow.org/training-operator", NULL, NULL, true, true},
    {"kubeflow.org", "v1", "XGBoostJob", "xgboostjobs", "spec.runPolicy.managedBy",
     "kubeflow.org/training-operator", NULL, NULL, true, true},
    {"kubeflow.org", "v1", "PaddleJob", "paddlejobs", "spec.runPolicy.managedBy",
     "kubeflow.org/training-operator", NULL, NULL, true, true},
    {"kubeflow.org", "v1", "JAXJob", "jaxjobs", "spec.runPolicy.managedBy",
     "kubeflow.org/training-operator", NULL, NULL, true, false},
    {"kubeflow.org", "v2beta1", "MPIJob", "mpijobs", "spec.runPolicy.managedBy",
     "kubeflow.org/mpi-operator", NULL, NULL, true, true},
    {"ray.io", "v1", "RayJob", "rayjobs", "spec.managedBy", "ray.io/kuberay-operator",
     "spec.rayClusterSpec.managedBy", "ray.io/kuberay-operator", true, true},
    {"ray.io", "v1", "RayCluster", "rayclusters", "spec.managedBy", "ray.io/kuberay-operator", NULL,
     NULL, true, true},
    {"ray.io", "v1", "RayService", "rayservices", "spec.managedBy", "ray.io/kuberay-operator",
     "spec.rayClusterConfig.managedBy", "ray.io/kuberay-operator", true, true},
    {"ray.io", "v1", "RayCronJob", "raycronjobs", "spec.managedBy", "ray.io/kuberay-operator",
     "spec.jobTemplate.managedBy", "ray.io/kuberay-operator", true, true},
    {"workload.codeflare.dev", "v1beta2", "AppWrapper", "appwrappers", "spec.managedBy",
     "workload.codeflare.dev/appwrapper-controller", NULL, NULL, true, true},
    {"tekton.dev", "v1", "PipelineRun", "pipelineruns", "spec.managedBy", "tekton.dev/pipeline",
     NULL, NULL, false, true},
    {"tekton.dev", "v1", "TaskRun", "taskruns", "spec.managedBy", "tekton.dev/pipeline", NULL, NULL,
     false, true},
};

START_TEST(builtin_crd_rows) {
    size_t i = (size_t)_i;
    const struct jg_policy_target *t = jg_target_find(NULL, crd_rows[i].group, crd_rows[i].kind);
    ck_assert_msg(t != NULL, "%s", crd_rows[i].kind);
    ck_assert_str_eq(t->versions.v[0], crd_rows[i].version);
    ck_assert_str_eq(t->resource, crd_rows[i].resource);
    ck_assert_str_eq(t->managed_by_path, crd_rows[i].path);
    ck_assert_str_eq(t->reserved_value, crd_rows[i].reserved);
    ck_assert_int_eq(t->check_format, crd_rows[i].check_format);
    ck_assert_int_eq(t->delegation_supported, crd_rows[i].delegation);
    if (crd_rows[i].nested) { /* the first nested path (RayCronJob has a second: below) */
        ck_assert_uint_eq(t->n_nested, strcmp(t->kind, "RayCronJob") == 0 ? 2 : 1);
        ck_assert_str_eq(t->nested[0].path, crd_rows[i].nested);
        ck_assert_str_eq(t->nested[0].reserved_value, crd_rows[i].nested_reserved);
    } else {
        ck_assert_uint_eq(t->n_nested, 0);
    }
    if (strcmp(t->kind, "RayCronJob") == 0) {
        ck_assert_str_eq(t->nested[1].path, "spec.jobTemplate.rayClusterSpec.managedBy");
        ck_assert_str_eq(t->nested[1].reserved_value, "ray.io/kuberay-operator");
    }
    /* every reserved value is short enough for the 63-byte rule, so it never trips it */
    ck_assert_uint_le(strlen(t->reserved_value), 63);
}
END_TEST

/* The two MPIJob rows, Tekton's two versions, and a policy row replacing both MPIJob rows. */
START_TEST(builtin_mpijob_and_tekton_versions) {
    size_t mpi = 0;
    for (size_t i = 0; i < jg_builtin_target_count; i++) {
        const struct jg_policy_target *t = &jg_builtin_targets[i];
        if (strcmp(t->kind, "MPIJob") != 0) continue;
        mpi++;
        ck_assert_str_eq(t->reserved_value, strcmp(t->versions.v[0], "v1") == 0
                                                ? "kubeflow.org/training-operator"
                                                : "kubeflow.org/mpi-operator");
    }
    ck_assert_uint_eq(mpi, 2);
    const struct jg_policy_target *pr = jg_target_find(NULL, "tekton.dev", "PipelineRun");
    ck_assert_uint_eq(pr->versions.n, 2);
    ck_assert_str_eq(pr->versions.v[1], "v1beta1");
    struct jg_policy *p = load("{\"targets\": [{\"group\": \"kubeflow.org\", \"versions\": "
                               "[\"v2beta1\"], \"kind\": \"MPIJob\", \"resource\": \"mpijobs\", "
                               "\"managedByPath\": \"spec.runPolicy.managedBy\", "
                               "\"reservedValue\": \"example.com/mpi\"}]}");
    ck_assert_msg(p != NULL, "%s", err);
    size_t replaced = 0;
    for (size_t i = 0; i < jg_builtin_target_count; i++)
        replaced += jg_target_builtin_replaced(p, i);
    ck_assert_uint_eq(replaced, 2);
    ck_assert_str_eq(jg_target_find(p, "kubeflow.org", "MPIJob")->reserved_value,
                     "example.com/mpi");
    jg_policy_free(p);
}
END_TEST

START_TEST(star_default_and_apply) {
    struct jg_policy *p =
        load("{\"modes\": {\"ALWAYS-ManagedByLength\": \"deny\", \"*\": \"warn\"}}");
    ck_assert_msg(p != NULL, "%s", err);
    ck_assert_uint_eq(p->mode[JG_R_MANAGED_BY_LENGTH], JG_MODE_DENY); /* key order irrelevant */
    ck_assert_uint_eq(p->mode[JG_R_MANAGED_BY_FORMAT], JG_MODE_WARN);
    struct jg_config cfg = JG_CONFIG_DEFAULT;
    jg_config_modes_unset(&cfg); /* no --mode given */
    cfg.disabled = UINT64_C(1) << JG_R_MANAGED_BY_LENGTH;
    cfg.mode[JG_R_MANAGED_BY_IMMUTABLE] =
        JG_MODE_AUDIT; /* as --mode ALWAYS-ManagedByImmutable=audit */
    jg_policy_apply(p, &cfg);
    ck_assert_ptr_eq(cfg.policy, p);
    ck_assert_uint_eq(jg_rule_mode(&cfg, JG_R_MANAGED_BY_LENGTH),
                      JG_MODE_OFF); /* --disable-rule wins */
    ck_assert_uint_eq(cfg.mode[JG_R_MANAGED_BY_FORMAT], JG_MODE_WARN);
    ck_assert_uint_eq(cfg.mode[JG_R_MANAGED_BY_IMMUTABLE], JG_MODE_AUDIT); /* --mode wins */
    jg_policy_free(p);

    p = load("{\"modes\": {\"RejectDecreasingFailedCounter\": \"off\"}}");
    ck_assert_msg(p != NULL, "%s", err);
    cfg = (struct jg_config)JG_CONFIG_DEFAULT;
    jg_config_modes_unset(&cfg);
    jg_policy_apply(p, &cfg);
    ck_assert_uint_eq(jg_rule_mode(&cfg, JG_R_DECREASING_FAILED), JG_MODE_OFF); /* not evaluated */
    ck_assert_uint_eq(jg_rule_mode(&cfg, JG_R_DECREASING_SUCCEEDED), JG_MODE_DENY);
    ck_assert_uint_eq(cfg.disabled, 0);
    jg_policy_free(p);

    cfg = (struct jg_config)JG_CONFIG_DEFAULT;
    jg_config_modes_unset(&cfg);
    jg_policy_apply(NULL, &cfg);
    ck_assert_ptr_null(cfg.policy);
    for (size_t i = 0; i < sizeof cfg.mode; i++)
        ck_assert_uint_eq(cfg.mode[i], JG_MODE_DENY);
    ck_assert_uint_eq(cfg.disabled, 0);
}
END_TEST

START_TEST(file_size_limit) {
    size_t n = (1u << 20) + 1;
    char *big = malloc(n + 1);
    ck_assert_ptr_nonnull(big);
    memset(big, ' ', n);
    big[0] = '{';
    big[n - 1] = '}';
    big[n] = '\0';
    ck_assert_ptr_null(jg_policy_load_buffer("policy.json", big, n, err, sizeof err));
    ck_assert_str_eq(err, "policy.json: 1048577 bytes, more than the limit of 1048576");
    big[n - 2] = '}';
    /* exactly the limit is read */
    struct jg_policy *p = jg_policy_load_buffer("policy.json", big, n - 1, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    jg_policy_free(p);
    free(big);
}
END_TEST

START_TEST(controllers_limit) {
    size_t cap = 1100 * 40 + 64, len = 0;
    char *s = malloc(cap);
    ck_assert_ptr_nonnull(s);
    len += (size_t)snprintf(s + len, cap - len, "{\"controllers\": [");
    for (int i = 0; i < 1025; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s{\"name\": \"c.io/%d\"}", i ? "," : "", i);
    snprintf(s + len, cap - len, "]}");
    expect_error(s, "policy.json: controllers: has 1025 elements, more than the limit of 1024");
    /* 1024 is fine */
    char *last = strrchr(s, ',');
    strcpy(last, "]}");
    struct jg_policy *p = load(s);
    ck_assert_msg(p != NULL, "%s", err);
    ck_assert_uint_eq(p->n_controllers, 1024);
    jg_policy_free(p);
    free(s);
}
END_TEST

START_TEST(load_file_errors) {
    ck_assert_ptr_null(jg_policy_load_file("/nonexistent/policy.json", err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/policy.json"));
    ck_assert_ptr_null(jg_policy_load_file("/", err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "a directory"));
    char path[] = "/tmp/test_policy_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    const char bad[] = "{\n  \"modes\": {\"*\": \"loud\"}\n}\n";
    ck_assert_int_eq(write(fd, bad, sizeof bad - 1), (int)(sizeof bad - 1));
    close(fd);
    ck_assert_ptr_null(jg_policy_load_file(path, err, sizeof err));
    char want[256];
    snprintf(want, sizeof want,
             "%s: modes.*: mode \"loud\" is not one of \"deny\", \"warn\", "
             "\"audit\", \"off\"",
             path);
    ck_assert_str_eq(err, want);
    unlink(path);
}
END_TEST

/* A message longer than the caller's buffer keeps its first bytes and says how many it lost. */
START_TEST(error_is_cut_not_overflowed) {
    char whole[256], small[48];
    ck_assert_ptr_null(jg_policy_load_buffer("policy.json", "[]", 2, whole, sizeof whole));
    ck_assert_ptr_null(jg_policy_load_buffer("policy.json", "[]", 2, small, sizeof small));
    ck_assert_uint_le(strlen(small), sizeof small - 1);
    char want[64];
    snprintf(want, sizeof want, "%.26s [truncated %zu bytes]", whole, strlen(whole) - 26);
    ck_assert_str_eq(small, want);
}
END_TEST

/* Every folder under INVALID_DIR: policy.json is refused with exactly the text of `error`. */
START_TEST(invalid_folder) {
    DIR *d = opendir(invalid_dir);
    ck_assert_msg(d != NULL, "cannot open %s", invalid_dir);
    struct dirent *e;
    int cases = 0, failed = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        size_t jlen, elen;
        snprintf(path, sizeof path, "%s/%s/policy.json", invalid_dir, e->d_name);
        char *json = slurp(path, &jlen);
        snprintf(path, sizeof path, "%s/%s/error", invalid_dir, e->d_name);
        char *want = slurp(path, &elen);
        ck_assert_msg(json && want, "%s: needs policy.json and error", e->d_name);
        while (elen > 0 && want[elen - 1] == '\n')
            want[--elen] = '\0';
        struct jg_policy *p = jg_policy_load_buffer("policy.json", json, jlen, err, sizeof err);
        if (p || strcmp(err, want) != 0) {
            fprintf(stderr, "%s:\n  want: %s\n  got:  %s\n", e->d_name, want,
                    p ? "(accepted)" : err);
            failed++;
        }
        jg_policy_free(p);
        free(json);
        free(want);
        cases++;
    }
    closedir(d);
    fprintf(stderr, "invalid policy files: %d cases, %d failed\n", cases, failed);
    ck_assert_int_ge(cases, 60);
    ck_assert_int_eq(failed, 0);
}
END_TEST

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s INVALID_DIR\n", argv[0]);
        return 2;
    }
    invalid_dir = argv[1];
    Suite *s = suite_create("policy");
    TCase *tc = tcase_create("policy");
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, empty_lists_are_kept_empty);
    tcase_add_test(tc, free_form_controller_names);
    tcase_add_test(tc, full_file);
    tcase_add_test(tc, builtin_targets);
    tcase_add_loop_test(tc, builtin_crd_rows, 0, (int)(sizeof crd_rows / sizeof crd_rows[0]));
    tcase_add_test(tc, builtin_mpijob_and_tekton_versions);
    tcase_add_test(tc, star_default_and_apply);
    tcase_add_test(tc, file_size_limit);
    tcase_add_test(tc, controllers_limit);
    tcase_add_test(tc, load_file_errors);
    tcase_add_test(tc, error_is_cut_not_overflowed);
    tcase_add_test(tc, invalid_folder);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
