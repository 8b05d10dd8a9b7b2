/* metrics: lock-free counters rendered in the Prometheus text exposition format (version 0.0.4).
 * Label values come from fixed tables, so an attacker cannot grow the series count. */
#ifndef JOBGUARD_SERVER_METRICS_H
#define JOBGUARD_SERVER_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "jobguard/admit.h"
#include "jobguard/buf.h"

void jg_metrics_reset(void); /* zero everything (start-up, tests); zero series on */
/* Whether jobguard_rule_violations_total has a series at 0, before its first event, for every
 * rule that can fire for each kind (--metrics-zero-series); after jg_metrics_reset. */
void jg_metrics_zero_series(bool on);

/* One decided AdmissionReview: requests_total, duration histogram and rule violations. */
void jg_metrics_admission(const struct jg_outcome *o, double seconds);
void jg_metrics_http_response(unsigned code);
void jg_metrics_in_flight(int delta);
void jg_metrics_cert_reload(bool success);
void jg_metrics_cert_expiry(int64_t unix_seconds);
void jg_metrics_policy_reload(bool success);
/* Whether the policy file on disk is refused (the previous policy serves). */
void jg_metrics_policy_file_refused(bool refused);
/* The sha256 (hex) of the policy now deciding requests; "" for none. */
void jg_metrics_policy_serving(const char *sha256);

void jg_metrics_render(jg_buf *out);

#endif
