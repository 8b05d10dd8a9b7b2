/* encode: writes response AdmissionReviews straight into a buffer (no JSON tree). */
#ifndef JOBGUARD_ENCODE_H
#define JOBGUARD_ENCODE_H

#include "jobguard/buf.h"
#include "jobguard/verdict.h"
#include "jobguard/view.h"

/* The warn and audit parts of a response (docs/modes.md): `auditAnnotations` (one key per rule
 * ID of `audit`, the value jg_render_audit_value) and `warnings` (jg_render_warnings of `warn`),
 * as members to append after `status` (AdmissionResponse's field order). Empty when neither has
 * an error. `lines` receives the warnings, one per line. */
void jg_encode_notes(jg_buf *members, jg_buf *lines, const struct jg_errors *warn,
                     const struct jg_errors *audit);

/* `notes` (may be NULL): jg_encode_notes's members, appended to the response. */
void jg_encode_allowed(jg_buf *out, enum jg_api_version api, jg_str uid, const jg_buf *notes);

/* 422 Invalid with details.causes, as errors.NewInvalid builds it. `message` is the rendered
 * aggregate (jg_render_message). */
void jg_encode_invalid(jg_buf *out, enum jg_api_version api, jg_str uid, const char *kind,
                       const char *group, jg_str name, jg_str message, const struct jg_errors *e,
                       const jg_buf *notes);

/* 403 Forbidden as errors.NewForbidden builds it: details {name, group, kind: <resource>}.
 * `message` from jg_render_forbidden. */
void jg_encode_forbidden(jg_buf *out, enum jg_api_version api, jg_str uid, const char *resource,
                         const char *group, jg_str name, jg_str message, const jg_buf *notes);

/* allowed:false with status {code, reason, message}: 400 BadRequest for undecodable input, 413
 * RequestEntityTooLarge, 500 InternalError. Also used by the transport for HTTP-level errors. */
void jg_encode_error(jg_buf *out, enum jg_api_version api, jg_str uid, int code, const char *reason,
                     const char *message);

#endif
