/* policywatch: reference-counted policy snapshots, swapped on reload. */
#include "policywatch.h"

#include "jobguard/readfile.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobguard/server/log.h"
#include "metrics.h"

struct snap {
    struct jg_snapshot pub; /* first: handed out as a jg_snapshot */
    atomic_uint refs;       /* one for being current, one per request holding it */
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct snap *g_cur;       /* under g_mu */
static char *g_path;             /* NULL: no policy file, nothing to watch */
static struct jg_config g_base;  /* the flags' configuration, before any policy */
static struct jg_file_sig g_sig; /* watcher thread only */
static char g_failed_err[1024];  /* the last refusal, reported once unless forced */

static struct snap *snap_new(struct jg_policy *p) {
    struct snap *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->pub.cfg = g_base;
    s->pub.policy = p;
    jg_policy_apply(p, &s->pub.cfg);
    atomic_init(&s->refs, 1);
    return s;
}

static void snap_unref(struct snap *s) {
    if (s && atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1) {
        jg_policy_free(s->pub.policy);
        free(s);
    }
}

bool jg_policy_watch_init(const char *path, const struct jg_config *base, char *err, size_t n) {
    g_base = *base;
    struct jg_policy *p = NULL;
    if (path && path[0]) {
        g_sig = jg_file_sig_of(path);
        if (!(p = jg_policy_load_file(path, err, n))) return false;
        if (!(g_path = strdup(path))) {
            jg_policy_free(p);
            snprintf(err, n, "out of memory");
            return false;
        }
    }
    struct snap *s = snap_new(p);
    if (!s) {
        jg_policy_free(p);
        snprintf(err, n, "out of memory");
        return false;
    }
    g_cur = s;
    jg_metrics_policy_serving(p ? p->sha256 : "");
    struct jg_log l;
    if (p && jg_log_begin(&l, JG_LOG_INFO, "policy loaded")) {
        jg_log_str(&l, "event", "policy");
        jg_log_str(&l, "policy_file", g_path);
        jg_log_str(&l, "sha256", p->sha256);
        jg_log_uint(&l, "targets", p->n_targets);
        jg_log_uint(&l, "controllers", p->n_controllers);
        jg_log_end(&l);
    }
    return true;
}

const struct jg_snapshot *jg_snapshot_acquire(void) {
    pthread_mutex_lock(&g_mu);
    struct snap *s = g_cur;
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    pthread_mutex_unlock(&g_mu);
    return &s->pub;
}

void jg_snapshot_release(const struct jg_snapshot *s) {
    snap_unref((struct snap *)(uintptr_t)s);
}

static void log_refused(const char *err, const char *serving) {
    struct jg_log l;
    if (jg_log_begin(&l, JG_LOG_ERROR, "policy reload rejected, keeping the current policy")) {
        jg_log_str(&l, "event", "policy");
        jg_log_str(&l, "policy_file", g_path);
        jg_log_str(&l, "error", err);
        jg_log_str(&l, "serving_sha256", serving);
        jg_log_end(&l);
    }
}

/* A file that changed without a new inode at its path was written in place, and may still be
 * being written. JSON is safe: a cut object is never valid. YAML is not: a prefix cut at a line
 * boundary is a valid policy with defaults for the rest (allowUnlistedControllers: true), whatever
 * pause the writer makes between two parts. So YAML is loaded only from a new inode (renamed over
 * the path, or a ConfigMap's ..data swapped) or on SIGHUP, which says the writer is done. */
static bool written_in_place(const struct jg_file_sig *now, const struct jg_file_sig *before) {
    return now->ok && before->ok && now->dev == before->dev && now->ino == before->ino;
}

bool jg_policy_check_reload(bool force) {
    if (!g_path) return false;
    struct jg_file_sig s = jg_file_sig_of(g_path);
    if (!force && jg_file_sig_eq(&s, &g_sig)) return false;
    bool in_place = written_in_place(&s, &g_sig);
    g_sig = s;
    const char *serving = g_cur->pub.policy->sha256; /* only this thread swaps g_cur */
    char err[1024];
    struct jg_policy *p = jg_policy_load_file(g_path, err, sizeof err);
    if (p && p->yaml && in_place && !force && strcmp(p->sha256, serving) != 0) {
        jg_policy_free(p);
        p = NULL;
        snprintf(err, sizeof err,
                 "%s: a YAML policy rewritten in place is not loaded (a YAML file cut at a line "
                 "is still a valid policy): rename a new file over it, or send SIGHUP once it is "
                 "written",
                 g_path);
    }
    if (p && strcmp(p->sha256, serving) == 0) { /* touched or re-linked, same bytes */
        jg_policy_free(p);
        g_failed_err[0] = '\0';
        jg_metrics_policy_file_refused(false);
        jg_log_msg(JG_LOG_DEBUG, "policy file touched, content unchanged");
        return true;
    }
    if (!p) {
        /* The same refusal is reported once, not at every poll (an editor may touch the file
         * repeatedly); SIGHUP reports it again. */
        if (!force && strcmp(err, g_failed_err) == 0) return true;
        snprintf(g_failed_err, sizeof g_failed_err, "%s", err);
        jg_metrics_policy_file_refused(true);
        jg_metrics_policy_reload(false);
        log_refused(err, serving);
        return true;
    }
    struct snap *n = snap_new(p);
    if (!n) {
        jg_policy_free(p);
        jg_metrics_policy_file_refused(true);
        jg_metrics_policy_reload(false);
        log_refused("out of memory", serving);
        return true;
    }
    pthread_mutex_lock(&g_mu);
    struct snap *old = g_cur;
    g_cur = n;
    pthread_mutex_unlock(&g_mu);
    jg_metrics_policy_serving(p->sha256);
    jg_metrics_policy_file_refused(false);
    jg_metrics_policy_reload(true);
    g_failed_err[0] = '\0';
    struct jg_log l;
    if (jg_log_begin(&l, JG_LOG_INFO, "policy reloaded")) {
        jg_log_str(&l, "event", "policy");
        jg_log_str(&l, "policy_file", g_path);
        jg_log_str(&l, "sha256", p->sha256);
        jg_log_str(&l, "previous_sha256", old->pub.policy->sha256);
        jg_log_end(&l);
    }
    snap_unref(old);
    return true;
}

void jg_policy_watch_cleanup(void) {
    pthread_mutex_lock(&g_mu);
    struct snap *s = g_cur;
    g_cur = NULL;
    pthread_mutex_unlock(&g_mu);
    snap_unref(s);
    free(g_path);
    g_path = NULL;
}
