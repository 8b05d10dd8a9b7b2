/* The compact view of an AdmissionReview that the rules read (docs/rules.md §9). Plain C data:
 * slices into decoder-owned memory, integers, and presence flags. Rules never see JSON. */
#ifndef JOBGUARD_VIEW_H
#define JOBGUARD_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct jg_str {
    const char *p;
    size_t n;
} jg_str;

/* A string pointer: set=false means absent or JSON null (Go nil). */
typedef struct jg_opt_str {
    bool set;
    jg_str s;
} jg_opt_str;

typedef struct jg_opt_i32 {
    bool set;
    int32_t v;
} jg_opt_i32;

/* A *metav1.Time: set=false means absent or null. Instants keep sub-second precision. */
typedef struct jg_time {
    bool set;
    int64_t sec; /* Unix seconds, UTC */
    int32_t nsec;
} jg_time;

typedef struct jg_str_list {
    bool set; /* false: absent or null (Go nil slice); true with n == 0: [] */
    size_t n;
    jg_str *items;
} jg_str_list;

enum jg_cond {
    JG_COND_COMPLETE,
    JG_COND_FAILED,
    JG_COND_FAILURE_TARGET,
    JG_COND_SUCCESS_CRITERIA_MET,
    JG_COND_SUSPENDED,
    JG_COND_COUNT
};
#define JG_COND_BIT(c) (1u << (c))

struct jg_job_spec {
    jg_opt_str managed_by; /* Job: spec.managedBy; CronJob: spec.jobTemplate.spec.managedBy */
    jg_opt_i32 completions;
    jg_opt_i32 parallelism;
    jg_opt_i32 backoff_limit_per_index;
    bool indexed;            /* completionMode == "Indexed" */
    bool suspend;            /* suspend == true */
    bool has_success_policy; /* successPolicy present and not null */
};

struct jg_job_status {
    unsigned cond_true;  /* JG_COND_BIT of every type with some entry status == "True" */
    unsigned cond_false; /* ... with some entry status == "False" */
    jg_time start_time;
    jg_time completion_time;
    int32_t active, succeeded, failed; /* absent = 0 */
    jg_opt_i32 ready, terminating;
    jg_str completed_indexes;  /* absent = "" */
    jg_opt_str failed_indexes; /* pointer: absent/null differ from "" */
    bool uncounted_set;        /* uncountedTerminatedPods present and not null */
    jg_str_list uncounted_succeeded, uncounted_failed;
};

/* One nested managedBy copy of a CRD target object (docs/targets.md): the value at one of the
 * row's nested paths, for one list element when the path has [*]. Only copies that are present
 * and not null are listed, in document order. */
struct jg_nested_value {
    unsigned which; /* index into the row's nested[] */
    jg_str field;   /* the path with element indexes, NUL-terminated:
                     * spec.replicatedJobs[0].template.spec.managedBy */
    jg_str value;
    /* What an UPDATE pairs the copy with in the stored object (with `which` and `value`). On a
     * row without list keys, the field itself. On a row that keys a list, the list elements on
     * the way, outermost first: "=<length>:<key>" for an element of a keyed list, "[<index>]"
     * for any other; JobSet's replicatedJobs element "driver" gives "=6:driver". p == NULL when
     * a keyed element has no string key: the copy pairs with nothing. Not NUL-terminated. */
    jg_str match;
};

struct jg_job {
    bool present;
    jg_str name; /* metadata.name */
    /* Job and CronJob: as named. CRD target: only spec.managed_by, read at the row's
     * managedByPath. */
    struct jg_job_spec spec;
    struct jg_job_status status;
    struct jg_nested_value *nested; /* CRD target only: the nested copies (decoder-owned) */
    size_t n_nested;
    /* CRD target only: the bytes of the top-level `status` value (unset when absent), compared
     * between old and new on a main-resource UPDATE (docs/rules.md §11.2). */
    jg_opt_str status_json;
};

enum jg_api_version { JG_API_V1, JG_API_V1BETA1 };
enum jg_operation { JG_OP_CREATE, JG_OP_UPDATE, JG_OP_DELETE, JG_OP_CONNECT };
/* OTHER: not a target (allowed untouched); CRD: a row of the target table other than batch/v1
 * Job and CronJob (jg_request.row says which). */
enum jg_target { JG_TARGET_OTHER, JG_TARGET_JOB, JG_TARGET_CRONJOB, JG_TARGET_CRD };

struct jg_policy_target; /* compiled.h: one row of the target table */

struct jg_request {
    enum jg_api_version api_version;
    jg_str uid;
    enum jg_operation operation;
    jg_str group, version, resource, sub_resource; /* request.resource, request.subResource */
    enum jg_target target;
    /* The target row deciding the request: the built-in Job or CronJob row, or a CRD row (a
     * policy row or a built-in one); NULL for JG_TARGET_OTHER. Owned by the target table or the
     * policy snapshot the request was decoded with. */
    const struct jg_policy_target *row;
    jg_str name, namespace_, username;
    jg_str_list groups; /* request.userInfo.groups */
    bool dry_run;
    struct jg_job object;     /* decoded only for target CREATE/UPDATE */
    struct jg_job old_object; /* decoded only for target UPDATE */
};

const char *jg_operation_name(enum jg_operation op);
const char *jg_api_version_name(enum jg_api_version v);

static inline bool jg_str_eq(jg_str a, jg_str b) {
    return a.n == b.n && (a.n == 0 || __builtin_memcmp(a.p, b.p, a.n) == 0);
}
static inline bool jg_str_eq_lit(jg_str a, const char *lit) {
    size_t n = __builtin_strlen(lit);
    return a.n == n && __builtin_memcmp(a.p, lit, n) == 0;
}

#endif
