/* pages: hands back the resident pages of a shared library that only start-up and reloads run.
 * libcrypto (OpenSSL) checks the serving pair and hashes the policy: at start-up, then only when
 * a file changes. Its code stays mapped in the process afterwards, about 3.5 MiB of resident
 * pages of a server that otherwise idles at 6 (the kernel maps whole 64 KiB runs around each page
 * it faults in). Releasing them makes the process's resident set what it serves with; the pages
 * stay in the page cache, and fault back in the next time OpenSSL runs (docs/memory.md). */
#ifndef JOBGUARD_SERVER_PAGES_H
#define JOBGUARD_SERVER_PAGES_H

#include <stddef.h>

/* Drops from this process the resident pages of the mappings of the library whose file name
 * starts with `name` (e.g. "libcrypto.so") that are read-only (never written) and hold no
 * private copy of a page (smaps' Anonymous: 0): code, read-only data, symbol tables. A mapping
 * that is writable, or relocated in place (RELRO), is left alone, so no state is lost and the
 * pages read back are the file's. Returns the bytes that were resident in the mappings released
 * (0 when /proc/self/smaps cannot be read). Safe while other threads run that code: a dropped
 * page faults back in from the page cache. */
size_t jg_pages_release_library(const char *name);

#endif
