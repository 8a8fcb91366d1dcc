/*
 * tbctl_table.h - aligned text tables for tbctl's default output.
 *
 * A table owns copies of every cell it is given.  Cells are printed with
 * control characters replaced by '?', so that a string from the server (a
 * host's error message, say) cannot move the cursor or recolour a terminal.
 * Widths count UTF-8 code points, not bytes.
 */
#ifndef TBCTL_TABLE_H
#define TBCTL_TABLE_H

#include <stddef.h>
#include <stdio.h>

struct tbctl_table;

/* A table with ncols columns, headed by the ncols strings of header.
 * NULL on out of memory. */
struct tbctl_table *tbctl_table_new(size_t ncols, const char *const *header);

/* Append a row of ncols cells (NULL cells print as "-").  0 or -1 (no memory). */
int tbctl_table_add(struct tbctl_table *t, const char *const *cells);

/* Print the header and rows, columns separated by two spaces, the last column
 * not padded.  Returns 0, or -1 when writing failed. */
int tbctl_table_print(const struct tbctl_table *t, FILE *out);

void tbctl_table_free(struct tbctl_table *t);

/* Write s to out with control characters replaced by '?'. */
void tbctl_print_safe(FILE *out, const char *s);

#endif /* TBCTL_TABLE_H */
