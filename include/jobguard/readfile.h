/* readfile: reads a file the server is configured with (certificate, key, client CA bundle,
 * policy) so that nothing can block the reading thread: a FIFO, a device, a socket or a
 * directory at that path is refused with a message naming what it is, the open is non-blocking
 * (a FIFO without a writer or a file under a lease would otherwise block open(2) indefinitely),
 * and the read stops at a size limit. */
#ifndef JOBGUARD_READFILE_H
#define JOBGUARD_READFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "jobguard/buf.h"

/* Replaces out's content with the file at path (symlinks followed). Returns false with a precise
 * reason in err: cannot open (errno text; a lease held by another process is named), not a
 * regular file (and what it is), larger than max bytes, read error, empty. */
bool jg_read_regular_file(const char *path, size_t max, jg_buf *out, char *err, size_t errlen);

/* What a watched file looked like (stat(2), symlinks followed): any difference means "read it
 * again". Kubernetes Secret and ConfigMap volumes swap a `..data` symlink, so the path resolves
 * to a new inode. The change time is in it because a rewrite in place may keep the size and set
 * the modification time back (`cp -p`, `rsync -t --inplace`, `tar x`); no one can set the change
 * time back. ok=false: stat failed. */
struct jg_file_sig {
    bool ok;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
};
struct jg_file_sig jg_file_sig_of(const char *path);
bool jg_file_sig_eq(const struct jg_file_sig *a, const struct jg_file_sig *b);

/* "a FIFO (named pipe)", "a directory", ... for a st_mode; "a regular file" for S_IFREG. */
const char *jg_file_kind(unsigned mode);

#endif
