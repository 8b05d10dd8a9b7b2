/* flags: argv by a command's flag table, and the usage text from the same table (flags.h). */
#include "flags.h"

#include <ctype.h>
#include <string.h>

void jg_args_init(struct jg_args *it, const struct jg_flags *spec, int argc, char **argv) {
    *it = (struct jg_args){.spec = spec, .argc = argc, .i = 1, .argv = argv};
}

static int find_long(const struct jg_flags *s, const char *name, size_t n) {
    for (int f = 0; f < s->n; f++)
        if (strlen(s->flag[f].name) == n && memcmp(s->flag[f].name, name, n) == 0) return f;
    return -1;
}

static int find_short(const struct jg_flags *s, char c) {
    for (int f = 0; f < s->n; f++)
        if (s->flag[f].short_name && s->flag[f].short_name == c) return f;
    return -1;
}

int jg_args_next(struct jg_args *it, const char **value) {
    const struct jg_flags *s = it->spec;
    *value = NULL;
    if (it->i >= it->argc) return JG_ARGS_END;
    const char *a = it->argv[it->i++];
    if (it->operands_only || a[0] != '-' || a[1] == '\0') {
        if (s->no_operands) {
            fprintf(stderr, "jobguard %s: unexpected argument %s (try --help)\n", s->cmd, a);
            it->status = 2;
            return JG_ARGS_STOP;
        }
        *value = a;
        return JG_ARGS_OPERAND;
    }
    if (strcmp(a, "--") == 0) {
        it->operands_only = true;
        return jg_args_next(it, value);
    }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        jg_flags_usage(s, stdout);
        it->status = 0;
        return JG_ARGS_STOP;
    }
    it->status = 2; /* unless it is a known flag */
    int f;
    const char *eq = NULL;
    it->spelled = a;
    it->spelled_len = (int)strlen(a);
    if (a[1] == '-') {
        eq = strchr(a + 2, '=');
        if (eq) it->spelled_len = (int)(eq - a);
        f = find_long(s, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
    } else { /* -o VALUE, -o=VALUE */
        eq = a[2] == '=' ? a + 2 : NULL;
        if (eq) it->spelled_len = 2;
        f = a[2] == '\0' || eq ? find_short(s, a[1]) : -1;
    }
    if (f < 0) {
        fprintf(stderr, "jobguard %s: unknown option %s (try --help)\n", s->cmd, a);
        return JG_ARGS_STOP;
    }
    const struct jg_flag *fl = &s->flag[f];
    if (!fl->arg) {
        if (eq) {
            fprintf(stderr, "jobguard %s: --%s takes no value\n", s->cmd, fl->name);
            return JG_ARGS_STOP;
        }
        return f;
    }
    if (eq) {
        *value = eq + 1;
    } else if (it->i < it->argc) {
        *value = it->argv[it->i++];
    } else {
        fprintf(stderr, "jobguard %s: %s needs a value (%s)\n", s->cmd, a, fl->arg);
        return JG_ARGS_STOP;
    }
    return f;
}

/* The help text, each line after the first indented by `indent` spaces. */
static void put_help(FILE *f, const char *help, int indent) {
    for (const char *p = help; *p; p++) {
        fputc(*p, f);
        if (*p == '\n' && p[1]) fprintf(f, "%*s", indent, "");
    }
    fputc('\n', f);
}

void jg_flag_env_name(const char *name, char *out, size_t n) {
    size_t i = (size_t)snprintf(out, n, "JOBGUARD_");
    for (; *name && i + 1 < n; name++)
        out[i++] = *name == '-' ? '_' : (char)toupper((unsigned char)*name);
    out[i < n ? i : n - 1] = '\0';
}

void jg_flags_usage(const struct jg_flags *s, FILE *f) {
    fputs(s->head, f);
    for (int i = 0; i <= s->n; i++) {
        static const struct jg_flag help = {.name = "help", .help = "this text"};
        const struct jg_flag *fl = i < s->n ? &s->flag[i] : &help;
        char text[128];
        int n = fl->short_name ? snprintf(text, sizeof text, "-%c, --%s", fl->short_name, fl->name)
                               : snprintf(text, sizeof text, "--%s", fl->name);
        if (fl->arg) n += snprintf(text + n, sizeof text - (size_t)n, " %s", fl->arg);
        if (s->indent == 0) { /* serve: help under the flag, then its default and variable */
            fprintf(f, "  %s\n      ", text);
            put_help(f, fl->help, 6);
            if (i == s->n) continue;
            char env[96];
            jg_flag_env_name(fl->name, env, sizeof env);
            fprintf(f, "      default: %s; env: %s\n",
                    fl->def == NULL ? "(none)"
                    : fl->def[0]    ? fl->def
                                    : "\"\"",
                    env);
        } else if (n <= s->indent - 3) {
            fprintf(f, "  %-*s ", s->indent - 3, text);
            put_help(f, fl->help, s->indent);
        } else {
            fprintf(f, "  %s\n%*s", text, s->indent, "");
            put_help(f, fl->help, s->indent);
        }
    }
    if (s->tail) fputs(s->tail, f);
}
