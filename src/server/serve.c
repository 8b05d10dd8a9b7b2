/* jobguard serve: flags (and JOBGUARD_* environment variables) -> configuration -> run. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cli/cli.h"
#include "jobguard/rules.h"
#include "jobguard/server/budget.h"
#include "jobguard/server/cgroup.h"
#include "jobguard/server/log.h"
#include "metrics.h"
#include "policywatch.h"
#include "run.h"
#include "tlscert.h"
#include "transport.h"
#include "watch.h"

/* GnuTLS priority strings for --tls-min-version: NORMAL minus every protocol version but these. */
#define PRIORITY_TLS12 "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
#define PRIORITY_TLS13 "NORMAL:-VERS-ALL:+VERS-TLS1.3"

/* A replaced certificate is freed after max(this, 2 x --connection-timeout): a handshake that
 * fetched it signs with it within the same flight, so a minute is far beyond any use. */
#define CERT_GRACE_MIN_S 60

enum kind { K_STR, K_UINT, K_BYTES, K_LIST, K_MODES };

struct flag {
    const char *name;
    enum kind kind;
    const char *def; /* NULL: no default */
    const char *help;
    unsigned long long min, max; /* K_UINT / K_BYTES */
};

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

static const struct flag flags[F_COUNT] = {
    [F_CERT] = {"tls-cert-file", K_STR, NULL,
                "PEM serving certificate (leaf first, then intermediates). Required.", 0, 0},
    [F_KEY] = {"tls-private-key-file", K_STR, NULL,
               "PEM private key of the certificate, unencrypted. Required.", 0, 0},
    [F_BIND] = {"bind-address", K_STR, "0.0.0.0", "IPv4 or IPv6 address both ports listen on.", 0,
                0},
    [F_PORT] = {"port", K_UINT, "9443", "HTTPS port of POST /validate.", 1, 65535},
    [F_OPS_PORT] = {"ops-port", K_UINT, "8080",
                    "plain HTTP port of /healthz, /readyz and /metrics.", 1, 65535},
    [F_OPS_BIND] = {"ops-bind-address", K_STR, "",
                    "IPv4 or IPv6 address the ops port listens on; empty = --bind-address.", 0, 0},
    [F_THREADS] = {"threads", K_UINT, "0",
                   "request threads (epoll each), which is also the most reviews decided at "
                   "once; 0 = the container's CPU limit (cgroup CPU quota, rounded up), else the "
                   "CPUs the process may run on.",
                   0, 1024},
    [F_TLS_MIN] = {"tls-min-version", K_STR, "1.2",
                   "lowest TLS version accepted: 1.2 or 1.3 (1.0/1.1 are never accepted).", 0, 0},
    [F_SERVICE] = {"service-name", K_STR, "",
                   "DNS name the certificate must cover, e.g. jobguard.jobguard-system.svc; empty "
                   "= no check.",
                   0, 0},
    [F_CLIENT_CA] =
        {"client-ca-file", K_STR, "",
         "PEM CA bundle; when set, clients must present a certificate it signed (403 otherwise).",
         0, 0},
    [F_CLIENT_CN] = {"client-cn", K_STR, "",
                     "with --client-ca-file: required client certificate common name; empty = any.",
                     0, 0},
    [F_POLL] = {"cert-poll-interval", K_UINT, "5",
                "seconds between checks of the certificate files for changes; 0 = only on SIGHUP.",
                0, 86400},
    [F_SHUTDOWN_DELAY] = {"shutdown-delay", K_UINT, "5",
                          "seconds to keep serving after SIGTERM/SIGINT while /readyz is 503.", 0,
                          3600},
    [F_DRAIN] = {"drain-timeout", K_UINT, "10",
                 "seconds to wait for open connections after the listener closes.", 0, 3600},
    [F_LOG_LEVEL] = {"log-level", K_STR, "info",
                     "debug, info, warn or error (denials are info, allowed requests debug).", 0,
                     0},
    [F_LOG_FORMAT] = {"log-format", K_STR, "json",
                      "json (one object per line) or text; logs go to stderr.", 0, 0},
    [F_PARITY] = {"parity", K_STR, "1.35",
                  "Kubernetes version whose messages are reproduced: " JG_PARITY_VALUES ".", 0, 0},
    [F_DISABLE_RULE] =
        {"disable-rule", K_LIST, "",
         "rule ID to switch off (repeatable; env: comma-separated). See 'jobguard rules'.", 0, 0},
    [F_POLICY] = {"policy-file", K_STR, "",
                  "JSON policy file (modes, controllers, targets; docs/policy.md); re-read when it "
                  "changes (every --cert-poll-interval) and on SIGHUP; empty = no policy.",
                  0, 0},
    [F_MODE] = {"mode", K_MODES, "",
                "ID=MODE: rule ID's mode, deny, warn, audit or off; ID * = every rule (repeatable, "
                "later ones win; env: comma-separated); wins over the policy file's modes. "
                "--disable-rule wins over both. See docs/modes.md.",
                0, 0},
    [F_MAX_CONN] = {"max-connections", K_UINT, "1024",
                    "open connections on the HTTPS port; more are refused, and a new one near "
                    "the limit shuts down the one that has waited longest for a request.",
                    1, 1000000},
    [F_MAX_CONN_IP] = {"max-connections-per-ip", K_UINT, "256",
                       "open connections per client IP; more are refused. An API server opens one "
                       "per call in flight, at most its --max-mutating-requests-inflight (200); 0 "
                       "= unlimited.",
                       0, 1000000},
    [F_CONN_TIMEOUT] = {"connection-timeout", K_UINT, "30",
                        "seconds within which each request's headers must arrive, then the rest "
                        "of it (body, decision, answer) whether or not bytes come (slowloris), "
                        "and an idle connection is closed; 0 = never.",
                        0, 86400},
    [F_CONN_MEM] = {"connection-memory-limit", K_BYTES, "16KiB",
                    "memory pool per connection for the request line, headers and read buffer "
                    "(bodies are buffered apart, up to 7 MiB); libmicrohttpd clears it after "
                    "every request, so it costs time as well as memory.",
                    8192, 16ull << 20},
    [F_MAX_HEADER] = {"max-header-bytes", K_BYTES, "8KiB",
                      "request line (with its query) plus headers; larger requests get 431.", 1024,
                      8ull << 20},
    [F_MEM_BUDGET] = {"memory-budget", K_BYTES, "0",
                      "bytes that request bodies, decisions and answers in flight may hold "
                      "together, each body charged as it arrives; a request that does not fit is "
                      "answered 503 with Retry-After (its body dropped). "
                      "0 = the container's memory limit (cgroup v2 or v1) less 48 MiB and "
                      "(16 KiB + --connection-memory-limit) per --max-connections; 256 MiB "
                      "without a limit. See docs/memory.md.",
                      0, 1ull << 40},
    [F_ZERO_SERIES] = {"metrics-zero-series", K_STR, "true",
                       "true or false: /metrics shows jobguard_rule_violations_total at 0, before "
                       "its first event, for every rule that can fire for each kind in each mode "
                       "(docs/monitoring.md); false = only series that happened.",
                       0, 0},
};

static void env_name(const char *flag, char *out, size_t n) {
    size_t i = 0;
    i += (size_t)snprintf(out, n, "JOBGUARD_");
    for (; *flag && i + 1 < n; flag++)
        out[i++] = *flag == '-' ? '_' : (char)toupper((unsigned char)*flag);
    out[i] = '\0';
}

static void usage(FILE *f) {
    fprintf(f,
            "Usage: jobguard serve --tls-cert-file FILE --tls-private-key-file FILE [options]\n\n"
            "Serves POST /validate (AdmissionReview v1 and v1beta1) over HTTPS, and /healthz,\n"
            "/readyz and /metrics over plain HTTP on the ops port. Every option can also be set\n"
            "with the environment variable shown; a flag wins over the variable.\n"
            "The certificate files and the policy file are re-read when they change and on\n"
            "SIGHUP; an invalid new policy is refused and the current one keeps serving.\n"
            "SIGTERM/SIGINT: /readyz turns 503, serving goes on for --shutdown-delay, then the\n"
            "listener closes and open connections drain for up to --drain-timeout.\n"
            "Bodies over 7 MiB get 413 (from Content-Length, or while reading a chunked body).\n\n"
            "Options:\n");
    for (int i = 0; i < F_COUNT; i++) {
        char env[64];
        env_name(flags[i].name, env, sizeof env);
        const char *arg = flags[i].kind == K_UINT    ? " N"
                          : flags[i].kind == K_BYTES ? " BYTES"
                          : flags[i].kind == K_MODES ? " ID=MODE"
                                                     : " VALUE";
        fprintf(f, "  --%s%s\n      %s\n      default: %s; env: %s\n", flags[i].name, arg,
                flags[i].help,
                flags[i].def == NULL ? "(none)"
                : flags[i].def[0]    ? flags[i].def
                                     : "\"\"",
                env);
    }
    fprintf(f, "  --help\n      this text\n\nBYTES accept a suffix: K/Ki/KiB (1024), M/Mi/MiB "
               "(1048576) or G/Gi/GiB.\n");
}

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

static int find_flag(const char *name, size_t n) {
    for (int i = 0; i < F_COUNT; i++)
        if (strlen(flags[i].name) == n && strncmp(flags[i].name, name, n) == 0) return i;
    return -1;
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
static bool add_modes(const char *s, unsigned char mode[64]) {
    return each_item(s, add_mode, mode);
}

/* The CPUs this process may run on (its affinity mask, which a CPU manager's static policy
 * narrows), else the online CPUs. */
static unsigned allowed_cpus(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

int jg_cmd_serve(int argc, char **argv) {
    const char *val[F_COUNT];
    bool from_flag[F_COUNT] = {0};
    uint64_t disabled_flags = 0;
    unsigned char mode_flags[64];
    memset(mode_flags, JG_MODE_UNSET, sizeof mode_flags); /* the policy file decides the rest */
    for (int i = 0; i < F_COUNT; i++)
        val[i] = flags[i].def;

    /* environment first, flags override */
    for (int i = 0; i < F_COUNT; i++) {
        char env[64];
        env_name(flags[i].name, env, sizeof env);
        const char *e = getenv(env);
        if (e) val[i] = e;
    }
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strncmp(arg, "--", 2) != 0) {
            fprintf(stderr, "jobguard serve: unexpected argument %s (try --help)\n", arg);
            return 2;
        }
        const char *name = arg + 2, *eq = strchr(name, '=');
        int f = find_flag(name, eq ? (size_t)(eq - name) : strlen(name));
        if (f < 0) {
            fprintf(stderr, "jobguard serve: unknown option %s (try --help)\n", arg);
            return 2;
        }
        const char *v;
        if (eq)
            v = eq + 1;
        else if (a + 1 < argc)
            v = argv[++a];
        else {
            fprintf(stderr, "jobguard serve: option --%s needs a value\n", flags[f].name);
            return 2;
        }
        if (flags[f].kind == K_LIST && !add_rules(v, &disabled_flags)) return 2;
        if (flags[f].kind == K_MODES && !add_modes(v, mode_flags)) return 2;
        val[f] = v;
        from_flag[f] = true;
    }

    unsigned long long num[F_COUNT] = {0};
    for (int i = 0; i < F_COUNT; i++) {
        if (flags[i].kind != K_UINT && flags[i].kind != K_BYTES) continue;
        bool ok =
            flags[i].kind == K_UINT ? parse_uint(val[i], &num[i]) : parse_bytes(val[i], &num[i]);
        if (!ok || num[i] < flags[i].min || num[i] > flags[i].max) {
            fprintf(stderr, "jobguard serve: --%s: \"%s\" is not a %s between %llu and %llu\n",
                    flags[i].name, val[i], flags[i].kind == K_UINT ? "number" : "size",
                    flags[i].min, flags[i].max);
            return 2;
        }
    }

    enum jg_log_level level;
    enum jg_log_format format;
    if (!jg_log_parse_level(val[F_LOG_LEVEL], &level)) {
        fprintf(stderr,
                "jobguard serve: --log-level must be debug, info, warn or error, not \"%s\"\n",
                val[F_LOG_LEVEL]);
        return 2;
    }
    if (!jg_log_parse_format(val[F_LOG_FORMAT], &format)) {
        fprintf(stderr, "jobguard serve: --log-format must be json or text, not \"%s\"\n",
                val[F_LOG_FORMAT]);
        return 2;
    }
    struct jg_server_config cfg = {0};
    cfg.engine = (struct jg_config)JG_CONFIG_DEFAULT;
    if (!jg_parity_parse(val[F_PARITY], &cfg.engine.parity)) {
        fprintf(stderr, "jobguard serve: --parity must be " JG_PARITY_VALUES ", not \"%s\"\n",
                val[F_PARITY]);
        return 2;
    }
    if (from_flag[F_DISABLE_RULE])
        cfg.engine.disabled = disabled_flags;
    else if (!add_rules(val[F_DISABLE_RULE], &cfg.engine.disabled))
        return 2;
    jg_config_modes_unset(&cfg.engine);
    if (from_flag[F_MODE])
        memcpy(cfg.engine.mode, mode_flags, sizeof cfg.engine.mode);
    else if (!add_modes(val[F_MODE], cfg.engine.mode))
        return 2;

    if (strcmp(val[F_TLS_MIN], "1.2") == 0)
        cfg.tls_priorities = PRIORITY_TLS12;
    else if (strcmp(val[F_TLS_MIN], "1.3") == 0)
        cfg.tls_priorities = PRIORITY_TLS13;
    else {
        fprintf(stderr, "jobguard serve: --tls-min-version must be 1.2 or 1.3, not \"%s\"\n",
                val[F_TLS_MIN]);
        return 2;
    }
    if (!val[F_CERT] || !val[F_CERT][0] || !val[F_KEY] || !val[F_KEY][0]) {
        fprintf(stderr,
                "jobguard serve: --tls-cert-file and --tls-private-key-file are required "
                "(development certificates: certs/generate.sh --service jobguard --namespace "
                "default --out certs/dev --ip 127.0.0.1 --dns localhost)\n");
        return 2;
    }
    if (num[F_PORT] == num[F_OPS_PORT]) {
        fprintf(stderr, "jobguard serve: --port and --ops-port must differ (both %llu)\n",
                num[F_PORT]);
        return 2;
    }
    if (num[F_CONN_MEM] < 2 * num[F_MAX_HEADER]) {
        fprintf(stderr,
                "jobguard serve: --connection-memory-limit (%llu) must be at least twice "
                "--max-header-bytes (%llu): headers live in the connection's memory pool\n",
                num[F_CONN_MEM], num[F_MAX_HEADER]);
        return 2;
    }
    if (strcmp(val[F_ZERO_SERIES], "true") != 0 && strcmp(val[F_ZERO_SERIES], "false") != 0) {
        fprintf(stderr, "jobguard serve: --metrics-zero-series must be true or false, not \"%s\"\n",
                val[F_ZERO_SERIES]);
        return 2;
    }
    if (val[F_CLIENT_CN][0] && !val[F_CLIENT_CA][0]) {
        fprintf(stderr, "jobguard serve: --client-cn needs --client-ca-file\n");
        return 2;
    }

    jg_log_setup(level, format, STDERR_FILENO);
    jg_metrics_reset();
    jg_metrics_zero_series(strcmp(val[F_ZERO_SERIES], "true") == 0);

    struct jg_cgroup_limits cg;
    jg_cgroup_read("", &cg);
    unsigned cpus = cg.cpus ? cg.cpus : allowed_cpus();
    uint64_t budget = num[F_MEM_BUDGET]
                          ? num[F_MEM_BUDGET]
                          : jg_budget_default(cg.memory_bytes, (unsigned)num[F_MAX_CONN],
                                              (size_t)num[F_CONN_MEM]);
    if (budget < JG_BUDGET_MIN) {
        if (num[F_MEM_BUDGET])
            fprintf(stderr, "jobguard serve: --memory-budget %llu is less than the minimum, %llu\n",
                    num[F_MEM_BUDGET], (unsigned long long)JG_BUDGET_MIN);
        else
            fprintf(stderr,
                    "jobguard serve: the memory limit, %llu bytes (%s), leaves less than %llu "
                    "bytes for requests: it needs at least %llu with --max-connections %llu and "
                    "--connection-memory-limit %llu. Raise the limit, lower --max-connections, or "
                    "set --memory-budget (docs/memory.md)\n",
                    (unsigned long long)cg.memory_bytes, cg.memory_file,
                    (unsigned long long)JG_BUDGET_MIN,
                    (unsigned long long)jg_budget_limit_for(
                        JG_BUDGET_MIN, (unsigned)num[F_MAX_CONN], (size_t)num[F_CONN_MEM]),
                    num[F_MAX_CONN], num[F_CONN_MEM]);
        return 2;
    }
    if (cg.memory_bytes && budget > cg.memory_bytes)
        jg_log_msg(JG_LOG_WARN, "--memory-budget is more than the container's memory limit");
    cfg.bind_address = val[F_BIND];
    cfg.ops_bind_address = val[F_OPS_BIND][0] ? val[F_OPS_BIND] : val[F_BIND];
    cfg.port = (uint16_t)num[F_PORT];
    cfg.ops_port = (uint16_t)num[F_OPS_PORT];
    cfg.threads = num[F_THREADS] ? (unsigned)num[F_THREADS] : cpus;
    cfg.memory_budget = budget;
    cfg.max_connections = (unsigned)num[F_MAX_CONN];
    cfg.max_connections_per_ip = (unsigned)num[F_MAX_CONN_IP];
    cfg.connection_timeout_s = (unsigned)num[F_CONN_TIMEOUT];
    cfg.connection_memory_limit = (size_t)num[F_CONN_MEM];
    cfg.max_header_bytes = (size_t)num[F_MAX_HEADER];
    cfg.client_cn = val[F_CLIENT_CN];
    cfg.shutdown_delay_s = (unsigned)num[F_SHUTDOWN_DELAY];
    cfg.drain_timeout_s = (unsigned)num[F_DRAIN];

    struct jg_log l;
    if (jg_log_begin(&l, JG_LOG_INFO, "starting jobguard")) {
        jg_log_str(&l, "version", JG_VERSION);
        for (int i = 0; i < F_COUNT; i++) {
            char key[64];
            snprintf(key, sizeof key, "%s", flags[i].name);
            for (char *k = key; *k; k++)
                if (*k == '-') *k = '_';
            if (i == F_THREADS)
                jg_log_uint(&l, key, cfg.threads);
            else if (i == F_MEM_BUDGET)
                jg_log_uint(&l, key, cfg.memory_budget);
            else if (i == F_DISABLE_RULE) {
                jg_buf names = JG_BUF_INIT;
                jg_buf_putc(&names, '[');
                for (int r = 0, first = 1; r < JG_RULE_COUNT; r++)
                    if (cfg.engine.disabled & (UINT64_C(1) << r)) {
                        if (!first) jg_buf_putc(&names, ',');
                        jg_buf_json_string(&names, jg_rules[r].name, strlen(jg_rules[r].name));
                        first = 0;
                    }
                jg_buf_putc(&names, ']');
                if (!names.oom) jg_log_raw(&l, key, names.data, names.len);
                jg_buf_free(&names);
            } else if (i == F_MODE) { /* {"ID":"warn",...}: the rules --mode sets */
                jg_buf modes = JG_BUF_INIT;
                jg_buf_putc(&modes, '{');
                for (int r = 0, first = 1; r < JG_RULE_COUNT; r++)
                    if (cfg.engine.mode[r] != JG_MODE_UNSET) {
                        if (!first) jg_buf_putc(&modes, ',');
                        jg_buf_json_string(&modes, jg_rules[r].name, strlen(jg_rules[r].name));
                        jg_buf_printf(&modes, ":\"%s\"",
                                      jg_mode_name((enum jg_mode)cfg.engine.mode[r]));
                        first = 0;
                    }
                jg_buf_putc(&modes, '}');
                if (!modes.oom) jg_log_raw(&l, key, modes.data, modes.len);
                jg_buf_free(&modes);
            } else if (flags[i].kind == K_UINT || flags[i].kind == K_BYTES)
                jg_log_uint(&l, key, num[i]);
            else
                jg_log_str(&l, key, val[i]);
        }
        jg_log_str(&l, "tls_priorities", cfg.tls_priorities);
        jg_budget_init(cfg.memory_budget);
        jg_log_uint(&l, "max_body_bytes", jg_budget_max_body());
        jg_log_uint(&l, "memory_limit", cg.memory_bytes);
        jg_log_str(&l, "memory_limit_file", cg.memory_file);
        jg_log_uint(&l, "cpu_limit", cg.cpus);
        jg_log_str(&l, "cpu_limit_file", cg.cpu_file);
        jg_log_end(&l);
    }

    char err[1024];
    jg_buf ca = JG_BUF_INIT;
    if (val[F_CLIENT_CA][0]) {
        if (!jg_tls_read_ca_bundle(val[F_CLIENT_CA], &ca, err, sizeof err)) {
            fprintf(stderr, "jobguard serve: --client-ca-file: %s\n", err);
            jg_buf_free(&ca);
            return 1;
        }
        cfg.client_ca_pem = ca.data;
    }
    struct jg_tls_settings tls = {
        .cert_file = val[F_CERT],
        .key_file = val[F_KEY],
        .service_name = val[F_SERVICE],
        .poll_interval_s = (unsigned)num[F_POLL],
        .grace_s = 2 * cfg.connection_timeout_s > CERT_GRACE_MIN_S ? 2 * cfg.connection_timeout_s
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
    if (!jg_policy_watch_init(val[F_POLICY], &cfg.engine, err, sizeof err)) {
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
    if (val[F_POLICY][0])
        jg_watch_add(&(struct jg_watch_entry){val[F_POLICY], jg_policy_check_reload, NULL});
    int rc = jg_server_run(&cfg);
    jg_buf_free(&ca);
    return rc;
}
