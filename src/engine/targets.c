/* targets: the built-in target table (docs/targets.md). The policy file can add or replace rows,
 * never edit this table. */
#include "jobguard/targets.h"

#include <string.h>

/* The Job controller's own value: a Job naming it (or none) is reconciled by
 * kube-controller-manager. */
#define JOB_CONTROLLER "kubernetes.io/job-controller"

static const char *batch_v1[] = {"v1"};
static const char *jobset_versions[] = {"v1alpha2"};
static const char *trainer_versions[] = {"v1alpha1"};
static const char *kubeflow_v1[] = {"v1"};
static const char *mpi_v2beta1[] = {"v2beta1"};
static const char *ray_v1[] = {"v1"};
static const char *appwrapper_versions[] = {"v1beta2"};
static const char *tekton_versions[] = {"v1", "v1beta1"};

/* Each project's own value (docs/targets.md lists where each one comes from). */
#define JOBSET_CONTROLLER "jobset.sigs.k8s.io/jobset-controller"
#define TRAINJOB_CONTROLLER "trainer.kubeflow.org/trainjob-controller"
#define TRAINING_OPERATOR "kubeflow.org/training-operator"
#define MPI_OPERATOR "kubeflow.org/mpi-operator"
#define KUBERAY_OPERATOR "ray.io/kuberay-operator"
#define APPWRAPPER_CONTROLLER "workload.codeflare.dev/appwrapper-controller"
#define TEKTON_PIPELINE "tekton.dev/pipeline"

/* Nested copies: each must be absent or the nested kind's own value. */
/* JobSet's replicatedJobs is a listType=map keyed by name (jobset_types.go +listMapKey=name) */
static const char *jobset_replicated_jobs_key[] = {"name"};
static struct jg_policy_nested jobset_nested[] = {
    {.path = "spec.replicatedJobs[*].template.spec.managedBy",
     .reserved_value = JOB_CONTROLLER,
     .list_keys = {jobset_replicated_jobs_key, 1}}};
static struct jg_policy_nested rayjob_nested[] = {
    {.path = "spec.rayClusterSpec.managedBy", .reserved_value = KUBERAY_OPERATOR}};
static struct jg_policy_nested rayservice_nested[] = {
    {.path = "spec.rayClusterConfig.managedBy", .reserved_value = KUBERAY_OPERATOR}};
static struct jg_policy_nested raycronjob_nested[] = {
    {.path = "spec.jobTemplate.managedBy", .reserved_value = KUBERAY_OPERATOR},
    /* the RayJob spec it embeds has its own RayCluster copy (RayJob's nested path) */
    {.path = "spec.jobTemplate.rayClusterSpec.managedBy", .reserved_value = KUBERAY_OPERATOR}};

#define NESTED(a) .nested = (a), .n_nested = sizeof(a) / sizeof(a)[0]

/* A Kubeflow row: the field is spec.runPolicy.managedBy. */
#define KUBEFLOW_ROW(vv, k, r, rv, deleg)                                                          \
    {                                                                                              \
        .group = "kubeflow.org", .versions = {(vv), 1}, .kind = (k), .resource = (r),              \
        .managed_by_path = "spec.runPolicy.managedBy", .reserved_value = (rv),                     \
        .check_format = true, .delegation_supported = (deleg)                                      \
    }
#define KUBEFLOW_V1(k, r, deleg) KUBEFLOW_ROW(kubeflow_v1, k, r, TRAINING_OPERATOR, deleg)

/* A row whose field is spec.managedBy. */
#define SPEC_ROW(g, vv, k, r, rv, fmt)                                                             \
    .group = (g), .versions = {(vv), sizeof(vv) / sizeof(vv)[0]}, .kind = (k), .resource = (r),    \
    .managed_by_path = "spec.managedBy", .reserved_value = (rv), .check_format = (fmt),            \
    .delegation_supported = true

const struct jg_policy_target jg_builtin_targets[] = {
    {.group = "batch",
     .versions = {batch_v1, 1},
     .kind = "Job",
     .resource = "jobs",
     .managed_by_path = "spec.managedBy",
     .reserved_value = JOB_CONTROLLER,
     .check_format = true,
     .delegation_supported = true},
    {.group = "batch",
     .versions = {batch_v1, 1},
     .kind = "CronJob",
     .resource = "cronjobs",
     .managed_by_path = "spec.jobTemplate.spec.managedBy",
     .reserved_value = JOB_CONTROLLER,
     .check_format = true,
     .delegation_supported = true},
    /* JobSet: its own webhook already checks format, length and immutability like Job's; the
     * replicated Jobs' templates are Job specs that nobody checks before the child Jobs exist. */
    {SPEC_ROW("jobset.x-k8s.io", jobset_versions, "JobSet", "jobsets", JOBSET_CONTROLLER, true),
     NESTED(jobset_nested)},
    /* TrainJob (Trainer v2): the CRD defaults the field to the reserved value. */
    {SPEC_ROW("trainer.kubeflow.org", trainer_versions, "TrainJob", "trainjobs",
              TRAINJOB_CONTROLLER, true)},
    KUBEFLOW_V1("PyTorchJob", "pytorchjobs", true),
    KUBEFLOW_V1("TFJob", "tfjobs", true),
    KUBEFLOW_V1("XGBoostJob", "xgboostjobs", true),
    KUBEFLOW_V1("PaddleJob", "paddlejobs", true),
    /* JAXJob: the field is in the schema but training-operator v1.9.0-v1.9.4 never reads it, so a
     * delegated JAXJob would still run its pods here (Target-DelegationUnsupported). */
    KUBEFLOW_V1("JAXJob", "jaxjobs", false),
    /* MPIJob is served under two versions by two operators with different reserved values:
     * v2beta1 (mpi-operator) first, so that a lookup by group and kind alone finds it; the
     * training-operator's v1 MPIJob follows. A policy row for kubeflow.org/MPIJob replaces both. */
    KUBEFLOW_ROW(mpi_v2beta1, "MPIJob", "mpijobs", MPI_OPERATOR, true),
    KUBEFLOW_V1("MPIJob", "mpijobs", true),
    {SPEC_ROW("ray.io", ray_v1, "RayJob", "rayjobs", KUBERAY_OPERATOR, true),
     NESTED(rayjob_nested)},
    {SPEC_ROW("ray.io", ray_v1, "RayCluster", "rayclusters", KUBERAY_OPERATOR, true)},
    {SPEC_ROW("ray.io", ray_v1, "RayService", "rayservices", KUBERAY_OPERATOR, true),
     NESTED(rayservice_nested)},
    /* RayCronJob (KubeRay v1.6.0+): its spec is schedule, suspend and jobTemplate (a whole RayJob
     * spec) and has no managedBy of its own, so the API server prunes spec.managedBy and the row's
     * main path never holds a value; it is kept as for the other KubeRay kinds in case the field
     * comes. What matters are the nested copies: spec.jobTemplate.managedBy, given to every RayJob
     * the RayCronJob creates, and that RayJob spec's own spec.jobTemplate.rayClusterSpec.managedBy,
     * given to each RayJob's RayCluster. */
    {SPEC_ROW("ray.io", ray_v1, "RayCronJob", "raycronjobs", KUBERAY_OPERATOR, true),
     NESTED(raycronjob_nested)},
    {SPEC_ROW("workload.codeflare.dev", appwrapper_versions, "AppWrapper", "appwrappers",
              APPWRAPPER_CONTROLLER, true)},
    /* Tekton: free-form values (its docs use "my-custom-controller"), so no format or length
     * check; immutability only. */
    {SPEC_ROW("tekton.dev", tekton_versions, "PipelineRun", "pipelineruns", TEKTON_PIPELINE,
              false)},
    {SPEC_ROW("tekton.dev", tekton_versions, "TaskRun", "taskruns", TEKTON_PIPELINE, false)},
};
const size_t jg_builtin_target_count = sizeof jg_builtin_targets / sizeof jg_builtin_targets[0];

static const struct jg_policy_target *policy_row(const struct jg_policy *p, const char *group,
                                                 const char *kind) {
    for (size_t i = 0; p && i < p->n_targets; i++)
        if (strcmp(p->targets[i].group, group) == 0 && strcmp(p->targets[i].kind, kind) == 0)
            return &p->targets[i];
    return NULL;
}

const struct jg_policy_target *jg_target_find(const struct jg_policy *p, const char *group,
                                              const char *kind) {
    const struct jg_policy_target *t = policy_row(p, group, kind);
    if (t) return t;
    for (size_t i = 0; i < jg_builtin_target_count; i++)
        if (strcmp(jg_builtin_targets[i].group, group) == 0 &&
            strcmp(jg_builtin_targets[i].kind, kind) == 0)
            return &jg_builtin_targets[i];
    return NULL;
}

bool jg_target_builtin_replaced(const struct jg_policy *p, size_t i) {
    return i < jg_builtin_target_count &&
           policy_row(p, jg_builtin_targets[i].group, jg_builtin_targets[i].kind) != NULL;
}

static bool has_version(const struct jg_policy_target *t, jg_str version) {
    for (size_t i = 0; i < t->versions.n; i++)
        if (jg_str_eq_lit(version, t->versions.v[i])) return true;
    return false;
}

/* by_kind: match `name` against the row's kind, else against its resource. */
static bool row_matches(const struct jg_policy_target *t, jg_str group, jg_str name, bool by_kind) {
    return jg_str_eq_lit(group, t->group) && jg_str_eq_lit(name, by_kind ? t->kind : t->resource);
}

const struct jg_policy_target *jg_target_route(const struct jg_policy *p, jg_str group,
                                               jg_str version, jg_str name, bool by_kind) {
    /* the batch kinds are the API server's own: always the built-in rows (policy.c refuses
     * policy rows for them) */
    const struct jg_policy_target *first = NULL;
    for (size_t i = 0; p && i < p->n_targets; i++) {
        const struct jg_policy_target *t = &p->targets[i];
        if (!row_matches(t, group, name, by_kind)) continue;
        if (has_version(t, version)) return t;
        if (!first) first = t;
    }
    for (size_t i = 0; i < jg_builtin_target_count; i++) {
        const struct jg_policy_target *t = &jg_builtin_targets[i];
        if (!row_matches(t, group, name, by_kind) || jg_target_builtin_replaced(p, i)) continue;
        if (has_version(t, version)) return t;
        if (!first) first = t;
    }
    return first;
}
