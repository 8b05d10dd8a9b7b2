/* encode: response AdmissionReviews written directly (no JSON tree, no json_dumps). Field order
 * follows Go's struct order so the bytes look like what kube-apiserver and controller-runtime
 * produce. */
#include "jobguard/encode.h"

#include "jobguard/rules.h"

#include <string.h>

static void head(jg_buf *out, enum jg_api_version api, jg_str uid) {
    jg_buf_reset(out);
    jg_buf_puts(out, "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"");
    jg_buf_puts(out, jg_api_version_name(api));
    jg_buf_puts(out, "\",\"response\":{\"uid\":");
    jg_buf_json_string(out, uid.p, uid.n);
}

static void tail(jg_buf *out, const jg_buf *notes) {
    if (notes && notes->len) jg_buf_put(out, notes->data, notes->len);
    jg_buf_puts(out, "}}");
}

void jg_encode_notes(jg_buf *members, jg_buf *lines, const struct jg_errors *warn,
                     const struct jg_errors *audit) {
    jg_buf v = JG_BUF_INIT;
    bool first = true;
    for (int r = 0; r < JG_RULE_COUNT; r++) {
        if (!(audit->rules & (UINT64_C(1) << r))) continue;
        jg_buf_reset(&v);
        jg_render_audit_value(audit, r, &v);
        if (v.oom) break; /* reported below: a reset would clear it */
        if (v.len == 0) continue;
        jg_buf_puts(members, first ? ",\"auditAnnotations\":{" : ",");
        first = false;
        jg_buf_json_string(members, jg_rules[r].name, strlen(jg_rules[r].name));
        jg_buf_putc(members, ':');
        jg_buf_json_string(members, v.data, v.len);
    }
    if (!first) jg_buf_putc(members, '}');
    if (v.oom) members->oom = true;
    jg_buf_free(&v);
    size_t start = lines->len;
    jg_render_warnings(warn, lines);
    if (lines->len == start) return;
    jg_buf_puts(members, ",\"warnings\":[");
    for (const char *p = lines->data + start, *end = lines->data + lines->len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) break;
        if (p != lines->data + start) jg_buf_putc(members, ',');
        jg_buf_json_string(members, p, (size_t)(nl - p));
        p = nl + 1;
    }
    jg_buf_putc(members, ']');
}

void jg_encode_allowed(jg_buf *out, enum jg_api_version api, jg_str uid, const jg_buf *notes) {
    head(out, api, uid);
    jg_buf_puts(out, ",\"allowed\":true");
    tail(out, notes);
}

/* A failed status up to details.kind (its value written, the details object left open). */
static void status_head(jg_buf *out, enum jg_api_version api, jg_str uid, jg_str message,
                        const char *reason, jg_str name, const char *group, const char *kind) {
    head(out, api, uid);
    jg_buf_puts(out, ",\"allowed\":false,\"status\":{\"metadata\":{},\"status\":\"Failure\","
                     "\"message\":");
    jg_buf_json_string(out, message.p, message.n);
    jg_buf_printf(out, ",\"reason\":\"%s\",\"details\":{\"name\":", reason);
    jg_buf_json_string(out, name.p, name.n);
    if (group[0]) { /* StatusDetails.Group is omitempty */
        jg_buf_puts(out, ",\"group\":");
        jg_buf_json_string(out, group, strlen(group));
    }
    jg_buf_puts(out, ",\"kind\":");
    jg_buf_json_string(out, kind, strlen(kind));
}

void jg_encode_forbidden(jg_buf *out, enum jg_api_version api, jg_str uid, const char *resource,
                         const char *group, jg_str name, jg_str message, const jg_buf *notes) {
    status_head(out, api, uid, message, "Forbidden", name, group, resource);
    jg_buf_puts(out, "},\"code\":403}");
    tail(out, notes);
}

void jg_encode_invalid(jg_buf *out, enum jg_api_version api, jg_str uid, const char *kind,
                       const char *group, jg_str name, jg_str message, const struct jg_errors *e,
                       const jg_buf *notes) {
    status_head(out, api, uid, message, "Invalid", name, group, kind);
    jg_buf_puts(out, ",\"causes\":[");
    for (size_t i = 0; i < e->n; i++) {
        jg_str body = jg_err_body(e, i), field = jg_err_field(e, i);
        if (i) jg_buf_putc(out, ',');
        jg_buf_puts(out, "{\"reason\":\"");
        jg_buf_puts(out, jg_err_reason(e->v[i].type));
        jg_buf_puts(out, "\",\"message\":");
        jg_buf_json_string(out, body.p, body.n);
        jg_buf_puts(out, ",\"field\":");
        jg_buf_json_string(out, field.p, field.n);
        jg_buf_putc(out, '}');
    }
    if (e->omitted) { /* a last cause without a field says how many were left out */
        jg_buf_puts(out, ",{\"reason\":\"TooManyErrors\",\"message\":\"");
        jg_put_omitted_note(e, out); /* plain ASCII: no escaping needed */
        jg_buf_puts(out, "\"}");
    }
    jg_buf_puts(out, "]},\"code\":422}");
    tail(out, notes);
}

void jg_encode_error(jg_buf *out, enum jg_api_version api, jg_str uid, int code, const char *reason,
                     const char *message) {
    head(out, api, uid);
    jg_buf_puts(out, ",\"allowed\":false,\"status\":{\"metadata\":{},\"status\":\"Failure\","
                     "\"message\":");
    jg_buf_json_string(out, message, strlen(message));
    jg_buf_puts(out, ",\"reason\":");
    jg_buf_json_string(out, reason, strlen(reason));
    jg_buf_printf(out, ",\"code\":%d}}}", code);
}
