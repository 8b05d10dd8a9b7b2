/* serve: what `jobguard serve` hands the server once its flags are parsed and checked
 * (src/cli/serve.c), and the two steps that start it. The server reads no argv and no
 * environment of its own. */
#ifndef JOBGUARD_SERVER_SERVE_H
#define JOBGUARD_SERVER_SERVE_H

#include "jobguard/server/cgroup.h"
#include "jobguard/server/log.h"
#include "transport.h"

struct jg_serve_config {
    struct jg_server_config server;   /* threads 0: the container's CPU limit, else the CPUs the
                                       * process may run on; memory_budget 0: from the memory
                                       * limit (jg_budget_default); both filled in by
                                       * jg_serve_prepare */
    const char *cert_file, *key_file; /* PEM, required */
    const char *service_name;         /* "": no check of the names the certificate covers */
    const char *client_ca_file;       /* "": no client authentication */
    const char *policy_file;          /* "": no policy */
    unsigned cert_poll_interval_s;    /* 0: only on SIGHUP */
    bool metrics_zero_series;         /* /metrics shows the rule series at 0 before they fire */
    enum jg_log_level log_level;
    enum jg_log_format log_format;
    struct jg_cgroup_limits cgroup; /* read by jg_serve_prepare */
};

/* Sets up logging (stderr) and the metrics, reads the container's limits and fills in threads
 * and memory_budget where they are 0. False after saying on stderr why the budget cannot be
 * met (exit status 2). */
bool jg_serve_prepare(struct jg_serve_config *c);

/* Reads the client CA bundle, loads the certificate and the policy file, then serves until
 * SIGTERM/SIGINT (jg_server_run). Returns the exit status: 1 for a refused certificate or CA
 * bundle, 2 for a refused policy file, else jg_server_run's. */
int jg_serve_run(struct jg_serve_config *c);

#endif
