/* readfile: regular files only, non-blocking open, bounded read. */
#include "jobguard/readfile.h"

#include "jobguard/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *jg_file_kind(unsigned mode) {
    switch (mode & S_IFMT) {
    case S_IFREG:
        return "a regular file";
    case S_IFDIR:
        return "a directory";
    case S_IFIFO:
        return "a FIFO (named pipe)";
    case S_IFSOCK:
        return "a socket";
    case S_IFCHR:
        return "a character device";
    case S_IFBLK:
        return "a block device";
    default:
        return "not a regular file";
    }
}

static bool refuse_kind(const char *path, const struct stat *st, char *err, size_t n) {
    if (S_ISREG(st->st_mode)) return false;
    jg_format_cut(err, n, "%s is %s, not a regular file", path, jg_file_kind(st->st_mode));
    return true;
}

bool jg_read_regular_file(const char *path, size_t max, jg_buf *out, char *err, size_t n) {
    struct stat st;
    char chunk[8192];
    /* Before open: opening a device can have side effects, opening a socket fails with ENXIO. */
    if (stat(path, &st) == 0 && refuse_kind(path, &st, err, n)) return false;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0 && errno == EWOULDBLOCK) { /* only a lease makes a non-blocking open wait */
        jg_format_cut(err, n, "cannot open %s: another process holds a lease on it (%s)", path,
                      strerror(errno));
        return false;
    }
    if (fd < 0) {
        jg_format_cut(err, n, "cannot open %s: %s", path, strerror(errno));
        return false;
    }
    bool ok = false;
    if (fstat(fd, &st) != 0) { /* the path may have been replaced since stat(2) */
        jg_format_cut(err, n, "cannot stat %s: %s", path, strerror(errno));
        goto out;
    }
    if (refuse_kind(path, &st, err, n)) goto out;
    if ((unsigned long long)st.st_size > max) {
        jg_format_cut(err, n, "%s is larger than %zu bytes", path, max);
        goto out;
    }
    jg_buf_reset(out);
    for (;;) {
        ssize_t r = read(fd, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            jg_format_cut(err, n, "cannot read %s: %s", path, strerror(errno));
            goto out;
        }
        if (r == 0) break;
        if (out->len + (size_t)r > max) { /* grew after fstat(2) */
            jg_format_cut(err, n, "%s is larger than %zu bytes", path, max);
            goto out;
        }
        jg_buf_put(out, chunk, (size_t)r);
    }
    if (out->oom) {
        jg_format_cut(err, n, "cannot read %s: out of memory", path);
        goto out;
    }
    if (out->len == 0) {
        jg_format_cut(err, n, "%s is empty", path);
        goto out;
    }
    ok = true;
out:
    explicit_bzero(chunk, sizeof chunk); /* it may have held private key bytes */
    close(fd);
    return ok;
}

struct jg_file_sig jg_file_sig_of(const char *path) {
    struct jg_file_sig s = {0};
    struct stat st;
    if (stat(path, &st) == 0) {
        s.ok = true;
        s.dev = st.st_dev;
        s.ino = st.st_ino;
        s.size = st.st_size;
        s.mtime = st.st_mtim;
        s.ctime = st.st_ctim;
    }
    return s;
}

bool jg_file_sig_eq(const struct jg_file_sig *a, const struct jg_file_sig *b) {
    return a->ok == b->ok && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
           a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}
