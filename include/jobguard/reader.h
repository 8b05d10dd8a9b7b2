#ifndef JOBGUARD_READER_H
#define JOBGUARD_READER_H
/* reader: the files a person hands jobguard (objects, AdmissionReviews, Lists, policies), as JSON
 * documents one at a time, so that everything after it reads JSON with the request path's
 * decoder (one reader, one decoder).
 *
 * Inputs: files, folders (walked in byte order of their names; only *.json, *.yaml and *.yml are
 * read, as gator and kyverno do) and "-" (standard input). A file is YAML unless its first
 * non-blank byte is '{' or '['; YAML may hold several documents ("---"); documents that are empty
 * or hold only comments are skipped, as kubectl skips them. JSON may hold several values one after
 * the other. A document whose top level is an object with an "items" array is a List (kubectl's
 * own rule, unstructured IsList): its elements are yielded one by one instead, without holding the
 * whole List, so memory is bounded by the largest element, not by the input.
 *
 * YAML is converted as kubectl converts it (YAML 1.1 scalars: on/off/yes/no booleans, 0755 octal,
 * timestamps kept as strings, anchors, aliases and merge keys expanded, the last of duplicate keys
 * wins); docs/input.md lists every case. */
#include <stdbool.h>
#include <stddef.h>

/* The largest document (or List element) the reader hands on, as JSON. Larger ones are an error
 * naming the document; reading goes on with the next one. */
#define JG_READER_MAX_DOC ((size_t)64 << 20)

typedef struct jg_reader jg_reader;

struct jg_doc {
    const char *json; /* the document as JSON text; valid until the next jg_reader_next */
    size_t len;
    const char *source; /* the file's path as given (inside a folder: folder/name), "-" for stdin */
    unsigned line;      /* 1-based line of source where the document (or List element) starts */
    size_t doc;         /* 0-based index of the document in its file */
    long item;          /* index in its List's items, -1 when the document is not a List */
};

/* Opens `paths` (n of them; "-" is standard input). Paths are checked as they are reached:
 * a missing file is reported by jg_reader_next. Returns NULL only when out of memory. */
jg_reader *jg_reader_open(const char *const *paths, size_t n);

/* 1: the next document is in *d. 0: no more input. -1: bad input, described in err as
 * "<source>:<line>:<column>: <what>" (line and column where known); the rest of that file (or
 * that document, when the reader can resynchronise) is skipped and the next call goes on. */
int jg_reader_next(jg_reader *r, struct jg_doc *d, char *err, size_t errlen);

void jg_reader_close(jg_reader *r);

/* A whole YAML (or JSON) text as one JSON document, for files read whole (the policy file).
 * More than one document is an error. `source` names the input in errors. Aliases stop
 * expanding once the JSON passes max bytes (at most JG_READER_MAX_DOC), an error naming max in
 * MiB. Returns a malloc'd NUL-terminated JSON text (its length in *len) or NULL with err set. */
char *jg_yaml_to_json(const char *text, size_t n, const char *source, size_t max, size_t *len,
                      char *err, size_t errlen);

#endif
