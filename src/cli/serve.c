/* jobguard serve: flags (and JOBGUARD_* environment variables) -> a checked configuration
 * (server/serve.h) -> the startup log line -> the server. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../server/serve.h"
#include "cli.h"
#include "jobguard/rules.h"
#include "jobguard/server/budget.h"

#include "flags.h"

/* GnuTLS priority strings for --tls-min-version: NORMAL minus every protocol version but these. */
#define PRIORITY_TLS12 "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
#define PRIORITY_TLS13 "NORMAL:-VERS-ALL:+VERS-TLS1.3"

enum kind { K_STR, K_UINT, K_BYTES, K_LIST, K_MODES };

enum {
    F_CERT,
    F_KEY,
    F_BIND,
    F_PORT,
    F_OPS_PORT,
    F_OPS_BIND,
    F_THREADS,
    F_TLS_MIN,
    F_SERVICE,
    F_CLIENT_CA,
    F_CLIENT_CN,
    F_POLL,
    F_SHUTDOWN_DELAY,
    F_DRAIN,
    F_LOG_LEVEL,
    F_LOG_FORMAT,
    F_PARITY,
    F_DISABLE_RULE,
    F_POLICY,
    F_MODE,
    F_MAX_CONN,
    F_MAX_CONN_IP,
    F_CONN_TIMEOUT,
    F_CONN_MEM,
    F_MAX_HEADER,
    F_MEM_BUDGET,
    F_ZERO_SERIES,
    F_COUNT
};

static const struct jg_flag flags[F_COUNT] = {
    [F_CERT] = {"tls-cert-file", 0, "VALUE",
                "PEM serving certificate (leaf first, then intermediates). Required.", NULL, K_STR,
                0, 0},
    [F_KEY] = {"tls-private-key-file", 0, "VALUE",
               "PEM private key of the certificate, unencrypted. Required.", NULL, K_STR, 0, 0},
    [F_BIND] = {"bind-address", 0, "VALUE", "IPv4 or IPv6 address both ports listen on.", "0.0.0.0",
                K_STR, 0, 0},
    [F_PORT] = {"port", 0, "N", "HTTPS port of POST /validate.", "9443", K_UINT, 1, 65535},
    [F_OPS_PORT] = {"ops-port", 0, "N", "plain HTTP port of /healthz, /readyz and /metrics.",
                    "8080", K_UINT, 1, 65535},
    [F_OPS_BIND] = {"ops-bind-address", 0, "VALUE",
                    "IPv4 or IPv6 address the ops port listens on; empty = --bind-address.", "",
                    K_STR, 0, 0},
    [F_THREADS] = {"threads", 0, "N",
                   "request threads (epoll each), which is also the most reviews decided at "
                   "once; 0 = the container's CPU limit (cgroup CPU quota, rounded up), else the "
                   "CPUs the process may run on.",
                   "0", K_UINT, 0, 1024},
    [F_TLS_MIN] = {"tls-min-version", 0, "VALUE",
                   "lowest TLS version accepted: 1.2 or 1.3 (1.0/1.1 are never accepted).", "1.2",
                   K_STR, 0, 0},
    [F_SERVICE] = {"service-name", 0, "VALUE",
                   "DNS name the certificate must cover, e.g. jobguard.jobguard-system.svc; empty "
                   "= no check.",
                   "", K_STR, 0, 0},
    [F_CLIENT_CA] =
        {"client-ca-file", 0, "VALUE",
         "PEM CA bundle; when set, clients must present a certificate it signed (403 otherwise).",
         "", K_STR, 0, 0},
    [F_CLIENT_CN] = {"client-cn", 0, "VALUE",
                     "with --client-ca-file: required client certificate common name; empty = any.",
                     "", K_STR, 0, 0},
    [F_POLL] = {"cert-poll-interval", 0, "N",
                "seconds between checks of the certificate files for changes; 0 = only on SIGHUP.",
                "5", K_UINT, 0, 86400},
    [F_SHUTDOWN_DELAY] = {"shutdown-delay", 0, "N",
                          "seconds to keep serving after SIGTERM/SIGINT while /readyz is 503.", "5",
                          K_UINT, 0, 3600},
    [F_DRAIN] = {"drain-timeout", 0, "N",
                 "seconds to wait for open connections after the listener closes.", "10", K_UINT, 0,
                 3600},
    [F_LOG_LEVEL] = {"log-level", 0, "VALUE",
                     "debug, info, warn or error (denials are info, allowed requests debug).",
                     "info", K_STR, 0, 0},
    [F_LOG_FORMAT] = {"log-format", 0, "VALUE",
                      "json (one object per line) or text; logs go to stderr.", "json", K_STR, 0,
                      0},
    [F_PARITY] = {"parity", 0, "VALUE",
                  "Kubernetes version whose messages are reproduced: " JG_PARITY_VALUES ".", "1.35",
                  K_STR, 0, 0},
    [F_DISABLE_RULE] =
        {"disable-rule", 0, "VALUE",
         "rule ID to switch off (repeatable; env: comma-separated). See 'jobguard rules'.", "",
         K_LIST, 0, 0},
    [F_POLICY] = {"policy-file", 0, "VALUE",
                  "JSON policy file (modes, controllers, targets; docs/policy.md); re-read when it "
                  "changes (every --cert-poll-interval) and on SIGHUP; empty = no policy.",
                  "", K_STR, 0, 0},
    [F_MODE] = {"mode", 0, "ID=MODE",
                "ID=MODE: rule ID's mode, deny, warn, audit or off; ID * = every rule (repeatable, "
                "later ones win; env: comma-separated); wins over the policy file's modes. "
                "--disable-rule wins over both. See docs/modes.md.",
                "", K_MODES, 0, 0},
    [F_MAX_CONN] = {"max-connections", 0, "N",
                    "open connections on the HTTPS port; more are refused, and a new one near "
                    "the limit shuts down the one that has waited longest for a request.",
                    "1024", K_UINT, 1, 1000000},
    [F_MAX_CONN_IP] = {"max-connections-per-ip", 0, "N",
                       "open connections per client IP; more are refused. An API server opens one "
                       "per call in flight, at most its --max-mutating-requests-inflight (200); 0 "
                       "= unlimited.",
                       "256", K_UINT, 0, 1000000},
    [F_CONN_TIMEOUT] = {"connection-timeout", 0, "N",
                        "seconds within which each request's headers must arrive, then the rest "
                        "of it (body, decision, answer) whether or not bytes come (slowloris), "
                        "and an idle connection is closed; 0 = never.",
                        "30", K_UINT, 0, 86400},
    [F_CONN_MEM] = {"connection-memory-limit", 0, "BYTES",
                    "memory pool per connection for the request line, headers and read buffer "
                    "(bodies are buffered apart, up to 7 MiB); libmicrohttpd clears it after "
                    "every request, so it costs time as well as memory.",
                    "16KiB", K_BYTES, 8192, 16ull << 20},
    [F_MAX_HEADER] = {"max-header-bytes", 0, "BYTES",
                      "request line (with its query) plus headers; larger requests get 431.",
                      "8KiB", K_BYTES, 1024, 8ull << 20},
    [F_MEM_BUDGET] = {"memory-budget", 0, "BYTES",
                      "bytes that request bodies, decisions and answers in flight may hold "
                      "together, each body charged as it arrives; a request that does not fit is "
                      "answered 503 with Retry-After (its body dropped). "
                      "0 = the container's memory limit (cgroup v2 or v1) less 48 MiB and "
                      "(16 KiB + --connection-memory-limit) per --max-connections; 256 MiB "
                      "without a limit. See docs/memory.md.",
                      "0", K_BYTES, 0, 1ull << 40},
    [F_ZERO_SERIES] = {"metrics-zero-series", 0, "VALUE",
                       "true or false: /metrics shows jobguard_rule_violations_total at 0, before "
                       "its first event, for every rule that can fire for each kind in each mode "
                       "(docs/monitoring.md); false = only series that happened.",
                       "true", K_STR, 0, 0},
};

static const struct jg_flags spec = {
    .cmd = "serve",
    .head = "Usage: jobguard serve --tls-cert-file FILE --tls-private-key-file FILE [options]\n\n"
            "Serves POST /validate (AdmissionReview v1 and v1beta1) over HTTPS, and /healthz,\n"
            "/readyz and /metrics over plain HTTP on the ops port. Every option can also be set\n"
            "with the environment variable shown; a flag wins over the variable.\n"
            "The certificate files and the policy file are re-read when they change and on\n"
            "SIGHUP; an invalid new policy is refused and the current one keeps serving.\n"
            "SIGTERM/SIGINT: /readyz turns 503, serving goes on for --shutdown-delay, then the\n"
            "listener closes and open connections drain for up to --drain-timeout.\n"
            "Bodies over 7 MiB get 413 (from Content-Length, or while reading a chunked body).\n\n"
            "Options:\n",
    .tail = "\nBYTES accept a suffix: K/Ki/KiB (1024), M/Mi/MiB (1048576) or G/Gi/GiB.\n",
    .flag = flags,
    .n = F_COUNT,
    .no_operands = true,
    .indent = 0,
};

static bool parse_uint(const char *s, unsigned long long *out) {
    if (!s || !*s || !isdigit((unsigned char)*s)) return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return false;
    *out = v;
    return true;
}

static bool parse_bytes(const char *s, unsigned long long *out) {
    if (!s || !isdigit((unsigned char)*s)) return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10), mul = 1;
    if (errno) return false;
    if (*end) {
        const char *u = end;
        if (strcmp(u, "K") == 0 || strcmp(u, "k") == 0 || strcmp(u, "Ki") == 0 ||
            strcmp(u, "KiB") == 0)
            mul = 1024;
        else if (strcmp(u, "M") == 0 || strcmp(u, "Mi") == 0 || strcmp(u, "MiB") == 0)
            mul = 1024 * 1024;
        else if (strcmp(u, "G") == 0 || strcmp(u, "Gi") == 0 || strcmp(u, "GiB") == 0)
            mul = 1024 * 1024 * 1024;
        else
            return false;
    }
    if (v > ULLONG_MAX / mul) return false;
    *out = v * mul;
    return true;
}

/* Calls item(ctx, p, n) for each non-empty, space-trimmed item of the comma-separated list s;
 * stops at the first false. */
static bool each_item(const char *s, bool (*item)(void *, const char *, size_t), void *ctx) {
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        while (n > 0 && isspace((unsigned char)*s))
            s++, n--;
        while (n > 0 && isspace((unsigned char)s[n - 1]))
            n--;
        if (n > 0 && !item(ctx, s, n)) return false;
        if (!comma) break;
        s = comma + 1;
    }
    return true;
}

static bool add_rule(void *mask, const char *s, size_t n) {
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)n, s);
    const struct jg_rule *r = jg_rule_find(buf);
    if (!r) {
        fprintf(stderr,
                "jobguard serve: --disable-rule: unknown rule ID \"%s\" (see 'jobguard rules')\n",
                buf);
        return false;
    }
    *(uint64_t *)mask |= UINT64_C(1) << r->id;
    return true;
}

static bool add_mode(void *mode, const char *s, size_t n) {
    char err[300];
    if (jg_mode_set(s, n, mode, err, sizeof err)) return true;
    fprintf(stderr, "jobguard serve: --mode: %s\n", err);
    return false;
}

/* Adds the comma-separated rule IDs in s to *mask; false with a message on an unknown ID. */
static bool add_rules(const char *s, uint64_t *mask) {
    return each_item(s, add_rule, mask);
}

/* Applies the comma-separated ID=MODE items of s to mode[]; false with a message on a bad one. */
static bool add_modes(const char *s, unsigned char mode[JG_RULE_MAX]) {
    return each_item(s, add_mode, mode);
}

/* The flags' values: each flag's default, else its environment variable, else the flag. */
struct settings {
    const char *val[F_COUNT];
    unsigned long long num[F_COUNT]; /* of the K_UINT and K_BYTES flags */
    bool from_flag[F_COUNT];
    uint64_t disabled_flags;               /* --disable-rule flags, checked as they come */
    unsigned char mode_flags[JG_RULE_MAX]; /* --mode flags, likewise */
};

/* argv and the environment into st. -1: go on; else the exit status (--help, a bad flag). */
static int parse(struct settings *st, int argc, char **argv) {
    memset(st->mode_flags, JG_MODE_UNSET, sizeof st->mode_flags); /* the policy file decides */
    for (int i = 0; i < F_COUNT; i++) {
        char env[64];
        jg_flag_env_name(flags[i].name, env, sizeof env);
        const char *e = getenv(env);
        st->val[i] = e ? e : flags[i].def; /* environment first, flags override */
    }
    struct jg_args it;
    jg_args_init(&it, &spec, argc, argv);
    const char *v;
    for (int f; (f = jg_args_next(&it, &v)) != JG_ARGS_END;) {
        if (f == JG_ARGS_STOP) return it.status;
        if (flags[f].kind == K_LIST && !add_rules(v, &st->disabled_flags)) return 2;
        if (flags[f].kind == K_MODES && !add_modes(v, st->mode_flags)) return 2;
        st->val[f] = v;
        st->from_flag[f] = true;
    }
    return -1;
}

/* The settings into c, each checked; false after saying on stderr what is wrong. */
static bool validate(struct settings *st, struct jg_serve_config *c) {
    const char *const *val = st->val;
    unsigned long long *num = st->num;
    for (int i = 0; i < F_COUNT; i++) {
        if (flags[i].kind != K_UINT && flags[i].kind != K_BYTES) continue;
        bool ok =
            flags[i].kind == K_UINT ? parse_uint(val[i], &num[i]) : parse_bytes(val[i], &num[i]);
        if (!ok || num[i] < flags[i].min || num[i] > flags[i].max) {
            fprintf(stderr, "jobguard serve: --%s: \"%s\" is not a %s between %llu and %llu\n",
                    flags[i].name, val[i], flags[i].kind == K_UINT ? "number" : "size",
                    flags[i].min, flags[i].max);
            return false;
        }
    }
    *c = (struct jg_serve_config){0};
    struct jg_server_config *s = &c->server;
    if (!jg_log_parse_level(val[F_LOG_LEVEL], &c->log_level)) {
        fprintf(stderr,
                "jobguard serve: --log-level must be debug, info, warn or error, not \"%s\"\n",
                val[F_LOG_LEVEL]);
        return false;
    }
    if (!jg_log_parse_format(val[F_LOG_FORMAT], &c->log_format)) {
        fprintf(stderr, "jobguard serve: --log-format must be json or text, not \"%s\"\n",
                val[F_LOG_FORMAT]);
        return false;
    }
    s->engine = (struct jg_config)JG_CONFIG_DEFAULT;
    if (!jg_parity_parse(val[F_PARITY], &s->engine.parity)) {
        fprintf(stderr, "jobguard serve: --parity must be " JG_PARITY_VALUES ", not \"%s\"\n",
                val[F_PARITY]);
        return false;
    }
    if (st->from_flag[F_DISABLE_RULE])
        s->engine.disabled = st->disabled_flags;
    else if (!add_rules(val[F_DISABLE_RULE], &s->engine.disabled))
        return false;
    jg_config_modes_unset(&s->engine);
    if (st->from_flag[F_MODE])
        memcpy(s->engine.mode, st->mode_flags, sizeof s->engine.mode);
    else if (!add_modes(val[F_MODE], s->engine.mode))
        return false;

    if (strcmp(val[F_TLS_MIN], "1.2") == 0)
        s->tls_priorities = PRIORITY_TLS12;
    else if (strcmp(val[F_TLS_MIN], "1.3") == 0)
        s->tls_priorities = PRIORITY_TLS13;
    else {
        fprintf(stderr, "jobguard serve: --tls-min-version must be 1.2 or 1.3, not \"%s\"\n",
                val[F_TLS_MIN]);
        return false;
    }
    if (!val[F_CERT] || !val[F_CERT][0] || !val[F_KEY] || !val[F_KEY][0]) {
        fprintf(stderr,
                "jobguard serve: --tls-cert-file and --tls-private-key-file are required "
                "(development certificates: certs/generate.sh --service jobguard --namespace "
                "default --out certs/dev --ip 127.0.0.1 --dns localhost)\n");
        return false;
    }
    if (num[F_PORT] == num[F_OPS_PORT]) {
        fprintf(stderr, "jobguard serve: --port and --ops-port must differ (both %llu)\n",
                num[F_PORT]);
        return false;
    }
    if (num[F_CONN_MEM] < 2 * num[F_MAX_HEADER]) {
        fprintf(stderr,
                "jobguard serve: --connection-memory-limit (%llu) must be at least twice "
                "--max-header-bytes (%llu): headers live in the connection's memory pool\n",
                num[F_CONN_MEM], num[F_MAX_HEADER]);
        return false;
    }
    if (strcmp(val[F_ZERO_SERIES], "true") != 0 && strcmp(val[F_ZERO_SERIES], "false") != 0) {
        fprintf(stderr, "jobguard serve: --metrics-zero-series must be true or false, not \"%s\"\n",
                val[F_ZERO_SERIES]);
        return false;
    }
    if (val[F_CLIENT_CN][0] && !val[F_CLIENT_CA][0]) {
        fprintf(stderr, "jobguard serve: --client-cn needs --client-ca-file\n");
        return false;
    }
    s->bind_address = val[F_BIND];
    s->ops_bind_address = val[F_OPS_BIND][0] ? val[F_OPS_BIND] : val[F_BIND];
    s->port = (uint16_t)num[F_PORT];
    s->ops_port = (uint16_t)num[F_OPS_PORT];
    s->threads = (unsigned)num[F_THREADS];
    s->memory_budget = num[F_MEM_BUDGET];
    s->max_connections = (unsigned)num[F_MAX_CONN];
    s->max_connections_per_ip = (unsigned)num[F_MAX_CONN_IP];
    s->connection_timeout_s = (unsigned)num[F_CONN_TIMEOUT];
    s->connection_memory_limit = (size_t)num[F_CONN_MEM];
    s->max_header_bytes = (size_t)num[F_MAX_HEADER];
    s->client_cn = val[F_CLIENT_CN];
    s->shutdown_delay_s = (unsigned)num[F_SHUTDOWN_DELAY];
    s->drain_timeout_s = (unsigned)num[F_DRAIN];
    c->cert_file = val[F_CERT];
    c->key_file = val[F_KEY];
    c->service_name = val[F_SERVICE];
    c->client_ca_file = val[F_CLIENT_CA];
    c->policy_file = val[F_POLICY];
    c->cert_poll_interval_s = (unsigned)num[F_POLL];
    c->metrics_zero_series = strcmp(val[F_ZERO_SERIES], "true") == 0;
    return true;
}

/* A JSON list of the rules in mask, or an object of the rules mode sets ({"ID":"warn",...}). */
static void log_rules(struct jg_log *l, const char *key, uint64_t mask, const unsigned char *mode) {
    jg_buf b = JG_BUF_INIT;
    jg_buf_putc(&b, mode ? '{' : '[');
    for (int r = 0, first = 1; r < JG_RULE_COUNT; r++) {
        if (mode ? mode[r] == JG_MODE_UNSET : !(mask & (UINT64_C(1) << r))) continue;
        if (!first) jg_buf_putc(&b, ',');
        jg_buf_json_string(&b, jg_rules[r].name, strlen(jg_rules[r].name));
        if (mode) jg_buf_printf(&b, ":\"%s\"", jg_mode_name((enum jg_mode)mode[r]));
        first = 0;
    }
    jg_buf_putc(&b, mode ? '}' : ']');
    if (!b.oom) jg_log_raw(l, key, b.data, b.len);
    jg_buf_free(&b);
}

/* The "starting jobguard" line: every flag's effective value (threads and memory budget as
 * resolved), then what the container's limits made of them. */
static void log_start(const struct settings *st, const struct jg_serve_config *c) {
    const struct jg_server_config *s = &c->server;
    struct jg_log l;
    if (!jg_log_begin(&l, JG_LOG_INFO, "starting jobguard")) return;
    jg_log_str(&l, "version", JG_VERSION);
    for (int i = 0; i < F_COUNT; i++) {
        char key[64];
        snprintf(key, sizeof key, "%s", flags[i].name);
        for (char *k = key; *k; k++)
            if (*k == '-') *k = '_';
        if (i == F_THREADS)
            jg_log_uint(&l, key, s->threads);
        else if (i == F_MEM_BUDGET)
            jg_log_uint(&l, key, s->memory_budget);
        else if (i == F_DISABLE_RULE)
            log_rules(&l, key, s->engine.disabled, NULL);
        else if (i == F_MODE)
            log_rules(&l, key, 0, s->engine.mode);
        else if (flags[i].kind == K_UINT || flags[i].kind == K_BYTES)
            jg_log_uint(&l, key, st->num[i]);
        else
            jg_log_str(&l, key, st->val[i]);
    }
    jg_log_str(&l, "tls_priorities", s->tls_priorities);
    jg_log_uint(&l, "max_body_bytes", jg_budget_max_body());
    jg_log_uint(&l, "memory_limit", c->cgroup.memory_bytes);
    jg_log_str(&l, "memory_limit_file", c->cgroup.memory_file);
    jg_log_uint(&l, "cpu_limit", c->cgroup.cpus);
    jg_log_str(&l, "cpu_limit_file", c->cgroup.cpu_file);
    jg_log_end(&l);
}

int jg_cmd_serve(int argc, char **argv) {
    struct settings st = {0};
    struct jg_serve_config c;
    int rc = parse(&st, argc, argv);
    if (rc >= 0) return rc;
    if (!validate(&st, &c) || !jg_serve_prepare(&c)) return 2;
    log_start(&st, &c);
    return jg_serve_run(&c);
}
