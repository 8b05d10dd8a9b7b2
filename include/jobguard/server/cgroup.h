/* cgroup: the memory limit and CPU quota of the container jobguard runs in, read from the cgroup
 * files the kernel shows it (cgroup v2, or v1 where a v1 hierarchy holds the controller, as on
 * hybrid hosts). The serve command derives its memory budget and its default thread count from
 * them (docs/memory.md). Nothing here changes a cgroup. */
#ifndef JOBGUARD_SERVER_CGROUP_H
#define JOBGUARD_SERVER_CGROUP_H

#include <stdint.h>

/* Deepest cgroup path followed up towards its hierarchy's root. */
#define JG_CGROUP_MAX_LEVELS 64

struct jg_cgroup_limits {
    uint64_t memory_bytes; /* the lowest limit along the path; 0: none found */
    char memory_file[512]; /* the file it was read from ("" for none) */
    unsigned cpus;         /* the lowest CPU quota along the path, rounded up; 0: none */
    char cpu_file[512];
};

/* Reads the limits of the calling process. `root` is prepended to every path ("" on a real
 * system; a folder laid out as /proc/self and /sys/fs/cgroup are in tests). Missing or
 * unreadable files mean "no limit"; never fails. */
void jg_cgroup_read(const char *root, struct jg_cgroup_limits *out);

#endif
