/* Private to src/files: the streaming YAML reader behind jg_reader (yaml.c). */
#ifndef JOBGUARD_FILES_H
#define JOBGUARD_FILES_H

#include "jobguard/buf.h"
#include "jobguard/reader.h"

/* A List with a second "items" member or key: refused in JSON and YAML alike. */
#define JG_READER_SECOND_ITEMS                                                                     \
    "a second \"items\" in a List: kubectl (Go's encoding/json) keeps only the last one, so the "  \
    "List is refused (the first one's items were read already)"

typedef struct jg_yaml_stream jg_yaml_stream;

/* A YAML stream on fd whose first npre bytes were already read into pre (pre stays valid and
 * unchanged while the stream is open). NULL when out of memory. */
jg_yaml_stream *jg_yaml_stream_open(int fd, const char *pre, size_t npre, const char *source);

/* As jg_reader_next: the next document (or List item) converted to JSON in out, d pointing at
 * it. 1, 0 at the end of the stream, -1 with err ("<source>:<line>:<column>: <what>"). */
int jg_yaml_stream_next(jg_yaml_stream *y, jg_buf *out, struct jg_doc *d, char *err, size_t errlen);

void jg_yaml_stream_close(jg_yaml_stream *y);

#endif
