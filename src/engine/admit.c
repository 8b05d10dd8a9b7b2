/* admit: decode -> rules -> verdict -> encode, the single path shared by CLI and server. */
#include "jobguard/admit.h"

#include "jobguard/compiled.h"
#include "jobguard/encode.h"

#include <stdio.h>
#include <string.h>

/* Written when even building the error response fails for lack of memory. */
const char jg_oom_response[] =
    "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\",\"response\":{\"uid\":"
    "\"\",\"allowed\":false,\"status\":{\"metadata\":{},\"status\":\"Failure\",\"message\":"
    "\"jobguard: out of memory\",\"reason\":\"InternalError\",\"code\":500}}}";

void jg_outcome_init(struct jg_outcome *o) {
    memset(o, 0, sizeof *o);
    jg_errors_init(&o->audit);
}

void jg_outcome_free(struct jg_outcome *o) {
    jg_buf_free(&o->message);
    jg_buf_free(&o->causes);
    jg_buf_free(&o->warnings);
    jg_errors_free(&o->audit);
}

static void copy(char *dst, size_t cap, jg_str s) {
    jg_copy_cut(dst, cap, s.p, s.n);
}

static void describe(struct jg_outcome *o, const struct jg_request *q) {
    copy(o->uid, sizeof o->uid, q->uid);
    copy(o->namespace_, sizeof o->namespace_, q->namespace_);
    copy(o->name, sizeof o->name, q->object.name.n ? q->object.name : q->name);
    copy(o->user, sizeof o->user, q->username);
    copy(o->resource, sizeof o->resource, q->resource);
    copy(o->sub_resource, sizeof o->sub_resource, q->sub_resource);
    const char *op = jg_operation_name(q->operation);
    const char *kind = q->row ? q->row->kind : q->target == JG_TARGET_CRONJOB ? "CronJob" : "Job";
    copy(o->operation, sizeof o->operation, (jg_str){op, strlen(op)});
    copy(o->kind, sizeof o->kind, (jg_str){kind, strlen(kind)});
    o->dry_run = q->dry_run;
}

static enum jg_verdict out_of_memory(jg_buf *response, struct jg_outcome *o) {
    jg_buf_reset(response);
    jg_buf_put(response, jg_oom_response, sizeof jg_oom_response - 1);
    /* If even that failed, response->oom stays set and the caller sends jg_oom_response. */
    o->verdict = JG_VERDICT_ERROR;
    o->code = 500;
    jg_buf_reset(&o->message);
    jg_buf_puts(&o->message, "out of memory");
    return o->verdict;
}

/* The 422 of the deny-mode errors `errs`, byte for byte as before modes existed. */
static void deny_invalid(const struct jg_request *q, const struct jg_errors *errs,
                         const jg_buf *notes, jg_buf *response, struct jg_outcome *o) {
    jg_str name = q->object.name.n ? q->object.name : q->name;
    const char *group = q->row ? q->row->group : "batch";
    jg_render_message(errs, o->kind, group, name, &o->message);
    for (size_t i = 0; i < errs->n; i++) {
        jg_str f = jg_err_field(errs, i), b = jg_err_body(errs, i);
        jg_buf_put(&o->causes, f.p, f.n);
        jg_buf_put_lit(&o->causes, ": ");
        jg_buf_put(&o->causes, b.p, b.n);
        jg_buf_putc(&o->causes, '\n');
    }
    if (errs->omitted) {
        jg_put_omitted_note(errs, &o->causes);
        jg_buf_putc(&o->causes, '\n');
    }
    jg_str msg = {o->message.data ? o->message.data : "", o->message.len};
    jg_encode_invalid(response, q->api_version, q->uid, o->kind, group, name, msg, errs, notes);
    o->code = 422;
}

/* The 403 of a Forbidden error (Policy-StatusWriters): authorization comes before validation in
 * the API server, so it answers alone, whatever Invalid errors the request also has. */
static void deny_forbidden(const struct jg_request *q, const struct jg_errors *errs, size_t i,
                           const jg_buf *notes, jg_buf *response, struct jg_outcome *o) {
    jg_str name = q->object.name.n ? q->object.name : q->name;
    const char *resource = q->row                           ? q->row->resource
                           : q->target == JG_TARGET_CRONJOB ? "cronjobs"
                                                            : "jobs";
    const char *group = q->row ? q->row->group : "batch";
    jg_render_forbidden(errs, i, resource, group, name, &o->message);
    jg_str b = jg_err_body(errs, i);
    jg_buf_put(&o->causes, b.p, b.n);
    jg_buf_putc(&o->causes, '\n');
    jg_str msg = {o->message.data ? o->message.data : "", o->message.len};
    jg_encode_forbidden(response, q->api_version, q->uid, resource, group, name, msg, notes);
    o->code = 403;
}

enum jg_verdict jg_admit_review(const jg_review *review, const struct jg_config *cfg,
                                jg_buf *response, struct jg_outcome *out) {
    struct jg_outcome local;
    struct jg_outcome *o = out ? out : &local;
    if (!out) jg_outcome_init(&local);
    const struct jg_request *q = &review->req;
    describe(o, q);
    o->rules = o->rules_warn = o->rules_audit = 0;
    jg_errors_free(&o->audit);

    struct jg_errors errs[JG_MODE_OFF];
    for (int m = 0; m < JG_MODE_OFF; m++)
        jg_errors_init(&errs[m]);
    jg_validate_modes(q, cfg, errs);
    const struct jg_errors *deny = &errs[JG_MODE_DENY];
    bool oom = false;
    for (int m = 0; m < JG_MODE_OFF; m++)
        oom |= errs[m].oom;
    jg_buf notes = JG_BUF_INIT;
    jg_buf_reset(&o->message);
    jg_buf_reset(&o->causes);
    jg_buf_reset(&o->warnings);
    if (!oom) jg_encode_notes(&notes, &o->warnings, &errs[JG_MODE_WARN], &errs[JG_MODE_AUDIT]);
    if (oom || notes.oom || o->warnings.oom) {
        for (int m = 0; m < JG_MODE_OFF; m++)
            jg_errors_free(&errs[m]);
        jg_buf_free(&notes);
        enum jg_verdict v = out_of_memory(response, o);
        if (!out) jg_outcome_free(&local);
        return v;
    }
    o->n_errors = deny->n + deny->omitted;
    o->rules = deny->rules;
    o->rules_warn = errs[JG_MODE_WARN].rules;
    o->rules_audit = errs[JG_MODE_AUDIT].rules;
    if (deny->n + deny->omitted == 0) {
        jg_encode_allowed(response, q->api_version, q->uid, &notes);
        o->verdict = JG_VERDICT_ALLOWED;
        o->code = 0;
    } else {
        size_t f = jg_errors_find_forbidden(deny);
        if (f < deny->n)
            deny_forbidden(q, deny, f, &notes, response, o);
        else
            deny_invalid(q, deny, &notes, response, o);
        o->verdict = JG_VERDICT_DENIED;
    }
    oom = response->oom || o->message.oom || o->causes.oom;
    if (!oom) { /* the log line of the audit-mode errors reads them after the answer */
        o->audit = errs[JG_MODE_AUDIT];
        jg_errors_init(&errs[JG_MODE_AUDIT]);
    }
    for (int m = 0; m < JG_MODE_OFF; m++)
        jg_errors_free(&errs[m]);
    jg_buf_free(&notes);
    enum jg_verdict v = oom ? out_of_memory(response, o) : o->verdict;
    if (!out) jg_outcome_free(&local);
    return v;
}

enum jg_verdict jg_admit(const char *body, size_t len, const struct jg_config *cfg,
                         jg_buf *response, struct jg_outcome *out) {
    struct jg_outcome local;
    struct jg_outcome *o = out ? out : &local;
    if (!out) jg_outcome_init(&local);
    jg_review review;
    jg_decode_error err;
    enum jg_verdict v;
    switch (jg_decode_review_policy(body, len, cfg->policy, &review, &err)) {
    case JG_DECODE_OK:
        v = jg_admit_review(&review, cfg, response, o);
        break;
    case JG_DECODE_BAD_REQUEST:
        describe(o, &review.req);
        jg_errors_free(&o->audit);
        o->operation[0] = '\0';
        o->rules = 0;
        o->n_errors = 0;
        o->verdict = v = JG_VERDICT_BAD_REQUEST;
        o->code = 400;
        jg_buf_reset(&o->message);
        jg_buf_puts(&o->message, err.message);
        jg_encode_error(response, review.req.api_version, review.req.uid, 400, "BadRequest",
                        err.message);
        if (response->oom || o->message.oom) v = out_of_memory(response, o);
        break;
    default:
        v = out_of_memory(response, o);
        break;
    }
    jg_review_free(&review);
    if (!out) jg_outcome_free(&local);
    return v;
}

void jg_outcome_put_rule_names(const struct jg_outcome *o, jg_buf *out) {
    jg_put_rule_names(o->rules, out);
}

void jg_put_rule_names(uint64_t rules, jg_buf *out) {
    bool first = true;
    for (size_t i = 0; i < JG_RULE_COUNT; i++) {
        if (!(rules & (UINT64_C(1) << i))) continue;
        if (!first) jg_buf_putc(out, ',');
        first = false;
        jg_buf_json_string(out, jg_rules[i].name, strlen(jg_rules[i].name));
    }
}
