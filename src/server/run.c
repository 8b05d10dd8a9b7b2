/* run: start, wait for a signal, shut down in order. */
#include "run.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jobguard/server/log.h"
#include "policywatch.h"
#include "tlscert.h"
#include "watch.h"

#define DRAIN_POLL_MS 20
/* The certificate watcher gets at least this long after the drain (with --shutdown-delay 0 and
 * --drain-timeout 0 there is no budget left; a check in progress takes a few milliseconds). */
#define WATCHER_MIN_WAIT_MS 200

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv;
static int g_signals;  /* SIGTERM/SIGINT received so far */
static bool g_exiting; /* the signal thread should return */

static void *signal_main(void *arg) {
    const sigset_t *set = arg;
    for (;;) {
        int sig = 0;
        if (sigwait(set, &sig) != 0) continue;
        pthread_mutex_lock(&g_mu);
        bool exiting = g_exiting;
        pthread_mutex_unlock(&g_mu);
        if (exiting) return NULL;
        if (sig == SIGHUP) {
            jg_watch_request_reload();
            continue;
        }
        if (sig != SIGTERM && sig != SIGINT) continue; /* SIGUSR1 is only the exit wake-up */
        jg_transport_set_draining(); /* readiness first: endpoints should drop us at once */
        pthread_mutex_lock(&g_mu);
        int n = ++g_signals;
        pthread_cond_broadcast(&g_cv);
        pthread_mutex_unlock(&g_mu);
        struct jg_log l;
        if (jg_log_begin(&l, JG_LOG_INFO,
                         n == 1 ? "shutdown requested: not ready, still serving"
                                : "second signal: skipping the rest of the shutdown delay")) {
            jg_log_str(&l, "signal", sig == SIGTERM ? "SIGTERM" : "SIGINT");
            jg_log_end(&l);
        }
    }
}

static struct timespec ts_add_ms(struct timespec t, long long ms) {
    t.tv_sec += (time_t)(ms / 1000);
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
    return t;
}

static bool ts_before(const struct timespec *a, const struct timespec *b) {
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static double mono_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int jg_server_run(const struct jg_server_config *cfg) {
    static sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* inherited by every thread created below */
    signal(SIGPIPE, SIG_IGN);

    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g_cv, &ca);
    pthread_condattr_destroy(&ca);

    char err[512];
    if (!jg_transport_start(cfg, err, sizeof err)) {
        struct jg_log l;
        if (jg_log_begin(&l, JG_LOG_ERROR, "cannot start")) {
            jg_log_str(&l, "error", err);
            jg_log_end(&l);
        }
        return 1;
    }
    pthread_t sig_thread;
    if (pthread_create(&sig_thread, NULL, signal_main, &set) != 0 ||
        !jg_watch_start(err, sizeof err)) {
        jg_log_msg(JG_LOG_ERROR, "cannot start the helper threads");
        jg_transport_stop();
        return 1;
    }
    struct jg_log l;
    if (jg_log_begin(&l, JG_LOG_INFO, "serving")) {
        jg_log_str(&l, "bind_address", cfg->bind_address);
        jg_log_uint(&l, "port", cfg->port);
        jg_log_str(&l, "ops_bind_address", cfg->ops_bind_address);
        jg_log_uint(&l, "ops_port", cfg->ops_port);
        jg_log_end(&l);
    }

    /* 1. wait for SIGTERM/SIGINT; the watcher stops now, so that whatever it is doing it has the
     * whole shutdown to finish */
    pthread_mutex_lock(&g_mu);
    while (g_signals == 0)
        pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
    jg_watch_request_stop();
    struct timespec t_signal;
    clock_gettime(CLOCK_MONOTONIC, &t_signal);
    /* 2. keep serving for the shutdown delay, unless a second signal arrives */
    struct timespec dl = ts_add_ms(t_signal, 1000LL * cfg->shutdown_delay_s);
    pthread_mutex_lock(&g_mu);
    while (g_signals < 2 && pthread_cond_timedwait(&g_cv, &g_mu, &dl) != ETIMEDOUT) {
    }
    pthread_mutex_unlock(&g_mu);

    /* 3. stop accepting; keep-alive connections close after their next response */
    jg_transport_quiesce();
    unsigned open = jg_transport_connections();
    if (jg_log_begin(&l, JG_LOG_INFO, "stopped accepting, draining")) {
        jg_log_uint(&l, "open_connections", open);
        jg_log_uint(&l, "drain_timeout_seconds", cfg->drain_timeout_s);
        jg_log_end(&l);
    }
    /* 4. drain */
    double t0 = mono_now(), deadline = t0 + cfg->drain_timeout_s;
    while ((open = jg_transport_connections()) > 0 && mono_now() < deadline) {
        struct timespec d = {0, DRAIN_POLL_MS * 1000000L};
        nanosleep(&d, NULL);
    }
    jg_transport_stop();
    if (jg_log_begin(&l, open ? JG_LOG_WARN : JG_LOG_INFO,
                     open ? "drain timeout: closed the remaining connections" : "drained")) {
        jg_log_uint(&l, "closed_connections", open);
        jg_log_double(&l, "drain_seconds", mono_now() - t0);
        jg_log_end(&l);
    }

    /* 5. the watcher: waited for until --shutdown-delay + --drain-timeout after the signal, never
     * longer (a read from a stalled network filesystem cannot be interrupted) */
    struct timespec wdl =
        ts_add_ms(t_signal, 1000LL * (cfg->shutdown_delay_s + (long long)cfg->drain_timeout_s));
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    struct timespec floor_ = ts_add_ms(now, WATCHER_MIN_WAIT_MS);
    if (ts_before(&wdl, &floor_)) wdl = floor_;
    const char *doing = NULL, *path = NULL;
    bool watcher_stopped = jg_watch_stop(&wdl, &doing, &path);
    if (!watcher_stopped &&
        jg_log_begin(&l, JG_LOG_WARN, "certificate watcher still busy: exiting without it")) {
        jg_log_str(&l, "doing", doing);
        jg_log_str(&l, "path", path);
        jg_log_end(&l);
    }

    pthread_mutex_lock(&g_mu);
    g_exiting = true;
    pthread_mutex_unlock(&g_mu);
    pthread_kill(sig_thread, SIGUSR1);
    pthread_join(sig_thread, NULL);
    pthread_cond_destroy(&g_cv);
    if (watcher_stopped) {
        jg_tls_cleanup();
        jg_policy_watch_cleanup();
    }
    jg_log_msg(JG_LOG_INFO, "shutdown complete");
    /* exit(3) would run OpenSSL's and GnuTLS's destructors under the busy watcher */
    if (!watcher_stopped) _exit(0);
    return 0;
}
