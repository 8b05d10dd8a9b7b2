/* decode: AdmissionReview JSON -> jg_review (docs/rules.md §9 field map). The only module that
 * reads request JSON.
 *
 * One strict, validating pass over the body (RFC 8259: grammar, UTF-8, escapes, numbers, nesting
 * depth, no trailing data) that materialises only what the rules read. Everything else
 * (managedFields, annotations, the pod template, ...) is validated and skipped without
 * allocating; strings without escapes are zero-copy slices of the body. See docs/decoder.md for
 * why: a whole-document tree costs more than the TLS connection that carries it.
 *
 * What kube-apiserver would do with bad input (see docs/server.md, "Bad input"): objects with wrong
 * field types, out-of-range integers or unparsable times fail its own decoding with 400 before any
 * webhook is called, so jobguard answers them with allowed:false and status.code 400 too.
 * JSON null is Go's nil/zero value and counts as absent, as in Go. Syntax errors take precedence
 * over every other complaint, then apiVersion/kind, then the first field problem. */
#include "fields.h"

#include "jobguard/alloc.h"
#include "jobguard/targets.h"

#include <stdio.h>
#include <string.h>

/* ---- the AdmissionReview envelope ---- */

/* Routing by request.resource (or request.kind when resource is absent, by_kind): batch/v1 Job
 * and CronJob are the API server's own kinds and always their built-in rows; anything else is a
 * CRD target when the target table (the policy's rows, then the built-in ones) has a row for it. */
static enum jg_target route(const struct jg_policy *p, jg_str group, jg_str version, jg_str name,
                            bool by_kind, const struct jg_policy_target **row) {
    *row = NULL;
    if (jg_str_eq_lit(group, "batch")) {
        for (int i = 0; i < 2; i++) { /* rows 0 and 1: Job, CronJob (targets.c) */
            const struct jg_policy_target *t = &jg_builtin_targets[i];
            if (jg_str_eq_lit(name, by_kind ? t->kind : t->resource)) {
                *row = t;
                return i == 0 ? JG_TARGET_JOB : JG_TARGET_CRONJOB;
            }
        }
    }
    *row = jg_target_route(p, group, version, name, by_kind);
    return *row ? JG_TARGET_CRD : JG_TARGET_OTHER;
}

/* Whether the rules read the objects of this request; if not it is allowed untouched and the
 * objects are only validated as JSON (DELETE, CONNECT, other resources and subresources). */
static bool needs_objects(const struct jg_request *q) {
    if (q->operation != JG_OP_CREATE && q->operation != JG_OP_UPDATE) return false;
    if (q->target == JG_TARGET_JOB || q->target == JG_TARGET_CRD)
        return q->sub_resource.n == 0 || jg_str_eq_lit(q->sub_resource, "status");
    if (q->target == JG_TARGET_CRONJOB) return q->sub_resource.n == 0;
    return false;
}

/* Whether object (idx 0) or oldObject (1) is decoded: for a Job/CronJob CREATE/UPDATE
 * (oldObject: UPDATE only), whatever the subresource, so that member order never matters. */
static bool decodes_object(const struct jg_request *q, int idx) {
    if (q->target == JG_TARGET_OTHER) return false;
    return q->operation == JG_OP_UPDATE || (idx == 0 && q->operation == JG_OP_CREATE);
}

struct request_ctx {
    struct jg_request *q;
    const struct jg_policy *policy; /* its target rows route CRD requests */
    jg_opt_str uid, operation, group, resource, version, kgroup, kkind, kversion;
    bool has_resource, has_kind, routed;
    /* object/oldObject met before the routing fields were complete: decoded afterwards */
    const char *deferred[2];
    bool seen_object[2];
};

enum {
    RQ_UID,
    RQ_OPERATION,
    RQ_RESOURCE,
    RQ_KIND,
    RQ_SUBRESOURCE,
    RQ_NAME,
    RQ_NAMESPACE,
    RQ_USERINFO,
    RQ_DRYRUN,
    RQ_OBJECT,
    RQ_OLD_OBJECT,
    RQ_COUNT
};
static const char *const request_names[RQ_COUNT] = {
    "uid",       "operation", "resource", "kind",   "subResource", "name",
    "namespace", "userInfo",  "dryRun",   "object", "oldObject",
};

struct gvr_ctx {
    const char *path;
    const char *const *names;
    jg_opt_str *v[3];
};

static status_t gvr_member(struct scanner *sc, void *ctx, int which) {
    struct gvr_ctx *g = ctx;
    return rd_str(sc, g->path, g->names[which], g->v[which]);
}

static status_t user_member(struct scanner *sc, void *ctx, int which) {
    struct jg_request *q = ctx;
    if (which == 1) return rd_str_list(sc, "request.userInfo", "groups", &q->groups);
    jg_opt_str s;
    TRY(rd_str(sc, "request.userInfo", "username", &s));
    q->username = s.s;
    return JG_DECODE_OK;
}

static status_t rd_request_object(struct scanner *sc, struct request_ctx *c, int idx) {
    static const char *const paths[] = {"request.object", "request.oldObject"};
    struct jg_request *q = c->q;
    c->seen_object[idx] = !is_null(sc);
    if (!c->seen_object[idx]) return JG_DECODE_OK;
    if (!c->routed) { /* not yet known whether the rules read it: validate, decode later */
        c->deferred[idx] = sc->p;
        return scan_skip(sc);
    }
    if (!decodes_object(q, idx)) return scan_skip(sc);
    if (*sc->p != '{')
        return scan_fail(sc->err, "%s: must be an object, got %s", paths[idx], rd_type_name(sc));
    return rd_job(sc, paths[idx], q->target, q->row, idx ? &q->old_object : &q->object);
}

static void try_route(struct request_ctx *c, bool final) {
    /* kube-apiserver writes uid, kind, resource, subResource, ..., operation before object, so
     * in practice the objects are decoded in the same pass. A non-empty request.resource
     * decides alone; request.kind only once the whole request is read (a resource may follow). */
    if (c->routed || !c->operation.set || !(c->has_resource || c->has_kind)) return;
    if (!final && !(c->has_resource && c->resource.s.n)) return;
    struct jg_request *q = c->q;
    if (c->has_resource && c->resource.s.n)
        q->target = route(c->policy, c->group.s, c->version.s, c->resource.s, false, &q->row);
    else
        q->target = route(c->policy, c->kgroup.s, c->kversion.s, c->kkind.s, true, &q->row);
    c->routed = true;
}

static status_t request_member(struct scanner *sc, void *ctx, int which) {
    struct request_ctx *c = ctx;
    struct jg_request *q = c->q;
    jg_opt_str s;
    struct agg a;
    bool present;
    switch (which) {
    case RQ_UID:
        TRY(rd_str(sc, "request", "uid", &c->uid));
        q->uid = c->uid.s;
        return JG_DECODE_OK;
    case RQ_OPERATION:
        TRY(rd_str(sc, "request", "operation", &c->operation));
        if (!c->operation.set) return JG_DECODE_OK;
        if (jg_str_eq_lit(c->operation.s, "CREATE"))
            q->operation = JG_OP_CREATE;
        else if (jg_str_eq_lit(c->operation.s, "UPDATE"))
            q->operation = JG_OP_UPDATE;
        else if (jg_str_eq_lit(c->operation.s, "DELETE"))
            q->operation = JG_OP_DELETE;
        else if (jg_str_eq_lit(c->operation.s, "CONNECT"))
            q->operation = JG_OP_CONNECT;
        else
            return scan_fail(
                sc->err, "request.operation: unknown \"%.*s\" (CREATE, UPDATE, DELETE or CONNECT)",
                (int)(c->operation.s.n > 32 ? 32 : c->operation.s.n), c->operation.s.p);
        try_route(c, false);
        return JG_DECODE_OK;
    case RQ_RESOURCE:
    case RQ_KIND: {
        bool res = which == RQ_RESOURCE;
        const char *path = res ? "request.resource" : "request.kind";
        TRY(rd_object(sc, "request", res ? "resource" : "kind", &a, &present));
        if (!present) return JG_DECODE_OK;
        static const char *const rnames[] = {"group", "version", "resource"};
        static const char *const knames[] = {"group", "version", "kind"};
        struct gvr_ctx g = {path,
                            res ? rnames : knames,
                            {res ? &c->group : &c->kgroup, res ? &c->version : &c->kversion,
                             res ? &c->resource : &c->kkind}};
        TRY(rd_members(sc, &a, g.names, 3, gvr_member, &g));
        if (res) {
            c->has_resource = true;
            q->group = c->group.s;
            q->version = c->version.s;
            q->resource = c->resource.s;
        } else {
            c->has_kind = true;
        }
        try_route(c, false);
        return JG_DECODE_OK;
    }
    case RQ_SUBRESOURCE:
        TRY(rd_str(sc, "request", "subResource", &s));
        q->sub_resource = s.s;
        return JG_DECODE_OK;
    case RQ_NAME:
        TRY(rd_str(sc, "request", "name", &s));
        q->name = s.s;
        return JG_DECODE_OK;
    case RQ_NAMESPACE:
        TRY(rd_str(sc, "request", "namespace", &s));
        if (s.s.n > JG_MAX_NAMESPACE_BYTES) /* bounds the policy's namespace globs' work */
            return scan_fail(sc->err, JG_NAMESPACE_TOO_LONG_FMT, "request.namespace",
                             JG_MAX_NAMESPACE_BYTES, s.s.n);
        q->namespace_ = s.s;
        return JG_DECODE_OK;
    case RQ_USERINFO: {
        TRY(rd_object(sc, "request", "userInfo", &a, &present));
        if (!present) return JG_DECODE_OK;
        static const char *const names[] = {"username", "groups"};
        return rd_members(sc, &a, names, 2, user_member, q);
    }
    case RQ_DRYRUN:
        return rd_bool(sc, "request", "dryRun", &q->dry_run);
    case RQ_OBJECT:
        return rd_request_object(sc, c, 0);
    default:
        return rd_request_object(sc, c, 1);
    }
}

struct review_ctx {
    jg_opt_str api, kind;
    bool has_request;
    struct request_ctx req;
};

static status_t review_member(struct scanner *sc, void *ctx, int which) {
    struct review_ctx *r = ctx;
    if (which == 0) return rd_str(sc, "AdmissionReview", "apiVersion", &r->api);
    if (which == 1) return rd_str(sc, "AdmissionReview", "kind", &r->kind);
    if (is_null(sc)) return JG_DECODE_OK;
    if (*sc->p != '{')
        return scan_fail(sc->err, "request: must be an object, got %s", rd_type_name(sc));
    r->has_request = true;
    struct agg a;
    TRY(scan_enter(sc, &a));
    status_t st = rd_members(sc, &a, request_names, RQ_COUNT, request_member, &r->req);
    return st;
}

/* apiVersion and kind of the envelope: checked first, whatever the member order. */
/* apiVersion and kind of the envelope, when present. Absent ones default to admission.k8s.io/v1
 * AdmissionReview, as controller-runtime's decoder defaults them from the target type. */
static status_t check_envelope(struct review_ctx *r, jg_decode_error *err) {
    if (r->api.set && !jg_str_eq_lit(r->api.s, "admission.k8s.io/v1") &&
        !jg_str_eq_lit(r->api.s, "admission.k8s.io/v1beta1"))
        return scan_fail(err,
                         "apiVersion: unsupported \"%.*s\" (expected admission.k8s.io/v1 or "
                         "admission.k8s.io/v1beta1)",
                         (int)(r->api.s.n > 64 ? 64 : r->api.s.n), r->api.s.p);
    if (r->kind.set && !jg_str_eq_lit(r->kind.s, "AdmissionReview"))
        return scan_fail(err, "kind: expected \"AdmissionReview\", got \"%.*s\"",
                         (int)(r->kind.s.n > 64 ? 64 : r->kind.s.n), r->kind.s.p);
    return JG_DECODE_OK;
}

/* After the envelope: what the request must hold, in the order the old tree decoder checked. */
static status_t check_request(struct scanner *sc, struct review_ctx *r) {
    struct request_ctx *c = &r->req;
    struct jg_request *q = c->q;
    jg_decode_error *err = sc->err;
    if (!r->has_request) return scan_fail(err, "request: required");
    if (!c->uid.set || c->uid.s.n == 0) return scan_fail(err, "request.uid: required");
    if (!c->operation.set) return scan_fail(err, "request.operation: required");
    if (!c->has_resource && !c->has_kind) return scan_fail(err, "request.resource: required");
    try_route(c, true);
    if (!q->resource.n && c->kkind.set) { /* label metrics by resource even when routed by kind */
        if (q->row) q->resource = (jg_str){q->row->resource, strlen(q->row->resource)};
        q->group = c->kgroup.s;
        q->version = c->kversion.s;
    }
    static const char *const paths[] = {"request.object", "request.oldObject"};
    for (int i = 0; i < 2; i++) {
        if (!decodes_object(q, i)) continue;
        if (!c->seen_object[i] && needs_objects(q))
            return i == 0 ? scan_fail(err, "request.object: required for %s",
                                      jg_operation_name(q->operation))
                          : scan_fail(err, "request.oldObject: required for UPDATE");
        if (!c->deferred[i]) continue;
        sc->p = c->deferred[i];
        sc->depth = 0;
        if (*sc->p != '{')
            return scan_fail(err, "%s: must be an object, got %s", paths[i], rd_type_name(sc));
        TRY(rd_job(sc, paths[i], q->target, q->row, i ? &q->old_object : &q->object));
    }
    return JG_DECODE_OK;
}

static struct decoded *new_decoded(jg_review *r, jg_decode_error *err) {
    r->priv = jg_malloc(sizeof(struct decoded));
    if (!r->priv) {
        scan_oom(err);
        return NULL;
    }
    memset(r->priv, 0, sizeof(struct decoded));
    return r->priv;
}

/* On a refusal: a syntax error anywhere wins, then the envelope. Cheap: only on the error path. */
static status_t precedence(const char *body, size_t len, struct review_ctx *r, struct decoded *d,
                           status_t st, jg_decode_error *err) {
    if (st == JG_DECODE_NO_MEMORY) return st;
    jg_decode_error syn;
    if (scan_validate(body, len, "AdmissionReview", &syn) != JG_DECODE_OK) {
        *err = syn;
        return syn.status;
    }
    /* the envelope may come after the failing member: read the top level once more */
    jg_decode_error env;
    if (!r->api.set || !r->kind.set) {
        /* with the review's owner: an escaped apiVersion or kind is unescaped into it */
        struct scanner sc = {body, body, body + len, 0, d, &env, "AdmissionReview", NULL};
        struct agg a;
        ws(&sc);
        if (*sc.p == '{' && scan_enter(&sc, &a) == JG_DECODE_OK) {
            for (;;) {
                jg_str key;
                char kb[KEY_MAX];
                int more = 0;
                if (scan_obj_next(&sc, &a, &key, kb, &more) != JG_DECODE_OK || !more) break;
                jg_opt_str *dst = jg_str_eq_lit(key, "apiVersion") ? &r->api
                                  : jg_str_eq_lit(key, "kind")     ? &r->kind
                                                                   : NULL;
                if (dst && *sc.p == '"' && !dst->set) {
                    dst->set = true;
                    scan_string(&sc, &dst->s);
                } else if (scan_skip(&sc) != JG_DECODE_OK) {
                    break;
                }
            }
        }
    }
    if (check_envelope(r, &env) != JG_DECODE_OK) {
        *err = env;
        return env.status;
    }
    return st;
}

static status_t decode_review(struct scanner *scp, const struct jg_policy *policy, jg_review *out);

enum jg_decode_status jg_decode_review(const char *body, size_t len, jg_review *out,
                                       jg_decode_error *err) {
    return jg_decode_review_policy(body, len, NULL, out, err);
}

enum jg_decode_status jg_decode_review_policy(const char *body, size_t len,
                                              const struct jg_policy *policy, jg_review *out,
                                              jg_decode_error *err) {
    memset(out, 0, sizeof *out);
    err->status = JG_DECODE_OK;
    err->message[0] = '\0';
    struct decoded *d = new_decoded(out, err);
    if (!d) return err->status;
    if (len > JG_MAX_BODY_BYTES)
        return scan_fail(err, "request body is %zu bytes, over the %u-byte limit", len,
                         JG_MAX_BODY_BYTES);
    /* a valid body is indexed, and the readers skip what they do not read by the index; an
     * invalid one is read by the byte scanner alone, which finds the error and words it */
    struct sindex ix;
    bool indexed = sindex_build(&ix, body, len, scan_level_for(len));
    struct scanner sc = {body, body, body + len,        0,
                         d,    err,  "AdmissionReview", indexed ? &ix : NULL};
    status_t st = decode_review(&sc, policy, out);
    if (indexed) sindex_free(&ix);
    return st;
}

static status_t decode_review(struct scanner *scp, const struct jg_policy *policy, jg_review *out) {
    struct scanner sc = *scp;
    const char *body = sc.start;
    size_t len = (size_t)(sc.end - sc.start);
    jg_decode_error *err = sc.err;
    struct decoded *d = sc.d;
    struct review_ctx r = {0};
    r.req.q = &out->req;
    r.req.policy = policy;
    ws(&sc);
    if (sc.p >= sc.end) return scan_fail(err, "AdmissionReview: empty input");
    if (*sc.p != '{') {
        status_t st = scan_validate(body, len, "AdmissionReview", err);
        if (st != JG_DECODE_OK) return st;
        return scan_fail(err, "AdmissionReview: must be a JSON object, got %s", rd_type_name(&sc));
    }
    struct agg a;
    static const char *const names[] = {"apiVersion", "kind", "request"};
    status_t st = scan_enter(&sc, &a);
    if (st == JG_DECODE_OK) st = rd_members(&sc, &a, names, 3, review_member, &r);
    if (st == JG_DECODE_OK) {
        ws(&sc);
        if (sc.p != sc.end) st = scan_syntax(&sc, "end of input expected after the JSON value");
    }
    if (st == JG_DECODE_OK) st = check_envelope(&r, err);
    if (jg_str_eq_lit(r.api.s, "admission.k8s.io/v1beta1")) out->req.api_version = JG_API_V1BETA1;
    if (st == JG_DECODE_OK) st = check_request(&sc, &r);
    if (st != JG_DECODE_OK) {
        st = precedence(body, len, &r, d, st, err);
        if (jg_str_eq_lit(r.api.s, "admission.k8s.io/v1beta1"))
            out->req.api_version = JG_API_V1BETA1;
    }
    return st;
}

/* The top-level "apiVersion" and "kind" strings of a raw object (absent: unset). */
static status_t raw_type(struct scanner sc, jg_opt_str *api, jg_opt_str *kind) {
    struct agg a;
    *api = *kind = (jg_opt_str){0};
    TRY(scan_enter(&sc, &a));
    for (;;) {
        jg_str key;
        char kb[KEY_MAX];
        int more = 0;
        TRY(scan_obj_next(&sc, &a, &key, kb, &more));
        if (!more) return JG_DECODE_OK;
        jg_opt_str *dst = jg_str_eq_lit(key, "apiVersion") ? api
                          : jg_str_eq_lit(key, "kind")     ? kind
                                                           : NULL;
        if (dst && *sc.p == '"') {
            dst->set = true;
            TRY(scan_string(&sc, &dst->s));
        } else {
            TRY(scan_skip(&sc));
        }
    }
}

/* "name.group" (kubectl's KIND.GROUP / RESOURCE.GROUP): the part before the first dot, and the
 * rest (unset when there is no dot). */
static void split_qualified(const char *s, jg_str *name, jg_opt_str *group) {
    const char *dot = strchr(s, '.');
    *name = (jg_str){s, dot ? (size_t)(dot - s) : strlen(s)};
    *group = dot ? (jg_opt_str){true, {dot + 1, strlen(dot + 1)}} : (jg_opt_str){0};
}

/* Which target the new object of `check --old/--new` is: --resource or --kind when given, else the
 * object's own apiVersion and kind, which it must then have (kubectl refuses such an object with
 * the same words: apimachinery's NewMissingKindErr and NewMissingVersionErr). */
static status_t raw_route(struct scanner sc, const struct jg_decode_objects_opts *o,
                          struct jg_request *q, jg_decode_error *err) {
    jg_opt_str api, kind;
    TRY(raw_type(sc, &api, &kind));
    if (o && o->meta) {
        o->meta->api_version = api;
        o->meta->kind = kind;
    }
    jg_str group = {"batch", 5}, version = {"v1", 2};
    if (api.set) {
        const char *slash = memchr(api.s.p, '/', api.s.n);
        group = slash ? (jg_str){api.s.p, (size_t)(slash - api.s.p)} : (jg_str){"", 0};
        version = slash ? (jg_str){slash + 1, api.s.n - (size_t)(slash - api.s.p) - 1} : api.s;
    }
    const char *flag = o && o->resource ? o->resource : o && o->kind ? o->kind : NULL;
    bool by_kind = !(o && o->resource);
    if (!flag && (!kind.set || !kind.s.n || !api.set || !api.s.n))
        return scan_fail(err,
                         "%s: Object '%s' is missing (an object names its target with apiVersion "
                         "and kind)",
                         sc.what, !kind.set || !kind.s.n ? "Kind" : "apiVersion");
    jg_str name = kind.set ? kind.s : (jg_str){"Job", 3};
    if (flag) {
        jg_opt_str g;
        split_qualified(flag, &name, &g);
        if (g.set) group = g.s;
    }
    const struct jg_policy *p = o ? o->policy : NULL;
    q->target = route(p, group, version, name, by_kind, &q->row);
    if (q->target == JG_TARGET_OTHER) {
        if (!flag && jg_str_eq_lit(group, "batch")) { /* rd_job says what is wrong with it */
            q->target = JG_TARGET_JOB;
            q->row = &jg_builtin_targets[0];
        } else {
            if (o && o->meta) o->meta->not_target = true;
            return scan_fail(err,
                             "new object: %s %.*s of group \"%.*s\" is not a target (see 'jobguard "
                             "rules'; a policy file's targets rows add kinds)",
                             by_kind ? "kind" : "resource", (int)(name.n > 64 ? 64 : name.n),
                             name.p, (int)(group.n > 253 ? 253 : group.n), group.p);
        }
    }
    q->group = (jg_str){q->row->group, strlen(q->row->group)};
    q->version = version;
    q->resource = (jg_str){q->row->resource, strlen(q->row->resource)};
    return JG_DECODE_OK;
}

/* A raw object for `check --old/--new`: one JSON object, nothing after it. */
static status_t rd_raw(const char *json, size_t len, const char *what, struct jg_request *q,
                       const struct jg_decode_objects_opts *o, struct jg_job *job, jg_str *ns,
                       struct decoded *d, jg_decode_error *err) {
    struct sindex ix;
    if (!sindex_build(&ix, json, len, scan_level_for(len)))
        TRY(scan_validate(json, len, what, err));
    else
        sindex_free(&ix); /* the CLI's path: validated, not skipped by the index */
    struct scanner sc = {json, json, json + len, 0, d, err, what, NULL};
    ws(&sc);
    if (*sc.p != '{')
        return scan_fail(err, "%s: must be a JSON object, got %s", what, rd_type_name(&sc));
    /* the new object decides what to read (the old one is read the same way) */
    if (ns) TRY(raw_route(sc, o, q, err));
    TRY(rd_job(&sc, what, q->target, q->row, job));
    if (ns) { /* metadata.namespace, for the outcome */
        struct scanner m = {json, json, json + len, 0, d, err, what, NULL};
        ws(&m);
        struct agg a, b;
        TRY(scan_enter(&m, &a));
        for (;;) {
            jg_str key;
            char kb[KEY_MAX];
            int more = 0;
            TRY(scan_obj_next(&m, &a, &key, kb, &more));
            if (!more) break;
            if (!jg_str_eq_lit(key, "metadata") || *m.p != '{') {
                TRY(scan_skip(&m));
                continue;
            }
            TRY(scan_enter(&m, &b));
            for (;;) {
                TRY(scan_obj_next(&m, &b, &key, kb, &more));
                if (!more) break;
                if (jg_str_eq_lit(key, "namespace") && *m.p == '"') {
                    TRY(scan_string(&m, ns));
                    if (ns->n > JG_MAX_NAMESPACE_BYTES) {
                        char field[64];
                        snprintf(field, sizeof field, "%s: metadata.namespace", what);
                        return scan_fail(err, JG_NAMESPACE_TOO_LONG_FMT, field,
                                         JG_MAX_NAMESPACE_BYTES, ns->n);
                    }
                } else if (o && o->meta && jg_str_eq_lit(key, "uid") && *m.p == '"') {
                    o->meta->uid.set = true;
                    TRY(scan_string(&m, &o->meta->uid.s));
                } else
                    TRY(scan_skip(&m));
            }
        }
    }
    return JG_DECODE_OK;
}

enum jg_decode_status jg_decode_objects(const char *old_json, size_t old_len, const char *new_json,
                                        size_t new_len, const char *sub_resource,
                                        const struct jg_decode_objects_opts *opts, jg_review *out,
                                        jg_decode_error *err) {
    memset(out, 0, sizeof *out);
    err->status = JG_DECODE_OK;
    err->message[0] = '\0';
    if (opts && opts->meta) memset(opts->meta, 0, sizeof *opts->meta);
    struct decoded *d = new_decoded(out, err);
    if (!d) return err->status;
    struct jg_request *q = &out->req;
    q->sub_resource =
        (jg_str){sub_resource ? sub_resource : "", sub_resource ? strlen(sub_resource) : 0};
    q->operation = old_json ? JG_OP_UPDATE : JG_OP_CREATE;
    if (q->sub_resource.n && !old_json)
        return scan_fail(err, "--subresource %s needs --old: a subresource is only ever UPDATEd",
                         sub_resource);
    TRY(rd_raw(new_json, new_len, "new object", q, opts, &q->object, &q->namespace_, d, err));
    if (old_json)
        TRY(rd_raw(old_json, old_len, "old object", q, opts, &q->old_object, NULL, d, err));
    q->name = q->object.name;
    return JG_DECODE_OK;
}

void jg_review_free(jg_review *r) {
    struct decoded *d = r->priv;
    if (d) {
        for (size_t i = 0; i < d->n_owned; i++)
            jg_free(d->owned[i]);
        jg_free(d->owned);
        jg_free(d);
    }
    memset(r, 0, sizeof *r);
}

const char *jg_operation_name(enum jg_operation op) {
    switch (op) {
    case JG_OP_CREATE:
        return "CREATE";
    case JG_OP_UPDATE:
        return "UPDATE";
    case JG_OP_DELETE:
        return "DELETE";
    case JG_OP_CONNECT:
        return "CONNECT";
    }
    return "UNKNOWN";
}

const char *jg_api_version_name(enum jg_api_version v) {
    return v == JG_API_V1BETA1 ? "admission.k8s.io/v1beta1" : "admission.k8s.io/v1";
}
