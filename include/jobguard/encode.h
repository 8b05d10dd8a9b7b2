/* encode: writes response AdmissionReviews straight into a buffer (no JSON tree). */
#ifndef JOBGUARD_ENCODE_H
#define JOBGUARD_ENCODE_H

#include "jobguard/buf.h"
#include "jobguard/verdict.h"
#include "jobguard/view.h"

void jg_encode_allowed(jg_buf *out, enum jg_api_version api, jg_str uid);

/* 422 Invalid with details.causes, as errors.NewInvalid builds it. `message` is the rendered
 * aggregate (jg_render_message). */
void jg_encode_invalid(jg_buf *out, enum jg_api_version api, jg_str uid, const char *kind,
                       const char *group, jg_str name, jg_str message, const struct jg_errors *e);

/* allowed:false with status {code, reason, message}: 400 BadRequest for undecodable input, 413
 * RequestEntityTooLarge, 500 InternalError. Also used by the transport for HTTP-level errors. */
void jg_encode_error(jg_buf *out, enum jg_api_version api, jg_str uid, int code, const char *reason,
                     const char *message);

#endif
