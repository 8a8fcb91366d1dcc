/* wipe.c - a zeroing the compiler keeps: see wipe.h. */
#include "wipe.h"

#include <string.h>

/* volatile: the compiler cannot know what the call does, nor skip it */
static void *(*const volatile wipe_memset)(void *, int, size_t) = memset;

void tb_wipe(void *p, size_t n)
{
	if (p != NULL && n > 0)
		wipe_memset(p, 0, n);
}
