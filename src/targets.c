/* targets: the built-in target table (docs/policy.md "Targets"). Future CRD rows are added here;
 * the policy file can add or replace rows, never edit this table. */
#include "jobguard/targets.h"

#include <string.h>

/* The Job controller's own value: a Job naming it (or none) is reconciled by
 * kube-controller-manager. */
#define JOB_CONTROLLER "kubernetes.io/job-controller"

static char *batch_v1[] = {"v1"};

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
