/* pages: see pages.h. */
#include "pages.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct span {
    uintptr_t start, end;
    size_t rss_kib, anon_kib;
    bool match, readonly;
};

enum { MAX_SPANS = 32 }; /* a library has 4 or 5 mappings */

/* Whether the path's last component starts with name. */
static bool names_library(const char *path, const char *name) {
    const char *slash = strrchr(path, '/');
    return slash && strncmp(slash + 1, name, strlen(name)) == 0;
}

size_t jg_pages_release_library(const char *name) {
    FILE *f = fopen("/proc/self/smaps", "re");
    if (!f) return 0;
    struct span spans[MAX_SPANS];
    size_t n = 0;
    struct span cur = {0}; /* the mapping being read; match is false before the first */
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        char perms[8];
        int off = 0;
        /* a mapping's first line: "start-end perms offset dev inode [path]" */
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &a, &b, perms, &off) == 3 && off > 0) {
            if (cur.match && n < MAX_SPANS) spans[n++] = cur;
            char *path = line + off;
            path[strcspn(path, "\n")] = '\0';
            cur = (struct span){a, b, 0, 0, names_library(path, name), perms[1] != 'w'};
            continue;
        }
        size_t kib;
        if (sscanf(line, "Rss: %zu kB", &kib) == 1)
            cur.rss_kib = kib;
        else if (sscanf(line, "Anonymous: %zu kB", &kib) == 1)
            cur.anon_kib = kib;
    }
    if (cur.match && n < MAX_SPANS) spans[n++] = cur;
    fclose(f);
    size_t released = 0;
    for (size_t i = 0; i < n; i++) {
        const struct span *s = &spans[i];
        if (!s->readonly || s->anon_kib != 0 || s->rss_kib == 0) continue;
        if (madvise((void *)s->start, s->end - s->start, MADV_DONTNEED) == 0)
            released += s->rss_kib * 1024;
    }
    return released;
}
