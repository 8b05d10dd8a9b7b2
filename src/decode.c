/* decode: AdmissionReview JSON -> jg_review (job-rules.md §9 field map). The only module that
 * reads request JSON. Every refusal names the field and what was wrong with it.
 *
 * What kube-apiserver would do with such input (see README "Bad input"): objects with wrong
 * field types, out-of-range integers or unparsable times fail its own decoding with 400 before
 * any webhook is called, so jobguard answers them with allowed:false and status.code 400 too.
 * JSON null is Go's nil/zero value and counts as absent, as in Go. */
#include "jobguard/decode.h"

#include "jobguard/alloc.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Lists of uncounted pod UIDs: one array per list per object. */
#define MAX_OWNED_LISTS 4

struct decoded {
    json_t *roots[2];
    jg_str *lists[MAX_OWNED_LISTS];
    int nlists;
};

static enum jg_decode_status fail(jg_decode_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static enum jg_decode_status fail(jg_decode_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->status = JG_DECODE_BAD_REQUEST;
    return JG_DECODE_BAD_REQUEST;
}

static enum jg_decode_status fail_oom(jg_decode_error *err)
{
    snprintf(err->message, sizeof err->message, "out of memory while decoding the request");
    err->status = JG_DECODE_NO_MEMORY;
    return JG_DECODE_NO_MEMORY;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a non-integer number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "a value";
}

/* A member, or NULL when absent or null (Go: nil). */
static json_t *member(json_t *obj, const char *key)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    return v && !json_is_null(v) ? v : NULL;
}

static jg_str str_of(const json_t *v)
{
    return (jg_str){json_string_value(v), json_string_length(v)};
}

typedef enum jg_decode_status status_t;
#define TRY(x)                                                                                     \
    do {                                                                                           \
        status_t s_ = (x);                                                                         \
        if (s_ != JG_DECODE_OK) return s_;                                                         \
    } while (0)

static status_t get_object(json_t *obj, const char *path, const char *key, json_t **out,
                           jg_decode_error *err)
{
    json_t *v = member(obj, key);
    *out = NULL;
    if (v && !json_is_object(v))
        return fail(err, "%s.%s: must be an object, got %s", path, key, type_name(v));
    *out = v;
    return JG_DECODE_OK;
}

static status_t get_str(json_t *obj, const char *path, const char *key, jg_opt_str *out,
                        jg_decode_error *err)
{
    json_t *v = member(obj, key);
    out->set = false;
    out->s = (jg_str){"", 0};
    if (!v) return JG_DECODE_OK;
    if (!json_is_string(v))
        return fail(err, "%s.%s: must be a string, got %s", path, key, type_name(v));
    out->set = true;
    out->s = str_of(v);
    return JG_DECODE_OK;
}

static status_t get_i32(json_t *obj, const char *path, const char *key, jg_opt_i32 *out,
                        jg_decode_error *err)
{
    json_t *v = member(obj, key);
    out->set = false;
    out->v = 0;
    if (!v) return JG_DECODE_OK;
    if (!json_is_integer(v))
        return fail(err, "%s.%s: must be an integer (int32), got %s", path, key, type_name(v));
    json_int_t i = json_integer_value(v);
    if (i < INT32_MIN || i > INT32_MAX)
        return fail(err, "%s.%s: %lld is outside the int32 range", path, key, (long long)i);
    out->set = true;
    out->v = (int32_t)i;
    return JG_DECODE_OK;
}

static status_t get_bool(json_t *obj, const char *path, const char *key, bool *out,
                         jg_decode_error *err)
{
    json_t *v = member(obj, key);
    *out = false;
    if (!v) return JG_DECODE_OK;
    if (!json_is_boolean(v))
        return fail(err, "%s.%s: must be a boolean, got %s", path, key, type_name(v));
    *out = json_is_true(v);
    return JG_DECODE_OK;
}

static status_t get_time(json_t *obj, const char *path, const char *key, jg_time *out,
                         jg_decode_error *err)
{
    json_t *v = member(obj, key);
    *out = (jg_time){0};
    if (!v) return JG_DECODE_OK;
    if (!json_is_string(v))
        return fail(err, "%s.%s: must be an RFC 3339 time string, got %s", path, key,
                    type_name(v));
    jg_str s = str_of(v);
    if (!jg_parse_rfc3339(s.p, s.n, &out->sec, &out->nsec))
        return fail(err, "%s.%s: %.64s%s is not an RFC 3339 time (2006-01-02T15:04:05Z07:00)",
                    path, key, s.p, s.n > 64 ? "..." : "");
    out->set = true;
    return JG_DECODE_OK;
}

static status_t get_str_list(json_t *obj, const char *path, const char *key, jg_str_list *out,
                             struct decoded *d, jg_decode_error *err)
{
    json_t *v = member(obj, key);
    *out = (jg_str_list){0};
    if (!v) return JG_DECODE_OK;
    if (!json_is_array(v))
        return fail(err, "%s.%s: must be an array of strings, got %s", path, key, type_name(v));
    out->set = true;
    out->n = json_array_size(v);
    if (out->n == 0) return JG_DECODE_OK;
    if (d->nlists == MAX_OWNED_LISTS) return fail_oom(err); /* unreachable: 2 lists × 2 objects */
    out->items = jg_malloc(out->n * sizeof *out->items);
    if (!out->items) return fail_oom(err);
    d->lists[d->nlists++] = out->items;
    for (size_t i = 0; i < out->n; i++) {
        json_t *e = json_array_get(v, i);
        if (json_is_null(e)) { /* Go decodes null into a string element as "" */
            out->items[i] = (jg_str){"", 0};
        } else if (json_is_string(e)) {
            out->items[i] = str_of(e);
        } else {
            return fail(err, "%s.%s[%zu]: must be a string, got %s", path, key, i, type_name(e));
        }
    }
    return JG_DECODE_OK;
}

static int cond_type(jg_str t)
{
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

static status_t decode_conditions(json_t *status, const char *path, struct jg_job_status *st,
                                  jg_decode_error *err)
{
    json_t *v = member(status, "conditions");
    if (!v) return JG_DECODE_OK;
    if (!json_is_array(v))
        return fail(err, "%s.conditions: must be an array, got %s", path, type_name(v));
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *c = json_array_get(v, i);
        if (json_is_null(c)) continue;
        char cpath[160];
        snprintf(cpath, sizeof cpath, "%.100s.conditions[%zu]", path, i);
        if (!json_is_object(c))
            return fail(err, "%s: must be an object, got %s", cpath, type_name(c));
        jg_opt_str type, cstatus;
        TRY(get_str(c, cpath, "type", &type, err));
        TRY(get_str(c, cpath, "status", &cstatus, err));
        int t = cond_type(type.s);
        if (t < 0) continue;
        /* Matching is case-sensitive: "true" is not True (§3.0, edge case 68). */
        if (jg_str_eq_lit(cstatus.s, "True")) st->cond_true |= JG_COND_BIT(t);
        if (jg_str_eq_lit(cstatus.s, "False")) st->cond_false |= JG_COND_BIT(t);
    }
    return JG_DECODE_OK;
}

static status_t decode_status(json_t *status, const char *path, struct jg_job_status *st,
                              struct decoded *d, jg_decode_error *err)
{
    jg_opt_i32 i;
    TRY(decode_conditions(status, path, st, err));
    TRY(get_time(status, path, "startTime", &st->start_time, err));
    TRY(get_time(status, path, "completionTime", &st->completion_time, err));
    TRY(get_i32(status, path, "active", &i, err));
    st->active = i.v;
    TRY(get_i32(status, path, "succeeded", &i, err));
    st->succeeded = i.v;
    TRY(get_i32(status, path, "failed", &i, err));
    st->failed = i.v;
    TRY(get_i32(status, path, "ready", &st->ready, err));
    TRY(get_i32(status, path, "terminating", &st->terminating, err));
    jg_opt_str s;
    TRY(get_str(status, path, "completedIndexes", &s, err));
    st->completed_indexes = s.s;
    TRY(get_str(status, path, "failedIndexes", &st->failed_indexes, err));
    json_t *u = NULL;
    TRY(get_object(status, path, "uncountedTerminatedPods", &u, err));
    if (u) {
        char upath[160];
        snprintf(upath, sizeof upath, "%.100s.uncountedTerminatedPods", path);
        st->uncounted_set = true;
        TRY(get_str_list(u, upath, "succeeded", &st->uncounted_succeeded, d, err));
        TRY(get_str_list(u, upath, "failed", &st->uncounted_failed, d, err));
    }
    return JG_DECODE_OK;
}

static status_t decode_job_spec(json_t *spec, const char *path, struct jg_job_spec *sp,
                                jg_decode_error *err)
{
    TRY(get_str(spec, path, "managedBy", &sp->managed_by, err));
    TRY(get_i32(spec, path, "completions", &sp->completions, err));
    TRY(get_i32(spec, path, "parallelism", &sp->parallelism, err));
    TRY(get_i32(spec, path, "backoffLimitPerIndex", &sp->backoff_limit_per_index, err));
    jg_opt_str mode;
    TRY(get_str(spec, path, "completionMode", &mode, err));
    sp->indexed = jg_str_eq_lit(mode.s, "Indexed");
    TRY(get_bool(spec, path, "suspend", &sp->suspend, err));
    json_t *sp_policy = NULL;
    TRY(get_object(spec, path, "successPolicy", &sp_policy, err));
    sp->has_success_policy = sp_policy != NULL;
    return JG_DECODE_OK;
}

/* One Job or CronJob object at `path` ("request.object", ...). */
static status_t decode_object(json_t *obj, const char *path, enum jg_target target,
                              struct jg_job *job, struct decoded *d, jg_decode_error *err)
{
    char sub[160];
    job->present = true;
    jg_opt_str kind;
    TRY(get_str(obj, path, "kind", &kind, err));
    const char *want = target == JG_TARGET_CRONJOB ? "CronJob" : "Job";
    if (kind.set && !jg_str_eq_lit(kind.s, want))
        return fail(err, "%s.kind: expected \"%s\", got \"%.64s\"", path, want, kind.s.p);
    json_t *meta = NULL, *spec = NULL, *status = NULL;
    TRY(get_object(obj, path, "metadata", &meta, err));
    snprintf(sub, sizeof sub, "%.64s.metadata", path);
    jg_opt_str name;
    TRY(get_str(meta, sub, "name", &name, err));
    job->name = name.s;
    TRY(get_object(obj, path, "spec", &spec, err));
    snprintf(sub, sizeof sub, "%.64s.spec", path);
    if (target == JG_TARGET_CRONJOB) {
        json_t *tmpl = NULL, *jspec = NULL;
        TRY(get_object(spec, sub, "jobTemplate", &tmpl, err));
        snprintf(sub, sizeof sub, "%.64s.spec.jobTemplate", path);
        TRY(get_object(tmpl, sub, "spec", &jspec, err));
        snprintf(sub, sizeof sub, "%.64s.spec.jobTemplate.spec", path);
        return get_str(jspec, sub, "managedBy", &job->spec.managed_by, err);
    }
    TRY(decode_job_spec(spec, sub, &job->spec, err));
    TRY(get_object(obj, path, "status", &status, err));
    snprintf(sub, sizeof sub, "%.64s.status", path);
    return decode_status(status, sub, &job->status, d, err);
}

static status_t parse_json(const char *body, size_t len, const char *what, json_t **out,
                           jg_decode_error *err)
{
    json_error_t je;
    *out = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
    if (*out) return JG_DECODE_OK;
    if (json_error_code(&je) == json_error_out_of_memory) return fail_oom(err);
    if (len == 0) return fail(err, "%s: empty input", what);
    return fail(err, "%s: invalid JSON at line %d, column %d: %s", what, je.line, je.column,
                je.text);
}

static struct decoded *priv_of(jg_review *r, jg_decode_error *err)
{
    if (!r->priv) {
        r->priv = jg_malloc(sizeof(struct decoded));
        if (!r->priv) {
            fail_oom(err);
            return NULL;
        }
        memset(r->priv, 0, sizeof(struct decoded));
    }
    return r->priv;
}

/* Routing by request.resource (or request.kind when resource is absent). */
static enum jg_target route(jg_str group, jg_str resource, jg_str kind_group, jg_str kind)
{
    if (resource.n) {
        if (!jg_str_eq_lit(group, "batch")) return JG_TARGET_OTHER;
        if (jg_str_eq_lit(resource, "jobs")) return JG_TARGET_JOB;
        if (jg_str_eq_lit(resource, "cronjobs")) return JG_TARGET_CRONJOB;
        return JG_TARGET_OTHER;
    }
    if (!jg_str_eq_lit(kind_group, "batch")) return JG_TARGET_OTHER;
    if (jg_str_eq_lit(kind, "Job")) return JG_TARGET_JOB;
    if (jg_str_eq_lit(kind, "CronJob")) return JG_TARGET_CRONJOB;
    return JG_TARGET_OTHER;
}

/* Whether the rules read the objects of this request; if not it is allowed untouched and the
 * objects are not decoded at all (DELETE, CONNECT, other resources, other subresources). */
static bool needs_objects(const struct jg_request *q)
{
    if (q->operation != JG_OP_CREATE && q->operation != JG_OP_UPDATE) return false;
    if (q->target == JG_TARGET_JOB)
        return q->sub_resource.n == 0 || jg_str_eq_lit(q->sub_resource, "status");
    if (q->target == JG_TARGET_CRONJOB) return q->sub_resource.n == 0;
    return false;
}

static status_t decode_request(json_t *root, jg_review *r, struct decoded *d, jg_decode_error *err)
{
    struct jg_request *q = &r->req;
    if (!json_is_object(root))
        return fail(err, "AdmissionReview: must be a JSON object, got %s", type_name(root));
    json_t *req = member(root, "request");
    /* Read uid and apiVersion first, opportunistically, so that any refusal can echo them. */
    if (json_is_object(req) && json_is_string(json_object_get(req, "uid")))
        q->uid = str_of(json_object_get(req, "uid"));
    jg_opt_str api, kind;
    TRY(get_str(root, "AdmissionReview", "apiVersion", &api, err));
    if (jg_str_eq_lit(api.s, "admission.k8s.io/v1beta1")) q->api_version = JG_API_V1BETA1;
    if (!api.set) return fail(err, "apiVersion: required (admission.k8s.io/v1 or v1beta1)");
    if (!jg_str_eq_lit(api.s, "admission.k8s.io/v1") &&
        !jg_str_eq_lit(api.s, "admission.k8s.io/v1beta1"))
        return fail(err,
                    "apiVersion: unsupported \"%.64s\" (expected admission.k8s.io/v1 or "
                    "admission.k8s.io/v1beta1)",
                    api.s.p);
    TRY(get_str(root, "AdmissionReview", "kind", &kind, err));
    if (!jg_str_eq_lit(kind.s, "AdmissionReview"))
        return fail(err, "kind: expected \"AdmissionReview\", got %s%.64s%s",
                    kind.set ? "\"" : "", kind.set ? kind.s.p : "nothing", kind.set ? "\"" : "");
    if (!req) return fail(err, "request: required");
    if (!json_is_object(req)) return fail(err, "request: must be an object, got %s", type_name(req));

    jg_opt_str s;
    TRY(get_str(req, "request", "uid", &s, err));
    if (!s.set || s.s.n == 0) return fail(err, "request.uid: required");
    q->uid = s.s;

    TRY(get_str(req, "request", "operation", &s, err));
    if (!s.set) return fail(err, "request.operation: required");
    if (jg_str_eq_lit(s.s, "CREATE")) q->operation = JG_OP_CREATE;
    else if (jg_str_eq_lit(s.s, "UPDATE")) q->operation = JG_OP_UPDATE;
    else if (jg_str_eq_lit(s.s, "DELETE")) q->operation = JG_OP_DELETE;
    else if (jg_str_eq_lit(s.s, "CONNECT")) q->operation = JG_OP_CONNECT;
    else
        return fail(err, "request.operation: unknown \"%.32s\" (CREATE, UPDATE, DELETE or CONNECT)",
                    s.s.p);

    json_t *res = NULL, *rkind = NULL;
    TRY(get_object(req, "request", "resource", &res, err));
    TRY(get_object(req, "request", "kind", &rkind, err));
    if (!res && !rkind) return fail(err, "request.resource: required");
    TRY(get_str(res, "request.resource", "group", &s, err));
    q->group = s.s;
    TRY(get_str(res, "request.resource", "version", &s, err));
    q->version = s.s;
    TRY(get_str(res, "request.resource", "resource", &s, err));
    q->resource = s.s;
    jg_opt_str kgroup, kkind;
    TRY(get_str(rkind, "request.kind", "group", &kgroup, err));
    TRY(get_str(rkind, "request.kind", "kind", &kkind, err));
    if (!q->resource.n && kkind.set) { /* label metrics by the resource even when routed by kind */
        if (jg_str_eq_lit(kkind.s, "Job")) q->resource = (jg_str){"jobs", 4};
        if (jg_str_eq_lit(kkind.s, "CronJob")) q->resource = (jg_str){"cronjobs", 8};
        q->group = kgroup.s;
    }
    TRY(get_str(req, "request", "subResource", &s, err));
    q->sub_resource = s.s;
    TRY(get_str(req, "request", "name", &s, err));
    q->name = s.s;
    TRY(get_str(req, "request", "namespace", &s, err));
    q->namespace_ = s.s;
    json_t *user = NULL;
    TRY(get_object(req, "request", "userInfo", &user, err));
    TRY(get_str(user, "request.userInfo", "username", &s, err));
    q->username = s.s;
    TRY(get_bool(req, "request", "dryRun", &q->dry_run, err));

    q->target = route(q->group, res ? q->resource : (jg_str){0}, kgroup.s, kkind.s);
    if (!needs_objects(q)) return JG_DECODE_OK;

    json_t *obj = member(req, "object");
    if (!obj) return fail(err, "request.object: required for %s", jg_operation_name(q->operation));
    if (!json_is_object(obj))
        return fail(err, "request.object: must be an object, got %s", type_name(obj));
    TRY(decode_object(obj, "request.object", q->target, &q->object, d, err));
    if (q->operation == JG_OP_UPDATE) {
        json_t *old = member(req, "oldObject");
        if (!old) return fail(err, "request.oldObject: required for UPDATE");
        if (!json_is_object(old))
            return fail(err, "request.oldObject: must be an object, got %s", type_name(old));
        TRY(decode_object(old, "request.oldObject", q->target, &q->old_object, d, err));
    }
    return JG_DECODE_OK;
}

enum jg_decode_status jg_decode_review(const char *body, size_t len, jg_review *out,
                                       jg_decode_error *err)
{
    memset(out, 0, sizeof *out);
    err->status = JG_DECODE_OK;
    err->message[0] = '\0';
    struct decoded *d = priv_of(out, err);
    if (!d) return err->status;
    if (len > JG_MAX_BODY_BYTES)
        return fail(err, "request body is %zu bytes, over the %u-byte limit", len,
                    JG_MAX_BODY_BYTES);
    TRY(parse_json(body, len, "AdmissionReview", &d->roots[0], err));
    return decode_request(d->roots[0], out, d, err);
}

enum jg_decode_status jg_decode_objects(const char *old_json, size_t old_len, const char *new_json,
                                        size_t new_len, const char *sub_resource, jg_review *out,
                                        jg_decode_error *err)
{
    memset(out, 0, sizeof *out);
    err->status = JG_DECODE_OK;
    err->message[0] = '\0';
    struct decoded *d = priv_of(out, err);
    if (!d) return err->status;
    struct jg_request *q = &out->req;
    TRY(parse_json(new_json, new_len, "new object", &d->roots[0], err));
    if (!json_is_object(d->roots[0]))
        return fail(err, "new object: must be a JSON object, got %s", type_name(d->roots[0]));
    if (old_json) {
        TRY(parse_json(old_json, old_len, "old object", &d->roots[1], err));
        if (!json_is_object(d->roots[1]))
            return fail(err, "old object: must be a JSON object, got %s", type_name(d->roots[1]));
    }
    jg_opt_str kind;
    TRY(get_str(d->roots[0], "new object", "kind", &kind, err));
    q->target = jg_str_eq_lit(kind.s, "CronJob") ? JG_TARGET_CRONJOB : JG_TARGET_JOB;
    q->group = (jg_str){"batch", 5};
    q->version = (jg_str){"v1", 2};
    q->resource = q->target == JG_TARGET_CRONJOB ? (jg_str){"cronjobs", 8} : (jg_str){"jobs", 4};
    q->sub_resource = (jg_str){sub_resource ? sub_resource : "", sub_resource ? strlen(sub_resource) : 0};
    q->operation = old_json ? JG_OP_UPDATE : JG_OP_CREATE;
    if (q->sub_resource.n && !old_json)
        return fail(err, "--subresource %s needs --old: a subresource is only ever UPDATEd",
                    sub_resource);
    TRY(decode_object(d->roots[0], "new object", q->target, &q->object, d, err));
    if (old_json) TRY(decode_object(d->roots[1], "old object", q->target, &q->old_object, d, err));
    q->name = q->object.name;
    jg_opt_str ns;
    json_t *meta = member(d->roots[0], "metadata");
    if (json_is_object(meta)) {
        TRY(get_str(meta, "new object.metadata", "namespace", &ns, err));
        q->namespace_ = ns.s;
    }
    return JG_DECODE_OK;
}

void jg_review_free(jg_review *r)
{
    struct decoded *d = r->priv;
    if (d) {
        for (int i = 0; i < 2; i++) json_decref(d->roots[i]);
        for (int i = 0; i < d->nlists; i++) jg_free(d->lists[i]);
        jg_free(d);
    }
    memset(r, 0, sizeof *r);
}

const char *jg_operation_name(enum jg_operation op)
{
    switch (op) {
    case JG_OP_CREATE: return "CREATE";
    case JG_OP_UPDATE: return "UPDATE";
    case JG_OP_DELETE: return "DELETE";
    case JG_OP_CONNECT: return "CONNECT";
    }
    return "UNKNOWN";
}

const char *jg_api_version_name(enum jg_api_version v)
{
    return v == JG_API_V1BETA1 ? "admission.k8s.io/v1beta1" : "admission.k8s.io/v1";
}

/* ---- RFC 3339, as Go's time.Parse(time.RFC3339, s) ---- */

static bool digits(const char *s, size_t n, int *out)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static bool leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

bool jg_parse_rfc3339(const char *s, size_t n, int64_t *sec, int32_t *nsec)
{
    int Y, M, D, h, m, sc;
    /* 2006-01-02T15:04:05 */
    if (n < 20) return false;
    if (!digits(s, 4, &Y) || s[4] != '-' || !digits(s + 5, 2, &M) || s[7] != '-' ||
        !digits(s + 8, 2, &D) || s[10] != 'T' || !digits(s + 11, 2, &h) || s[13] != ':' ||
        !digits(s + 14, 2, &m) || s[16] != ':' || !digits(s + 17, 2, &sc))
        return false;
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (M < 1 || M > 12) return false;
    if (D < 1 || D > mdays[M - 1] + (M == 2 && leap(Y))) return false;
    if (h > 23 || m > 59 || sc > 59) return false;
    size_t i = 19;
    int32_t frac = 0;
    if (i < n && (s[i] == '.' || s[i] == ',')) { /* Go accepts a fraction the layout lacks */
        size_t start = ++i;
        int scale = 100000000;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (scale > 0) {
                frac += (s[i] - '0') * scale;
                scale /= 10;
            }
            i++;
        }
        if (i == start) return false;
    }
    int64_t offset = 0;
    if (i < n && s[i] == 'Z') {
        i++;
    } else if (i + 6 == n && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
        int oh, om;
        if (!digits(s + i + 1, 2, &oh) || !digits(s + i + 4, 2, &om) || oh > 23 || om > 59)
            return false;
        offset = (int64_t)(oh * 3600 + om * 60) * (s[i] == '-' ? -1 : 1);
        i += 6;
    } else {
        return false;
    }
    if (i != n) return false;
    *sec = days_from_civil(Y, M, D) * 86400 + h * 3600 + m * 60 + sc - offset;
    *nsec = frac;
    return true;
}
