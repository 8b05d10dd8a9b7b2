/* encode: response AdmissionReviews written directly (no JSON tree, no json_dumps). Field order
 * follows Go's struct order so the bytes look like what kube-apiserver and controller-runtime
 * produce. */
#include "jobguard/encode.h"

#include <string.h>

static void head(jg_buf *out, enum jg_api_version api, jg_str uid) {
    jg_buf_reset(out);
    jg_buf_puts(out, "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"");
    jg_buf_puts(out, jg_api_version_name(api));
    jg_buf_puts(out, "\",\"response\":{\"uid\":");
    jg_buf_json_string(out, uid.p, uid.n);
}

void jg_encode_allowed(jg_buf *out, enum jg_api_version api, jg_str uid) {
    head(out, api, uid);
    jg_buf_puts(out, ",\"allowed\":true}}");
}

void jg_encode_invalid(jg_buf *out, enum jg_api_version api, jg_str uid, const char *kind,
                       const char *group, jg_str name, jg_str message, const struct jg_errors *e) {
    head(out, api, uid);
    jg_buf_puts(out, ",\"allowed\":false,\"status\":{\"metadata\":{},\"status\":\"Failure\","
                     "\"message\":");
    jg_buf_json_string(out, message.p, message.n);
    jg_buf_puts(out, ",\"reason\":\"Invalid\",\"details\":{\"name\":");
    jg_buf_json_string(out, name.p, name.n);
    jg_buf_puts(out, ",\"group\":");
    jg_buf_json_string(out, group, strlen(group));
    jg_buf_puts(out, ",\"kind\":");
    jg_buf_json_string(out, kind, strlen(kind));
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
    jg_buf_puts(out, "]},\"code\":422}}}");
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
