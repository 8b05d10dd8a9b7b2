/* The reference decoder (refdecode.h): jansson parses the whole document, then a walk over the
 * tree applies the field map, types, defaults and messages of the request path, written from
 * the documented semantics rather than from the scanner's code:
 *  - members are read in document order (jansson keeps insertion order) and the first problem
 *    stops the walk; objects met before the request is routed are read after the other members;
 *  - JSON null is Go's nil and counts as absent; absent apiVersion/kind default to v1
 *    AdmissionReview; a repeated key the decoder reads is refused;
 *  - an apiVersion/kind problem (the first string-valued occurrence) wins over field problems.
 * The RFC 3339 parser is the engine's (it reads no JSON and has its own unit tests). */
#include "refdecode.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct walk {
    const struct ref_options *opt;
    struct ref_review *out;
    struct ref_result *res;
};

enum { OK = 0, STOP = 1 };

__attribute__((format(printf, 2, 3))) static int bad(struct walk *w, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->res->message, sizeof w->res->message, fmt, ap);
    va_end(ap);
    w->res->status = REF_BAD_REQUEST;
    return STOP;
}

/* Field paths ("request.object.spec"): short by construction; test code aborts otherwise. */
#define PATHF(dst, ...)                                                                            \
    do {                                                                                           \
        if (snprintf(dst, sizeof dst, __VA_ARGS__) >= (int)sizeof dst) abort();                    \
    } while (0)

static jg_str sv(const json_t *s) {
    return (jg_str){json_string_value(s), json_string_length(s)};
}

static const char *type_name(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a non-integer number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

static int must(struct walk *w, const char *path, const char *key, const char *want,
                const json_t *v) {
    return bad(w, "%s.%s: must be %s, got %s", path, key, want, type_name(v));
}

/* Keys: a comparator marker byte in front means "this key again" (a repeat). */
static const char *unmark(struct walk *w, const char *key, bool *repeat) {
    *repeat = false;
    if (!w->opt || !w->opt->marker) return key;
    while (*key == w->opt->marker) {
        key++;
        *repeat = true;
    }
    return key;
}

/* Calls fn(w, ctx, index, value) for every member whose key is in names, in document order. */
typedef int (*member_fn)(struct walk *w, void *ctx, int which, json_t *v);

static int members(struct walk *w, json_t *obj, const char *const *names, int n, member_fn fn,
                   void *ctx) {
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        bool repeat;
        const char *key = unmark(w, k, &repeat);
        size_t klen = json_object_iter_key_len(json_object_key_to_iter(k)) - (size_t)(key - k);
        for (int i = 0; i < n; i++) {
            if (klen != strlen(names[i]) || memcmp(key, names[i], klen) != 0) continue;
            if (repeat) {
                snprintf(w->res->message, sizeof w->res->message, "duplicate object key");
                w->res->status = REF_DUPLICATE;
                return STOP;
            }
            if (fn(w, ctx, i, v)) return STOP;
            break;
        }
    }
    return OK;
}

static int rd_str(struct walk *w, const char *path, const char *key, json_t *v, jg_opt_str *out) {
    *out = (jg_opt_str){false, {"", 0}};
    if (json_is_null(v)) return OK;
    if (!json_is_string(v)) return must(w, path, key, "a string", v);
    *out = (jg_opt_str){true, sv(v)};
    return OK;
}

static int rd_i32(struct walk *w, const char *path, const char *key, json_t *v, jg_opt_i32 *out) {
    *out = (jg_opt_i32){false, 0};
    if (json_is_null(v)) return OK;
    if (!json_is_integer(v)) return must(w, path, key, "an integer (int32)", v);
    long long x = json_integer_value(v);
    if (w->opt)
        for (size_t i = 0; i < w->opt->n_bignums; i++)
            if (w->opt->bignums[i].stand_in == x)
                return bad(w, "%s.%s: %s is outside the int32 range", path, key,
                           w->opt->bignums[i].text);
    if (x < INT32_MIN || x > INT32_MAX)
        return bad(w, "%s.%s: %lld is outside the int32 range", path, key, x);
    *out = (jg_opt_i32){true, (int32_t)x};
    return OK;
}

static int rd_bool(struct walk *w, const char *path, const char *key, json_t *v, bool *out) {
    *out = json_is_true(v);
    if (json_is_null(v) || json_is_boolean(v)) return OK;
    return must(w, path, key, "a boolean", v);
}

static int rd_time(struct walk *w, const char *path, const char *key, json_t *v, jg_time *out) {
    *out = (jg_time){0};
    if (json_is_null(v)) return OK;
    if (!json_is_string(v)) return must(w, path, key, "an RFC 3339 time string", v);
    jg_str s = sv(v);
    if (!jg_parse_rfc3339(s.p, s.n, &out->sec, &out->nsec))
        return bad(w, "%s.%s: %.*s%s is not an RFC 3339 time (2006-01-02T15:04:05Z07:00)", path,
                   key, (int)(s.n > 64 ? 64 : s.n), s.p, s.n > 64 ? "..." : "");
    out->set = true;
    return OK;
}

/* An object member: *obj = NULL for null. */
static int rd_obj(struct walk *w, const char *path, const char *key, json_t *v, json_t **obj) {
    *obj = NULL;
    if (json_is_null(v)) return OK;
    if (!json_is_object(v)) return must(w, path, key, "an object", v);
    *obj = v;
    return OK;
}

/* ---- Job / CronJob ---- */

struct job_ctx {
    char path[160];
    enum jg_target target;
    struct jg_job *job;
    jg_opt_str type, status; /* the condition being read */
    int level;               /* CronJob: 0 spec, 1 jobTemplate, 2 jobTemplate.spec */
};

static int cond_member(struct walk *w, void *ctx, int which, json_t *v) {
    struct job_ctx *c = ctx;
    return rd_str(w, c->path, which ? "status" : "type", v, which ? &c->status : &c->type);
}

static int rd_conditions(struct walk *w, const char *path, json_t *v, struct jg_job_status *st) {
    static const char *const types[JG_COND_COUNT] = {"Complete", "Failed", "FailureTarget",
                                                     "SuccessCriteriaMet", "Suspended"};
    static const char *const names[] = {"type", "status"};
    if (json_is_null(v)) return OK;
    if (!json_is_array(v)) return must(w, path, "conditions", "an array", v);
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        if (json_is_null(e)) continue;
        struct job_ctx c = {.path = ""};
        PATHF(c.path, "%s.conditions[%zu]", path, i);
        if (!json_is_object(e))
            return bad(w, "%s: must be an object, got %s", c.path, type_name(e));
        if (members(w, e, names, 2, cond_member, &c)) return STOP;
        for (int t = 0; t < JG_COND_COUNT; t++) {
            if (!c.type.set || strlen(types[t]) != c.type.s.n ||
                memcmp(types[t], c.type.s.p, c.type.s.n) != 0)
                continue;
            if (jg_str_eq_lit(c.status.s, "True")) st->cond_true |= JG_COND_BIT(t);
            if (jg_str_eq_lit(c.status.s, "False")) st->cond_false |= JG_COND_BIT(t);
        }
    }
    return OK;
}

static int rd_list(struct walk *w, const char *path, const char *key, json_t *v, jg_str_list *out) {
    *out = (jg_str_list){0};
    if (json_is_null(v)) return OK;
    if (!json_is_array(v)) return must(w, path, key, "an array of strings", v);
    out->set = true;
    size_t n = json_array_size(v);
    if (n) {
        out->items = calloc(n, sizeof *out->items);
        if (!out->items) abort();          /* test code: no allocation failure handling */
        if (w->out->n_lists == 5) abort(); /* two per object and groups: repeats are refused */
        w->out->lists[w->out->n_lists++] = out->items;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(v, i);
        out->items[i] = (jg_str){"", 0};
        if (json_is_string(e))
            out->items[i] = sv(e);
        else if (!json_is_null(e))
            return bad(w, "%s.%s[%zu]: must be a string, got %s", path, key, i, type_name(e));
        out->n = i + 1;
    }
    return OK;
}

static int uncounted_member(struct walk *w, void *ctx, int which, json_t *v) {
    struct job_ctx *c = ctx;
    struct jg_job_status *st = &c->job->status;
    return which ? rd_list(w, c->path, "failed", v, &st->uncounted_failed)
                 : rd_list(w, c->path, "succeeded", v, &st->uncounted_succeeded);
}

static const char *const status_names[] = {
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

static int status_member(struct walk *w, void *ctx, int which, json_t *v) {
    struct job_ctx *c = ctx;
    struct jg_job_status *st = &c->job->status;
    const char *key = status_names[which];
    jg_opt_i32 i;
    jg_opt_str s;
    json_t *o;
    int r;
    switch (which) {
    case 0:
        return rd_conditions(w, c->path, v, st);
    case 1:
        return rd_time(w, c->path, key, v, &st->start_time);
    case 2:
        return rd_time(w, c->path, key, v, &st->completion_time);
    case 3:
    case 4:
    case 5:
        r = rd_i32(w, c->path, key, v, &i);
        *(which == 3 ? &st->active : which == 4 ? &st->succeeded : &st->failed) = i.v;
        return r;
    case 6:
        return rd_i32(w, c->path, key, v, &st->ready);
    case 7:
        return rd_i32(w, c->path, key, v, &st->terminating);
    case 8:
        r = rd_str(w, c->path, key, v, &s);
        st->completed_indexes = s.s;
        return r;
    case 9:
        return rd_str(w, c->path, key, v, &st->failed_indexes);
    default: {
        if (rd_obj(w, c->path, key, v, &o)) return STOP;
        if (!o) return OK;
        st->uncounted_set = true;
        struct job_ctx u = {.job = c->job};
        PATHF(u.path, "%s.%s", c->path, key);
        static const char *const names[] = {"succeeded", "failed"};
        return members(w, o, names, 2, uncounted_member, &u);
    }
    }
}

static const char *const spec_names[] = {
    "managedBy",      "completions", "parallelism",  "backoffLimitPerIndex",
    "completionMode", "suspend",     "successPolicy"};

static int spec_member(struct walk *w, void *ctx, int which, json_t *v) {
    struct job_ctx *c = ctx;
    struct jg_job_spec *sp = &c->job->spec;
    const char *key = spec_names[which];
    jg_opt_str mode;
    switch (which) {
    case 0:
        return rd_str(w, c->path, key, v, &sp->managed_by);
    case 1:
        return rd_i32(w, c->path, key, v, &sp->completions);
    case 2:
        return rd_i32(w, c->path, key, v, &sp->parallelism);
    case 3:
        return rd_i32(w, c->path, key, v, &sp->backoff_limit_per_index);
    case 4:
        if (rd_str(w, c->path, key, v, &mode)) return STOP;
        sp->indexed = jg_str_eq_lit(mode.s, "Indexed");
        return OK;
    case 5:
        return rd_bool(w, c->path, key, v, &sp->suspend);
    default:
        if (json_is_null(v)) return OK;
        if (!json_is_object(v)) return must(w, c->path, key, "an object", v);
        sp->has_success_policy = true;
        return OK;
    }
}

/* CronJob: spec.jobTemplate.spec.managedBy, one level per call (c->level). */
static int cron_member(struct walk *w, void *ctx, int which, json_t *v) {
    (void)which;
    struct job_ctx *c = ctx;
    static const char *const levels[] = {"jobTemplate", "spec", "managedBy"};
    int level = c->level;
    if (level == 2) return rd_str(w, c->path, "managedBy", v, &c->job->spec.managed_by);
    json_t *o;
    if (rd_obj(w, c->path, levels[level], v, &o)) return STOP;
    if (!o) return OK;
    struct job_ctx next = {.job = c->job, .target = c->target, .level = level + 1};
    PATHF(next.path, "%s.%s", c->path, levels[level]);
    return members(w, o, &levels[level + 1], 1, cron_member, &next);
}

static int name_member(struct walk *w, void *ctx, int which, json_t *v) {
    (void)which;
    struct job_ctx *c = ctx;
    jg_opt_str name;
    int r = rd_str(w, c->path, "name", v, &name);
    c->job->name = name.s;
    return r;
}

static int object_member(struct walk *w, void *ctx, int which, json_t *v) {
    static const char *const names[] = {"kind", "metadata", "spec", "status"};
    struct job_ctx *c = ctx;
    bool cron = c->target == JG_TARGET_CRONJOB;
    if (which == 0) {
        jg_opt_str kind;
        if (rd_str(w, c->path, "kind", v, &kind)) return STOP;
        const char *want = cron ? "CronJob" : "Job";
        if (kind.set && !jg_str_eq_lit(kind.s, want))
            return bad(w, "%s.kind: expected \"%s\", got \"%.*s\"", c->path, want,
                       (int)(kind.s.n > 64 ? 64 : kind.s.n), kind.s.p);
        return OK;
    }
    if (which == 3 && cron) return OK; /* a CronJob's status is not read */
    json_t *o;
    if (rd_obj(w, c->path, names[which], v, &o)) return STOP;
    if (!o) return OK;
    struct job_ctx sub = {.job = c->job, .target = c->target};
    PATHF(sub.path, "%s.%s", c->path, names[which]);
    if (which == 1) {
        static const char *const name[] = {"name"};
        return members(w, o, name, 1, name_member, &sub);
    }
    if (which == 2 && cron) {
        static const char *const jt[] = {"jobTemplate"};
        return members(w, o, jt, 1, cron_member, &sub);
    }
    if (which == 2) return members(w, o, spec_names, 7, spec_member, &sub);
    return members(w, o, status_names, 11, status_member, &sub);
}

static int rd_job(struct walk *w, const char *path, json_t *v, enum jg_target target,
                  struct jg_job *job) {
    if (!json_is_object(v)) return bad(w, "%s: must be an object, got %s", path, type_name(v));
    static const char *const names[] = {"kind", "metadata", "spec", "status"};
    struct job_ctx c = {.target = target, .job = job};
    PATHF(c.path, "%s", path);
    job->present = true;
    return members(w, v, names, 4, object_member, &c);
}

/* ---- the request ---- */

struct req_ctx {
    struct jg_request *q;
    jg_opt_str uid, op, group, resource, kgroup, kkind;
    bool has_resource, has_kind, routed;
    json_t *object[2]; /* non-null object/oldObject */
    bool decoded[2];
};

static bool decodes_object(const struct jg_request *q, int idx) {
    if (q->target == JG_TARGET_OTHER) return false;
    return q->operation == JG_OP_UPDATE || (idx == 0 && q->operation == JG_OP_CREATE);
}

static bool rules_read_objects(const struct jg_request *q) {
    if (q->operation != JG_OP_CREATE && q->operation != JG_OP_UPDATE) return false;
    if (q->target == JG_TARGET_JOB)
        return q->sub_resource.n == 0 || jg_str_eq_lit(q->sub_resource, "status");
    return q->target == JG_TARGET_CRONJOB && q->sub_resource.n == 0;
}

/* Routing: by request.resource when it names a resource, else by request.kind. Decided as soon
 * as operation and a non-empty resource are known, else once the request is read (final). */
static void route(struct req_ctx *c, bool final) {
    if (c->routed || !c->op.set || !(c->has_resource || c->has_kind)) return;
    bool by_resource = c->has_resource && c->resource.s.n;
    if (!by_resource && !final) return;
    jg_str group = by_resource ? c->group.s : c->kgroup.s;
    jg_str name = by_resource ? c->resource.s : c->kkind.s;
    enum jg_target t = JG_TARGET_OTHER;
    if (jg_str_eq_lit(group, "batch")) {
        if (jg_str_eq_lit(name, by_resource ? "jobs" : "Job")) t = JG_TARGET_JOB;
        if (jg_str_eq_lit(name, by_resource ? "cronjobs" : "CronJob")) t = JG_TARGET_CRONJOB;
    }
    c->q->target = t;
    c->routed = true;
}

static int decode_object(struct walk *w, struct req_ctx *c, int idx) {
    static const char *const paths[] = {"request.object", "request.oldObject"};
    c->decoded[idx] = true;
    if (!decodes_object(c->q, idx)) return OK;
    return rd_job(w, paths[idx], c->object[idx], c->q->target,
                  idx ? &c->q->old_object : &c->q->object);
}

struct gvr_ctx {
    const char *path;
    const char *const *names;
    jg_opt_str *v[3];
};

static int gvr_member(struct walk *w, void *ctx, int which, json_t *v) {
    struct gvr_ctx *g = ctx;
    return rd_str(w, g->path, g->names[which], v, g->v[which]);
}

static int user_member(struct walk *w, void *ctx, int which, json_t *v) {
    if (which == 1)
        return rd_list(w, "request.userInfo", "groups", v, &((struct jg_request *)ctx)->groups);
    jg_opt_str s;
    int r = rd_str(w, "request.userInfo", "username", v, &s);
    ((struct jg_request *)ctx)->username = s.s;
    return r;
}

static const char *const request_names[] = {
    "uid",       "operation", "resource", "kind",   "subResource", "name",
    "namespace", "userInfo",  "dryRun",   "object", "oldObject",
};

static int request_member(struct walk *w, void *ctx, int which, json_t *v) {
    struct req_ctx *c = ctx;
    struct jg_request *q = c->q;
    jg_opt_str s;
    json_t *o;
    switch (which) {
    case 0:
        if (rd_str(w, "request", "uid", v, &c->uid)) return STOP;
        q->uid = c->uid.s;
        return OK;
    case 1: {
        static const char *const ops[] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};
        static const enum jg_operation codes[] = {JG_OP_CREATE, JG_OP_UPDATE, JG_OP_DELETE,
                                                  JG_OP_CONNECT};
        if (rd_str(w, "request", "operation", v, &c->op)) return STOP;
        if (!c->op.set) return OK;
        int found = -1;
        for (int i = 0; i < 4; i++)
            if (jg_str_eq_lit(c->op.s, ops[i])) found = i;
        if (found < 0)
            return bad(w, "request.operation: unknown \"%.*s\" (CREATE, UPDATE, DELETE or CONNECT)",
                       (int)(c->op.s.n > 32 ? 32 : c->op.s.n), c->op.s.p);
        q->operation = codes[found];
        route(c, false);
        return OK;
    }
    case 2:
    case 3: {
        bool res = which == 2;
        static const char *const rnames[] = {"group", "version", "resource"};
        static const char *const knames[] = {"group", "version", "kind"};
        if (rd_obj(w, "request", res ? "resource" : "kind", v, &o)) return STOP;
        if (!o) return OK;
        jg_opt_str version = {false, {"", 0}};
        struct gvr_ctx g = {
            res ? "request.resource" : "request.kind",
            res ? rnames : knames,
            {res ? &c->group : &c->kgroup, &version, res ? &c->resource : &c->kkind}};
        if (members(w, o, g.names, 3, gvr_member, &g)) return STOP;
        if (res) {
            c->has_resource = true;
            q->group = c->group.s;
            q->version = version.s;
            q->resource = c->resource.s;
        } else {
            c->has_kind = true;
        }
        route(c, false);
        return OK;
    }
    case 4:
    case 5:
    case 6: {
        static const char *const keys[] = {"subResource", "name", "namespace"};
        jg_str *dst = which == 4 ? &q->sub_resource : which == 5 ? &q->name : &q->namespace_;
        if (rd_str(w, "request", keys[which - 4], v, &s)) return STOP;
        *dst = s.s;
        return OK;
    }
    case 7: {
        if (rd_obj(w, "request", "userInfo", v, &o)) return STOP;
        if (!o) return OK;
        static const char *const names[] = {"username", "groups"};
        return members(w, o, names, 2, user_member, q);
    }
    case 8:
        return rd_bool(w, "request", "dryRun", v, &q->dry_run);
    default: {
        int idx = which - 9;
        if (json_is_null(v)) return OK;
        c->object[idx] = v;
        return c->routed ? decode_object(w, c, idx) : OK; /* else read after the request */
    }
    }
}

/* What the request must hold, once all of it is read. */
static int check_request(struct walk *w, bool has_request, struct req_ctx *c) {
    struct jg_request *q = c->q;
    if (!has_request) return bad(w, "request: required");
    if (!c->uid.set || c->uid.s.n == 0) return bad(w, "request.uid: required");
    if (!c->op.set) return bad(w, "request.operation: required");
    if (!c->has_resource && !c->has_kind) return bad(w, "request.resource: required");
    if (!q->resource.n && c->kkind.set) { /* metrics label, when routed by kind */
        if (jg_str_eq_lit(c->kkind.s, "Job")) q->resource = (jg_str){"jobs", 4};
        if (jg_str_eq_lit(c->kkind.s, "CronJob")) q->resource = (jg_str){"cronjobs", 8};
        q->group = c->kgroup.s;
    }
    route(c, true);
    for (int i = 0; i < 2; i++) {
        if (!decodes_object(q, i)) continue;
        if (!c->object[i] && rules_read_objects(q))
            return i ? bad(w, "request.oldObject: required for UPDATE")
                     : bad(w, "request.object: required for %s", jg_operation_name(q->operation));
        if (c->object[i] && !c->decoded[i] && decode_object(w, c, i)) return STOP;
    }
    return OK;
}

/* ---- the envelope ---- */

static int check_envelope(struct walk *w, jg_str api, bool api_set, jg_str kind, bool kind_set) {
    if (api_set && !jg_str_eq_lit(api, "admission.k8s.io/v1") &&
        !jg_str_eq_lit(api, "admission.k8s.io/v1beta1"))
        return bad(w,
                   "apiVersion: unsupported \"%.*s\" (expected admission.k8s.io/v1 or "
                   "admission.k8s.io/v1beta1)",
                   (int)(api.n > 64 ? 64 : api.n), api.p);
    if (kind_set && !jg_str_eq_lit(kind, "AdmissionReview"))
        return bad(w, "kind: expected \"AdmissionReview\", got \"%.*s\"",
                   (int)(kind.n > 64 ? 64 : kind.n), kind.p);
    return OK;
}

/* The first string-valued top-level member named `name`, repeats included. */
static const json_t *envelope_member(struct walk *w, json_t *root, const char *name) {
    const char *k;
    json_t *v;
    json_object_foreach(root, k, v) {
        bool repeat;
        const char *key = unmark(w, k, &repeat);
        size_t klen = json_object_iter_key_len(json_object_key_to_iter(k)) - (size_t)(key - k);
        if (klen == strlen(name) && memcmp(key, name, klen) == 0 && json_is_string(v)) return v;
    }
    return NULL;
}

struct review_ctx {
    bool has_request;
    struct req_ctx req;
};

static int review_member(struct walk *w, void *ctx, int which, json_t *v) {
    struct review_ctx *r = ctx;
    jg_opt_str s;
    if (which == 0) return rd_str(w, "AdmissionReview", "apiVersion", v, &s);
    if (which == 1) return rd_str(w, "AdmissionReview", "kind", v, &s);
    if (json_is_null(v)) return OK;
    if (!json_is_object(v)) return bad(w, "request: must be an object, got %s", type_name(v));
    r->has_request = true;
    return members(w, v, request_names, 11, request_member, &r->req);
}

enum ref_status ref_decode_review(const char *body, size_t len, const struct ref_options *opt,
                                  struct ref_review *out, struct ref_result *res) {
    memset(out, 0, sizeof *out);
    memset(res, 0, sizeof *res);
    struct walk w = {opt, out, res};
    if (len > JG_MAX_BODY_BYTES) {
        bad(&w, "request body is %zu bytes, over the %u-byte limit", len, JG_MAX_BODY_BYTES);
        return res->status;
    }
    out->root = json_loadb(body, len, REF_JSON_FLAGS, &res->json_error);
    if (!out->root) return res->status = REF_NOT_JSON;
    json_t *root = out->root;
    if (!json_is_object(root)) {
        bad(&w, "AdmissionReview: must be a JSON object, got %s", type_name(root));
        return res->status;
    }
    struct review_ctx r = {0};
    r.req.q = &out->review.req;
    static const char *const names[] = {"apiVersion", "kind", "request"};
    const json_t *api = envelope_member(&w, root, "apiVersion");
    const json_t *kind = envelope_member(&w, root, "kind");
    jg_str api_s = api ? sv(api) : (jg_str){"", 0}, kind_s = kind ? sv(kind) : (jg_str){"", 0};
    int st = members(&w, root, names, 3, review_member, &r);
    if (!st) st = check_envelope(&w, api_s, api != NULL, kind_s, kind != NULL);
    if (!st) st = check_request(&w, r.has_request, &r.req);
    if (st) { /* apiVersion/kind outrank whatever else was found */
        struct ref_result env = {0};
        struct walk we = {opt, out, &env};
        if (check_envelope(&we, api_s, api != NULL, kind_s, kind != NULL)) *res = env;
    } else {
        res->status = REF_OK;
    }
    if (jg_str_eq_lit(api_s, "admission.k8s.io/v1beta1"))
        out->review.req.api_version = JG_API_V1BETA1;
    return res->status;
}

void ref_review_free(struct ref_review *r) {
    for (size_t i = 0; i < r->n_lists; i++)
        free(r->lists[i]);
    json_decref(r->root);
    memset(r, 0, sizeof *r);
}
