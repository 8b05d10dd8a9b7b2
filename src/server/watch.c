/* watch: one thread, a list of watched files, a poll interval, SIGHUP and stop requests. */
#include "watch.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static struct jg_watch_entry g_entries[JG_WATCH_MAX];
static size_t g_n;
static unsigned g_poll_s;

static pthread_t g_thread;
static bool g_thread_running;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv;      /* wakes the watcher: stop or reload requested */
static pthread_cond_t g_done_cv; /* the watcher has returned */
static bool g_stop, g_reload_requested, g_done;
/* What the watcher is doing, for the log when shutdown cannot wait for it (NULL: waiting). */
static _Atomic(const char *) g_activity, g_activity_path;

bool jg_watch_add(const struct jg_watch_entry *e) {
    if (g_n == JG_WATCH_MAX) return false;
    g_entries[g_n++] = *e;
    return true;
}

void jg_watch_set_poll(unsigned seconds) {
    g_poll_s = seconds;
}

void jg_watch_doing(const char *what, const char *path) {
    atomic_store(&g_activity_path, path);
    atomic_store(&g_activity, what);
}

bool jg_watch_sleep(long ms) {
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_nsec += ms * 1000000L;
    dl.tv_sec += dl.tv_nsec / 1000000000L;
    dl.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&g_mu);
    while (!g_stop && pthread_cond_timedwait(&g_cv, &g_mu, &dl) != ETIMEDOUT) {
    }
    bool go_on = !g_stop;
    pthread_mutex_unlock(&g_mu);
    return go_on;
}

/* Seconds until the next look: the poll interval, or sooner when an entry is due; -1: none. */
static int64_t next_wait_s(void) {
    int64_t wait_s = g_poll_s ? (int64_t)g_poll_s : -1;
    for (size_t i = 0; i < g_n; i++) {
        int64_t at = g_entries[i].due ? g_entries[i].due() : 0;
        if (at == 0) continue;
        int64_t until = at - (int64_t)time(NULL);
        if (until < 0) until = 0;
        if (wait_s < 0 || until < wait_s) wait_s = until;
    }
    return wait_s;
}

static void *watch_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&g_mu);
    while (!g_stop) {
        if (!g_reload_requested) {
            int64_t wait_s = next_wait_s();
            if (wait_s < 0) {
                pthread_cond_wait(&g_cv, &g_mu);
            } else {
                struct timespec dl;
                clock_gettime(CLOCK_MONOTONIC, &dl);
                dl.tv_sec += (time_t)wait_s;
                while (!g_stop && !g_reload_requested &&
                       pthread_cond_timedwait(&g_cv, &g_mu, &dl) != ETIMEDOUT) {
                }
            }
        }
        if (g_stop) break;
        bool force = g_reload_requested;
        g_reload_requested = false;
        pthread_mutex_unlock(&g_mu);
        for (size_t i = 0; i < g_n; i++) {
            jg_watch_doing("looking for changes", g_entries[i].path); /* stat(2) of its files */
            g_entries[i].check(force);
        }
        jg_watch_doing(NULL, NULL);
        pthread_mutex_lock(&g_mu);
    }
    g_done = true;
    pthread_cond_broadcast(&g_done_cv);
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

bool jg_watch_start(char *err, size_t errlen) {
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&g_cv, &a);
    pthread_cond_init(&g_done_cv, &a);
    pthread_condattr_destroy(&a);
    g_stop = g_done = false;
    int rc = pthread_create(&g_thread, NULL, watch_main, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the certificate watcher: %s", strerror(rc));
        return false;
    }
    g_thread_running = true;
    return true;
}

void jg_watch_request_reload(void) {
    pthread_mutex_lock(&g_mu);
    g_reload_requested = true;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
}

void jg_watch_request_stop(void) {
    if (!g_thread_running) return;
    pthread_mutex_lock(&g_mu);
    g_stop = true;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
}

bool jg_watch_stop(const struct timespec *deadline, const char **doing, const char **path) {
    if (!g_thread_running) return true;
    jg_watch_request_stop();
    pthread_mutex_lock(&g_mu);
    while (!g_done && pthread_cond_timedwait(&g_done_cv, &g_mu, deadline) != ETIMEDOUT) {
    }
    bool done = g_done;
    pthread_mutex_unlock(&g_mu);
    if (!done) { /* still inside a system call or a check: the caller exits without it */
        *doing = atomic_load(&g_activity);
        *path = atomic_load(&g_activity_path);
        if (!*doing) *doing = "finishing";
        if (!*path) *path = g_n ? g_entries[0].path : "";
        return false;
    }
    pthread_join(g_thread, NULL); /* it has returned: this does not wait */
    g_thread_running = false;
    pthread_cond_destroy(&g_cv);
    pthread_cond_destroy(&g_done_cv);
    return true;
}
