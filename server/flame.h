/*
 * flame.h - flame graphs (issue 20 item 2): stacks a profiler printed,
 * folded into "frame;frame;frame count" lines (root first, the leaf last,
 * as Brendan Gregg's stackcollapse tools make them), and the SVG testbedd
 * draws from those lines.
 *
 * Two profiler formats are read:
 *   - `perf script` (Linux, from `perf record -a -g`): a header line per
 *     sample ("comm pid [cpu] time: period event:"), its frames below it one
 *     a line, indented, leaf first ("ADDR symbol+0xOFF (dso)"), a blank line
 *     after.  The sample's command name becomes the root frame.
 *   - dtrace's printed aggregation of `@[stack()] = count()` (FreeBSD):
 *     frames indented, leaf first ("module`function+0xOFF" or a bare
 *     address), then the count alone on a line.
 * Offsets are dropped (one frame per function); ';' inside a name becomes
 * ':' so that a line splits back into its frames.
 *
 * Pure functions: no I/O, no locks; a folder is used by one thread.  Every
 * returned string is malloc'd and the caller's.
 */
#ifndef TB_FLAME_H
#define TB_FLAME_H

#include <stddef.h>

enum tb_flame_fmt { TB_FLAME_PERF = 0, TB_FLAME_DTRACE = 1 };

#define TB_FLAME_DEPTH_MAX 256 /* frames kept of one stack (the root side kept) */
#define TB_FLAME_FRAME_MAX 200 /* bytes kept of one frame's name */

struct tb_flame_folder;

/* A folder for fmt's text; NULL when out of memory. */
struct tb_flame_folder *tb_flame_folder_new(enum tb_flame_fmt fmt);
/* Feed text in any pieces (lines may be split between calls).  0, or -1
 * when out of memory (the folder then ignores what follows). */
int tb_flame_feed(struct tb_flame_folder *f, const char *data, size_t len);
/* The folded lines, sorted, one per distinct stack ("" when none), and the
 * samples they hold in *samples; NULL when out of memory.  Ends the feeding:
 * call once, then free the folder. */
char *tb_flame_finish(struct tb_flame_folder *f, long *samples);
void tb_flame_folder_free(struct tb_flame_folder *f);

/* All of text folded at once (tb_flame_feed + tb_flame_finish). */
char *tb_flame_fold(enum tb_flame_fmt fmt, const char *text, size_t len, long *samples);

/* Geometry of the SVG: width in px, a frame's height, the margin. */
#define TB_FLAME_WIDTH 1200
#define TB_FLAME_FRAME_H 16
#define TB_FLAME_PAD 10

/*
 * Draw folded (lines as above; a malformed line is skipped) as a flame
 * graph: the root at the bottom, each frame a rectangle as wide as its
 * samples' share of TB_FLAME_WIDTH - 2 * TB_FLAME_PAD, its name as text
 * where it fits, a <title> on each (name, samples, percent: what a pointer
 * over it shows), title at the top (escaped like every name).  No script.
 * Frames narrower than 0.1 px are left out.  *out (malloc'd, the caller's)
 * and *len; 0, or -1 when out of memory.
 */
int tb_flame_svg(const char *folded, const char *title, char **out, size_t *len);

#endif /* TB_FLAME_H */
