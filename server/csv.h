/*
 * csv.h - CSV (RFC 4180) replies written from JSON values: the results
 * table, a comparison, a hosts diff.  One writer, so that every CSV the API
 * gives quotes, spells numbers and ends lines the same way.
 *
 * Writes into a tb_outbuf (outbuf.h), which keeps an allocation failure
 * (nomem) for the caller to see.  No allocation kept.
 */
#ifndef TB_CSV_H
#define TB_CSV_H

#include <jansson.h>

#include "outbuf.h"

/* One field then "," (or "\r\n" when last), quoted when it holds a comma,
 * quote or line break: a string as it is, an integer, a real as %.17g,
 * true/false, null or absent (NULL) as empty, an array of numbers as the
 * numbers separated by spaces (a Stats' values), any other array or object
 * as compact JSON with sorted keys (params, a metadata value). */
void tb_csv_field(struct tb_outbuf *b, const json_t *v, int last);

/* The header line: cols (NULL-terminated) separated by ",", then "\r\n". */
void tb_csv_header(struct tb_outbuf *b, const char *const cols[]);

/* Hand b's text over as *out and *len (the caller frees *out): 0, or -1 when an
 * allocation failed (b freed, *out NULL, *len 0). */
int tb_csv_take(struct tb_outbuf *b, char **out, size_t *len);

#endif /* TB_CSV_H */
