/* posix-probe.c: what a POSIX-only source looks like to the Windows compile
 * check (scripts/check-windows-compile.sh --extra): ctest
 * portability.windows_compile_catches expects the check to fail on it, so
 * that a passing portability.windows_compile means something. Not part of
 * the plugin.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

int probe(FILE *f, const char *s)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, f);   /* no getline on Windows */
    char *copy = strndup(s, 4);            /* no strndup on Windows */
    void *map = mmap(NULL, 4096, 1, 1, fileno(f), 0); /* no mmap on Windows */
    return (int)n + (copy != NULL) + (map != NULL);
}
