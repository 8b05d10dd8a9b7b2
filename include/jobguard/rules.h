/* rules: pure functions of the view, declared in one table in upstream evaluation order
 * (docs/rules.md §2 and §3.2). The same table feeds `jobguard rules`, logs and metrics. */
#ifndef JOBGUARD_RULES_H
#define JOBGUARD_RULES_H

#include "jobguard/verdict.h"
#include "jobguard/view.h"

enum jg_rule_id {
    /* §2: spec.managedBy (Job) and spec.jobTemplate.spec.managedBy (CronJob) */
    JG_R_MANAGED_BY_FORMAT,
    JG_R_MANAGED_BY_LENGTH,
    JG_R_MANAGED_BY_IMMUTABLE,
    /* §3.2, rows 1..36 in order */
    JG_R_NON_NEGATIVE, /* rows 1-5 */
    JG_R_UNCOUNTED_EMPTY,
    JG_R_UNCOUNTED_DUPLICATE,
    JG_R_COMPLETE_WITH_FAILED,
    JG_R_COMPLETE_WITH_FAILURE_TARGET,
    JG_R_NOT_COMPLETE_WITH_COMPLETION_TIME,
    JG_R_COMPLETE_WITHOUT_COMPLETION_TIME,
    JG_R_COMPLETION_BEFORE_START,
    JG_R_FAILED_WITHOUT_FAILURE_TARGET,
    JG_R_COMPLETE_WITHOUT_SCM,
    JG_R_FINISHED_WITH_ACTIVE,
    JG_R_FINISHED_WITHOUT_START_TIME,
    JG_R_FINISHED_WITH_UNCOUNTED,
    JG_R_INVALID_COMPLETED_INDEXES,
    JG_R_INVALID_FAILED_INDEXES,
    JG_R_COMPLETED_INDEXES_NON_INDEXED,
    JG_R_FAILED_INDEXES_NO_BACKOFF_LIMIT,
    JG_R_FAILED_INDEXES_OVERLAP,
    JG_R_FINISHED_WITH_TERMINATING,
    JG_R_MORE_READY_THAN_ACTIVE,
    JG_R_SCM_NON_INDEXED, /* X1: never active in v1.35 */
    JG_R_SCM_WITH_FAILED,
    JG_R_SCM_WITH_FAILURE_TARGET,
    JG_R_SCM_WITHOUT_SUCCESS_POLICY, /* X2: never active in v1.35 */
    JG_R_SUCCESS_POLICY_COMPLETE_WITHOUT_SCM,
    JG_R_DISABLING_TERMINAL_CONDITION,
    JG_R_DECREASING_FAILED,
    JG_R_DECREASING_SUCCEEDED,
    JG_R_MUTATING_COMPLETION_TIME,
    JG_R_START_TIME_UPDATE_UNSUSPENDED,
    JG_R_SCM_DISABLE,
    JG_R_SCM_AFTER_COMPLETE,
    /* CRD targets (docs/rules.md §12) */
    JG_R_TARGET_NESTED_MANAGED_BY,
    JG_R_TARGET_DELEGATION_UNSUPPORTED,
    /* policy rules (docs/rules.md §11): only with a policy (jg_config.policy) */
    JG_R_POLICY_ALLOWED_CONTROLLERS,
    JG_R_POLICY_STATUS_WRITERS,
    JG_RULE_COUNT
};
/* Rule sets are uint64_t bit masks (jg_errors.rules, jg_config.disabled) and mode[JG_RULE_MAX]. */
#define JG_RULE_MAX 64
_Static_assert(JG_RULE_COUNT <= JG_RULE_MAX, "rule bit masks hold at most 64 rules");

/* Kubernetes versions whose wording jobguard reproduces (docs/rules.md §6), oldest first: 1.36
 * changed rule 34; 1.37 has 1.36's texts (and Job's new spec.scheduling, which no rule reads). */
enum jg_parity { JG_PARITY_1_35, JG_PARITY_1_36, JG_PARITY_1_37, JG_PARITY_COUNT };

/* "1.35", "1.36", "1.37": --parity's values. */
const char *jg_parity_name(enum jg_parity p);
/* Parses one of those; false otherwise. */
bool jg_parity_parse(const char *s, enum jg_parity *out);
/* The accepted values for messages: "1.35, 1.36 or 1.37". */
#define JG_PARITY_VALUES "1.35, 1.36 or 1.37"

/* What a violated rule does to the request (the policy file's "modes"; docs/policy.md).
 * deny: allowed=false; warn: allowed, one `warnings` entry per violation; audit: allowed, an
 * `auditAnnotations` entry; off: not evaluated. A request gets the strictest outcome among its
 * violations, and the warnings and annotations of the others. */
enum jg_mode { JG_MODE_DENY = 0, JG_MODE_WARN, JG_MODE_AUDIT, JG_MODE_OFF, JG_MODE_COUNT };

/* "deny", "warn", "audit", "off". */
const char *jg_mode_name(enum jg_mode m);
/* Parses one of those names; false otherwise. */
bool jg_mode_parse(const char *s, enum jg_mode *out);
/* Applies one "ID=MODE" of `n` bytes (ID a rule ID, or "*" for every rule) to `mode`; false with
 * the reason in `err` (as `check --mode` and `serve --mode` take them). */
bool jg_mode_set(const char *spec, size_t n, unsigned char mode[JG_RULE_MAX], char *err,
                 size_t errcap);

/* In jg_config.mode: no mode given by a flag for this rule; the policy file's mode applies (deny
 * without a policy file). The engine reads any value outside enum jg_mode as deny. */
#define JG_MODE_UNSET 0xFF

struct jg_policy; /* compiled.h: the immutable snapshot the policy file is read into */

struct jg_config {
    enum jg_parity parity;
    uint64_t disabled; /* bit (1 << rule id): rules switched off by the operator (mode off) */
    /* Per rule: JG_MODE_DENY (0, the default) .. JG_MODE_OFF, or JG_MODE_UNSET. The flags
     * (--mode) fill it first, leaving JG_MODE_UNSET where they say nothing; jg_policy_apply fills
     * those from the policy's "modes". So --mode wins over the file, --disable-rule over both. */
    unsigned char mode[JG_RULE_MAX];
    /* The policy snapshot deciding this request (controllers, status writers, targets); NULL =
     * no policy file: built-in targets, no allow-list, no status-writer binding. */
    const struct jg_policy *policy;
};
#define JG_CONFIG_DEFAULT                                                                          \
    { JG_PARITY_1_35, 0, {0}, NULL }

/* Marks every rule "no mode given by a flag" (JG_MODE_UNSET), as the CLI and the server start
 * before reading --mode; jg_policy_apply then fills the rest from the policy file (or deny). */
static inline void jg_config_modes_unset(struct jg_config *cfg) {
    for (size_t i = 0; i < sizeof cfg->mode; i++)
        cfg->mode[i] = JG_MODE_UNSET;
}

struct jg_status_ctx; /* old/new status, old spec and the "changed" predicates */

struct jg_rule {
    enum jg_rule_id id;
    const char *name;    /* stable ID: the upstream option name, or ALWAYS-… / X… */
    const char *field;   /* field path of its errors */
    const char *when;    /* when it is active, in words (§3.1) */
    const char *message; /* detail text (v1.35) */
    const char *section; /* where docs/rules.md specifies it */
    /* status rules only: gate and check; NULL check = emitted by the row before it (rows 6-7). */
    bool (*active)(const struct jg_status_ctx *);
    void (*check)(const struct jg_status_ctx *, struct jg_errors *);
};

extern const struct jg_rule jg_rules[JG_RULE_COUNT];

/* Returns the rule named `name` (case-sensitive), or NULL. */
const struct jg_rule *jg_rule_find(const char *name);

/* The mode rule `id` has under `cfg`: off when in cfg->disabled, else cfg->mode[id] (an
 * out-of-range value counts as deny). */
static inline enum jg_mode jg_rule_mode(const struct jg_config *cfg, int id) {
    if (cfg->disabled & (UINT64_C(1) << id)) return JG_MODE_OFF;
    return cfg->mode[id] < JG_MODE_COUNT ? (enum jg_mode)cfg->mode[id] : JG_MODE_DENY;
}

/* Runs every rule that applies to the request and is in out->only and not off, appending errors
 * in upstream order. */
void jg_validate(const struct jg_request *req, const struct jg_config *cfg, struct jg_errors *out);

/* out[m] (initialised by the caller) receives the errors of the rules whose mode is m, for
 * m = deny, warn, audit. With one mode in use, one pass; with several, one pass over them all
 * first, then (only if something fired) a pass per mode whose rules fired. */
void jg_validate_modes(const struct jg_request *req, const struct jg_config *cfg,
                       struct jg_errors out[JG_MODE_OFF]);

/* The value Kubernetes reserves for its own Job controller (docs/rules.md §2.1). */
#define JG_JOB_CONTROLLER "kubernetes.io/job-controller"

/* §2.2 IsDomainPrefixedPath + §2.3 length on one value, errors at `field`. */
void jg_check_managed_by(jg_str v, const char *field, struct jg_errors *out);

/* The details of the managedBy host and path errors (docs/rules.md §2.2), as Kubernetes words them.
 */
extern const char jg_subdomain_detail[];
extern const char jg_path_detail[];

#endif
