/* jobguard convert: what the reader yields from files, folders and stdin, one JSON document per
 * line (docs/input.md). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "jobguard/buf.h"
#include "jobguard/reader.h"

static void usage(FILE *f) {
    fprintf(f, "Usage: jobguard convert [--where] PATH...|-\n"
               "\n"
               "Prints every document jobguard reads from the files, folders (*.json, *.yaml,\n"
               "*.yml, in name order) or standard input (-) as one line of compact JSON: YAML\n"
               "converted as kubectl converts it, each item of a List on its own line.\n"
               "--where: each line starts with SOURCE:LINE: (where the document or item starts).\n"
               "Exit status: 0, or 2 when some input could not be read (each problem is printed\n"
               "on standard error as SOURCE:LINE:COLUMN: what; reading goes on).\n"
               "The formats and the YAML conversion: docs/input.md.\n");
}

/* JSON text without the white space between tokens (strings kept byte for byte). Written straight
 * into out's room: the result is never longer than s. */
static void put_compact(jg_buf *out, const char *s, size_t n) {
    if (!jg_buf_reserve(out, n)) return;
    char *o = out->data + out->len;
    bool in = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in) {
            if (c == '\\' && i + 1 < n) {
                *o++ = c;
                c = s[++i];
            } else if (c == '"') {
                in = false;
            }
        } else if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
            continue;
        } else if (c == '"') {
            in = true;
        }
        *o++ = c;
    }
    out->len = (size_t)(o - out->data);
    out->data[out->len] = '\0';
}

int jg_cmd_convert(int argc, char **argv) {
    bool where = false;
    int first = 1;
    for (; first < argc; first++) {
        const char *a = argv[first];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--where") == 0) {
            where = true;
        } else if (strcmp(a, "--") == 0) {
            first++;
            break;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "jobguard convert: unknown option %s\n\n", a);
            usage(stderr);
            return 2;
        } else {
            break;
        }
    }
    if (first >= argc) {
        usage(stderr);
        return 2;
    }
    jg_reader *r = jg_reader_open((const char *const *)argv + first, (size_t)(argc - first));
    if (!r) {
        fprintf(stderr, "jobguard convert: out of memory\n");
        return 2;
    }
    int rc = 0;
    jg_buf line = JG_BUF_INIT;
    char err[1024];
    struct jg_doc d;
    for (;;) {
        int s = jg_reader_next(r, &d, err, sizeof err);
        if (s == 0) break;
        if (s < 0) {
            fflush(stdout);
            fprintf(stderr, "jobguard convert: %s\n", err);
            rc = 2;
            continue;
        }
        jg_buf_reset(&line);
        if (where) jg_buf_printf(&line, "%s:%u: ", d.source, d.line);
        put_compact(&line, d.json, d.len);
        jg_buf_putc(&line, '\n');
        if (line.oom) {
            fprintf(stderr, "jobguard convert: out of memory\n");
            rc = 2;
            break;
        }
        fwrite(line.data, 1, line.len, stdout);
    }
    jg_buf_free(&line);
    jg_reader_close(r);
    if (fflush(stdout) != 0) rc = 2;
    return rc;
}
