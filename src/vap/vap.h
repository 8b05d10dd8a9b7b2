/* vap: the policy as ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1) and their
 * bindings, for the rules CEL can express (docs/vap.md). */
#ifndef JOBGUARD_VAP_H
#define JOBGUARD_VAP_H

#include "jobguard/policy.h"
#include "jobguard/rules.h"

#include <jansson.h>

/* Annotations on every object: the policy's digest (jg_policy_values_sha256) and the --mode
 * flags that override its modes (absent when none); the chart compares them with its values. */
#define JG_VAP_ANN_SHA256 "jobguard.io/policy-sha256"
#define JG_VAP_ANN_MODES "jobguard.io/mode-overrides"

struct jg_vap_options {
    const char *prefix; /* object names start with it, e.g. "jobguard" */
    bool job_rules;     /* also the Job/CronJob format, length and immutability (< 1.32) */
    const json_t *namespace_selector; /* each binding's matchResources.namespaceSelector, or NULL */
    const char *policy_sha256;        /* JG_VAP_ANN_SHA256, or NULL */
    const char *mode_overrides;       /* JG_VAP_ANN_MODES ("ID=mode,..."), or NULL/"" */
};

/* The objects in order (each policy followed by its binding), or NULL with the reason in err.
 * cfg carries the modes (jg_policy_apply) and the policy (NULL = built-in rows only). */
json_t *jg_vap_build(const struct jg_config *cfg, const struct jg_vap_options *o, char *err,
                     size_t errcap);

/* What each rule becomes for each target row, for the same options: an array of
 * {"rule", "target", "vap", "how"} (rules and targets merged into ", "-lists where the rest is
 * equal), every rule of jg_rules included. NULL with the reason in err. */
json_t *jg_vap_explain(const struct jg_config *cfg, const struct jg_vap_options *o, char *err,
                       size_t errcap);

#endif
