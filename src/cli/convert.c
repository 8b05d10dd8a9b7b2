/* jobguard convert: what the reader yields from files, folders and stdin, one JSON document per
 * line (docs/input.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jobguard/buf.h"
#include "jobguard/reader.h"

#include "flags.h"

enum { F_WHERE, F_COUNT };

static const struct jg_flag flags[F_COUNT] = {
    [F_WHERE] = {"where", 0, NULL,
                 "each line starts with SOURCE:LINE: (where the document or\n"
                 "item starts)"},
};

static const struct jg_flags spec = {
    .cmd = "convert",
    .head = "Usage: jobguard convert [--where] PATH...|-\n"
            "\n"
            "Prints every document jobguard reads from the files, folders (*.json, *.yaml,\n"
            "*.yml, in name order) or standard input (-) as one line of compact JSON: YAML\n"
            "converted as kubectl converts it, each item of a List on its own line.\n"
            "\n"
            "Options:\n",
    .tail = "\n"
            "Exit status: 0, or 2 when some input could not be read (each problem is printed\n"
            "on standard error as SOURCE:LINE:COLUMN: what; reading goes on).\n"
            "The formats and the YAML conversion: docs/input.md.\n",
    .flag = flags,
    .n = F_COUNT,
    .indent = 14,
};

int jg_cmd_convert(int argc, char **argv) {
    bool where = false;
    const char **paths = calloc((size_t)argc + 1, sizeof *paths);
    size_t n_paths = 0;
    if (!paths) {
        fprintf(stderr, "jobguard convert: out of memory\n");
        return 2;
    }
    struct jg_args it;
    jg_args_init(&it, &spec, argc, argv);
    const char *v;
    for (int f; (f = jg_args_next(&it, &v)) != JG_ARGS_END;) {
        if (f == JG_ARGS_STOP) {
            free(paths);
            return it.status;
        }
        if (f == JG_ARGS_OPERAND)
            paths[n_paths++] = v;
        else
            where = true; /* F_WHERE */
    }
    if (!n_paths) {
        fprintf(stderr, "jobguard convert: no input: give files, folders or - for stdin\n");
        jg_flags_usage(&spec, stderr);
        free(paths);
        return 2;
    }
    jg_reader *r = jg_reader_open(paths, n_paths);
    free(paths); /* the reader keeps copies */
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
        jg_cli_json_compact(&line, d.json, d.len);
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
