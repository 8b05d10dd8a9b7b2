/* reader: paths, folders and stdin as a stream of JSON documents (include/jobguard/reader.h).
 *
 * JSON is split, not parsed: the splitter finds where each top-level value (or List element)
 * starts and ends (strings, escapes, nesting) and hands on its exact bytes; the request path's
 * decoder validates them. The buffer holds only the value being split, read in 1 MiB chunks, so a
 * List of any length costs the memory of its largest element. YAML goes to yaml.c. */
#include "jobguard/reader.h"

#include "files.h"
#include "jobguard/buf.h"
#include "jobguard/readfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define UTF8_BOM "\xEF\xBB\xBF" /* skipped at the start of a file, as kubectl does */

/* Bytes asked of read(2) at a time: large enough that the syscall cost vanishes against the
 * scan, small enough to stay in L2. */
#define CHUNK ((size_t)1 << 20)

enum format { F_NONE, F_JSON, F_YAML };

struct todo {
    char *path;
    bool found; /* an entry of a folder, not a path given */
};

struct seen {
    dev_t dev;
    ino_t ino;
    char *path; /* NULL: a free slot */
};
/* Where the JSON splitter is between two calls. */
enum jstate { J_TOP, J_ITEMS, J_AFTER_ITEMS, J_DONE };

struct jg_reader {
    /* Paths still to read, as a stack (next on top); folders are replaced by their entries. */
    struct todo *todo;
    size_t ntodo, captodo;
    /* Folders read so far (device and inode, hashed), each walked once. */
    struct seen *seen;
    size_t nseen, capseen;

    /* The current file. */
    int fd;
    char *source;
    bool eof;
    enum format fmt;
    char *buf;
    size_t cap, pos, end; /* buf[pos..end) is read but not yet scanned */
    size_t lc;            /* newlines are counted in buf[0..lc) */
    unsigned line;        /* 1-based line at lc */
    uint64_t base;        /* file offset of buf[0] */
    uint64_t line_start;  /* file offset where line `line` starts */

    /* Offsets in buf the splitter must keep across a refill (SIZE_MAX: none). */
    size_t obj_start; /* a top-level object whose "items" is not yet found */
    size_t val_start; /* the value being yielded */
    size_t tok_start; /* a member name of the top-level object */
    bool dropped;     /* the value outgrew JG_READER_MAX_DOC and is no longer kept */

    enum jstate js;
    size_t doc;
    long item;
    bool item_comma; /* an element was read: ',' or ']' comes next */
    unsigned top_line, top_col;
    jg_yaml_stream *yaml;
    jg_buf ybuf;
};

#define NONE SIZE_MAX

/* ------------------------------------------------------------------ byte search */

/* Plain loops: SSE2 versions of these three and of the YAML and replay string loops were measured
 * and removed. `bench/scan/run.sh -s 200` on a 210 MB List: 138-151 MB/s with them, 115-138 MB/s
 * without, within the run-to-run spread of the same build; the engine's decision is the cost. */

/* Next '"' or '\\' in [p, end), or end. */
static const char *find_quote(const char *p, const char *end) {
    while (p < end && *p != '"' && *p != '\\')
        p++;
    return p;
}

/* Next '"', '{', '}', '[' or ']' in [p, end), or end. */
static const char *find_struct(const char *p, const char *end) {
    for (; p < end; p++) {
        unsigned char f = (unsigned char)*p & 0xDF;
        if (*p == '"' || f == '[' || f == ']') break;
    }
    return p;
}

static size_t count_newlines(const char *p, const char *end) {
    size_t n = 0;
    for (; p < end; p++)
        n += *p == '\n';
    return n;
}

static bool is_ws(char c) {
    return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* ------------------------------------------------------------------ positions */

/* Counts lines up to buf offset `off` (>= every offset counted before). */
static void lines_to(jg_reader *r, size_t off) {
    const char *p = r->buf + r->lc, *end = r->buf + off;
    size_t n = count_newlines(p, end);
    if (n) {
        r->line += (unsigned)n;
        const char *nl = end;
        while (nl[-1] != '\n')
            nl--;
        r->line_start = r->base + (uint64_t)(nl - r->buf);
    }
    r->lc = off;
}

/* Line and 1-based byte column of buf offset `off`. */
static void where(jg_reader *r, size_t off, unsigned *line, unsigned *col) {
    lines_to(r, off);
    *line = r->line;
    *col = (unsigned)(r->base + off - r->line_start + 1);
}

static int fail_at(jg_reader *r, size_t off, char *err, size_t errlen, const char *what) {
    unsigned line, col;
    where(r, off, &line, &col);
    snprintf(err, errlen, "%s:%u:%u: %s", r->source, line, col, what);
    r->js = J_DONE;
    return -1;
}

/* An error at the start of the current value (computed when it was reached: the buffer may have
 * moved since). */
static int fail_top(jg_reader *r, char *err, size_t errlen, const char *what) {
    snprintf(err, errlen, "%s:%u:%u: %s", r->source, r->top_line, r->top_col, what);
    r->js = J_DONE;
    return -1;
}

/* ------------------------------------------------------------------ input */

static size_t keep_from(const jg_reader *r) {
    size_t k = r->pos;
    if (r->obj_start < k) k = r->obj_start;
    if (r->val_start < k) k = r->val_start;
    if (r->tok_start < k) k = r->tok_start;
    return k;
}

/* Reads the next chunk after dropping what no marker needs. Returns the bytes read, 0 at end of
 * input, -1 on a read error or out of memory (errno set). A value that outgrows
 * JG_READER_MAX_DOC is dropped (`dropped`) and scanning goes on, so that the next one can be read.
 */
static long fill(jg_reader *r) {
    if (r->eof) return 0;
    if (r->obj_start != NONE && r->end - r->obj_start > JG_READER_MAX_DOC) {
        r->obj_start = NONE;
        r->dropped = true;
    }
    if (r->val_start != NONE && r->end - r->val_start > JG_READER_MAX_DOC) {
        r->val_start = NONE;
        r->dropped = true;
    }
    size_t k = keep_from(r);
    if (k > 0) {
        if (k > r->lc) lines_to(r, k);
        memmove(r->buf, r->buf + k, r->end - k);
        r->end -= k;
        r->pos -= k;
        r->lc -= k;
        r->base += k;
        if (r->obj_start != NONE) r->obj_start -= k;
        if (r->val_start != NONE) r->val_start -= k;
        if (r->tok_start != NONE) r->tok_start -= k;
    }
    if (r->cap - r->end < CHUNK) {
        size_t cap = r->end + CHUNK;
        char *nb = realloc(r->buf, cap + 1);
        if (!nb) return -1;
        r->buf = nb;
        r->cap = cap;
    }
    for (;;) {
        ssize_t n = read(r->fd, r->buf + r->end, CHUNK);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) r->eof = true;
        r->end += (size_t)n;
        return (long)n;
    }
}

/* Skips white space; false at the end of input (or on a read error: r->eof and errno). */
static int skip_ws(jg_reader *r) {
    for (;;) {
        while (r->pos < r->end && is_ws(r->buf[r->pos]))
            r->pos++;
        if (r->pos < r->end) return 1;
        long n = fill(r);
        if (n <= 0) return (int)n;
    }
}

/* ------------------------------------------------------------------ the JSON splitter */

/* From just past an opening '"' to just past the closing one. 1, 0 at end of input, -1 error. */
static int skip_string(jg_reader *r) {
    for (;;) {
        const char *p = find_quote(r->buf + r->pos, r->buf + r->end);
        r->pos = (size_t)(p - r->buf);
        if (r->pos + 1 < r->end || (r->pos < r->end && *p == '"')) {
            if (*p == '"') {
                r->pos++;
                return 1;
            }
            r->pos += 2; /* the backslash and the byte it escapes */
            continue;
        }
        long n = fill(r);
        if (n <= 0) return (int)n;
    }
}

static bool scalar_end(char c) {
    return is_ws(c) || c == ',' || c == '}' || c == ']' || c == ':' || c == '{' || c == '[' ||
           c == '"';
}

/* Skips the value starting at pos (not white space). 1 done, 0 end of input inside it, -1 error. */
static int skip_value(jg_reader *r) {
    char c = r->buf[r->pos];
    if (c == '"') {
        r->pos++;
        return skip_string(r);
    }
    if (c == '{' || c == '[') {
        size_t depth = 1;
        r->pos++;
        for (;;) {
            const char *p = find_struct(r->buf + r->pos, r->buf + r->end);
            r->pos = (size_t)(p - r->buf);
            if (r->pos == r->end) {
                long n = fill(r);
                if (n <= 0) return (int)n;
                continue;
            }
            r->pos++;
            if (*p == '"') {
                int s = skip_string(r);
                if (s <= 0) return s;
            } else if (*p == '{' || *p == '[') {
                depth++;
            } else if (--depth == 0) {
                return 1;
            }
        }
    }
    for (;;) { /* a number, true, false, null or garbage: up to the next delimiter */
        while (r->pos < r->end && !scalar_end(r->buf[r->pos]))
            r->pos++;
        if (r->pos < r->end) return 1;
        long n = fill(r);
        if (n < 0) return -1;
        if (n == 0) return 1; /* a scalar may end the input */
    }
}

/* Reads one byte at pos after white space; -2 at end of input, -3 on a read error. */
static int peek(jg_reader *r) {
    int s = skip_ws(r);
    if (s < 0) return -3;
    if (s == 0) return -2;
    return (unsigned char)r->buf[r->pos];
}

static int read_failed(jg_reader *r, char *err, size_t errlen) {
    snprintf(err, errlen, "%s: %s", r->source, errno ? strerror(errno) : "read error");
    r->js = J_DONE;
    return -1;
}

/* The value at val_start..pos is complete: hand it on (or report that it was too large). */
static int yield(jg_reader *r, struct jg_doc *d, char *err, size_t errlen) {
    if (r->dropped) {
        r->dropped = false;
        r->val_start = NONE;
        snprintf(err, errlen, "%s:%u:%u: document larger than the %zu MiB limit, skipped",
                 r->source, r->top_line, r->top_col, JG_READER_MAX_DOC >> 20);
        return -1;
    }
    d->json = r->buf + r->val_start;
    d->len = r->pos - r->val_start;
    d->source = r->source;
    d->line = r->top_line;
    d->doc = r->doc;
    d->item = r->js == J_TOP ? -1 : r->item;
    r->val_start = NONE;
    return 1;
}

static const char *unclosed(jg_reader *r) {
    return r->eof ? "unexpected end of JSON input (the value starting here is not closed)"
                  : "read error";
}

/* Skips one member ("name": value) of the top-level object, name at pos. On success pos is past
 * the value and *items tells whether the member was "items" with an array value, pos then just
 * past its '['. Returns 1, or -1 for malformed JSON / end of input (r->bad set), -3 read error. */
static int member(jg_reader *r, bool *items, bool *named_items, const char **bad) {
    r->tok_start = r->pos;
    r->pos++;
    int s = skip_string(r);
    if (s <= 0) {
        *bad = "unexpected end of JSON input (the value starting here is not closed)";
        return s < 0 ? -3 : -1;
    }
    bool is_items = JG_LIT_EQ(r->buf + r->tok_start, r->pos - r->tok_start, "\"items\"");
    *named_items = is_items;
    r->tok_start = NONE;
    int c = peek(r);
    if (c != ':') {
        *bad = c == -3 ? NULL : "invalid JSON: expected ':' after a member name";
        return c == -3 ? -3 : -1;
    }
    r->pos++;
    c = peek(r);
    if (c < 0) {
        *bad =
            c == -3 ? NULL : "unexpected end of JSON input (the value starting here is not closed)";
        return c == -3 ? -3 : -1;
    }
    if (is_items && c == '[') {
        r->pos++;
        *items = true;
        return 1;
    }
    *items = false;
    s = skip_value(r);
    if (s <= 0) {
        *bad =
            s < 0 ? NULL : "unexpected end of JSON input (the value starting here is not closed)";
        return s < 0 ? -3 : -1;
    }
    return 1;
}

static int json_next(jg_reader *r, struct jg_doc *d, char *err, size_t errlen) {
    const char *bad = NULL;
    int c;
    for (;;) {
        switch (r->js) {
        case J_DONE:
            return 0;
        case J_TOP: {
            c = peek(r);
            if (c == -2) {
                r->js = J_DONE;
                return 0;
            }
            if (c == -3) return read_failed(r, err, errlen);
            where(r, r->pos, &r->top_line, &r->top_col);
            if (c == '}' || c == ']' || c == ',' || c == ':') {
                char what[64];
                snprintf(what, sizeof what, "invalid JSON: unexpected '%c'", c);
                return fail_at(r, r->pos, err, errlen, what);
            }
            r->val_start = r->pos;
            r->item = -1;
            if (c != '{') {
                int s = skip_value(r);
                if (s < 0) return read_failed(r, err, errlen);
                if (s == 0) return fail_top(r, err, errlen, unclosed(r));
                int y = yield(r, d, err, errlen);
                r->doc++;
                return y;
            }
            /* An object: a List if a member "items" holds an array (kubectl's rule). Until then
             * keep it whole, as it may be an ordinary object. */
            r->obj_start = r->pos;
            r->val_start = NONE;
            r->pos++;
            bool first = true, items = false;
            for (;;) {
                c = peek(r);
                if (c == -3) return read_failed(r, err, errlen);
                if (c == -2) {
                    r->obj_start = NONE;
                    return fail_top(r, err, errlen, unclosed(r));
                }
                if (c == '}' && first) break;
                if (!first) {
                    if (c == '}') break;
                    if (c != ',') {
                        bad = "invalid JSON: expected ',' or '}' after an object member";
                        break;
                    }
                    r->pos++;
                    c = peek(r);
                    if (c == -3) return read_failed(r, err, errlen);
                }
                if (c != '"') {
                    bad =
                        c == -2
                            ? "unexpected end of JSON input (the value starting here is not closed)"
                            : "invalid JSON: expected a member name (a string)";
                    break;
                }
                first = false;
                bool named_items;
                int s = member(r, &items, &named_items, &bad);
                if (s == -3) return read_failed(r, err, errlen);
                if (s < 0 || items) break;
            }
            if (bad) {
                r->obj_start = NONE;
                r->dropped = false;
                if (r->eof) return fail_top(r, err, errlen, bad);
                return fail_at(r, r->pos, err, errlen, bad);
            }
            if (items) {
                r->obj_start = NONE;
                r->dropped = false;
                r->js = J_ITEMS;
                r->item = 0;
                r->item_comma = false;
                continue;
            }
            /* '}' of an ordinary object */
            r->pos++;
            r->val_start = r->obj_start == NONE ? 0 : r->obj_start;
            r->obj_start = NONE;
            int y = yield(r, d, err, errlen);
            r->doc++;
            return y;
        }
        case J_ITEMS:
            c = peek(r);
            if (c == -3) return read_failed(r, err, errlen);
            if (c == -2)
                return fail_at(r, r->pos, err, errlen,
                               "unexpected end of JSON input (the List's items are not closed)");
            if (c == ']') {
                r->pos++;
                r->js = J_AFTER_ITEMS;
                continue;
            }
            if (r->item_comma) {
                if (c != ',')
                    return fail_at(r, r->pos, err, errlen,
                                   "invalid JSON: expected ',' or ']' after a List item");
                r->pos++;
                c = peek(r);
                if (c == -3) return read_failed(r, err, errlen);
                if (c == -2) continue;
            }
            if (c == ']' || c == ',' || c == '}' || c == ':') {
                char what[64];
                snprintf(what, sizeof what, "invalid JSON: unexpected '%c' in the List's items", c);
                return fail_at(r, r->pos, err, errlen, what);
            }
            where(r, r->pos, &r->top_line, &r->top_col);
            r->val_start = r->pos;
            {
                int s = skip_value(r);
                if (s < 0) return read_failed(r, err, errlen);
                if (s == 0)
                    return fail_top(r, err, errlen,
                                    "unexpected end of JSON input (a List item is not closed)");
            }
            r->item_comma = true;
            {
                int y = yield(r, d, err, errlen);
                r->item++;
                return y;
            }
        case J_AFTER_ITEMS:
            /* The List's other members: skipped. */
            for (;;) {
                c = peek(r);
                if (c == -3) return read_failed(r, err, errlen);
                if (c == '}') {
                    r->pos++;
                    break;
                }
                if (c == ',') {
                    r->pos++;
                    c = peek(r);
                    if (c == -3) return read_failed(r, err, errlen);
                }
                if (c != '"') {
                    return fail_at(r, r->pos, err, errlen,
                                   c == -2 ? "unexpected end of JSON input (the List is not closed)"
                                           : "invalid JSON: expected a member name (a string)");
                }
                /* A second "items": Go's encoding/json (kubectl, the API server) keeps the last
                 * one, and the first one's items were already handed on: refused. */
                unsigned line, col;
                where(r, r->pos, &line, &col);
                bool items = false, named_items = false;
                int s = member(r, &items, &named_items, &bad);
                if (s == -3) return read_failed(r, err, errlen);
                if (s < 0) return fail_at(r, r->pos, err, errlen, bad);
                if (named_items) {
                    r->top_line = line;
                    r->top_col = col;
                    return fail_top(r, err, errlen, JG_READER_SECOND_ITEMS);
                }
            }
            r->doc++;
            r->js = J_TOP;
            continue;
        }
    }
}

/* ------------------------------------------------------------------ files and folders */

static bool push(jg_reader *r, const char *path, bool found) {
    if (r->ntodo == r->captodo) {
        size_t cap = r->captodo ? r->captodo * 2 : 8;
        struct todo *t = realloc(r->todo, cap * sizeof *t);
        if (!t) return false;
        r->todo = t;
        r->captodo = cap;
    }
    char *s = strdup(path);
    if (!s) return false;
    r->todo[r->ntodo++] = (struct todo){s, found};
    return true;
}

jg_reader *jg_reader_open(const char *const *paths, size_t n) {
    jg_reader *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->fd = -1;
    r->obj_start = r->val_start = r->tok_start = NONE;
    for (size_t i = n; i-- > 0;)
        if (!push(r, paths[i], false)) {
            jg_reader_close(r);
            return NULL;
        }
    return r;
}

static void close_file(jg_reader *r) {
    if (r->yaml) jg_yaml_stream_close(r->yaml);
    r->yaml = NULL;
    if (r->fd > 0) close(r->fd);
    r->fd = -1;
    free(r->source);
    r->source = NULL;
    r->fmt = F_NONE;
}

void jg_reader_close(jg_reader *r) {
    if (!r) return;
    close_file(r);
    for (size_t i = 0; i < r->ntodo; i++)
        free(r->todo[i].path);
    free(r->todo);
    for (size_t i = 0; i < r->capseen; i++)
        free(r->seen[i].path);
    free(r->seen);
    free(r->buf);
    jg_buf_free(&r->ybuf);
    free(r);
}

/* ------------------------------------------------------------------ folders read once */

static size_t seen_slot(const jg_reader *r, dev_t dev, ino_t ino) {
    uint64_t h = ((uint64_t)ino * 0x9E3779B97F4A7C15u) ^ (uint64_t)dev;
    size_t i = (size_t)(h ^ (h >> 29)) & (r->capseen - 1);
    while (r->seen[i].path && !(r->seen[i].dev == dev && r->seen[i].ino == ino))
        i = (i + 1) & (r->capseen - 1);
    return i;
}

/* The path under which the folder (dev, ino) was read, or NULL (then it is recorded as `path`);
 * *oom when it could not be recorded. */
static const char *seen_before(jg_reader *r, dev_t dev, ino_t ino, const char *path, bool *oom) {
    if (2 * (r->nseen + 1) > r->capseen) {
        size_t cap = r->capseen ? r->capseen * 2 : 64;
        struct seen *old = r->seen;
        size_t oldcap = r->capseen;
        r->seen = calloc(cap, sizeof *r->seen);
        if (!r->seen) {
            r->seen = old;
            *oom = true;
            return NULL;
        }
        r->capseen = cap;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].path) r->seen[seen_slot(r, old[i].dev, old[i].ino)] = old[i];
        free(old);
    }
    size_t i = seen_slot(r, dev, ino);
    if (r->seen[i].path) return r->seen[i].path;
    char *c = strdup(path);
    if (!c) {
        *oom = true;
        return NULL;
    }
    r->seen[i] = (struct seen){dev, ino, c};
    r->nseen++;
    return NULL;
}

/* Whether folder `a` holds `b` (b is a/..., a without its trailing slashes). */
static bool holds(const char *a, const char *b) {
    size_t n = strlen(a);
    while (n > 0 && a[n - 1] == '/')
        n--;
    return strncmp(a, b, n) == 0 && b[n] == '/';
}

static bool wanted(const char *name) {
    size_t n = strlen(name);
    if (name[0] == '.') return false; /* hidden, and Kubernetes volumes' ..data links */
    return (n > 5 && strcmp(name + n - 5, ".json") == 0) ||
           (n > 5 && strcmp(name + n - 5, ".yaml") == 0) ||
           (n > 4 && strcmp(name + n - 4, ".yml") == 0);
}

static int byname(const struct dirent **a, const struct dirent **b) {
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* Replaces a folder by its entries (files with a manifest extension, and subfolders), in byte
 * order of their names. An entry that cannot be looked at (no search permission, a dangling
 * symlink, a symlink loop) is kept, so that opening it reports why. */
static int expand(jg_reader *r, const char *dir, const struct stat *st, char *err, size_t errlen) {
    bool oom = false;
    const char *before = seen_before(r, st->st_dev, st->st_ino, dir, &oom);
    if (oom) {
        snprintf(err, errlen, "%s: out of memory", dir);
        return -1;
    }
    if (before) {
        if (holds(before, dir))
            snprintf(err, errlen,
                     "%s: a symbolic link loop (the folder %s, which holds it), not read again",
                     dir, before);
        else
            snprintf(err, errlen, "%s: the same folder as %s, already read; not read again", dir,
                     before);
        return -1;
    }
    struct dirent **names;
    int n = scandir(dir, &names, NULL, byname);
    if (n < 0) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    size_t dl = strlen(dir);
    bool slash = dl > 0 && dir[dl - 1] == '/';
    int rc = 0;
    for (int i = n; i-- > 0;) {
        const char *name = names[i]->d_name;
        if (rc == 0 && name[0] != '.') {
            size_t len = dl + 1 + strlen(name) + 1;
            char *p = malloc(len);
            if (!p) {
                rc = -1;
            } else {
                snprintf(p, len, "%s%s%s", dir, slash ? "" : "/", name);
                struct stat est;
                bool take = stat(p, &est) != 0 || S_ISDIR(est.st_mode) || wanted(name);
                if (take && !push(r, p, true)) rc = -1;
                free(p);
            }
        }
        free(names[i]);
    }
    free(names);
    if (rc) snprintf(err, errlen, "%s: out of memory", dir);
    return rc;
}

static int open_failed(jg_reader *r, char *err, size_t errlen) {
    read_failed(r, err, errlen);
    close_file(r);
    return -1;
}

/* Why stat(2) of path failed (errno set by it). */
static void stat_failed(const char *path, char *err, size_t errlen) {
    int e = errno;
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        snprintf(err, errlen, "%s: a symbolic link that cannot be followed: %s", path, strerror(e));
    else
        snprintf(err, errlen, "%s: %s", path, strerror(e));
}

/* Opens a file without blocking: a FIFO, socket or device found in a folder is refused before it
 * is opened (a FIFO without a writer would block open(2) for ever); a path given may be a FIFO
 * (`<(kubectl get ...)`), read as a pipe. Returns the descriptor, or -1 with err set. */
static int open_input(const char *path, const struct stat *st, bool found, char *err,
                      size_t errlen) {
    bool pipe_ok = !found && S_ISFIFO(st->st_mode);
    if (!S_ISREG(st->st_mode) && !pipe_ok) {
        snprintf(err, errlen, "%s is %s, not a regular file", path, jg_file_kind(st->st_mode));
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat now;
    if (fstat(fd, &now) != 0 || (!S_ISREG(now.st_mode) && !(pipe_ok && S_ISFIFO(now.st_mode)))) {
        snprintf(err, errlen, "%s: replaced while being opened", path);
        close(fd);
        return -1;
    }
    if (pipe_ok) { /* read as a pipe: wait for its writer's bytes */
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
    }
    return fd;
}

/* Opens the next path; 1 opened, 0 none left, -1 error (reported, go on). */
static int next_file(jg_reader *r, char *err, size_t errlen) {
    for (;;) {
        if (r->ntodo == 0) return 0;
        struct todo t = r->todo[--r->ntodo];
        char *path = t.path;
        if (strcmp(path, "-") == 0 && !t.found) {
            r->fd = 0;
        } else {
            struct stat st;
            if (stat(path, &st) != 0) {
                stat_failed(path, err, errlen);
                free(path);
                return -1;
            }
            if (S_ISDIR(st.st_mode)) {
                int e = expand(r, path, &st, err, errlen);
                free(path);
                if (e) return -1;
                continue;
            }
            r->fd = open_input(path, &st, t.found, err, errlen);
            if (r->fd < 0) {
                free(path);
                return -1;
            }
        }
        r->source = path;
        r->eof = false;
        r->pos = r->end = r->lc = 0;
        r->base = r->line_start = 0;
        r->line = 1;
        r->doc = 0;
        r->obj_start = r->val_start = r->tok_start = NONE;
        r->dropped = false;
        r->js = J_TOP;
        r->tok_start = 0; /* keep the first bytes: YAML is handed them from the start */
        /* The format: JSON when the first byte after white space (and a UTF-8 byte order mark)
         * is '{' or '['. */
        int c = peek(r);
        if (c == -3) return open_failed(r, err, errlen);
        if (JG_LIT_PREFIX(r->buf + r->pos, r->end - r->pos, UTF8_BOM)) {
            r->pos += JG_LIT_LEN(UTF8_BOM);
            c = peek(r);
            if (c == -3) return open_failed(r, err, errlen);
        }
        r->tok_start = NONE;
        if (c == '{' || c == '[' || c == -2) {
            r->fmt = F_JSON;
        } else {
            r->fmt = F_YAML;
            r->yaml = jg_yaml_stream_open(r->fd, r->buf, r->end, r->source);
            if (!r->yaml) {
                snprintf(err, errlen, "%s: out of memory", r->source);
                close_file(r);
                return -1;
            }
        }
        return 1;
    }
}

int jg_reader_next(jg_reader *r, struct jg_doc *d, char *err, size_t errlen) {
    err[0] = '\0';
    for (;;) {
        if (r->fmt == F_NONE) {
            int o = next_file(r, err, errlen);
            if (o <= 0) return o;
            if (r->fmt == F_NONE) continue;
        }
        int s;
        if (r->fmt == F_JSON) {
            s = json_next(r, d, err, errlen);
        } else {
            s = jg_yaml_stream_next(r->yaml, &r->ybuf, d, err, errlen);
        }
        if (s != 0) return s;
        close_file(r);
    }
}
