/* flags: the one argv parser of every jobguard command. A command describes its options in a
 * table; jg_args_next walks argv with it (getopt-style) and the usage text is printed from the
 * same table, so a flag cannot be parsed one way and documented another. */
#ifndef JOBGUARD_CLI_FLAGS_H
#define JOBGUARD_CLI_FLAGS_H

#include <stdbool.h>
#include <stdio.h>

struct jg_flag {
    const char *name; /* the long name without "--": --NAME VALUE and --NAME=VALUE */
    char short_name;  /* '\0', or 'o' for -o VALUE (and -o=VALUE) as well */
    const char *arg;  /* the value's name in the usage text ("FILE"); NULL: a switch, no value */
    const char *help; /* usage text; each '\n' starts a new line, indented */
    const char *def;  /* shown as "default:" with an environment variable (serve); else NULL */
    int kind;         /* for the command: how it reads the value (serve) */
    unsigned long long min, max; /* for the command: bounds of a numeric value (serve) */
};

struct jg_flags {
    const char *cmd;  /* "check", "policy check": messages start "jobguard CMD: " */
    const char *head; /* the usage text before the options (ends with "Options:\n") */
    const char *tail; /* the usage text after them, or NULL */
    const struct jg_flag *flag;
    int n;
    bool no_operands; /* an operand is an error ("unexpected argument") */
    int indent;       /* the column where a flag's help starts; 0: each help under its flag, with
                       * the default and the environment variable (JOBGUARD_NAME) of every flag */
};

/* What jg_args_next returns besides the index of a flag in the table. */
enum { JG_ARGS_END = -1, JG_ARGS_OPERAND = -2, JG_ARGS_STOP = -3 };

struct jg_args {
    const struct jg_flags *spec;
    int argc, i;
    char **argv;
    bool operands_only;  /* after "--" */
    int status;          /* after JG_ARGS_STOP: the exit status */
    const char *spelled; /* the last flag as the user wrote it ("-o", "--output"), for messages */
    int spelled_len;
};

/* Starts a walk over argv[1..argc) (argv[0] is the command's name). */
void jg_args_init(struct jg_args *it, const struct jg_flags *spec, int argc, char **argv);

/* The next argument: the index of a flag in the table (*value: its value, NULL for a switch);
 * JG_ARGS_OPERAND (*value: an argument that is no flag: "-" is one, and every argument after
 * "--"); JG_ARGS_END; or JG_ARGS_STOP: the command ends with it->status, 0 after printing the
 * usage on stdout for --help or -h, 2 after saying on stderr what is wrong (an unknown flag, a
 * missing value, a value given to a switch). */
int jg_args_next(struct jg_args *it, const char **value);

/* Prints the usage text: head, every flag of the table and --help, tail. */
void jg_flags_usage(const struct jg_flags *spec, FILE *f);

/* The environment variable of a flag: JOBGUARD_ and its name in upper case, '-' as '_'. */
void jg_flag_env_name(const char *name, char *out, size_t n);

/* The rows of the options several commands share (check, scan, replay, vap), so that they read
 * the same everywhere. Their help text breaks lines for an indent of 25. */
#define JG_FLAG_POLICY_FILE                                                                        \
    {                                                                                              \
        "policy-file", 0, "FILE",                                                                  \
            "the policy (modes, controllers, status writers, targets;\n"                           \
            "docs/policy.md); an invalid file exits 2"                                             \
    }
#define JG_FLAG_VALUES                                                                             \
    {                                                                                              \
        "values", 0, "FILE",                                                                       \
            "the policy of a Helm values file (.policy, as the chart\n"                            \
            "writes it); instead of --policy-file"                                                 \
    }
#define JG_FLAG_MODE                                                                               \
    {                                                                                              \
        "mode", 0, "ID=MODE",                                                                      \
            "rule ID's mode: deny, warn, audit or off; ID \"*\" sets every\n"                      \
            "rule (repeatable, later ones win, and win over the policy\n"                          \
            "file's modes; see docs/modes.md)"                                                     \
    }
#define JG_FLAG_DISABLE_RULE                                                                       \
    { "disable-rule", 0, "ID", "do not check rule ID (repeatable; see 'jobguard rules')" }
#define JG_FLAG_PARITY                                                                             \
    { "parity", 0, "VERSION", "Kubernetes rules and wording: 1.35 (default), 1.36 or 1.37" }

#endif
