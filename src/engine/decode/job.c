/* decode/job: the members of a Job (spec, status) and of a CronJob (its job template's
 * managedBy) that the rules read (docs/rules.md §9 field map). */
#include "fields.h"

#include <stdio.h>

/* ---- Job fields ---- */

static int cond_type(jg_str t) {
    static const char *const names[JG_COND_COUNT] = {
        [JG_COND_COMPLETE] = "Complete",
        [JG_COND_FAILED] = "Failed",
        [JG_COND_FAILURE_TARGET] = "FailureTarget",
        [JG_COND_SUCCESS_CRITERIA_MET] = "SuccessCriteriaMet",
        [JG_COND_SUSPENDED] = "Suspended",
    };
    for (int i = 0; i < JG_COND_COUNT; i++)
        if (jg_str_eq_lit(t, names[i])) return i;
    return -1;
}

struct cond_ctx {
    const char *path;
    jg_opt_str type, status;
};

static status_t condition_member(struct scanner *sc, void *ctx, int which) {
    struct cond_ctx *c = ctx;
    return which == 0 ? rd_str(sc, c->path, "type", &c->type)
                      : rd_str(sc, c->path, "status", &c->status);
}

static status_t rd_conditions(struct scanner *sc, const char *path, struct jg_job_status *st) {
    if (is_null(sc)) return JG_DECODE_OK;
    if (*sc->p != '[') return rd_wrong_type(sc, path, "conditions", "an array");
    struct agg a;
    TRY(scan_enter(sc, &a));
    static const char *const names[] = {"type", "status"};
    for (size_t i = 0;; i++) {
        int more = 0;
        TRY(scan_arr_next(sc, &a, &more));
        if (!more) return JG_DECODE_OK;
        if (sc->p >= sc->end) return scan_syntax(sc, "value expected");
        if (is_null(sc)) continue;
        char cpath[PATH_MAX_LEN], idx[24];
        snprintf(idx, sizeof idx, "conditions[%zu]", i);
        rd_join_path(cpath, path, idx);
        if (*sc->p != '{')
            return scan_fail(sc->err, "%s: must be an object, got %s", cpath, rd_type_name(sc));
        struct agg o;
        TRY(scan_enter(sc, &o));
        struct cond_ctx c = {cpath, {0}, {0}};
        TRY(rd_members(sc, &o, names, 2, condition_member, &c));
        int t = cond_type(c.type.s);
        if (t < 0) continue;
        /* Matching is case-sensitive: "true" is not True (§3.0, edge case 68). */
        if (jg_str_eq_lit(c.status.s, "True")) st->cond_true |= JG_COND_BIT(t);
        if (jg_str_eq_lit(c.status.s, "False")) st->cond_false |= JG_COND_BIT(t);
    }
}

struct uncounted_ctx {
    const char *path;
    struct jg_job_status *st;
};

static status_t uncounted_member(struct scanner *sc, void *ctx, int which) {
    struct uncounted_ctx *u = ctx;
    return which == 0 ? rd_str_list(sc, u->path, "succeeded", &u->st->uncounted_succeeded)
                      : rd_str_list(sc, u->path, "failed", &u->st->uncounted_failed);
}

struct status_ctx {
    const char *path;
    struct jg_job_status *st;
};

enum {
    ST_CONDITIONS,
    ST_START,
    ST_COMPLETION,
    ST_ACTIVE,
    ST_SUCCEEDED,
    ST_FAILED,
    ST_READY,
    ST_TERMINATING,
    ST_COMPLETED_INDEXES,
    ST_FAILED_INDEXES,
    ST_UNCOUNTED,
    ST_COUNT
};
static const char *const status_names[ST_COUNT] = {
    "conditions",
    "startTime",
    "completionTime",
    "active",
    "succeeded",
    "failed",
    "ready",
    "terminating",
    "completedIndexes",
    "failedIndexes",
    "uncountedTerminatedPods",
};

static status_t status_member(struct scanner *sc, void *ctx, int which) {
    struct status_ctx *c = ctx;
    struct jg_job_status *st = c->st;
    const char *path = c->path, *key = status_names[which];
    jg_opt_i32 i;
    jg_opt_str s;
    switch (which) {
    case ST_CONDITIONS:
        return rd_conditions(sc, path, st);
    case ST_START:
        return rd_time(sc, path, key, &st->start_time);
    case ST_COMPLETION:
        return rd_time(sc, path, key, &st->completion_time);
    case ST_ACTIVE:
        TRY(rd_i32(sc, path, key, &i));
        st->active = i.v;
        return JG_DECODE_OK;
    case ST_SUCCEEDED:
        TRY(rd_i32(sc, path, key, &i));
        st->succeeded = i.v;
        return JG_DECODE_OK;
    case ST_FAILED:
        TRY(rd_i32(sc, path, key, &i));
        st->failed = i.v;
        return JG_DECODE_OK;
    case ST_READY:
        return rd_i32(sc, path, key, &st->ready);
    case ST_TERMINATING:
        return rd_i32(sc, path, key, &st->terminating);
    case ST_COMPLETED_INDEXES:
        TRY(rd_str(sc, path, key, &s));
        st->completed_indexes = s.s;
        return JG_DECODE_OK;
    case ST_FAILED_INDEXES:
        return rd_str(sc, path, key, &st->failed_indexes);
    default: {
        struct agg a;
        bool present;
        TRY(rd_object(sc, path, key, &a, &present));
        if (!present) return JG_DECODE_OK;
        char upath[PATH_MAX_LEN];
        rd_join_path(upath, path, "uncountedTerminatedPods");
        st->uncounted_set = true;
        static const char *const names[] = {"succeeded", "failed"};
        struct uncounted_ctx u = {upath, st};
        return rd_members(sc, &a, names, 2, uncounted_member, &u);
    }
    }
}

struct spec_ctx {
    const char *path;
    struct jg_job_spec *sp;
};

enum {
    SP_MANAGED_BY,
    SP_COMPLETIONS,
    SP_PARALLELISM,
    SP_BLPI,
    SP_MODE,
    SP_SUSPEND,
    SP_POLICY,
    SP_COUNT
};
static const char *const spec_names[SP_COUNT] = {
    "managedBy",      "completions", "parallelism",   "backoffLimitPerIndex",
    "completionMode", "suspend",     "successPolicy",
};

static status_t spec_member(struct scanner *sc, void *ctx, int which) {
    struct spec_ctx *c = ctx;
    struct jg_job_spec *sp = c->sp;
    const char *path = c->path, *key = spec_names[which];
    jg_opt_str mode;
    switch (which) {
    case SP_MANAGED_BY:
        return rd_str(sc, path, key, &sp->managed_by);
    case SP_COMPLETIONS:
        return rd_i32(sc, path, key, &sp->completions);
    case SP_PARALLELISM:
        return rd_i32(sc, path, key, &sp->parallelism);
    case SP_BLPI:
        return rd_i32(sc, path, key, &sp->backoff_limit_per_index);
    case SP_MODE:
        TRY(rd_str(sc, path, key, &mode));
        sp->indexed = jg_str_eq_lit(mode.s, "Indexed");
        return JG_DECODE_OK;
    case SP_SUSPEND:
        return rd_bool(sc, path, key, &sp->suspend);
    default:
        if (is_null(sc)) return JG_DECODE_OK;
        if (*sc->p != '{') return rd_wrong_type(sc, path, key, "an object");
        sp->has_success_policy = true;
        return scan_skip(sc);
    }
}

/* CronJob: spec.jobTemplate.spec.managedBy only. */
struct cron_ctx {
    const char *path;
    struct jg_job_spec *sp;
    int level; /* 0: spec, 1: jobTemplate, 2: jobTemplate.spec */
};

static status_t cron_member(struct scanner *sc, void *ctx, int which) {
    struct cron_ctx *c = ctx;
    (void)which;
    if (c->level == 2) return rd_str(sc, c->path, "managedBy", &c->sp->managed_by);
    static const char *const keys[] = {"jobTemplate", "spec"};
    struct agg a;
    bool present;
    TRY(rd_object(sc, c->path, keys[c->level], &a, &present));
    if (!present) return JG_DECODE_OK;
    char sub[PATH_MAX_LEN];
    rd_join_path(sub, c->path, keys[c->level]);
    struct cron_ctx next = {sub, c->sp, c->level + 1};
    const char *name = c->level == 0 ? "spec" : "managedBy";
    return rd_members(sc, &a, &name, 1, cron_member, &next);
}

struct object_ctx {
    const char *path;
    enum jg_target target;
    struct jg_job *job;
};

enum { OB_KIND, OB_METADATA, OB_SPEC, OB_STATUS, OB_COUNT };
static const char *const object_names[OB_COUNT] = {"kind", "metadata", "spec", "status"};

static status_t name_member(struct scanner *sc, void *ctx, int which) {
    struct object_ctx *c = ctx;
    (void)which;
    char path[PATH_MAX_LEN];
    rd_join_path(path, c->path, "metadata");
    jg_opt_str name;
    TRY(rd_str(sc, path, "name", &name));
    c->job->name = name.s;
    return JG_DECODE_OK;
}

static status_t object_member(struct scanner *sc, void *ctx, int which) {
    struct object_ctx *c = ctx;
    const char *path = c->path;
    struct agg a;
    bool present;
    char sub[PATH_MAX_LEN];
    if (which == OB_STATUS && c->target == JG_TARGET_CRONJOB) return scan_skip(sc); /* unread */
    if (which == OB_KIND) {
        jg_opt_str kind;
        TRY(rd_str(sc, path, "kind", &kind));
        const char *want = c->target == JG_TARGET_CRONJOB ? "CronJob" : "Job";
        if (kind.set && !jg_str_eq_lit(kind.s, want))
            return scan_fail(sc->err, "%s.kind: expected \"%s\", got \"%.*s\"", path, want,
                             (int)(kind.s.n > 64 ? 64 : kind.s.n), kind.s.p);
        return JG_DECODE_OK;
    }
    TRY(rd_object(sc, path, object_names[which], &a, &present));
    if (!present) return JG_DECODE_OK;
    rd_join_path(sub, path, object_names[which]);
    if (which == OB_METADATA) {
        static const char *const names[] = {"name"};
        return rd_members(sc, &a, names, 1, name_member, c);
    }
    if (which == OB_SPEC && c->target == JG_TARGET_CRONJOB) {
        static const char *const names[] = {"jobTemplate"};
        struct cron_ctx cc = {sub, &c->job->spec, 0};
        return rd_members(sc, &a, names, 1, cron_member, &cc);
    }
    if (which == OB_SPEC) {
        struct spec_ctx sc_ = {sub, &c->job->spec};
        return rd_members(sc, &a, spec_names, SP_COUNT, spec_member, &sc_);
    }
    struct status_ctx st = {sub, &c->job->status};
    return rd_members(sc, &a, status_names, ST_COUNT, status_member, &st);
}
/* One Job or CronJob object at the cursor (an object, checked by the caller). */
status_t rd_job(struct scanner *sc, const char *path, enum jg_target target,
                const struct jg_policy_target *row, struct jg_job *job) {
    if (target == JG_TARGET_CRD) return rd_crd(sc, path, row, job);
    struct agg a;
    TRY(scan_enter(sc, &a));
    job->present = true;
    struct object_ctx c = {path, target, job};
    return rd_members(sc, &a, object_names, OB_COUNT, object_member, &c);
}
