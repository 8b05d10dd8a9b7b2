/* Subcommands of the jobguard binary. Each returns the process exit code. */
#ifndef JOBGUARD_CLI_H
#define JOBGUARD_CLI_H

#include "jobguard/buf.h"

int jg_cmd_check(int argc, char **argv);
int jg_cmd_convert(int argc, char **argv);
int jg_cmd_policy(int argc, char **argv);
int jg_cmd_rules(int argc, char **argv);
int jg_cmd_serve(int argc, char **argv);
int jg_cmd_vap(int argc, char **argv);

/* Reads a whole file ("-" = stdin) into `out`, refusing more than `max` bytes. On failure returns
 * false and writes a reason into err. */
bool jg_read_file(const char *path, size_t max, jg_buf *out, char *err, size_t errlen);

#endif
