/* cgroup: the container's memory limit and CPU quota (include/jobguard/server/cgroup.h).
 *
 * Where a controller lives: /proc/self/mountinfo lists the cgroup mounts (fstype "cgroup" with the
 * controller among its super options for v1, "cgroup2" for v2); /proc/self/cgroup gives the
 * process's path in each hierarchy ("4:memory:/kubepods/..." for v1, "0::/..." for v2). The
 * process's folder is the mount point plus that path less the mount's own root (a container
 * without a cgroup namespace sees its parent's paths, with one it sees "/"). A v1 hierarchy that
 * holds the controller wins over v2, as in runc and the Go and Java runtimes: on a hybrid host
 * the v2 mount has no memory controller and its folders no memory.max.
 *
 * A limit set on any ancestor applies too, so every level from the process's folder up to the
 * mount point is read and the lowest limit wins. */
#include "jobguard/server/cgroup.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* v1 shows "no limit" as LONG_MAX rounded down to a page (9223372036854771712); anything at or
 * above 2^62 bytes is no limit. */
#define V1_UNLIMITED (UINT64_C(1) << 62)

enum { V1, V2, N_VERSIONS };

struct mount {
    char root[512];  /* the mount's root inside its hierarchy */
    char point[512]; /* where it is mounted, with `root` prepended */
    bool found;
};

/* Reads a small pseudo-file into buf (NUL-terminated). */
static bool read_small(const char *path, char *buf, size_t n) {
    FILE *f = fopen(path, "re");
    if (!f) return false;
    size_t got = fread(buf, 1, n - 1, f);
    fclose(f);
    buf[got] = '\0';
    return got > 0;
}

/* A decimal number followed by nothing but white space. */
static bool parse_u64(const char *s, uint64_t *out) {
    uint64_t v = 0;
    if (*s < '0' || *s > '9') return false;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    while (*s == ' ' || *s == '\n' || *s == '\t')
        s++;
    *out = v;
    return *s == '\0';
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s) {
    char *w = s;
    for (char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

/* Whether comma-separated `list` holds `word`. */
static bool has_word(const char *list, const char *word) {
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0) return true;
        p = comma ? comma + 1 : NULL;
    }
    return false;
}

/* The mounts of the v1 hierarchy holding `controller` and of v2. */
static void find_mounts(const char *root, const char *controller, struct mount m[N_VERSIONS]) {
    char path[600];
    snprintf(path, sizeof path, "%s/proc/self/mountinfo", root);
    FILE *f = fopen(path, "re");
    if (!f) return;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        /* ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
        char *sep = strstr(line, " - ");
        if (!sep) continue;
        *sep = '\0';
        char mroot[512], point[512], fstype[64], source[256], super[1024] = "";
        if (sscanf(line, "%*s %*s %*s %511s %511s", mroot, point) != 2) continue;
        if (sscanf(sep + 3, "%63s %255s %1023s", fstype, source, super) < 2) continue;
        int v;
        if (strcmp(fstype, "cgroup2") == 0)
            v = V2;
        else if (strcmp(fstype, "cgroup") == 0 && has_word(super, controller))
            v = V1;
        else
            continue;
        if (m[v].found) continue; /* the first mount of a hierarchy */
        unescape(mroot);
        unescape(point);
        snprintf(m[v].root, sizeof m[v].root, "%s", mroot);
        snprintf(m[v].point, sizeof m[v].point, "%s%s", root, point);
        m[v].found = true;
    }
    fclose(f);
}

/* The process's path in the v1 hierarchy of `controller` or in v2, from /proc/self/cgroup. */
static bool process_path(const char *root, int version, const char *controller, char *out,
                         size_t n) {
    char path[600];
    snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
    FILE *f = fopen(path, "re");
    if (!f) return false;
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c1 = *c2 = '\0';
        bool v2 = strcmp(line, "0") == 0 && c1[1] == '\0';
        if (version == V2 ? v2 : (!v2 && has_word(c1 + 1, controller))) {
            snprintf(out, n, "%s", c2 + 1);
            found = true;
        }
    }
    fclose(f);
    return found;
}

/* Calls `visit` with the process's folder and each ancestor up to the mount point. */
typedef void visit_fn(const char *dir, void *ctx);
static void walk(const char *root, int version, const char *controller, const struct mount *m,
                 visit_fn *visit, void *ctx) {
    char cg[1024];
    if (!m->found || !process_path(root, version, controller, cg, sizeof cg)) return;
    /* the path below the mount's root; a path outside it (another namespace) is the mount point */
    const char *rel = cg;
    size_t rl = strlen(m->root);
    if (strcmp(m->root, "/") != 0) {
        if (strncmp(cg, m->root, rl) == 0 && (cg[rl] == '/' || cg[rl] == '\0'))
            rel = cg + rl;
        else
            rel = "";
    }
    char dir[1600];
    snprintf(dir, sizeof dir, "%s%s", m->point, rel);
    size_t base = strlen(m->point);
    for (int level = 0; level < JG_CGROUP_MAX_LEVELS; level++) {
        size_t len = strlen(dir);
        while (len > base && dir[len - 1] == '/')
            dir[--len] = '\0';
        visit(dir, ctx);
        if (len <= base) break;
        char *slash = strrchr(dir + base, '/');
        if (!slash) break;
        *slash = '\0';
    }
}

/* What a walk looks for: the lowest limit seen and its file. */
struct limit_walk {
    int version;
    uint64_t best;
    char file[512];
};

/* Keeps `v` (read from `path`) when it is the lowest so far. */
static void note_limit(struct limit_walk *w, uint64_t v, const char *path) {
    if (v == 0 || (w->best && v >= w->best)) return;
    if (snprintf(w->file, sizeof w->file, "%s", path) >= (int)sizeof w->file) return;
    w->best = v;
}

static void visit_memory(const char *dir, void *ctx) {
    struct limit_walk *w = ctx;
    char path[1700], buf[64];
    snprintf(path, sizeof path, "%s/%s", dir,
             w->version == V2 ? "memory.max" : "memory.limit_in_bytes");
    uint64_t v;
    if (!read_small(path, buf, sizeof buf) || !parse_u64(buf, &v)) return; /* "max", absent */
    if (w->version == V1 && v >= V1_UNLIMITED) return;
    note_limit(w, v, path);
}

/* CPUs: the quota over its period, rounded up. */
static void note_quota(struct limit_walk *w, uint64_t quota, uint64_t period, const char *path) {
    if (quota && period && quota / period < (UINT64_C(1) << 20))
        note_limit(w, (quota + period - 1) / period, path);
}

static void visit_cpu(const char *dir, void *ctx) {
    struct limit_walk *w = ctx;
    char path[1700], buf[128];
    if (w->version == V2) { /* cpu.max: "QUOTA PERIOD" or "max PERIOD" */
        snprintf(path, sizeof path, "%s/cpu.max", dir);
        if (!read_small(path, buf, sizeof buf)) return;
        char *sp = strchr(buf, ' ');
        if (!sp) return;
        *sp = '\0';
        uint64_t quota, period;
        if (parse_u64(buf, &quota) && parse_u64(sp + 1, &period))
            note_quota(w, quota, period, path);
        return;
    }
    char qpath[1700];
    snprintf(qpath, sizeof qpath, "%s/cpu.cfs_quota_us", dir); /* -1: none */
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
    uint64_t quota, period;
    if (!read_small(qpath, buf, sizeof buf) || !parse_u64(buf, &quota)) return;
    if (!read_small(path, buf, sizeof buf) || !parse_u64(buf, &period)) return;
    note_quota(w, quota, period, qpath);
}

/* The lowest limit of `controller` along the process's path, in the v1 hierarchy that holds it
 * or else in v2. */
static struct limit_walk read_limit(const char *root, const char *controller, visit_fn *visit) {
    struct mount m[N_VERSIONS] = {0};
    find_mounts(root, controller, m);
    struct limit_walk w = {.version = m[V1].found ? V1 : V2};
    walk(root, w.version, controller, &m[w.version], visit, &w);
    return w;
}

void jg_cgroup_read(const char *root, struct jg_cgroup_limits *out) {
    memset(out, 0, sizeof *out);
    if (!root) root = "";
    struct limit_walk mem = read_limit(root, "memory", visit_memory);
    out->memory_bytes = mem.best;
    snprintf(out->memory_file, sizeof out->memory_file, "%s", mem.file);
    struct limit_walk cpu = read_limit(root, "cpu", visit_cpu);
    out->cpus = (unsigned)cpu.best;
    snprintf(out->cpu_file, sizeof out->cpu_file, "%s", cpu.file);
}
