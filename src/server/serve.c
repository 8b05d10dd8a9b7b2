/* serve: the server's start from a checked configuration (server/serve.h): logging, the
 * container's limits, the certificate and the policy, then run. `jobguard serve`'s flags are
 * read in src/cli/serve.c. */
#include "serve.h"

#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "jobguard/buf.h"
#include "jobguard/server/budget.h"
#include "metrics.h"
#include "policywatch.h"
#include "run.h"
#include "tlscert.h"
#include "watch.h"

/* A replaced certificate is freed after max(this, 2 x --connection-timeout): a handshake that
 * fetched it signs with it within the same flight, so a minute is far beyond any use. */
#define CERT_GRACE_MIN_S 60

/* The CPUs this process may run on (its affinity mask, which a CPU manager's static policy
 * narrows), else the online CPUs. */
static unsigned allowed_cpus(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

bool jg_serve_prepare(struct jg_serve_config *c) {
    struct jg_server_config *s = &c->server;
    jg_log_setup(c->log_level, c->log_format, STDERR_FILENO);
    jg_metrics_reset();
    jg_metrics_zero_series(c->metrics_zero_series);

    struct jg_cgroup_limits *cg = &c->cgroup;
    jg_cgroup_read("", cg);
    if (s->threads == 0) s->threads = cg->cpus ? cg->cpus : allowed_cpus();
    uint64_t asked = s->memory_budget;
    uint64_t budget =
        asked ? asked
              : jg_budget_default(cg->memory_bytes, s->max_connections, s->connection_memory_limit);
    if (budget < JG_BUDGET_MIN) {
        if (asked)
            fprintf(stderr, "jobguard serve: --memory-budget %llu is less than the minimum, %llu\n",
                    (unsigned long long)asked, (unsigned long long)JG_BUDGET_MIN);
        else
            fprintf(stderr,
                    "jobguard serve: the memory limit, %llu bytes (%s), leaves less than %llu "
                    "bytes for requests: it needs at least %llu with --max-connections %u and "
                    "--connection-memory-limit %zu. Raise the limit, lower --max-connections, or "
                    "set --memory-budget (docs/memory.md)\n",
                    (unsigned long long)cg->memory_bytes, cg->memory_file,
                    (unsigned long long)JG_BUDGET_MIN,
                    (unsigned long long)jg_budget_limit_for(JG_BUDGET_MIN, s->max_connections,
                                                            s->connection_memory_limit),
                    s->max_connections, s->connection_memory_limit);
        return false;
    }
    if (cg->memory_bytes && budget > cg->memory_bytes)
        jg_log_msg(JG_LOG_WARN, "--memory-budget is more than the container's memory limit");
    s->memory_budget = budget;
    jg_budget_init(budget);
    return true;
}

int jg_serve_run(struct jg_serve_config *c) {
    struct jg_server_config *s = &c->server;
    struct jg_log l;
    char err[1024];
    jg_buf ca = JG_BUF_INIT;
    if (c->client_ca_file[0]) {
        if (!jg_tls_read_ca_bundle(c->client_ca_file, &ca, err, sizeof err)) {
            fprintf(stderr, "jobguard serve: --client-ca-file: %s\n", err);
            jg_buf_free(&ca);
            return 1;
        }
        s->client_ca_pem = ca.data;
    }
    struct jg_tls_settings tls = {
        .cert_file = c->cert_file,
        .key_file = c->key_file,
        .service_name = c->service_name,
        .poll_interval_s = c->cert_poll_interval_s,
        .grace_s = 2 * s->connection_timeout_s > CERT_GRACE_MIN_S ? 2 * s->connection_timeout_s
                                                                  : CERT_GRACE_MIN_S,
    };
    if (!jg_tls_init(&tls, err, sizeof err)) {
        fprintf(stderr, "jobguard serve: refusing to start: %s\n", err);
        if (jg_log_begin(&l, JG_LOG_ERROR, "refusing to start: invalid certificate")) {
            jg_log_str(&l, "event", "certificate");
            jg_log_str(&l, "error", err);
            jg_log_end(&l);
        }
        jg_buf_free(&ca);
        return 1;
    }
    /* after the flags (--disable-rule stays off whatever the policy says) */
    if (!jg_policy_watch_init(c->policy_file, &s->engine, err, sizeof err)) {
        fprintf(stderr, "jobguard serve: refusing to start: --policy-file: %s\n", err);
        if (jg_log_begin(&l, JG_LOG_ERROR, "refusing to start: invalid policy file")) {
            jg_log_str(&l, "event", "policy");
            jg_log_str(&l, "error", err);
            jg_log_end(&l);
        }
        jg_tls_cleanup();
        jg_buf_free(&ca);
        return 2;
    }
    if (c->policy_file[0])
        jg_watch_add(&(struct jg_watch_entry){c->policy_file, jg_policy_check_reload, NULL});
    int rc = jg_server_run(s);
    jg_buf_free(&ca);
    return rc;
}
